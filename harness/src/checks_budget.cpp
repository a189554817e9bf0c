// The workflow's budget (SPEC section 5): attempts, elapsed time and extra cost per request, judged by the
// ledger and by the stack's own account, the worse of the two.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "checker_ctx.hpp"

namespace llmchaos::harness::detail {
namespace {

constexpr double cost_epsilon = 1e-9;

std::optional<CheckResult> check_max_attempts(const Ctx& x) {
  const int max = x.c.policy.workflow.max_total_attempts;
  std::vector<std::string> bad;
  int most = 0;
  for (std::size_t i = 0; i < x.views.size(); ++i) {
    const int n = static_cast<int>(x.views[i].entries.size());
    most = std::max(most, n);
    if (n > max) bad.push_back(fmt::format("request {}: the mock received {} attempts", i + 1, n));
  }
  return result("max_total_attempts", bad.empty(),
                bad.empty() ? fmt::format("at most {} attempt(s) per request <= {}", most, max)
                            : fmt::format("max_total_attempts = {}; {}", max, fmt::join(bad, "; ")));
}

std::optional<CheckResult> check_elapsed(const Ctx& x) {
  const double budget = x.scaled(x.c.policy.workflow.max_elapsed_ms);
  if (!std::isfinite(budget)) return std::nullopt;
  const double limit = budget * (1 + x.opt.elapsed_tolerance_ratio) + x.opt.elapsed_tolerance_ms;
  std::vector<std::string> bad;
  double most = 0;
  for (std::size_t i = 0; i < x.views.size(); ++i) {
    const auto& v = x.views[i];
    for (std::size_t d = 0; d < v.deliveries.size(); ++d) {
      if (!v.deliveries[d]->limited_by.empty()) continue;  // its tier refused it: the workflow never ran
      // The stack's own measure, or the caller's wait when the driver cannot see the stack.
      // (An outside driver may measure it from the first attempt, without the program's start-up: elapsed_ms
      // > 0.)
      const double claimed =
          x.h.has_decision_log ? v.deliveries[d]->elapsed_ms
          : d == 0 ? (v.deliveries[d]->elapsed_ms > 0 ? v.deliveries[d]->elapsed_ms : v.request->wall_ms)
                   : 0;
      // The mock's view: first arrival to last answer of the delivery.
      double first = -1, last = 0;
      for (std::size_t k = 0; k < v.entries.size(); ++k) {
        if (v.entry_delivery[k] != static_cast<int>(d)) continue;
        if (first < 0) first = v.entries[k]->received_at_ms;
        last = std::max(last, std::max(v.entries[k]->finished_at_ms, v.entries[k]->received_at_ms));
      }
      const double seen = first < 0 ? 0 : last - first;
      const double worst = std::max(claimed, seen);
      most = std::max(most, worst);
      if (worst > limit)
        bad.push_back(fmt::format("request {} delivery {}: {:.0f} ms (stack {:.0f} ms, mock {:.0f} ms)",
                                  i + 1, d + 1, worst, claimed, seen));
    }
  }
  const auto rule = fmt::format("budget {:.0f} ms, tolerance {:.0f}% + {:.0f} ms -> limit {:.0f} ms", budget,
                                100 * x.opt.elapsed_tolerance_ratio, x.opt.elapsed_tolerance_ms, limit);
  return result("max_elapsed_ms", bad.empty(),
                bad.empty() ? fmt::format("longest {:.0f} ms; {}", most, rule)
                            : fmt::format("{}; {}", fmt::join(bad, "; "), rule));
}

std::optional<CheckResult> check_cost(const Ctx& x) {
  const double max = x.c.policy.workflow.max_extra_cost_usd;
  if (!std::isfinite(max)) return std::nullopt;
  std::vector<std::string> bad;
  for (std::size_t i = 0; i < x.views.size(); ++i) {
    const auto& v = x.views[i];
    double seen = 0;                                    // every attempt after the first, at its route's price
    for (std::size_t k = 1; k < v.entries.size(); ++k)  // a group member costs what its group costs the stack
      seen += x.c.policy.route(x.c.logical_route(v.entries[k]->route)).cost_per_attempt_usd;
    double claimed = 0;
    for (const auto* log : v.deliveries) claimed = std::max(claimed, log->extra_cost_usd);
    if (seen > max + cost_epsilon || claimed > max + cost_epsilon)
      bad.push_back(fmt::format("request {}: extra cost ${:.4f} by the ledger, ${:.4f} by the stack", i + 1,
                                seen, claimed));
  }
  return result("max_extra_cost_usd", bad.empty(),
                fmt::format("budget ${:.4f}{}{}", max, bad.empty() ? "" : "; ", fmt::join(bad, "; ")));
}

}  // namespace

extern const CheckSpec max_total_attempts_check{"max_total_attempts", check_max_attempts};
extern const CheckSpec max_elapsed_ms_check{"max_elapsed_ms", check_elapsed};
extern const CheckSpec max_extra_cost_usd_check{"max_extra_cost_usd", check_cost};

}  // namespace llmchaos::harness::detail
