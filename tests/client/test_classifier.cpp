// The classifier, table-driven: every error body of provider-wire.md (sections 1.3-1.5, 2.3-2.4, 3.3-3.4)
// for the three dialects, then the transport events, then retry-after parsing.
#include <catch2/catch.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "llmchaos/client/classifier.hpp"
#include "llmchaos/client/dialect_codec.hpp"

using namespace llmchaos;
using namespace llmchaos::client;

namespace {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct BodyRow {
  const char* name;
  Dialect dialect;
  int status;
  const char* body;
  Owner owner;
  const char* reason_token;  // what the reason must name
};

// Bodies copied from provider-wire.md (the mock renders the same shapes).
const BodyRow
    body_rows[] =
        {
            // ---- OpenAI (section 1.4) ----
            {"openai 429 tokens rate limit", Dialect::openai, 429,
             R"({"error":{"message":"Rate limit reached for gpt-4o in organization org-... on tokens per min (TPM): Limit 30000, Used 14567, Requested 24754. Please try again in 18.642s. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}})",
             Owner::rate, "rate_limit_exceeded"},
            {"openai 429 requests rate limit", Dialect::openai, 429,
             R"({"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}})",
             Owner::rate, "rate_limit_exceeded"},
            {"openai 429 insufficient_quota", Dialect::openai, 429,
             R"({"error":{"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}})",
             Owner::quota, "insufficient_quota"},
            {"openai 429 credit_balance_exhausted", Dialect::openai, 429,
             R"({"error":{"message":"Your credit balance is exhausted.","type":"insufficient_quota","param":null,"code":"credit_balance_exhausted"}})",
             Owner::quota, "credit_balance_exhausted"},
            {"openai 429 organization_spend_limit_exceeded", Dialect::openai, 429,
             R"({"error":{"message":"Spend limit reached.","type":"insufficient_quota","param":null,"code":"organization_spend_limit_exceeded"}})",
             Owner::quota, "organization_spend_limit_exceeded"},
            {"openai 429 project_spend_limit_exceeded", Dialect::openai, 429,
             R"({"error":{"message":"Spend limit reached.","type":"insufficient_quota","param":null,"code":"project_spend_limit_exceeded"}})",
             Owner::quota, "project_spend_limit_exceeded"},
            {"openai 429 organization_usage_limit_exceeded", Dialect::openai, 429,
             R"({"error":{"message":"Usage limit reached.","type":"insufficient_quota","param":null,"code":"organization_usage_limit_exceeded"}})",
             Owner::quota, "organization_usage_limit_exceeded"},
            {"openai 401 invalid authentication", Dialect::openai, 401,
             R"({"error":{"message":"Incorrect API key provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}})",
             Owner::auth, "invalid_api_key"},
            {"openai 403 region not supported", Dialect::openai, 403,
             R"({"error":{"message":"Country, region, or territory not supported","type":"request_forbidden","param":null,"code":"unsupported_country_region_territory"}})",
             Owner::auth, "unsupported_country_region_territory"},
            {"openai 500 server_error is bare", Dialect::openai, 500,
             R"({"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}})",
             Owner::unknown, "server_error"},
            {"openai 500 naming the context length", Dialect::openai, 500,
             R"({"error":{"message":"The server had an error processing your request: the input (messages) is longer than the model's context window.","type":"server_error","param":null,"code":null}})",
             Owner::request, "server_error"},
            {"openai 503 server_is_overloaded", Dialect::openai, 503,
             R"({"error":{"message":"The engine is currently overloaded, please try again later","type":"service_unavailable_error","param":null,"code":"server_is_overloaded"}})",
             Owner::transient, "server_is_overloaded"},
            {"openai 503 slow down", Dialect::openai, 503,
             R"({"error":{"message":"Slow Down","type":"service_unavailable_error","param":null,"code":null}})",
             Owner::transient, "service_unavailable_error"},
            {"openai 400 context_length_exceeded", Dialect::openai, 400,
             R"({"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})",
             Owner::request, "context_length_exceeded"},
            {"openai 400 content_policy_violation", Dialect::openai, 400,
             R"({"error":{"message":"Your request was rejected as a result of our safety system.","type":"invalid_request_error","param":null,"code":"content_policy_violation"}})",
             Owner::policy, "content_policy_violation"},
            {"openai 400 content_filter", Dialect::openai, 400,
             R"({"error":{"message":"The response was filtered.","type":null,"param":"prompt","code":"content_filter"}})",
             Owner::policy, "content_filter"},
            {"openai 422 unprocessable", Dialect::openai, 422,
             R"({"error":{"message":"Invalid schema for response_format","type":"invalid_request_error","param":null,"code":null}})",
             Owner::request, "invalid_request_error"},
            {"openai 400 prefill not supported", Dialect::openai, 400,
             R"({"error":{"message":"This model does not support an assistant message prefill: the last message must come from the user or a tool.","type":"invalid_request_error","param":null,"code":"unsupported_value"}})",
             Owner::request, "unsupported_value"},

            // ---- Anthropic (section 2.4) ----
            {"anthropic 429 rate_limit_error", Dialect::anthropic, 429,
             R"({"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"},"request_id":"req_011CS"})",
             Owner::rate, "rate_limit_error"},
            {"anthropic 429 monthly usage quota", Dialect::anthropic, 429,
             R"({"type":"error","error":{"type":"rate_limit_error","message":"Your organization has exceeded its monthly usage quota for this API; requests are refused until the limit is raised in Plans & Billing."},"request_id":"req_1"})",
             Owner::quota, "rate_limit_error"},
            {"anthropic 402 billing_error", Dialect::anthropic, 402,
             R"({"type":"error","error":{"type":"billing_error","message":"Your credit balance is too low to access the Anthropic API.","details":null},"request_id":"req_1"})",
             Owner::quota, "billing_error"},
            {"anthropic 400 credit balance too low", Dialect::anthropic, 400,
             R"({"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."},"request_id":"req_1"})",
             Owner::quota, "invalid_request_error"},
            {"anthropic 529 overloaded_error", Dialect::anthropic, 529,
             R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"})",
             Owner::transient, "overloaded_error"},
            {"anthropic 500 api_error is bare", Dialect::anthropic, 500,
             R"({"type":"error","error":{"type":"api_error","message":"Internal server error"},"request_id":"req_1"})",
             Owner::unknown, "api_error"},
            {"anthropic 500 naming the prompt length", Dialect::anthropic, 500,
             R"({"type":"error","error":{"type":"api_error","message":"Internal server error while processing the input: prompt is too long for the context window"},"request_id":"req_1"})",
             Owner::request, "api_error"},
            {"anthropic 504 timeout_error", Dialect::anthropic, 504,
             R"({"type":"error","error":{"type":"timeout_error","message":"Request timed out"},"request_id":"req_1"})",
             Owner::transient, "timeout_error"},
            {"anthropic 400 invalid_request_error", Dialect::anthropic, 400,
             R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208719 tokens > 200000 maximum"},"request_id":"req_1"})",
             Owner::request, "invalid_request_error"},
            {"anthropic 401 authentication_error", Dialect::anthropic, 401,
             R"({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_1"})",
             Owner::auth, "authentication_error"},
            {"anthropic 403 permission_error", Dialect::anthropic, 403,
             R"({"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."},"request_id":"req_1"})",
             Owner::auth, "permission_error"},
            {"anthropic 404 not_found_error", Dialect::anthropic, 404,
             R"({"type":"error","error":{"type":"not_found_error","message":"model: claude-x"},"request_id":"req_1"})",
             Owner::request, "not_found_error"},
            {"anthropic 413 request_too_large", Dialect::anthropic, 413,
             R"({"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."},"request_id":"req_1"})",
             Owner::request, "request_too_large"},
            {"anthropic 400 content filtering policy", Dialect::anthropic, 400,
             R"({"type":"error","error":{"type":"invalid_request_error","message":"Output blocked by content filtering policy"},"request_id":"req_1"})",
             Owner::policy, "invalid_request_error"},

            // ---- Gemini (section 3.4) ----
            {"gemini 429 per-minute QuotaFailure with RetryInfo", Dialect::gemini, 429,
             R"({"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED",
  "details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier","quotaDimensions":{"location":"global","model":"gemini-2.0-flash"}}]},
             {"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},
             {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"26s"}]}})",
             Owner::rate, "RESOURCE_EXHAUSTED"},
            {"gemini 429 per-day QuotaFailure", Dialect::gemini, 429, R"({"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_requests","quotaId":"GenerateRequestsPerDayPerProjectPerModel"}]}]}})",
             Owner::quota, "RESOURCE_EXHAUSTED"},
            {"gemini 429 free tier limit 0", Dialect::gemini, 429,
             R"({"error":{"code":429,"message":"You exceeded your current quota. Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0, model: gemini-2.5-pro","status":"RESOURCE_EXHAUSTED"}})",
             Owner::quota, "RESOURCE_EXHAUSTED"},
            // Google's bodies without a QuotaFailure name the window in words (classifier.cpp,
            // names_daily_limit).
            {"gemini 429 per-minute limit in words without quotaId (deprecated-generative-ai-python#206)",
             Dialect::gemini, 429,
             R"({"error":{"code":429,"message":"Quota exceeded for quota metric 'Generate Content API requests per minute' and limit 'GenerateContent request limit per minute for a region' of service 'generativelanguage.googleapis.com' for consumer 'project_number:1'.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"googleapis.com"}]}})",
             Owner::rate, "RESOURCE_EXHAUSTED"},
            {"gemini 429 per-day limit in words without quotaId and with RetryInfo (gemini-cli#10513)",
             Dialect::gemini, 429,
             R"({"error":{"code":429,"message":"Quota exceeded for quota metric 'Gemini 2.5 Pro Requests' and limit 'Gemini 2.5 Pro Requests per day per user per tier' of service 'cloudcode-pa.googleapis.com' for consumer 'project_number:1'.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"googleapis.com"},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"10s"}]}})",
             Owner::quota, "RESOURCE_EXHAUSTED"},
            {"gemini 429 quota wording without details", Dialect::gemini, 429,
             R"({"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED"}})",
             Owner::quota, "RESOURCE_EXHAUSTED"},
            {"gemini 429 resource exhausted without quota wording", Dialect::gemini, 429,
             R"({"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}})",
             Owner::rate, "RESOURCE_EXHAUSTED"},
            {"gemini 503 UNAVAILABLE", Dialect::gemini, 503,
             R"({"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}})",
             Owner::transient, "UNAVAILABLE"},
            {"gemini 503 high demand", Dialect::gemini, 503,
             R"({"error":{"code":503,"message":"This model is currently experiencing high demand. Spikes in demand are usually temporary. Please try again later.","status":"UNAVAILABLE"}})",
             Owner::transient, "UNAVAILABLE"},
            {"gemini 400 API_KEY_INVALID", Dialect::gemini, 400,
             R"({"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}})",
             Owner::auth, "INVALID_ARGUMENT"},
            {"gemini 400 INVALID_ARGUMENT", Dialect::gemini, 400,
             R"({"error":{"code":400,"message":"The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}})",
             Owner::request, "INVALID_ARGUMENT"},
            {"gemini 400 FAILED_PRECONDITION", Dialect::gemini, 400,
             R"({"error":{"code":400,"message":"User location is not supported for the API use.","status":"FAILED_PRECONDITION"}})",
             Owner::request, "FAILED_PRECONDITION"},
            {"gemini 400 blocked by safety", Dialect::gemini, 400,
             R"({"error":{"code":400,"message":"The request was blocked by the content safety policy.","status":"INVALID_ARGUMENT"}})",
             Owner::policy, "INVALID_ARGUMENT"},
            {"gemini 403 PERMISSION_DENIED", Dialect::gemini, 403,
             R"({"error":{"code":403,"message":"Method doesn't allow unregistered callers.","status":"PERMISSION_DENIED"}})",
             Owner::auth, "PERMISSION_DENIED"},
            {"gemini 404 NOT_FOUND", Dialect::gemini, 404,
             R"({"error":{"code":404,"message":"models/gemini-x is not found for API version v1beta","status":"NOT_FOUND"}})",
             Owner::request, "NOT_FOUND"},
            {"gemini 500 INTERNAL is bare", Dialect::gemini, 500,
             R"({"error":{"code":500,"message":"An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting","status":"INTERNAL"}})",
             Owner::unknown, "INTERNAL"},
            {"gemini 500 naming the input", Dialect::gemini, 500,
             R"({"error":{"code":500,"message":"Internal error while processing the input: the input token count exceeds the context window.","status":"INTERNAL"}})",
             Owner::request, "INTERNAL"},
            {"gemini 504 DEADLINE_EXCEEDED", Dialect::gemini, 504,
             R"({"error":{"code":504,"message":"Deadline expired before operation could complete.","status":"DEADLINE_EXCEEDED"}})",
             Owner::transient, "DEADLINE_EXCEEDED"},

            // ---- bodies that are not JSON (a proxy's page) ----
            {"502 html page from a proxy", Dialect::openai, 502, "<html><body>Bad Gateway</body></html>",
             Owner::transient, "502"},
            {"500 empty body", Dialect::anthropic, 500, "", Owner::unknown, "500"},
            {"408 request timeout", Dialect::openai, 408, "", Owner::transient, "408"},
            {"501 not implemented", Dialect::gemini, 501, "", Owner::request, "501"},
};

