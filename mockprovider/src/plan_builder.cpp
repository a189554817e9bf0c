#include "plan_builder.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace llmchaos::mock::detail {
namespace {
// Status line, content type and request id: what every answer of the dialect carries.
Plan base_plan(const FaultInput& in, FaultKind kind, bool streamed) {
  Plan p;
  p.fault = kind;
  p.streamed = streamed;
  p.headers.reserve(streamed ? 3 : 2);
  p.headers.emplace_back("content-type", streamed ? "text/event-stream" : "application/json");
  if (streamed) p.headers.emplace_back("cache-control", "no-cache");
  p.headers.emplace_back(in.dialect.request_id_header, std::string(in.request_id));
  p.latency_ms = scaled(in, in.step.latency_ms);
  p.inter_event_ms = scaled(in, in.step.inter_event_ms);
  p.canonical_text = in.answer.text();
  p.model = in.answer.model;
  p.request_id = std::string(in.request_id);
  return p;
}

std::string format_ms(double ms) {
  if (ms == std::floor(ms)) return fmt::format("{}", static_cast<long long>(ms));
  return fmt::format("{:.3f}", ms);
}
}  // namespace

double scaled(const FaultInput& in, double ms) { return ms * in.time_scale; }

Plan answer_plan(const FaultInput& in, FaultKind kind) { return answer_plan(in, kind, in.answer); }

Plan answer_plan(const FaultInput& in, FaultKind kind, const Answer& answer) {
  Plan p = base_plan(in, kind, in.request.stream);
  p.status = in.step.status.value_or(200);
  if (p.streamed) {
    auto parts = in.dialect.render_stream(answer);
    for (auto* part : {&parts.head, &parts.content, &parts.tail, &parts.terminator})
      for (auto& f : *part) p.frames.push_back(std::move(f));
  } else {
    p.body = in.dialect.render_body(answer);
    p.commits_when_sent = p.status / 100 == 2;
  }
  return p;
}

Plan error_plan(const FaultInput& in, FaultKind kind, ErrorKind error, std::string_view detail) {
  Plan p = base_plan(in, kind, false);
  std::optional<double> retry_ms;
  if (in.step.retry_after_ms) retry_ms = scaled(in, *in.step.retry_after_ms);
  auto reply = in.dialect.error(error, {detail, in.request_id, retry_ms});
  p.status = in.step.status.value_or(reply.status);
  p.body = std::move(reply.body);
  if (retry_ms) add_retry_after(p, *retry_ms);
  return p;
}

void add_retry_after(Plan& plan, double ms) {
  // Whole seconds rounded up, so a client that reads only retry-after never comes back too early.
  plan.headers.emplace_back("retry-after", fmt::format("{}", static_cast<long long>(std::ceil(ms / 1000.0))));
  plan.headers.emplace_back("retry-after-ms", format_ms(ms));
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
  for (int i = 0; i < n && i < static_cast<int>(parts.content.size()); ++i) p.frames.push_back(std::move(parts.content[i]));
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
  if (!p.streamed || p.action != WireAction::respond) return;
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

}  // namespace llmchaos::mock::detail
