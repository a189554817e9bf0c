// How the stack waits between attempts ([checks] and the policy's backoff): a retry hint is honoured, the
// backoff stays within its bounds and grows, no route is hammered.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "checker_ctx.hpp"
#include "retry_hint.hpp"

namespace llmchaos::harness::detail {
namespace {

std::optional<CheckResult> check_retry_after(const Ctx& x) {
  if (!x.c.checks.retry_after_honoured) return std::nullopt;
  std::vector<std::string> bad, good;
  for (const auto& v : x.views) {
    for (std::size_t k = 0; k < v.entries.size(); ++k) {
      const auto& e = *v.entries[k];
      const auto hint = readable_sent_hint(e, x.step(e), x.opt.time_scale);
      if (!hint) continue;
      for (std::size_t j = k + 1; j < v.entries.size(); ++j) {
        if (x.c.logical_route(v.entries[j]->route) != x.c.logical_route(e.route))
          continue;  // a group: any member
        const double gap = v.entries[j]->received_at_ms - e.finished_at_ms;
        const double want = hint->ms;
        // Slack: the mock stamps finished_at_ms when its write completes, which can trail the client's
        // receipt of the bytes by a few ms on a loaded machine (5 ms + 5% of the retry-after).
        auto line = fmt::format("{}[{}] -> [{}]: gap {:.1f} ms, retry-after {:.1f} ms", e.route, e.attempt,
                                v.entries[j]->attempt, gap, want);
        (gap + 5 + 0.05 * want >= want ? good : bad).push_back(std::move(line));
        break;
      }
    }
  }
  if (good.empty() && bad.empty())
    return result("retry_after_honoured", true, "no attempt followed a retry-after on its route");
  return result("retry_after_honoured", bad.empty(),
                fmt::format("{}", fmt::join(bad.empty() ? good : bad, "; ")));
}

// The wait before each retry against the policy's backoff (exponential, full jitter, capped; a
// readable retry hint wins when longer; the jitter clamped to the time the decision checked), by the
// ledger alone: the gap from the failed attempt's end to the retry's arrival on the same route (a model
// group: any of its members).
// - Upper bound: gap <= max(hint, min(ceiling(n), room)), ceiling(n) = min(cap, base * 2^n) for the
//   route's n-th retry of the delivery, room = the time left at the failure minus the route's expected
//   latency. Checked under virtual time only, where the gap is the wait exactly: live, a loaded
//   machine stretches a gap by hundreds of ms (a stalled client, the mock's stamp before the client's
//   receipt), so no upper bound there would hold without flaking. A hint in whole seconds is rounded
//   up, plus a second (an HTTP-date).
// - Growth: retries with no hint and no clamp whose waits all stayed under the base, where a growing
//   full-jitter backoff does that with probability p = prod min(1, base / ceiling(n)) < 1e-6, fail
//   (no false alarm beyond p; a loaded machine only lengthens gaps).
// Checked for targets that report their decisions (they run the case's policy); others have their own.
std::optional<CheckResult> check_backoff(const Ctx& x) {
  if (!x.h.has_decision_log) return std::nullopt;
  const auto& b = x.c.policy.backoff;
  const double base = x.scaled(b.base_ms), cap = x.scaled(b.cap_ms);
  const double budget = x.scaled(x.c.policy.workflow.max_elapsed_ms);
  std::vector<std::string> bad;
  int retries = 0;
  double worst_ratio = 0;
  for (std::size_t r = 0; r < x.views.size(); ++r) {
    const auto& v = x.views[r];
    for (int d = 0; d < static_cast<int>(v.deliveries.size()); ++d) {
      std::vector<const LedgerEntry*> es;
      for (std::size_t i = 0; i < v.entries.size(); ++i)
        if (v.entry_delivery[i] == d) es.push_back(v.entries[i]);
      if (es.empty()) continue;
      const double start = es.front()->received_at_ms;
      std::map<std::string, int> index;  // route -> retries so far in this delivery
      double p = 1, longest = 0;
      int plain = 0;  // retries with no hint and no clamp
      for (std::size_t k = 0; k + 1 < es.size(); ++k) {
        const auto &e = *es[k], &next = *es[k + 1];
        const std::string& route = x.c.logical_route(e.route);  // a retry within a group moves to any member
        if (x.c.logical_route(next.route) != route || !attempt_failed(e, x.c.policy)) continue;
        if (resumes(e, next)) continue;  // a resume is no retry: it waits for no backoff
        const int n = index[route]++;
        ++retries;
        const double ceiling = std::min(cap, base * std::ldexp(1.0, std::min(n, 1000)));
        const double room = std::max(
            0.0, budget - (e.finished_at_ms - start) - x.scaled(x.c.policy.route(route).expected_latency_ms));
        double hint = 0;
        if (const auto h = sent_retry_hint(e, x.step(e), x.opt.time_scale)) {
          hint = h->ms;
          if (!mock::exact_ms_hint(h->form)) hint = std::ceil(hint / 1000) * 1000 + 1000;
        }
        const double gap = next.received_at_ms - e.finished_at_ms;
        const double upper = std::max(hint, std::min(ceiling, room));
        if (upper > 0) worst_ratio = std::max(worst_ratio, gap / upper);
        if (x.opt.exact_time && gap > upper + 0.5)
          bad.push_back(fmt::format(
              "request {}: {}[{}] -> [{}] waited {:.1f} ms, more than the backoff allows ({:.1f} ms: "
              "retry {} of the route, ceiling {:.1f} ms, time left for it {:.1f} ms{})",
              r + 1, e.route, e.attempt, next.attempt, gap, upper, n + 1, ceiling, room,
              hint > 0 ? fmt::format(", hint {:.1f} ms", hint) : std::string()));
        if (hint == 0 && room >= ceiling && ceiling > 0) {
          ++plain;
          p *= std::min(1.0, base / ceiling);
          longest = std::max(longest, gap);
        }
      }
      if (plain > 0 && p < 1e-6 && longest < base)
        bad.push_back(fmt::format(
            "request {}: the backoff never grew: {} retries all waited under the base {:.1f} ms "
            "(longest {:.1f} ms), which a growing full-jitter backoff does with probability {:.1e}",
            r + 1, plain, base, longest, p));
    }
  }
  if (retries == 0) return std::nullopt;
  return result("backoff_bounds", bad.empty(),
                bad.empty()
                    ? fmt::format("{} retr{} within the backoff (the longest at {:.0f}% of its bound{})",
                                  retries, retries == 1 ? "y" : "ies", 100 * worst_ratio,
                                  x.opt.exact_time ? "" : "; upper bounds are checked under --virtual-time")
                    : fmt::format("{}; timeline: {}", fmt::join(bad, "; "), timeline(x)));
}

std::optional<CheckResult> check_hammering(const Ctx& x) {
  const auto& h = x.c.checks.no_hammering;
  if (!h) return std::nullopt;
  const double window = x.scaled(h->window_ms);
  std::map<std::string, std::vector<double>> times;
  for (const auto& e : x.h.ledger)
    if (!h->route || e.route == *h->route) times[e.route].push_back(e.received_at_ms);
  std::vector<std::string> bad;
  int worst = 0;
  for (auto& [route, t] : times) {
    std::sort(t.begin(), t.end());
    for (std::size_t i = 0, j = 0; i < t.size(); ++i) {
      while (t[i] - t[j] >= window) ++j;
      const int in_window = static_cast<int>(i - j + 1);
      worst = std::max(worst, in_window);
      if (in_window > h->max_attempts) {
        bad.push_back(
            fmt::format("{}: {} attempts within {:.0f} ms (from {:.0f} ms)", route, in_window, window, t[j]));
        break;
      }
    }
  }
  return result("no_hammering", bad.empty(),
                bad.empty() ? fmt::format("at most {} attempt(s) per {:.0f} ms window <= {}", worst, window,
                                          h->max_attempts)
                            : fmt::format("max {} per window; {}", h->max_attempts, fmt::join(bad, "; ")));
}

}  // namespace

extern const CheckSpec retry_after_honoured_check{"retry_after_honoured", check_retry_after};
extern const CheckSpec backoff_bounds_check{"backoff_bounds", check_backoff};
extern const CheckSpec no_hammering_check{"no_hammering", check_hammering};

}  // namespace llmchaos::harness::detail