const BodyRow& row_named(std::string_view name) {
  for (const auto& row : body_rows)
    if (row.name == name) return row;
  throw std::logic_error("no row " + std::string(name));
}

Observation http(Dialect dialect, int status, std::string body, Headers headers = {}) {
  Observation o;
  o.dialect = dialect;
  o.status = status;
  o.body = std::move(body);
  o.headers = std::move(headers);
  return o;
}

Observation event(TransportEvent e, int visible_tokens = 0) {
  Observation o;
  o.status = (e == TransportEvent::reset_before_response || e == TransportEvent::connect_failed ||
              e == TransportEvent::timeout_no_byte)
                 ? 0
                 : 200;
  o.event = e;
  o.visible_tokens = visible_tokens;
  return o;
}

}  // namespace

TEST_CASE("every provider-wire error body gets the owner its detail says, never commit", "[classifier]") {
  for (const auto& row : body_rows) {
    INFO(row.name);
    auto c = classify(http(row.dialect, row.status, row.body));
    CHECK(c.owner == row.owner);
    CHECK(c.commit == CommitState::none);
    CHECK(c.reason.find(row.reason_token) != std::string::npos);
  }
}

TEST_CASE("429 rate vs quota is decided by the detail, not by the status", "[classifier]") {
  // Same status, same dialect, opposite owners: only the body differs.
  auto rate = classify(http(Dialect::openai, 429,
                            R"({"error":{"type":"requests","code":"rate_limit_exceeded","message":"x"}})"));
  auto quota =
      classify(http(Dialect::openai, 429,
                    R"({"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"x"}})"));
  CHECK(rate.owner == Owner::rate);
  CHECK(quota.owner == Owner::quota);
  // A 429 with nothing to go by is a rate limit.
  CHECK(classify(http(Dialect::anthropic, 429, "")).owner == Owner::rate);
}

