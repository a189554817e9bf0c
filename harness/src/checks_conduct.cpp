// The caller's side of the conduct checks ([checks]): no call hangs, the case ends in time, a success is
// the whole canonical answer naming the route and model that served it, and the stack answers after the case.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "checker_ctx.hpp"

namespace llmchaos::harness::detail {
namespace {

// How long the caller waited in request `v`. Without a decision log it is the outside driver's own measure
// of the call (log.elapsed_ms: exec, the mock's view of the request; http, the caller's wait) or the mock's
// view (first arrival to last answer), whichever is longer: an exec program's runtime start-up and exit
// (node and a framework's imports take seconds on a loaded machine) are no call of the workflow's, as for
// max_elapsed_ms, while a client holding an attempt open keeps it in the mock's view. No attempt at all:
// the whole wait.
double call_ms(const Ctx& x, const RequestView& v) {
  const auto& r = *v.request;
  if (x.h.has_decision_log || v.entries.empty()) return r.wall_ms;
  double first = v.entries.front()->received_at_ms, last = 0;
  for (const auto* e : v.entries) {
    first = std::min(first, e->received_at_ms);
    last = std::max(last, std::max(e->finished_at_ms, e->received_at_ms));
  }
  return std::max(last - first, v.deliveries.empty() ? 0.0 : v.deliveries.front()->elapsed_ms);
}

std::optional<CheckResult> check_no_hang(const Ctx& x) {
  if (!x.c.checks.no_hang_ms) return std::nullopt;
  const double limit = x.bound(*x.c.checks.no_hang_ms);
  double most = 0;
  for (const auto& v : x.views) most = std::max(most, call_ms(x, v));
  return result("no_hang", most <= limit,
                fmt::format("longest call {:.0f} ms, bound {:.0f} ms", most, limit));
}

std::optional<CheckResult> check_truncation(const Ctx& x) {
  if (!x.c.checks.no_truncated_success) return std::nullopt;
  std::vector<std::string> bad;
  int answers = 0;
  for (std::size_t i = 0; i < x.views.size(); ++i) {
    const auto& v = x.views[i];
    for (std::size_t d = 0; d < v.deliveries.size(); ++d) {
      const auto& log = *v.deliveries[d];
      if (!is_success(log.outcome)) continue;
      ++answers;
      const auto* serving = x.serving_entry(v, static_cast<int>(d));
      if (!serving) {
        bad.push_back(fmt::format("request {}: reported {} but the mock completed no attempt", i + 1,
                                  to_string(log.outcome)));
        continue;
      }
      const auto want = x.canonical_text(*serving);
      if (log.text != want)
        bad.push_back(
            fmt::format("request {}: answer \"{}\" is not the canonical \"{}\"", i + 1, log.text, want));
    }
  }
  return result("no_truncated_success", bad.empty(),
                bad.empty() ? fmt::format("{} successful answer(s), each the whole canonical text", answers)
                            : fmt::format("{}", fmt::join(bad, "; ")));
}

std::optional<CheckResult> check_wall(const Ctx& x) {
  if (!x.c.checks.max_wall_ms) return std::nullopt;
  const double limit = x.bound(*x.c.checks.max_wall_ms);
  return result("max_wall_ms", x.h.wall_ms <= limit,
                fmt::format("case took {:.0f} ms, bound {:.0f} ms", x.h.wall_ms, limit));
}

std::optional<CheckResult> check_alive(const Ctx& x) {
  if (!x.c.checks.alive_after) return std::nullopt;
  if (!x.h.alive) return result("alive_after", false, "no request was sent after the case");
  const auto& log = x.h.alive->log;
  return result(
      "alive_after", log.answered && is_success(log.outcome),
      fmt::format("healthy request after the case: {} via \"{}\"", to_string(log.outcome), log.route));
}

std::optional<CheckResult> check_serving_route(const Ctx& x) {
  if (!x.c.checks.names_serving_route) return std::nullopt;
  std::vector<std::string> bad, good;
  for (std::size_t i = 0; i < x.views.size(); ++i) {
    const auto& v = x.views[i];
    for (std::size_t d = 0; d < v.deliveries.size(); ++d) {
      const auto& log = *v.deliveries[d];
      if (!is_success(log.outcome)) continue;
      const auto* serving = x.serving_entry(v, static_cast<int>(d));
      if (!serving) {
        bad.push_back(fmt::format("request {}: no attempt served it", i + 1));
        continue;
      }
      const auto* s = x.step(*serving);
      const std::string model = s && s->model ? *s->model : serving->model;
      std::vector<std::string> wrong;
      // A group's answer names the group (the stack's route) or the member that served it.
      if (log.route != serving->route && log.route != x.c.logical_route(serving->route))
        wrong.push_back(fmt::format("route \"{}\" (served by \"{}\")", log.route, serving->route));
      if (log.model != model) wrong.push_back(fmt::format("model \"{}\" (served \"{}\")", log.model, model));
      if (log.output_tokens <= 0) wrong.push_back("no output token usage");
      if (wrong.empty())
        good.push_back(fmt::format("request {}: {} / {}", i + 1, log.route, log.model));
      else
        bad.push_back(fmt::format("request {}: {}", i + 1, fmt::join(wrong, ", ")));
    }
  }
  if (good.empty() && bad.empty())
    return result("names_serving_route", true, "no successful answer to check");
  return result("names_serving_route", bad.empty(),
                fmt::format("{}", fmt::join(bad.empty() ? good : bad, "; ")));
}

}  // namespace

extern const CheckSpec no_hang_check{"no_hang", check_no_hang};
extern const CheckSpec no_truncated_success_check{"no_truncated_success", check_truncation};
extern const CheckSpec max_wall_ms_check{"max_wall_ms", check_wall};
extern const CheckSpec alive_after_check{"alive_after", check_alive};
extern const CheckSpec names_serving_route_check{"names_serving_route", check_serving_route};

}  // namespace llmchaos::harness::detail
