#include "llmchaos/client/classifier.hpp"

#include <fmt/format.h>

#include <charconv>
#include <initializer_list>
#include <optional>

#include "llmchaos/client/dialect_codec.hpp"
#include "llmchaos/client/error_detail.hpp"
#include "llmchaos/core/parse.hpp"

namespace llmchaos::client {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (byte_scan::ascii_lower(a[i]) != byte_scan::ascii_lower(b[i])) return false;
  return true;
}

using Key = DetailKey;

// ---- rules ----------------------------------------------------------------------------------------

struct Verdict {
  Owner owner;
  std::string_view why;  // the rule, for the reason text
};

// Billing / credit exhaustion, whatever the status: a fallback with its own quota may serve, a retry
// of this route cannot. Exact codes first (cheap), wording second.
bool billing_code(const ErrorDetail& d) {
  auto in = [&](Key key) {
    return d.any(key, {"insufficient_quota", "billing_hard_limit_reached", "billing_not_active",
                       "credit_balance_exhausted", "organization_spend_limit_exceeded",
                       "project_spend_limit_exceeded", "organization_usage_limit_exceeded", "billing_error"});
  };
  return in(Key::code) || in(Key::type);
}
// "API usage limits": Anthropic's console spend limit, a 400 invalid_request_error
// (anthropics/claude-code#2127); matched lowered, as every message is.
bool billing_wording(const ErrorDetail& d) {
  return d.message_has({"credit balance", "insufficient quota", "insufficient_quota", "api usage limits"});
}

bool says_auth(const ErrorDetail& d) {
  return d.any(Key::reason, {"API_KEY_INVALID", "API_KEY_SERVICE_BLOCKED"}) ||
         d.any(Key::type, {"authentication_error", "permission_error"}) ||
         d.any(Key::code, {"invalid_api_key"}) ||
         d.message_has({"api key not valid", "invalid api key", "incorrect api key", "invalid x-api-key"});
}

bool says_policy(const ErrorDetail& d) {
  return d.any(Key::code, {"content_policy_violation", "content_filter"}) ||
         d.any(Key::type, {"content_policy_violation", "content_filter"}) ||
         d.any(Key::reason, {"SAFETY", "BLOCKED_REASON_UNSPECIFIED", "PROHIBITED_CONTENT"}) ||
         d.message_has({"content policy", "content_policy", "content filter", "content_filter",
                        "content management policy", "usage policies", "safety", "blocked"});
}

bool names_the_input(const ErrorDetail& d) {
  return d.any(Key::code, {"context_length_exceeded", "string_above_max_length"}) ||
         d.message_has({"context length", "context_length", "context window", "too long", "too many tokens",
                        "maximum context", "exceeds the maximum", "token limit", "input is too large"});
}

// The window of the limit a Google 429 names, by one rule whether or not the body carries a
// google.rpc.QuotaFailure: its quotaId ("GenerateRequestsPerDayPerProjectPerModel-FreeTier",
// "GenerateContentInputTokensPerModelPerMinute-FreeTier") or the wording of the limit, which bodies
// without a quotaId spell out: "Quota exceeded for quota metric 'Generate Content API requests per minute'
// and limit 'GenerateContent request limit per minute for a region' of service
// 'generativelanguage.googleapis.com'" (google-gemini/deprecated-generative-ai-python#206,
// home-assistant/core#132832, google/generative-ai-docs#236) is a rate limit; "... limit 'Gemini 2.5 Pro
// Requests per day per user per tier' of service 'cloudcode-pa.googleapis.com'" (google-gemini/gemini-cli
// #10513, #2047) is a daily quota. Both say "Quota exceeded" and both carry ErrorInfo.reason
// RATE_LIMIT_EXCEEDED, so neither tells them apart; only the window does.
bool names_daily_limit(const ErrorDetail& d) {
  return d.any_contains(Key::quotaId, {"PerDay"}) || d.message_has({"per day"});
}
bool names_short_limit(const ErrorDetail& d) {
  return d.any_contains(Key::quotaId, {"PerMinute", "PerSecond"}) ||
         d.message_has({"per minute", "per second"});
}