TEST_CASE("Gemini RetryInfo.retryDelay is the retry-after when no header gives one", "[classifier]") {
  const auto& row = row_named("gemini 429 per-minute QuotaFailure with RetryInfo");
  auto c = classify(http(Dialect::gemini, 429, row.body));
  REQUIRE(c.retry_after_ms);
  CHECK(*c.retry_after_ms == Approx(26000));
  // A header wins over the body.
  auto h = classify(http(Dialect::gemini, 429, row.body, {{"retry-after", "3"}}));
  CHECK(*h.retry_after_ms == Approx(3000));
  // A body without RetryInfo gives none.
  CHECK_FALSE(classify(http(Dialect::gemini, 429, row_named("gemini 429 per-day QuotaFailure").body))
                  .retry_after_ms.has_value());
}

TEST_CASE("rate 429 headers: retry-after-ms wins over retry-after seconds", "[classifier]") {
  const char* body = R"({"type":"error","error":{"type":"rate_limit_error","message":"slow down"}})";
  auto both =
      classify(http(Dialect::anthropic, 429, body, {{"retry-after", "2"}, {"retry-after-ms", "1500.5"}}));
  REQUIRE(both.retry_after_ms);
  CHECK(*both.retry_after_ms == Approx(1500.5));
  auto seconds = classify(http(Dialect::anthropic, 429, body, {{"retry-after", "2"}}));
  CHECK(*seconds.retry_after_ms == Approx(2000));
  auto none = classify(http(Dialect::anthropic, 429, body));
  CHECK_FALSE(none.retry_after_ms.has_value());
}

