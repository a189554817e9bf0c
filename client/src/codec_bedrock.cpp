// Amazon Bedrock Converse (provider-wire.md section 8): POST {base}/model/{modelId}/converse, or
// /converse-stream answered in AWS event stream frames (core/eventstream.hpp): messageStart,
// contentBlockStart / Delta / Stop, messageStop (the end: stopReason), metadata (usage). An exception
// frame is an in-stream error typed by :exception-type; errors before a stream are typed by the
// x-amzn-ErrorType header. Requests carry what the AWS SDKs send: a SigV4-shaped Authorization (the
// mock checks its shape, never the signature), amz-sdk-invocation-id (one per logical call) and
// amz-sdk-request (attempt=N; max=M).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>

#include "codec_detail.hpp"

namespace llmchaos::client::detail {
namespace {

constexpr int max_tokens = 1024;
constexpr std::string_view region = "us-east-1";
// A fixed signing time: the codec is pure (no clock), and the mock checks the header's shape only.
constexpr std::string_view amz_date = "20260101T000000Z";

// The model id as a path segment: the SDKs percent-encode it (an ARN's ':' and '/' included).
std::string path_segment(std::string_view id) {
  std::string out;
  for (const char c : id) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~')
      out.push_back(c);
    else
      out += fmt::format("%{:02X}", u);
  }
  return out;
}

std::string target(const AttemptRequest& req) {
  return "/model/" + path_segment(req.model) + (req.stream ? "/converse-stream" : "/converse");
}

Headers headers(const std::string&) {
  return {};  // every header of a Bedrock request depends on the attempt (attempt_headers)
}

std::uint64_t fnv1a(std::string_view text, std::uint64_t h = 14695981039346656037ull) {
  for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

// A version-4-shaped UUID that depends only on `seed`: the same logical call gives the same id on
// every retry, as the SDK's invocation id.
std::string uuid_of(std::string_view seed) {
  const std::uint64_t a = fnv1a(seed), b = fnv1a(seed, a);
  return fmt::format("{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xfff,
                     0x8000 | ((b >> 48) & 0x3fff), b & 0xffffffffffffull);
}

Headers attempt_headers(const AttemptRequest& req, const std::string& api_key) {
  const std::string invocation = uuid_of(req.operation_id.empty() ? req.prompt : req.operation_id);
  const std::uint64_t s = fnv1a(target(req), fnv1a(invocation));
  const std::string signature = fmt::format("{:016x}{:016x}{:016x}{:016x}", s, fnv1a("1", s), fnv1a("2", s),
                                            fnv1a("3", s));  // 64 hex digits, as HMAC-SHA256's
  const int max = std::max(req.max_attempts, req.attempt_number + 1);
  return {{"x-amz-date", std::string(amz_date)},
          {"amz-sdk-invocation-id", invocation},
          {"amz-sdk-request", fmt::format("attempt={}; max={}", req.attempt_number + 1, max)},
          {"authorization",
           fmt::format("AWS4-HMAC-SHA256 Credential={}/{}/{}/bedrock/aws4_request, "
                       "SignedHeaders=amz-sdk-invocation-id;amz-sdk-request;content-type;host;x-amz-date, "
                       "Signature={}",
                       api_key, amz_date.substr(0, 8), region, signature)}};
}

json::object message(std::string_view role, json::array content) {
  return json::object{{"role", role}, {"content", std::move(content)}};
}

std::string request_body(const AttemptRequest& req) {
  json::array messages{message("user", {json::object{{"text", req.prompt}}})};
  if (req.tool_turn) {
    const auto& t = *req.tool_turn;
    messages.push_back(
        message("assistant", {json::object{{"toolUse", json::object{
                                                           {"toolUseId", t.call_id},
                                                           {"name", t.name},
                                                           {"input", tool_arguments_object(t.arguments)},
                                                       }}}}));
    messages.push_back(message(
        "user", {json::object{{"toolResult",
                               json::object{{"toolUseId", t.call_id},
                                            {"content", json::array{json::object{{"text", t.result}}}}}}}}));
  }
  if (req.prefill) messages.push_back(message("assistant", {json::object{{"text", prefill_text}}}));
  json::object body{{"messages", std::move(messages)},
                    {"inferenceConfig", json::object{{"maxTokens", max_tokens}}}};
  if (req.tool_call || req.tool_turn)
    body["toolConfig"] = json::object{
        {"tools",
         json::array{json::object{
             {"toolSpec", json::object{{"name", workflow_tool_name},
                                       {"description", tool_description},
                                       {"inputSchema", json::object{{"json", tool_parameters()}}}}}}}}};
  return json::serialize(body);
}

void read_usage(const json::value& v, Answer& out) {
  if (find(v, {"usage", "inputTokens"})) out.input_tokens = int_at(v, {"usage", "inputTokens"});
  if (find(v, {"usage", "outputTokens"})) out.output_tokens = int_at(v, {"usage", "outputTokens"});
}

void read_tool_use(const json::value& tool, Answer& out) {
  if (out.tool_call) return;  // the workflow runs the first call only
  out.tool_call = true;
  out.tool_call_id = str_at(tool, {"toolUseId"});
  out.tool_name = str_at(tool, {"name"});
  if (const auto* input = find(tool, {"input"})) out.tool_arguments = json::serialize(*input);
}

bool parse_answer(std::string_view body, Answer& out) {
  json::value v;
  if (!parse_json(body, v)) return false;
  const auto* content = find(v, {"output", "message", "content"});
  if (!content || !content->is_array()) return false;
  for (const auto& block : content->get_array()) {
    out.text += str_at(block, {"text"});
    if (const auto* tool = find(block, {"toolUse"})) read_tool_use(*tool, out);
  }
  out.finish_reason = str_at(v, {"stopReason"});
  read_usage(v, out);
  return true;
}

// One event frame's payload (the event's members, as JSON) by its :event-type.
EventResult read_event(std::string_view type, std::string_view payload, Answer& acc) {
  json::value v;
  if (!parse_json(payload, v) || !v.is_object()) return {EventKind::malformed, {}, false};
  if (type == "contentBlockStart") {
    if (const auto* tool = find(v, {"start", "toolUse"}); tool && !acc.tool_call) {
      read_tool_use(*tool, acc);
      acc.tool_arguments.clear();  // the input follows in deltas
    }
  } else if (type == "contentBlockDelta") {
    if (auto token = str_at(v, {"delta", "text"}); !token.empty()) {
      acc.text += token;
      return {EventKind::content, std::move(token), false};
    }
    acc.tool_arguments += str_at(v, {"delta", "toolUse", "input"});
  } else if (type == "messageStop") {
    acc.finish_reason = str_at(v, {"stopReason"});
    return {EventKind::ignored, {}, true};
  } else if (type == "metadata") {
    read_usage(v, acc);
  }  // messageStart, contentBlockStop and event types added later say nothing the client keeps
  return {};
}

// Not Bedrock's framing; read as if each SSE event were one event frame, so a test can feed either.
EventResult on_event(const SseEvent& ev, Answer& acc) {
  return read_event(ev.event, ev.data, acc);
}

EventResult on_frame(const eventstream::Message& frame, Answer& acc) {
  const auto kind = frame.text(":message-type");
  if (kind == "event") return read_event(frame.text(":event-type"), frame.payload, acc);
  // The SDKs raise both as the named error; an unknown message type is a framing error to them.
  if (kind == "exception" || kind == "error") {
    acc.error_type = frame.text(kind == "exception" ? ":exception-type" : ":error-code");
    return {EventKind::error, {}, false};
  }
  return {EventKind::malformed, {}, false};
}

// Owners per SPEC section 2. Owner::none before a stream: the status and message decide, as for any
// dialect (an InternalServerException naming the input is a request error, a bare one unknown).
constexpr ErrorTypeOwner error_types[] = {
    {"ThrottlingException", Owner::rate, Owner::rate, "throttling"},
    {"ServiceQuotaExceededException", Owner::quota, Owner::quota, "service quota exceeded"},
    {"ServiceUnavailableException", Owner::transient, Owner::transient, "service unavailable"},
    {"InternalServerException", Owner::none, Owner::transient, "internal server error"},
    {"ModelStreamErrorException", Owner::transient, Owner::transient, "model stream error"},
    {"ModelTimeoutException", Owner::transient, Owner::transient, "model timeout"},
    {"ModelNotReadyException", Owner::transient, Owner::transient, "model not ready"},
    // The model ran and failed: as a bare 500, it may have done the work.
    {"ModelErrorException", Owner::unknown, Owner::transient, "model error"},
    {"ValidationException", Owner::none, Owner::request, "validation"},
    // Bedrock bills through the AWS account: a lapsed payment method is refused as access denied, and
    // another account's route may still serve (SPEC 2: payment is quota).
    {"AccessDeniedException", Owner::quota, Owner::quota, "payment instrument", "invalid_payment_instrument"},
    {"AccessDeniedException", Owner::auth, Owner::auth, "access denied"},
    {"ResourceNotFoundException", Owner::request, Owner::request, "no such model"},
};
// Stop reasons of a whole answer that are failures: a refusal, or output the client cannot use.
constexpr ErrorTypeOwner failing_stops[] = {
    {"content_filtered", Owner::policy, Owner::policy, "content filtered"},
    {"guardrail_intervened", Owner::policy, Owner::policy, "guardrail intervened"},
    {"malformed_model_output", Owner::transient, Owner::transient, "malformed model output"},
    {"malformed_tool_use", Owner::transient, Owner::transient, "malformed tool use"},
};
constexpr ErrorTraits error_traits{"x-amzn-errortype", "x-amz-retry-after", error_types, failing_stops};

}  // namespace

const DialectCodec& bedrock_codec() {
  static const DialectCodec codec{.dialect = Dialect::bedrock,
                                  .target = target,
                                  .headers = headers,
                                  .request_body = request_body,
                                  .parse_answer = parse_answer,
                                  .on_event = on_event,
                                  .framing = StreamFraming::eventstream,
                                  .on_frame = on_frame,
                                  .attempt_headers = attempt_headers,
                                  .errors = &error_traits,
                                  .model_from_request = true};
  return codec;
}

}  // namespace llmchaos::client::detail
