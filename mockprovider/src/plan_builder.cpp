#include "plan_builder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace llmchaos::mock::plan_blocks {
namespace {
// What every plan carries but a head of its own: the fault, the dialect, the pacing, the model.
Plan headless_plan(const FaultInput& in, FaultKind kind, bool streamed) {
  Plan p;
  p.fault = kind;
  p.dialect = in.dialect.id;
  p.streamed = streamed;
  p.latency_ms = scaled(in, in.step.latency_ms);
  p.inter_event_ms = scaled(in, in.step.inter_event_ms);
  p.model = in.answer.model;
  return p;
}

// Status line, content type and request id: what every answer of the dialect carries.
Plan base_plan(const FaultInput& in, FaultKind kind, bool streamed) {
  using namespace std::string_view_literals;  // literals as views: no strlen per header
  Plan p = headless_plan(in, kind, streamed);
  p.headers.reserve(streamed ? 3 : 2);
  const auto stream_type = in.dialect.framing == StreamFraming::aws_eventstream
                               ? "application/vnd.amazon.eventstream"sv
                               : "text/event-stream"sv;
  p.headers.emplace_back("content-type"sv, streamed ? stream_type : "application/json"sv);
  if (streamed) p.headers.emplace_back("cache-control"sv, "no-cache"sv);
  p.headers.emplace_back(in.dialect.request_id_header, in.request_id);
  p.request_id = std::string(in.request_id);
  return p;
}

std::string format_ms(double ms) {
  if (ms == std::floor(ms)) return fmt::format("{}", static_cast<long long>(ms));
  return fmt::format("{:.3f}", ms);
}

// Seconds, whole when they are (a time scale can make them fractional: then up to 3 decimals).
std::string format_seconds(double ms) {
  const double s = ms / 1000.0;
  if (s == std::floor(s)) return fmt::format("{}", static_cast<long long>(s));
  auto text = fmt::format("{:.3f}", std::ceil(ms) / 1000.0);
  while (text.back() == '0') text.pop_back();
  return text;
}

// The civil date of a day count since 1970-01-01 (H. Hinnant's civil_from_days).
struct Civil {
  long long year;
  unsigned month, day, weekday;  // weekday 0 = Sunday
};
Civil civil_from_days(long long z) {
  const unsigned weekday = static_cast<unsigned>(z >= -4 ? (z + 4) % 7 : (z + 5) % 7 + 6);
  z += 719468;
  const long long era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned day = doy - (153 * mp + 2) / 5 + 1;
  const unsigned month = mp < 10 ? mp + 3 : mp - 9;
  return {static_cast<long long>(yoe) + era * 400 + (month <= 2), month, day, weekday};
}

// "Sun, 06 Nov 1994 08:49:37 GMT" (RFC 9110 IMF-fixdate) or "1994-11-06T08:49:37Z" (RFC 3339) of a
// whole number of Unix seconds.
std::string format_time(long long unix_s, bool rfc3339) {
  static constexpr std::string_view days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr std::string_view months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const long long day_count = unix_s >= 0 ? unix_s / 86400 : (unix_s - 86399) / 86400;
  const long long secs = unix_s - day_count * 86400;
  const Civil c = civil_from_days(day_count);
  const auto hh = secs / 3600, mm = secs / 60 % 60, ss = secs % 60;
  if (rfc3339) return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", c.year, c.month, c.day, hh, mm, ss);
  return fmt::format("{}, {:02} {} {:04} {:02}:{:02}:{:02} GMT", days[c.weekday], c.day, months[c.month - 1],
                     c.year, hh, mm, ss);
}
}  // namespace

double scaled(const FaultInput& in, double ms) {
  return ms * in.time_scale;
}

Plan answer_plan(const FaultInput& in, FaultKind kind) {
  return answer_plan(in, kind, in.answer);
}

Plan answer_plan(const FaultInput& in, FaultKind kind, const Answer& answer) {
  const int status = in.step.status.value_or(200);
  // A 2xx answer the upstream gives goes out under the upstream's own head: its plan renders none (the
  // content type and request id strings were built, then dropped, on every forwarded request).
  Plan p = in.body_forwarded && status / 100 == 2 ? headless_plan(in, kind, in.request.stream)
                                                  : base_plan(in, kind, in.request.stream);
  p.status = status;
  if (p.streamed && in.body_forwarded && fault_traits(kind).keeps_healthy_stream) {
    p.passes_upstream_stream = true;  // no frame of the synthetic stream would be sent, nor edit anything
  } else if (p.streamed) {
    auto parts = in.dialect.render_stream(answer);
    for (auto* part : {&parts.head, &parts.content, &parts.tail, &parts.terminator})
      for (auto& f : *part) p.frames.push_back(std::move(f));
  } else {
    if (!in.body_forwarded || p.status / 100 != 2) p.body = in.dialect.render_body(answer);
    p.commits_when_sent = p.status / 100 == 2;
  }
  return p;
}