TEST_CASE("transport events: owner and commit state before and after visible tokens", "[classifier]") {
  struct Row {
    TransportEvent event;
    Owner owner;
    CommitState before;  // no visible token yet
  };
  const Row rows[] = {
      {TransportEvent::connect_failed, Owner::transient, CommitState::none},
      {TransportEvent::reset_before_response, Owner::transient, CommitState::none},
      {TransportEvent::timeout_no_byte, Owner::transient, CommitState::unknown},
      {TransportEvent::stream_closed, Owner::transient, CommitState::none},
      {TransportEvent::stream_idle_timeout, Owner::transient, CommitState::none},
      {TransportEvent::stream_error_event, Owner::transient, CommitState::none},
      {TransportEvent::malformed_event, Owner::transient, CommitState::none},
  };
  for (auto dialect : {Dialect::openai, Dialect::anthropic, Dialect::gemini}) {
    for (const auto& row : rows) {
      INFO(to_string(dialect) << " " << static_cast<int>(row.event));
      auto o = event(row.event);
      o.dialect = dialect;
      auto before = classify(o);
      CHECK(before.owner == row.owner);
      CHECK(before.commit == row.before);
      CHECK_FALSE(before.reason.empty());
      o.visible_tokens = 3;
      CHECK(classify(o).commit == CommitState::committed);
      o.visible_tokens = 0;
      o.tool_committed = true;
      CHECK(classify(o).commit == CommitState::committed);
    }
  }
}