// 429: rate unless the detail says quota. Billing codes and OpenAI's explicit rate codes decide first.
// Google's 429 says "You exceeded your current quota" or "Quota exceeded" even for a per-minute limit,
// so the window it names (quotaId or the limit's wording, above) and RetryInfo decide before any
// quota wording ("monthly usage quota", "spend limit"...); the default is rate.
Verdict owner_of_429(const ErrorDetail& d) {
  if (billing_code(d)) return {Owner::quota, "billing / quota exhausted"};
  if (d.any(Key::code, {"rate_limit_exceeded"}) || d.any(Key::type, {"requests", "tokens"}))
    return {Owner::rate, "rate limit"};
  if (names_daily_limit(d)) return {Owner::quota, "daily quota (per day)"};
  if (d.message_has({"limit: 0"})) return {Owner::quota, "no quota on this tier (limit: 0)"};
  if (names_short_limit(d)) return {Owner::rate, "per-minute quota"};
  if (d.has(Key::retryDelay)) return {Owner::rate, "RetryInfo present"};
  if (billing_wording(d) || d.message_has({"current quota", "usage quota", "quota exceeded", "monthly",
                                           "usage limit", "spend limit", "billing"}))
    return {Owner::quota, "quota wording"};
  return {Owner::rate, "rate limit"};
}

Verdict owner_of_status(int status, const ErrorDetail& d) {
  if (status == 402) return {Owner::quota, "payment required"};
  if (status == 429) return owner_of_429(d);
  if (status >= 400 && status < 500 && (billing_code(d) || billing_wording(d)))
    return {Owner::quota, "billing / quota exhausted"};
  if (status == 401 || status == 403) return {Owner::auth, "credentials"};
  if (status == 408 || status == 409) return {Owner::transient, "request timeout / conflict"};
  if (status >= 400 && status < 500) {
    if (says_auth(d)) return {Owner::auth, "credentials"};
    if (says_policy(d)) return {Owner::policy, "content policy"};
    return {Owner::request, "invalid request"};
  }
  if (status == 500) {
    if (names_the_input(d)) return {Owner::request, "500 naming the input"};
    return {Owner::unknown, "bare 500: the server may have done the work"};
  }
  if (status == 501) return {Owner::request, "not implemented"};
  if (status == 502 || status == 503 || status == 504 || status == 529)
    return {Owner::transient, "overloaded / unavailable"};
  if (status >= 500) return {Owner::unknown, "server error"};
  return {Owner::request, "unexpected status"};  // 1xx / 3xx: the client is talking to the wrong thing
}

bool content_filter_finish(std::string_view finish_reason) {
  for (auto r :
       {"content_filter", "refusal", "SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION"})
    if (finish_reason == r) return true;
  return false;
}

// ---- numbers ------------------------------------------------------------------------------------

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The whole text is one finite number.
std::optional<double> parse_number(std::string_view s) {
  s = trim(s);
  // Header values are almost always small integers: skip the general parser for them.
  if (!s.empty() && s.size() <= 12) {
    long long whole = 0;
    std::size_t k = 0;
    for (; k < s.size() && s[k] >= '0' && s[k] <= '9'; ++k) whole = whole * 10 + (s[k] - '0');
    if (k == s.size()) return static_cast<double>(whole);
  }
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || !(v == v)) return std::nullopt;
  return v;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

std::optional<std::string_view> header_value(const std::vector<std::pair<std::string, std::string>>& headers,
                                             std::string_view name) {
  for (const auto& [k, v] : headers)
    if (iequals(k, name)) return std::string_view(v);
  return std::nullopt;
}

// Pieces of a reason text: views and a status code.
void append_reason_piece(ReasonText& out, std::string_view s) {
  out += s;
}
void append_reason_piece(ReasonText& out, int v) {
  const fmt::format_int digits(v);
  out += std::string_view(digits.data(), digits.size());
}

// ---- errors typed outside the body (ErrorTraits: Bedrock's x-amzn-ErrorType, exception frames) ------

// The first entry named `type` ("ThrottlingException", or a frame's "throttlingException") whose
// message condition, if it has one, the error's message meets.
const ErrorTypeOwner* entry_of(std::span<const ErrorTypeOwner> entries, std::string_view type,
                               const ErrorDetail* d = nullptr) {
  if (type.empty()) return nullptr;
  for (const auto& e : entries)
    if (iequals(e.name, type) && (e.message_has.empty() || (d && d->message_has({e.message_has})))) return &e;
  return nullptr;
}

// The error type the dialect's header names, up to a ':' (AWS may append the type's namespace).
std::string_view header_type(const Observation& obs, const ErrorTraits& traits) {
  const auto value = header_value(obs.headers, traits.type_header);
  if (!value) return {};
  return trim(value->substr(0, value->find(':')));
}