Plan error_plan(const FaultInput& in, FaultKind kind, ErrorKind error, std::string_view detail,
                std::optional<double> default_retry_after_ms) {
  Plan p = base_plan(in, kind, false);
  std::optional<double> retry_ms;
  if (const auto hint = in.step.retry_after_ms ? in.step.retry_after_ms : default_retry_after_ms)
    retry_ms = scaled(in, *hint);
  const auto form = in.step.retry_after_form;
  const bool in_body = form == RetryAfterForm::both || form == RetryAfterForm::retry_info;
  auto reply = in.dialect.error(error, {detail, in.request_id, in_body ? retry_ms : std::nullopt,
                                        in.step.body ? std::string_view(*in.step.body) : std::string_view()});
  p.status = in.step.status.value_or(reply.status);
  p.body = std::move(reply.body);
  for (auto& h : reply.headers) p.headers.push_back(std::move(h));
  if (retry_ms) add_retry_hint(p, *retry_ms, form, in.unix_now_ms);
  return p;
}

void add_retry_after(Plan& plan, double ms) {
  add_retry_hint(plan, ms, RetryAfterForm::both, 0);
}

void add_retry_hint(Plan& plan, double ms, RetryAfterForm form, double unix_now_ms) {
  // Whole seconds rounded up, so a client that reads only retry-after never comes back too early.
  const auto whole_seconds = static_cast<long long>(std::ceil(ms / 1000.0));
  const auto now_s = static_cast<long long>(std::floor(unix_now_ms / 1000.0));
  plan.hint_ms = ms;  // for the ledger: the checks judge the hint sent, not the script's key
  plan.hint_form = form;
  switch (form) {
    case RetryAfterForm::both:
      plan.headers.emplace_back("retry-after", fmt::format("{}", whole_seconds));
      plan.headers.emplace_back("retry-after-ms", format_ms(ms));
      break;
    case RetryAfterForm::seconds:
      plan.headers.emplace_back("retry-after", format_seconds(ms));
      break;
    case RetryAfterForm::ms:
      plan.headers.emplace_back("retry-after-ms", format_ms(ms));
      break;
    case RetryAfterForm::http_date:
      // The date the server answered at, so a client measures the wait against the server's clock.
      plan.headers.emplace_back("date", format_time(now_s, false));
      plan.headers.emplace_back("retry-after", format_time(now_s + whole_seconds, false));
      break;
    case RetryAfterForm::anthropic_ratelimit:
      plan.headers.emplace_back("anthropic-ratelimit-requests-reset",
                                format_time(now_s + whole_seconds, true));
      plan.headers.emplace_back("anthropic-ratelimit-tokens-reset", format_time(now_s + whole_seconds, true));
      break;
    case RetryAfterForm::amz_ms:
      plan.headers.emplace_back("x-amz-retry-after", format_ms(ms));
      break;
    case RetryAfterForm::retry_info:  // in the body (Gemini's RetryInfo), no header
    case RetryAfterForm::none:
      break;
  }
}

int cut_after(const FaultInput& in, int fallback) {
  const int available = in.answer.tool_name.empty() ? static_cast<int>(in.answer.tokens.size()) : 1;
  return std::clamp(in.step.cut_after_events.value_or(fallback), 0, available);
}

Plan partial_stream(const FaultInput& in, FaultKind kind, int n, std::vector<SseFrame> extra, StreamEnd end) {
  Plan p = base_plan(in, kind, true);
  p.status = in.step.status.value_or(200);
  auto parts = in.dialect.render_stream(in.answer);
  for (auto& f : parts.head) p.frames.push_back(std::move(f));
  for (int i = 0; i < n && i < static_cast<int>(parts.content.size()); ++i)
    p.frames.push_back(std::move(parts.content[i]));
  for (auto& f : extra) p.frames.push_back(std::move(f));
  p.end = end;
  return p;
}

Plan truncated_body(const FaultInput& in, FaultKind kind, StreamEnd end) {
  Plan p = answer_plan(in, kind);
  p.body_cut_at = p.body.size() / 2;
  p.end = end;
  p.commits_when_sent = false;
  return p;
}

Plan hold_plan(const FaultInput& in, FaultKind kind, bool committed) {
  Plan p = base_plan(in, kind, in.request.stream);
  p.action = WireAction::hold;
  p.status = 0;
  p.hold_ms = scaled(in, in.step.hold_ms.value_or(30000));
  p.committed_on_arrival = committed;
  return p;
}

void as_json_array(Plan& p) {
  if (!p.streamed || p.action != WireAction::respond || p.passes_upstream_stream) return;
  bool first = true;
  for (auto& f : p.frames) {
    std::string_view data = f.bytes;
    if (data.substr(0, 5) == "data:") data.remove_prefix(5);
    if (!data.empty() && data.front() == ' ') data.remove_prefix(1);
    while (!data.empty() && (data.back() == '\n' || data.back() == '\r')) data.remove_suffix(1);
    f.bytes = std::string(first ? "[" : ",\r\n") + std::string(data);
    first = false;
  }
  if (p.end == StreamEnd::complete) p.frames.push_back(SseFrame{first ? "[]" : "]", false});
  for (auto& [name, value] : p.headers)
    if (name == "content-type") value = "application/json";
}

}  // namespace llmchaos::mock::plan_blocks