TEST_CASE("a silent timeout is owner transient, commit unknown unless the workflow is replay safe",
          "[classifier]") {
  auto o = event(TransportEvent::timeout_no_byte);
  CHECK(classify(o).owner == Owner::transient);
  CHECK(classify(o).commit == CommitState::unknown);
  o.replay_safe = true;
  CHECK(classify(o).commit == CommitState::none);
  CHECK(classify(o).owner == Owner::transient);
  // No status at all is the same silence.
  Observation none;
  CHECK(classify(none).owner == Owner::transient);
  CHECK(classify(none).commit == CommitState::unknown);
  // A bare 500 answered: the server may have done the work, owner unknown (rule 3), replay safe or not.
  auto bare = http(Dialect::openai, 500, "");
  bare.replay_safe = true;
  CHECK(classify(bare).owner == Owner::unknown);
  CHECK(classify(bare).commit == CommitState::none);
  // A reset before any byte is proof that nothing was answered: none even when not replay safe.
  CHECK(classify(event(TransportEvent::reset_before_response)).commit == CommitState::none);
  // A tool side effect already ran: committed, replay safe or not.
  o.tool_committed = true;
  CHECK(classify(o).commit == CommitState::committed);
}

TEST_CASE("in-stream error events of each dialect are transient and named", "[classifier]") {
  struct Row {
    Dialect dialect;
    const char* data;
    const char* token;
  };
  const Row rows[] = {
      {Dialect::openai, R"({"error":{"message":"boom","type":"server_error","param":null,"code":null}})",
       "server_error"},
      {Dialect::anthropic, R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})",
       "overloaded_error"},
      {Dialect::gemini, R"({"error":{"code":503,"message":"overloaded mid-stream","status":"UNAVAILABLE"}})",
       "UNAVAILABLE"},
  };
  for (const auto& row : rows) {
    auto o = event(TransportEvent::stream_error_event, 2);
    o.dialect = row.dialect;
    o.body = row.data;
    auto c = classify(o);
    CHECK(c.owner == Owner::transient);
    CHECK(c.commit == CommitState::committed);
    CHECK(c.reason.find(row.token) != std::string::npos);
  }
}

