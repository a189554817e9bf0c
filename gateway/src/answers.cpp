#include "answers.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>

#include "llmchaos/client/points_header.hpp"

namespace json = boost::json;

namespace llmchaos::gateway {

Route route_of(std::string_view path) {
  static constexpr std::pair<std::string_view, Route> table[] = {
      {"/v1/chat/completions", {Endpoint::chat, "POST"}},
      {"/v1/llmchaos/drain", {Endpoint::drain, "POST"}},
      {"/health", {Endpoint::health, "GET"}},
      {"/__llmchaos/health", {Endpoint::health, "GET"}},
      {"/__llmchaos/ready", {Endpoint::ready, "GET"}},
      {"/stats", {Endpoint::stats, "GET"}},
      {"/metrics", {Endpoint::metrics, "GET"}},
  };
  for (const auto& [p, route] : table)
    if (p == path) return route;
  return {};
}

std::string bearer_key(std::string_view authorization) {
  constexpr std::string_view prefix = "Bearer ";
  if (authorization.size() <= prefix.size() || authorization.substr(0, prefix.size()) != prefix) return {};
  return std::string(authorization.substr(prefix.size()));
}

std::string provisional_action(const std::vector<AttemptTrace>& trace, const std::string& primary) {
  if (trace.empty()) return "degraded";
  const auto& last = trace.back();
  if (last.done && !last.ok) return "degraded";  // the answer is the degrade text after a failure
  bool failed_before = false;
  for (std::size_t i = 0; i + 1 < trace.size(); ++i) failed_before |= !trace[i].ok;
  if (last.route != primary) return "fallback_recovery";
  return failed_before ? "retry_recovery" : "primary_success";
}

std::string failure_actions(const client::DecisionLog& log) {
  std::string out;
  for (const auto& f : log.failures) out += (out.empty() ? "" : ",") + std::string(to_string(f.action));
  return out;
}

std::vector<int> unsent_points(const client::DecisionLog& log) {
  std::vector<int> out;
  for (const auto& f : log.failures)
    if (f.attempt < 0) out.push_back(f.point);
  return out;
}

HeaderList decision_headers(std::string_view action, std::size_t attempts, const std::string& route,
                            const std::string& upstream, const std::string& quality) {
  HeaderList h{{"x-llmchaos-action", std::string(action)},
               {"x-llmchaos-attempts", std::to_string(attempts)},
               {"x-llmchaos-route", route}};
  if (!upstream.empty()) h.emplace_back("x-llmchaos-upstream", upstream);
  if (!quality.empty()) h.emplace_back("x-llmchaos-quality", quality);
  return h;
}

HeaderList rejection_headers() {
  return decision_headers("rejected", 0, "", "", "");
}

namespace {
// The upstream that served the answer: the last attempt that succeeded ("" when none did).
std::string serving_upstream(const std::vector<AttemptTrace>& trace) {
  for (auto it = trace.rbegin(); it != trace.rend(); ++it)
    if (it->ok && !it->upstream.empty()) return it->upstream;
  return {};
}
}  // namespace

HeaderList answer_headers(const client::DecisionLog& log, const std::vector<AttemptTrace>& trace,
                          const std::string& quality) {
  HeaderList headers = decision_headers(to_string(log.outcome), log.attempts.size(), log.route,
                                        serving_upstream(trace), quality);
  headers.emplace_back("x-llmchaos-actions", failure_actions(log));
  if (auto unsent = unsent_points(log); !unsent.empty())
    headers.emplace_back("x-llmchaos-unsent-points", fmt::format("{}", fmt::join(unsent, ",")));
  headers.emplace_back(client::points_header_name,
                       client::encode_points_header(log.failures));  // grammar: points_header.hpp
  headers.emplace_back("x-llmchaos-operation-id", log.operation_id);
  return headers;
}

void add_retry_after(HeaderList& h, double wait_ms) {
  h.emplace_back("retry-after",
                 std::to_string(std::max<long>(1, static_cast<long>(std::ceil(wait_ms / 1000)))));
  h.emplace_back("retry-after-ms", std::to_string(static_cast<long>(std::ceil(wait_ms))));
}

WireError fail_closed_error(const client::DecisionLog& log) {
  WireError e;
  const client::FailurePoint* last = log.failures.empty() ? nullptr : &log.failures.back();
  std::string reason;
  for (auto it = log.attempts.rbegin(); it != log.attempts.rend(); ++it)
    if (it->owner != Owner::none) {
      reason = fmt::format("route {}: {} ({})", it->route, it->reason, to_string(it->owner));
      e.code = std::string(to_string(it->owner));
      break;
    }
  const bool nothing_sent = !last || last->attempt < 0;
  e.status = nothing_sent ? 503 : 502;
  e.type = nothing_sent ? "service_unavailable" : "upstream_error";
  e.message = fmt::format("the gateway failed closed{}{}", last ? ": " + last->rule_text : "",
                          reason.empty() ? "" : "; " + reason);
  if (e.code.empty()) e.code = "fail_closed";
  if (log.retry_after_ms) {
    e.status = 429;
    e.type = "requests";
    e.code = "all_routes_cooling";
    e.message += fmt::format("; every route is cooling, the soonest is free in {:.0f} ms",
                             std::ceil(*log.retry_after_ms));
  }
  return e;
}

Reply ok_reply(std::string body, std::string content_type) {
  return Reply{200, std::move(body), std::move(content_type), {}};
}

Reply error_reply(const WireError& e, HeaderList headers) {
  return Reply{e.status, error_body(e), "application/json", std::move(headers)};
}

Reply answer_reply(const AnswerId& id, const client::DecisionLog& log, HeaderList headers) {
  if (log.answered) return Reply{200, completion_body(id, log), "application/json", std::move(headers)};
  if (log.outcome == Outcome::queued) {
    json::object body{{"id", id.id},
                      {"object", "llmchaos.queued"},
                      {"status", "queued"},
                      {"operation_id", log.operation_id}};
    return Reply{202, json::serialize(body), "application/json", std::move(headers)};
  }
  if (log.retry_after_ms)
    add_retry_after(headers, *log.retry_after_ms);  // the stack's ms are real (its policy is scaled)
  return error_reply(fail_closed_error(log), std::move(headers));
}

std::vector<std::string> stream_end_frames(const AnswerId& id, const client::DecisionLog& log) {
  if (!log.answered) return {error_frame(fail_closed_error(log))};
  return {finish_frame(id, "stop"),
          usage_frame(id, log, to_string(log.outcome), static_cast<int>(log.attempts.size())), done_frame()};
}

json::object redelivery_json(const client::DecisionLog& log, const std::string& quality) {
  json::array points;  // {"action", "route", "attempt" (null when none was sent), "rule", "rule_text"}
  for (const auto& f : log.failures)
    points.push_back(json::object{{"action", to_string(f.action)},
                                  {"route", f.route},
                                  {"attempt", f.attempt < 0 ? json::value(nullptr) : json::value(f.attempt)},
                                  {"rule", f.rule},
                                  {"rule_text", f.rule_text}});
  return json::object{{"operation_id", log.operation_id},
                      {"outcome", to_string(log.outcome)},
                      {"answered", log.answered},
                      {"text", log.text},
                      {"route", log.route},
                      {"model", log.model},
                      {"attempts", log.attempts.size()},
                      {"input_tokens", log.input_tokens},
                      {"output_tokens", log.output_tokens},
                      {"actions", failure_actions(log)},
                      {"unsent_points", json::value_from(unsent_points(log))},
                      {"points", std::move(points)},
                      {"quality", quality}};
}

ServerReplies server_replies() {
  return ServerReplies{error_reply(WireError{503, "the gateway has too many open connections",
                                             "service_unavailable", "", "overloaded"},
                                   rejection_headers()),
                       error_reply(WireError{413, "the request is too large", "invalid_request_error", "",
                                             "request_too_large"},
                                   rejection_headers())};
}

Reply method_not_allowed(std::string_view path, std::string_view method) {
  return error_reply(WireError{405, fmt::format("{} needs {}", path, method), "invalid_request_error", "",
                               "method_not_allowed"},
                     rejection_headers());
}

Reply not_found(std::string_view method, std::string_view path) {
  return error_reply(
      WireError{404, fmt::format("no route {} {}", method, path), "invalid_request_error", "", "not_found"},
      rejection_headers());
}

}  // namespace llmchaos::gateway
