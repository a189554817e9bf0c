// Azure OpenAI: the Chat Completions grammar behind Azure's routes. POST
// /openai/deployments/{deployment}/chat/completions?api-version=... (without api-version the real
// service answers 404 "Resource not found") and the newer /openai/v1/chat/completions (the deployment is
// the body's `model`); `api-key` header auth; Azure's own error bodies for what its front door answers
// ({"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation ... Please retry
// after N seconds ..."}}, 401 "Access denied ...", 404 "Resource not found", the 400 content_filter with
// innererror ResponsibleAIPolicyViolation and its content_filter_result); the content-filter annotations
// in every answer: `prompt_filter_results` (a plain answer's member, a stream's first chunk with no
// choices) and each choice's `content_filter_results`. Everything else (request reading, the answer and
// chunk grammar, the model backend's errors, the in-stream error chunk, [DONE]) is the openai unit's,
// reached through its functions: this unit adds Azure's layer and copies nothing.
#include <cmath>
#include <optional>

#include "chat_completions.hpp"
#include "dialect_util.hpp"

namespace llmchaos::mock {

extern const DialectSpec openai_dialect;

namespace {
using namespace detail;

// The GA version the client codec sends; Azure's 429 message names the request's version.
constexpr std::string_view api_version = "2024-10-21";
constexpr std::string_view deployments_prefix = "/openai/deployments/";
constexpr std::string_view chat_suffix = "/chat/completions";

bool has_query_param(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto pair = query.substr(0, amp);
    const auto key = pair.substr(0, pair.find('='));
    if (key == name && pair.size() > key.size() + 1) return true;  // present and not empty
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
  }
  return false;
}

// {deployment} of /openai/deployments/{deployment}/chat/completions, "" for any other path.
std::string_view deployment_of(std::string_view path) {
  if (path.substr(0, deployments_prefix.size()) != deployments_prefix || path.size() <= chat_suffix.size() ||
      path.substr(path.size() - chat_suffix.size()) != chat_suffix)
    return {};
  const auto name =
      path.substr(deployments_prefix.size(), path.size() - deployments_prefix.size() - chat_suffix.size());
  return name.find('/') == std::string_view::npos ? name : std::string_view{};
}

ParsedRequest parse(std::string_view method, std::string_view target, std::string_view body) {
  ParsedRequest out;
  const auto path = path_only(target);
  if (models_list(out, method, path, {"/openai/v1/models", "/openai/models"})) return out;
  const auto deployment = deployment_of(path);
  // The deployment route needs api-version (the real service: 404 Resource not found without it); the
  // v1 surface takes none (or "preview").
  const bool served = (!deployment.empty() && has_query_param(query_of(target), "api-version")) ||
                      path == "/openai/v1/chat/completions";
  if (!accept_post(out, method, path, served)) return out;
  read_chat_completions(body, out);
  // Azure answers for the deployment the path names, whatever the body's `model` says.
  if (out.error == RequestError::none && !deployment.empty()) out.chat.model = std::string(deployment);
  return out;
}

// A category's verdict: {"filtered": bool, "severity": "safe" | "medium"}.
json::object severity(bool filtered) {
  return {{"filtered", filtered}, {"severity", filtered ? "medium" : "safe"}};
}

// The four harm categories (violence flagged when `filtered`), as Azure reports them per choice.
json::object categories(bool filtered) {
  return {{"hate", severity(false)},
          {"self_harm", severity(false)},
          {"sexual", severity(false)},
          {"violence", severity(filtered)}};
}

// What the prompt's filter found (nothing: a prompt that tripped it is the 400 content_filter).
json::array prompt_filter_results() {
  auto results = categories(false);
  results["jailbreak"] = json::object{{"filtered", false}, {"detected", false}};
  return json::array{json::object{{"prompt_index", 0}, {"content_filter_results", std::move(results)}}};
}

// A choice's content_filter_results: the categories for content (flagged on a content_filter finish),
// {} for a chunk that carries none (the role chunk, a plain finish chunk).
json::object choice_results(const Answer& a, bool content, bool finish) {
  if (finish && a.finish == Finish::content_filter) return categories(true);
  return content ? categories(false) : json::object{};
}

// The OpenAI text re-read to annotate it. A requested deployment name that is not UTF-8 makes that text
// unreadable JSON (Boost.JSON writes a string's bytes as they are): then it goes out unannotated, never
// a throw out of the render (fuzz_mock_request found it).
std::optional<json::value> reread(std::string_view openai_json) {
  boost::system::error_code ec;
  auto v = json::parse(openai_json, ec);
  if (ec || !v.is_object()) return std::nullopt;
  return v;
}

std::string render_body(const Answer& a) {
  auto text = openai_dialect.render_body(a);
  auto v = reread(text);
  if (!v) return text;
  auto& o = v->as_object();
  o["prompt_filter_results"] = prompt_filter_results();
  for (auto& choice : o["choices"].as_array())
    choice.as_object()["content_filter_results"] = choice_results(a, true, true);
  return json::serialize(*v);
}

// The openai chunk of a frame, annotated: each choice gains its content_filter_results.
void annotate(SseFrame& f, const Answer& a, bool finish) {
  std::string_view data = f.bytes;
  data.remove_prefix(std::string_view("data: ").size());
  while (!data.empty() && data.back() == '\n') data.remove_suffix(1);
  auto v = reread(data);
  if (!v) return;
  auto* choices = v->as_object().if_contains("choices");
  if (!choices || choices->as_array().empty()) return;  // the usage chunk carries no choice
  for (auto& choice : choices->as_array())
    choice.as_object()["content_filter_results"] = choice_results(a, f.content, finish);
  f = sse_data(*v, f.content);
}

StreamParts render_stream(const Answer& a) {
  auto p = openai_dialect.render_stream(a);
  for (auto& f : p.head) annotate(f, a, false);
  for (auto& f : p.content) annotate(f, a, false);
  for (auto& f : p.tail) annotate(f, a, true);
  // Azure's first chunk: the prompt's filter results, no choices, empty id and model.
  p.head.insert(p.head.begin(), sse_data(json::object{{"choices", json::array{}},
                                                      {"created", 0},
                                                      {"id", ""},
                                                      {"model", ""},
                                                      {"object", ""},
                                                      {"prompt_filter_results", prompt_filter_results()}}));
  return p;
}

json::value azure_error(std::string_view code, std::string message) {
  return json::object{{"error", json::object{{"code", code}, {"message", std::move(message)}}}};
}

std::string retry_sentence(const ErrorContext& ctx) {
  if (!ctx.retry_after_ms) return " ";
  const auto seconds = static_cast<long long>(std::ceil(*ctx.retry_after_ms / 1000.0));
  return fmt::format(" Please retry after {} second{}. ", seconds, seconds == 1 ? "" : "s");
}

// The named real bodies of a step's `body`: the token-per-minute form of the rate limit.
struct Named {
  ErrorKind kind;
  std::string_view name;
};
constexpr Named named_bodies[] = {{ErrorKind::rate_limit, "token_rate_limit"}};

std::vector<std::string_view> body_names(ErrorKind kind) {
  return named_for(named_bodies, kind);
}

ErrorReply error(ErrorKind kind, const ErrorContext& ctx) {
  switch (kind) {
    case ErrorKind::rate_limit: {
      const bool tokens = ctx.body == "token_rate_limit";
      return {
          429,
          json::serialize(azure_error(
              "429", fmt::format(
                         "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version {} "
                         "have exceeded {} rate limit of your current OpenAI S0 pricing tier.{}Please go "
                         "here: https://aka.ms/oai/quotaincrease if you would like to further increase the "
                         "default rate limit.",
                         api_version, tokens ? "token" : "call", retry_sentence(ctx))))};
    }
    case ErrorKind::quota:
      // Not confirmed against a real answer: Azure's documented "quota" is the per-minute TPM/RPM limit,
      // which answers with the rate_limit body above (Microsoft Q&A 2119264, 1792390; azure-search-openai-
      // demo#1246), and no public report shows a runtime spend-quota body (searched 2026-12-04: the
      // InsufficientQuota reports are deployment-time ARM errors). This one keeps OpenAI's
      // `insufficient_quota` code, the token a stack would key on.
      return {
          429,
          json::serialize(azure_error(
              "insufficient_quota",
              fmt::format(
                  "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version {} have "
                  "exceeded the token quota of your subscription for this period: insufficient quota. "
                  "Please go here: https://aka.ms/oai/quotaincrease to request more quota.",
                  api_version)))};
    case ErrorKind::auth:
      return {
          401,
          json::serialize(azure_error(
              "401",
              "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a "
              "valid key for an active subscription and use a correct regional API endpoint for your "
              "resource."))};
    case ErrorKind::not_found:
      return {404, json::serialize(azure_error("404", "Resource not found"))};
    case ErrorKind::missing_key:  // no api-key header: the gateway's own shape (openai/openai-python#1527,
                                  // continuedev/continue#4601)
      return {401,
              json::serialize(json::object{
                  {"statusCode", 401},
                  {"message",
                   "Access denied due to missing subscription key. Make sure to include subscription key "
                   "when making requests to an API."}})};
    case ErrorKind::policy: {
      auto results = categories(true);
      results["jailbreak"] = json::object{{"filtered", false}, {"detected", false}};
      json::object e{
          {"message",
           "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. "
           "Please modify your prompt and retry. To learn more about our content filtering policies please "
           "read "
           "our documentation: https://go.microsoft.com/fwlink/?linkid=2198766"},
          {"type", nullptr},
          {"param", "prompt"},
          {"code", "content_filter"},
          {"status", 400},
          {"innererror", json::object{{"code", "ResponsibleAIPolicyViolation"},
                                      {"content_filter_result", std::move(results)}}}};
      return {400, json::serialize(json::object{{"error", std::move(e)}})};
    }
    default:  // the model backend's answers: OpenAI's bodies and statuses
      return openai_dialect.error(kind, ctx);
  }
}

SseFrame stream_error_frame(const Answer& a, std::size_t sequence) {
  return openai_dialect.stream_error_frame(a, sequence);
}

SseFrame malformed_frame() {
  return openai_dialect.malformed_frame();
}

std::string models_body(std::string_view model) {
  return openai_dialect.models_body(model);
}

constexpr std::string_view served_paths[] = {
    "POST /openai/deployments/{model}/chat/completions?api-version=2024-10-21",
    "POST /openai/v1/chat/completions", "GET /openai/v1/models"};
// The `api-key` header (what AzureOpenAI sends with an apiKey), or an Entra ID token as Authorization:
// Bearer.
constexpr Credential credentials[] = {{"api-key", ""}, {"authorization", "Bearer"}};

// The Chat Completions chunks: the openai unit's reading of them (the filter annotations are structure).
FrameRole frame_role(std::string_view event, const json::object& data) {
  return openai_dialect.frame_role(event, data);
}
}  // namespace

extern const DialectSpec azure_dialect = {
    .id = Dialect::azure,
    .request_id_header = "x-request-id",
    .id_prefix = "chatcmpl-",
    .tool_call_id_prefix = "call_",
    .sdk_base_suffix = "/openai",
    .paths = served_paths,
    .parse = parse,
    .render_body = render_body,
    .render_stream = render_stream,
    .error = error,
    .stream_error_frame = stream_error_frame,
    .malformed_frame = malformed_frame,
    .models_body = models_body,
    .body_names = body_names,
    .frame_role = frame_role,
    .done_data = "[DONE]",
    .auth = {credentials, ""},
};

}  // namespace llmchaos::mock