TEST_CASE("a complete 200 answer: success, contract break, or content-filter finish", "[classifier]") {
  auto ok = http(Dialect::openai, 200, "");
  ok.visible_tokens = 5;
  auto c = classify(ok);
  CHECK(c.owner == Owner::none);
  CHECK(c.commit == CommitState::committed);

  auto no_sentinel = ok;
  no_sentinel.event = TransportEvent::missing_terminator;
  CHECK(classify(no_sentinel).owner == Owner::none);

  auto contract = http(Dialect::anthropic, 200, "");
  contract.contract_violation = true;
  CHECK(classify(contract).owner == Owner::contract);
  CHECK(classify(contract).commit == CommitState::none);

  for (const char* finish : {"content_filter", "refusal", "SAFETY"}) {
    auto filtered = http(Dialect::gemini, 200, "");
    filtered.finish_reason = finish;
    INFO(finish);
    CHECK(classify(filtered).owner == Owner::policy);
  }
  auto stopped = http(Dialect::gemini, 200, "");
  stopped.finish_reason = "STOP";
  CHECK(classify(stopped).owner == Owner::none);
}

TEST_CASE("an error status after a tool side effect is committed", "[classifier]") {
  auto o = http(Dialect::openai, 503,
                R"({"error":{"message":"x","type":"service_unavailable_error","code":null}})");
  o.tool_committed = true;
  auto c = classify(o);
  CHECK(c.owner == Owner::transient);
  CHECK(c.commit == CommitState::committed);
}

TEST_CASE("classify_into overwrites a reused classification completely", "[classifier]") {
  Classification c;
  classify_into(http(Dialect::openai, 429,
                     R"({"error":{"type":"requests","code":"rate_limit_exceeded","message":"x"}})",
                     {{"retry-after", "5"}}),
                c);
  REQUIRE(c.retry_after_ms);
  auto reset = event(TransportEvent::reset_before_response);
  classify_into(reset, c);
  const auto fresh = classify(reset);
  CHECK(c.owner == fresh.owner);
  CHECK(c.commit == fresh.commit);
  CHECK(c.reason == fresh.reason);
  CHECK_FALSE(c.retry_after_ms.has_value());
}

TEST_CASE("retry-after: seconds, fractional, negative, HTTP date against the Date header or now",
          "[classifier]") {
  CHECK(*retry_after_from_headers({{"retry-after", "0"}}) == 0);
  CHECK(*retry_after_from_headers({{"retry-after", "1.5"}}) == Approx(1500));
  CHECK(*retry_after_from_headers({{"retry-after", "-4"}}) == 0);
  CHECK(*retry_after_from_headers({{"retry-after-ms", " 250 "}}) == Approx(250));
  CHECK(*retry_after_from_headers({{"Retry-After", "7"}}) == Approx(7000));  // names compared without case
  CHECK_FALSE(retry_after_from_headers({{"retry-after", "soon"}}).has_value());
  CHECK_FALSE(retry_after_from_headers({}).has_value());

  const Headers dated = {{"retry-after", "Sun, 06 Nov 1994 08:50:07 GMT"},
                         {"date", "Sun, 06 Nov 1994 08:49:37 GMT"}};
  CHECK(*retry_after_from_headers(dated) == Approx(30000));
  const Headers past = {{"retry-after", "Sun, 06 Nov 1994 08:49:00 GMT"},
                        {"date", "Sun, 06 Nov 1994 08:49:37 GMT"}};
  CHECK(*retry_after_from_headers(past) == 0);
  // No Date header: measured against the caller's wall time, or unknown without one.
  const Headers undated = {{"retry-after", "Sun, 06 Nov 1994 08:49:47 GMT"}};
  CHECK(*retry_after_from_headers(undated, 784111777000.0) == Approx(10000));
  CHECK_FALSE(retry_after_from_headers(undated).has_value());
}