// The dialect's own retry hint in milliseconds (Bedrock's x-amz-retry-after), if it sent one.
std::optional<double> typed_retry_after(const Observation& obs, const ErrorTraits& traits) {
  if (traits.retry_after_ms_header.empty()) return std::nullopt;
  const auto value = header_value(obs.headers, traits.retry_after_ms_header);
  if (!value) return std::nullopt;
  const auto v = parse_number(*value);
  if (!v) return std::nullopt;
  return *v < 0 ? 0.0 : *v;
}

}  // namespace

std::optional<double> parse_http_date_unix_ms(std::string_view text) {
  // "Sun, 06 Nov 1994 08:49:37 GMT" or "Sunday, 06-Nov-94 08:49:37 GMT": the day name is skipped.
  auto s = trim(text);
  auto comma = s.find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  s = trim(s.substr(comma + 1));
  const bool rfc850 = s.size() > 2 && s[2] == '-';
  const char sep = rfc850 ? '-' : ' ';
  auto take = [&](char until) -> std::string_view {
    auto p = s.find(until);
    auto part = s.substr(0, p);
    s = p == std::string_view::npos ? std::string_view{} : s.substr(p + 1);
    return part;
  };
  auto day = parse_int(take(sep));
  auto month_name = take(sep);
  auto year = parse_int(take(' '));
  auto hh = parse_int(take(':'));
  auto mm = parse_int(take(':'));
  auto ss = parse_int(take(' '));
  if (trim(s) != "GMT" || !day || !year || !hh || !mm || !ss) return std::nullopt;
  static constexpr std::string_view months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  unsigned month = 0;
  for (unsigned i = 0; i < 12; ++i)
    if (month_name == months[i]) month = i + 1;
  if (month == 0 || *day < 1 || *day > 31 || *hh > 23 || *mm > 59 || *ss > 60) return std::nullopt;
  int y = *year;
  if (rfc850 && y < 100) y += y < 70 ? 2000 : 1900;
  const long long days = days_from_civil(y, month, static_cast<unsigned>(*day));
  return static_cast<double>(((days * 24 + *hh) * 60 + *mm) * 60 + *ss) * 1000.0;
}

std::optional<double> parse_proto_duration_ms(std::string_view text) {
  auto s = trim(text);
  if (s.empty() || s.back() != 's') return std::nullopt;
  auto v = parse_number(s.substr(0, s.size() - 1));
  if (!v || *v < 0) return std::nullopt;
  return *v * 1000.0;
}

std::optional<double> retry_after_from_headers(
    const std::vector<std::pair<std::string, std::string>>& headers, double now_unix_ms) {
  if (auto ms = header_value(headers, "retry-after-ms"))
    if (auto v = parse_number(*ms)) return *v < 0 ? 0.0 : *v;
  auto ra = header_value(headers, "retry-after");
  if (!ra) return std::nullopt;
  if (auto seconds = parse_number(*ra)) return *seconds < 0 ? 0.0 : *seconds * 1000.0;
  auto at = parse_http_date_unix_ms(*ra);
  if (!at) return std::nullopt;
  std::optional<double> reference;
  if (auto date = header_value(headers, "date")) reference = parse_http_date_unix_ms(*date);
  if (!reference && now_unix_ms > 0) reference = now_unix_ms;
  if (!reference) return std::nullopt;  // a date with nothing to measure it against
  return *at > *reference ? *at - *reference : 0.0;
}