TEST_CASE("HTTP dates parse in IMF-fixdate and RFC 850 forms", "[classifier]") {
  // 784111777 s = 1994-11-06T08:49:37Z (the RFC 9110 example).
  CHECK(*parse_http_date_unix_ms("Sun, 06 Nov 1994 08:49:37 GMT") == 784111777000.0);
  CHECK(*parse_http_date_unix_ms("Sunday, 06-Nov-94 08:49:37 GMT") == 784111777000.0);
  CHECK(*parse_http_date_unix_ms("Thu, 01 Jan 1970 00:00:00 GMT") == 0.0);
  CHECK(*parse_http_date_unix_ms("Tue, 29 Feb 2028 12:00:00 GMT") == 1835438400000.0);
  CHECK_FALSE(parse_http_date_unix_ms("Sun, 06 Nov 1994 08:49:37 PST").has_value());
  CHECK_FALSE(parse_http_date_unix_ms("Sun, 06 Foo 1994 08:49:37 GMT").has_value());
  CHECK_FALSE(parse_http_date_unix_ms("06 Nov 1994").has_value());
}

TEST_CASE("protobuf durations parse as Gemini writes them", "[classifier]") {
  CHECK(*parse_proto_duration_ms("26s") == Approx(26000));
  CHECK(*parse_proto_duration_ms("0.5s") == Approx(500));
  CHECK(*parse_proto_duration_ms("1.250s") == Approx(1250));
  CHECK_FALSE(parse_proto_duration_ms("26").has_value());
  CHECK_FALSE(parse_proto_duration_ms("-1s").has_value());
  CHECK_FALSE(parse_proto_duration_ms("s").has_value());
}

#if __has_include("llmchaos/mockprovider/dialect.hpp")
// When the test links the mock provider (test_client does), cross-check against the bodies the mock
// really renders: every fault's error body must classify as SPEC section 2 says.
#include "llmchaos/mockprovider/dialect.hpp"

TEST_CASE("the mock's rendered error bodies classify as SPEC section 2 says, in every dialect",
          "[classifier]") {
  using mock::ErrorKind;
  const std::pair<ErrorKind, Owner> rows[] = {
      {ErrorKind::rate_limit, Owner::rate},     {ErrorKind::quota, Owner::quota},
      {ErrorKind::payment, Owner::quota},       {ErrorKind::overloaded, Owner::transient},
      {ErrorKind::server, Owner::unknown},      {ErrorKind::server_context, Owner::request},
      {ErrorKind::bad_request, Owner::request}, {ErrorKind::auth, Owner::auth},
      {ErrorKind::policy, Owner::policy},       {ErrorKind::prefill, Owner::request},
      {ErrorKind::not_found, Owner::request},   {ErrorKind::invalid_json, Owner::request},
      {ErrorKind::too_large, Owner::request},   {ErrorKind::missing_key, Owner::auth},
  };
  for (auto dialect : mock::registered_dialects()) {
    if (!has_codec(dialect)) continue;  // a dialect the mock serves before the client reads it
    const auto& spec = mock::dialect_spec(dialect);
    for (const auto& [kind, owner] : rows) {
      mock::ErrorContext ctx;
      ctx.request_id = "req_1";
      auto reply = spec.error(kind, ctx);
      INFO(to_string(dialect) << " kind " << static_cast<int>(kind) << ": " << reply.status << " "
                              << reply.body);
      // With the headers the mock sends beside the body (Bedrock types its errors in x-amzn-ErrorType).
      auto c = classify(http(dialect, reply.status, reply.body, reply.headers));
      CHECK(c.owner == owner);
    }
    // Gemini's rate limit carries its retry hint in RetryInfo.
    mock::ErrorContext ctx;
    ctx.retry_after_ms = 1500;
    auto rate = spec.error(ErrorKind::rate_limit, ctx);
    auto c = classify(http(dialect, rate.status, rate.body));
    CHECK(c.owner == Owner::rate);
    if (dialect == Dialect::gemini) {
      REQUIRE(c.retry_after_ms);
      CHECK(*c.retry_after_ms == Approx(1500));
    }
  }
}
#endif