namespace {

// An error answered with a status (not 2xx): the status and body decide, unless the dialect's error
// type header names a type with an owner of its own.
void classify_status(const Observation& obs, const ErrorTraits* traits, Classification& c) {
  auto reason = [&](auto... parts) { (append_reason_piece(c.reason, parts), ...); };
  ErrorDetail d(obs.body);
  auto verdict = owner_of_status(obs.status, d);
  std::string_view token = d.token();
  if (traits) {
    const std::string_view type = header_type(obs, *traits);
    if (!type.empty()) token = type;
    if (const auto* e = entry_of(traits->types, type, &d); e && e->owner != Owner::none)
      verdict = {e->owner, e->why};
    c.retry_after_ms = typed_retry_after(obs, *traits);
  }
  c.owner = verdict.owner;
  c.commit = obs.visible_tokens > 0 || obs.tool_committed ? CommitState::committed : CommitState::none;
  if (!c.retry_after_ms) c.retry_after_ms = retry_after_from_headers(obs.headers, obs.now_unix_ms);
  if (!c.retry_after_ms)
    if (auto delay = d.first(Key::retryDelay); !delay.empty())
      c.retry_after_ms = parse_proto_duration_ms(delay);
  if (token.empty())
    reason(obs.status, std::string_view(" ("), verdict.why, std::string_view(")"));
  else
    reason(obs.status, std::string_view(" "), token, std::string_view(" ("), verdict.why,
           std::string_view(")"));
}

// A complete 2xx answer: a failure only when its finish says so or it breaks the output contract.
void classify_answer(const Observation& obs, const ErrorTraits* traits, Classification& c) {
  auto reason = [&](auto... parts) { (append_reason_piece(c.reason, parts), ...); };
  const ErrorTypeOwner* stop = traits ? entry_of(traits->failing_finishes, obs.finish_reason) : nullptr;
  if (content_filter_finish(obs.finish_reason) || stop) {
    c.owner = stop ? stop->owner : Owner::policy;
    reason(obs.status, std::string_view(" finish "), std::string_view(obs.finish_reason));
  } else if (obs.contract_violation) {
    c.owner = Owner::contract;
    reason(obs.status, std::string_view(" answer misses a required field"));
  }
}

}  // namespace

void classify_into(const Observation& obs, Classification& c) {
  c.owner = Owner::none;
  c.commit = CommitState::none;
  c.retry_after_ms.reset();
  c.reason.clear();
  const ErrorTraits* traits = codec_for(obs.dialect).errors;
  // Anything the caller already saw, or a side effect already run, cannot be taken back.
  const bool progressed = obs.visible_tokens > 0 || obs.tool_committed;
  auto after = [&](CommitState otherwise) { return progressed ? CommitState::committed : otherwise; };
  // A request that was sent and never answered (no byte back) is a transient failure whose result is
  // unknown: it may have been done. Only replay safety makes that moot (commit none: rules 4-7 decide).
  // The same silence whatever the fault behind it (no_response, post_commit_timeout, a plain answer
  // later than the timeout): the client cannot tell them apart. A bare 500 answered, so it is not this.
  const CommitState silent = obs.replay_safe ? CommitState::none : CommitState::unknown;
  auto transport = [&](Owner owner, CommitState commit, std::string_view why) {
    c.owner = owner;
    c.commit = after(commit);
    c.reason += why;
  };

  switch (obs.event) {
    case TransportEvent::connect_failed:
      return transport(Owner::transient, CommitState::none, "connect failed: nothing was sent");
    case TransportEvent::reset_before_response:
      return transport(Owner::transient, CommitState::none, "connection reset before any response byte");
    case TransportEvent::timeout_no_byte:
      return transport(Owner::transient, silent, "timeout: request sent, no byte back");
    case TransportEvent::stream_closed:
      return transport(Owner::transient, CommitState::none, "stream closed mid-body");
    case TransportEvent::stream_idle_timeout:
      return transport(Owner::transient, CommitState::none, "stream idle past the attempt timeout");
    case TransportEvent::malformed_event:
      return transport(Owner::transient, CommitState::none, "malformed stream event");
    case TransportEvent::stream_error_event: {
      ErrorDetail d(obs.body);
      if (auto delay = d.first(Key::retryDelay); !delay.empty())
        c.retry_after_ms = parse_proto_duration_ms(delay);
      // An exception frame's type says its owner (a throttling is rate, a validation request).
      const ErrorTypeOwner* typed = traits ? entry_of(traits->types, obs.error_type, &d) : nullptr;
      transport(typed ? typed->in_stream : Owner::transient, CommitState::none, "in-stream error event");
      auto token = obs.error_type.empty() ? d.token() : std::string_view(obs.error_type);
      if (!token.empty()) {
        c.reason += std::string_view(" ");
        c.reason += token;
      }
      return;
    }
    case TransportEvent::missing_terminator:  // complete at the HTTP level: judged as an answer
    case TransportEvent::none:
      break;
  }

  if (obs.status == 0) return transport(Owner::transient, silent, "no response status");
  if (obs.status >= 200 && obs.status < 300) {
    c.commit = after(CommitState::none);
    return classify_answer(obs, traits, c);
  }
  classify_status(obs, traits, c);
}

Classification classify(const Observation& obs) {
  Classification c;
  classify_into(obs, c);
  return c;
}

}  // namespace llmchaos::client