// Message wording is matched on a lower-cased copy made 16 bytes at a time, the last block overlapping
// the one before: the wording must be found at every offset and message length, across block edges,
// in messages shorter than a block, and in a second message field; bytes above 0x7f are not letters.
TEST_CASE("message wording is found ignoring case at any offset and length", "[classifier]") {
  for (std::size_t before = 0; before <= 40; ++before)
    for (std::size_t after : {0, 1, 7, 16, 17}) {
      const std::string message = std::string(before, 'X') + "Invalid API Key" + std::string(after, 'Y');
      INFO(message);
      CHECK(classify(http(Dialect::openai, 400, R"({"error":{"message":")" + message + R"("}})")).owner ==
            Owner::auth);
      const std::string body =
          R"({"error":{"message":"Bad request","detail":{"message":")" + message + R"("}}})";
      CHECK(classify(http(Dialect::openai, 400, body)).owner == Owner::auth);
    }
  CHECK(classify(http(Dialect::openai, 400, R"({"error":{"message":"INVALID API KEY"}})")).owner ==
        Owner::auth);
  // "K" as two UTF-8 bytes that are no ASCII letter, and a word split across two messages: no match.
  CHECK(classify(http(Dialect::openai, 400,
                      "{\"error\":{\"message\":\"Invalid API \xc3\x8b"
                      "ey, padded past sixteen\"}}"))
            .owner == Owner::request);
  CHECK(classify(http(Dialect::openai, 400, R"({"a":{"message":"invalid api"},"b":{"message":"key"}})"))
            .owner == Owner::request);
}

// Strings are skipped a run at a time up to a quote or a backslash, a backslash taking the next byte
// along: an escaped quote never ends a string, an escaped backslash before a quote does not escape it,
// wherever they fall against the 16-byte blocks.
TEST_CASE("escapes inside error-body strings never end them early or late", "[classifier]") {
  for (std::size_t pad = 0; pad <= 34; ++pad) {
    const std::string filler(pad, 'x');
    INFO("pad " << pad);
    // Key-like text inside a message: escaped quotes, so no field.
    CHECK(classify(http(Dialect::openai, 429,
                        R"({"error":{"message":")" + filler +
                            R"(say \"code\":\"insufficient_quota\" here","code":"rate_limit_exceeded"}})"))
              .owner == Owner::rate);
    // One escaped quote in a message: the string goes on to the real quote, and the next field counts.
    CHECK(classify(http(Dialect::openai, 429,
                        R"({"error":{"message":")" + filler + R"(a \" b","code":"insufficient_quota"}})"))
              .owner == Owner::quota);
    // A message ending in an escaped backslash: the quote after it closes the string.
    CHECK(classify(http(Dialect::openai, 429,
                        R"({"error":{"message":")" + filler + R"(C:\\","code":"insufficient_quota"}})"))
              .owner == Owner::quota);
    // An escaped backslash, then an escaped quote: the string goes on.
    CHECK(classify(http(Dialect::openai, 429,
                        R"({"error":{"message":")" + filler +
                            R"(\\\",\"code\":\"insufficient_quota","code":"rate_limit_exceeded"}})"))
              .owner == Owner::rate);
  }
  // Short bodies, and a body cut after a backslash: the fields before it still count.
  CHECK(classify(http(Dialect::openai, 429, R"({"code":"x\""})")).owner == Owner::rate);
  CHECK(classify(http(Dialect::openai, 429, R"({"code":"insufficient_quota","message":"abc\)")).owner ==
        Owner::quota);
  CHECK(classify(http(Dialect::openai, 429, R"({"message":"abc\)")).owner == Owner::rate);
}
