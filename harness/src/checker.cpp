// The checker: one table of checks, each a pure function of the case and its history. A check that is
// not asked for returns nothing; one that throws makes the case `unknown`.
#include "llmchaos/harness/checker.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "checker_ctx.hpp"
#include "llmchaos/mockprovider/fault_traits.hpp"
#include "retry_hint.hpp"

namespace llmchaos::harness {
namespace detail {
std::string entry_str(const LedgerEntry& e) {
  return fmt::format("#{} {}[{}] {} status {} {} at {:.0f}-{:.0f} ms", e.seq, e.route, e.attempt,
                     to_string(e.fault), e.status, to_string(e.outcome), e.received_at_ms, e.finished_at_ms);
}

std::string timeline(const Ctx& x) {
  std::vector<std::string> parts;
  for (const auto& e : x.h.ledger) parts.push_back(entry_str(e));
  auto out =
      parts.empty() ? std::string("(the mock saw no attempt)") : fmt::format("{}", fmt::join(parts, "; "));
  if (!x.h.foreign.empty())
    out += fmt::format("; foreign traffic, not counted: {} attempt(s)", x.h.foreign.size());
  return out;
}

CheckResult result(std::string name, bool ok, std::string message) {
  return {std::move(name), ok, std::move(message)};
}

}  // namespace detail

namespace {
using detail::Ctx;
using detail::entry_str;
using detail::result;
using detail::timeline;

constexpr double cost_epsilon = 1e-9;

bool is_success(Outcome o) {
  return o == Outcome::primary_success || o == Outcome::retry_recovery || o == Outcome::fallback_recovery;
}

// ---- expectations ----

std::optional<CheckResult> check_action(const Ctx& x) {
  const Action observed = x.points.empty() ? Action::none : x.observed(x.points.front());
  std::string rule = x.points.empty() ? std::string("no failure point") : x.points.front().rule;
  const bool ok = observed == x.c.expect;
  auto message =
      fmt::format("expected {}, observed {} ({})", to_string(x.c.expect), to_string(observed), rule);
  if (!ok) message += "; timeline: " + timeline(x);
  return result("action", ok, std::move(message));
}

std::optional<CheckResult> check_expect_at(const Ctx& x) {
  if (x.c.expect_at.empty()) return std::nullopt;
  std::vector<std::string> bad, good;
  for (const auto& at : x.c.expect_at) {
    if (at.point > static_cast<int>(x.points.size())) {
      bad.push_back(fmt::format("point {}: expected {}, but the case had {} failure point(s)", at.point,
                                to_string(at.action), x.points.size()));
      continue;
    }
    const Action observed = x.observed(x.points[at.point - 1]);
    auto line = fmt::format("point {}: expected {}, observed {}", at.point, to_string(at.action),
                            to_string(observed));
    (observed == at.action ? good : bad).push_back(std::move(line));
  }
  return result("expect_at", bad.empty(), fmt::format("{}", fmt::join(bad.empty() ? good : bad, "; ")));
}

// Both derivations agree at every point, and every point has exactly one action: a failed attempt the
// stack answered as a success (no action) fails here even when the case expected no failure.
std::optional<CheckResult> check_agreement(const Ctx& x) {
  std::vector<std::string> bad;
  for (const auto& p : x.points) {
    if (x.h.has_decision_log && p.from_log != p.from_ledger)
      bad.push_back(fmt::format("point {}: decision log says {}, ledger says {}", p.point,
                                to_string(p.from_log), to_string(p.from_ledger)));
    else if (x.observed(p) == Action::none)
      bad.push_back(
          fmt::format("point {}: a failed attempt with no action (reported as a success)", p.point));
  }
  return result("action_agreement", bad.empty(),
                bad.empty() ? fmt::format("log and ledger agree on {} failure point(s)", x.points.size())
                            : fmt::format("{}; timeline: {}", fmt::join(bad, "; "), timeline(x)));
}

std::optional<CheckResult> check_outcome(const Ctx& x) {
  if (!x.c.expect_outcome || x.h.requests.empty()) return std::nullopt;
  const Outcome observed = x.h.requests.front().log.outcome;
  return result("expect_outcome", observed == *x.c.expect_outcome,
                fmt::format("expected {}, observed {}", to_string(*x.c.expect_outcome), to_string(observed)));
}

std::optional<CheckResult> check_attempts(const Ctx& x) {
  if (x.c.expect_attempts.empty()) return std::nullopt;
  std::vector<std::string> bad, good;
  for (const auto& [route, want] : x.c.expect_attempts) {
    // A group's attempts are its members' together.
    const auto got =
        std::count_if(x.h.ledger.begin(), x.h.ledger.end(), [&x, &route = route](const LedgerEntry& e) {
          return e.route == route || x.c.logical_route(e.route) == route;
        });
    (got == want ? good : bad)
        .push_back(fmt::format("{}: expected {}, the mock received {}", route, want, got));
  }
  return result("expect_attempts", bad.empty(), fmt::format("{}", fmt::join(bad.empty() ? good : bad, "; ")));
}

// ---- SPEC section 5 invariants ----

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

std::optional<CheckResult> check_duplicates(const Ctx& x) {
  if (x.c.policy.workflow.replay_safe)
    return result("no_duplicate_commit", true, "replay-safe workflow: a replay duplicates nothing");
  std::map<std::string, int> committed, effects;
  // Under an output contract the stack holds the answer back until it is whole and passes: an answer
  // the contract rejected, or a stream that broke off after some content events, never reached the
  // caller, so the provider's work on it is not a commit the caller could repeat. A commit on arrival
  // (post_commit_timeout: no event, never completed) still counts: the provider did the work.
  const bool contract = !x.c.policy.workflow.output_required.empty();
  auto broke_off =
      [](const LedgerEntry& e) {  // the stream ended before a whole answer (SPEC 2's stream rows)
        return mock::fault_traits(e.fault).breaks_stream || e.outcome != AttemptOutcome::completed;
      };
  auto held_back =
      [&](const LedgerEntry& e) {  // an answer the contract refuses (schema_missing) is no commit either
        const bool refused = mock::fault_traits(e.fault).in_band == mock::InBand::under_output_contract;
        return contract && (refused || (e.events_sent > 0 && broke_off(e)));
      };
  // A resume re-reads a response the provider already made (SPEC 3 rule 0): no new work, no new commit.
  for (const auto& e : x.h.ledger)
    if (e.committed && !held_back(e) && e.resume_of == 0) ++committed[e.idempotency_key];
  for (const auto& s : x.h.side_effects) ++effects[s.operation_id];
  std::vector<std::string> bad;
  for (const auto& [op, n] : effects)
    if (n > 1) bad.push_back(fmt::format("operation \"{}\": side effect executed {} times", op, n));
  // A tool workflow commits twice legitimately: the tool call, then the answer after its side effect.
  for (const auto& [op, n] : committed) {
    const int allowed = 1 + (effects.contains(op) ? effects.at(op) : 0);
    if (n > allowed)
      bad.push_back(fmt::format("operation \"{}\": {} committed attempts (allowed {})", op, n, allowed));
  }
  return result("no_duplicate_commit", bad.empty(),
                bad.empty() ? "no operation committed twice" : fmt::format("{}", fmt::join(bad, "; ")));
}

std::optional<CheckResult> check_timeline(const Ctx& x) {
  if (!x.h.has_decision_log) return std::nullopt;
  std::vector<std::string> bad;
  for (const auto& v : x.views)
    for (std::size_t k = 0; k < v.entries.size(); ++k)
      if (!v.entry_attempt[k]) bad.push_back(entry_str(*v.entries[k]));
  for (const auto* e : x.unmatched) bad.push_back(entry_str(*e) + " (key names no request)");
  return result("timeline", bad.empty(),
                bad.empty()
                    ? "every attempt the mock received is in the decision log"
                    : fmt::format("attempts missing from the decision log: {}", fmt::join(bad, "; ")));
}

// ---- conduct checks ([checks]) ----

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

// [[expect_share]]: a member's attempts and its share of its group's, over a window of the case.
std::optional<CheckResult> check_share(const Ctx& x) {
  if (x.c.expect_share.empty()) return std::nullopt;
  std::vector<std::string> bad, good;
  for (const auto& want : x.c.expect_share) {
    const std::string& group = x.c.logical_route(want.route);
    const double from = want.from_ms ? x.scaled(*want.from_ms) : 0;
    const double until = want.until_ms ? x.scaled(*want.until_ms) : std::numeric_limits<double>::infinity();
    int mine = 0, all = 0;
    for (const auto& e : x.h.ledger) {
      if (x.c.logical_route(e.route) != group || e.route == group || e.received_at_ms < from ||
          e.received_at_ms >= until)
        continue;
      ++all;
      if (e.route == want.route) ++mine;
    }
    const double share = all ? static_cast<double>(mine) / all : 0;
    std::vector<std::string> wrong;
    if (want.min_attempts && mine < *want.min_attempts)
      wrong.push_back(fmt::format("fewer than {} attempts", *want.min_attempts));
    if (want.max_attempts && mine > *want.max_attempts)
      wrong.push_back(fmt::format("more than {} attempts", *want.max_attempts));
    if (want.min && (all == 0 || share < *want.min))
      wrong.push_back(fmt::format("share below {:.2f}", *want.min));
    if (want.max && all > 0 && share > *want.max)
      wrong.push_back(fmt::format("share above {:.2f}", *want.max));
    const std::string window =
        want.from_ms || want.until_ms
            ? fmt::format(" in [{:.0f}, {}) ms", want.from_ms.value_or(0),
                          want.until_ms ? fmt::format("{:.0f}", *want.until_ms) : std::string("end"))
            : std::string();
    auto line = fmt::format("{}: {} of {}'s {} attempts{} (share {:.2f})", want.route, mine, group, all,
                            window, share);
    if (wrong.empty())
      good.push_back(std::move(line));
    else
      bad.push_back(fmt::format("{}: {}", line, fmt::join(wrong, ", ")));
  }
  auto message = fmt::format("{}", fmt::join(bad.empty() ? good : bad, "; "));
  if (!bad.empty()) message += "; timeline: " + timeline(x);
  return result("expect_share", bad.empty(), std::move(message));
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

// ---- sequences ----

std::optional<CheckResult> check_served(const Ctx& x) {
  if (!x.c.sequence || !x.c.sequence->served_during_outage) return std::nullopt;
  std::vector<std::string> bad;
  for (std::size_t i = 0; i < x.h.requests.size(); ++i) {
    const auto& log = x.h.requests[i].log;
    if (!is_success(log.outcome))
      bad.push_back(fmt::format("request {} at {:.0f} ms: {}", i + 1, x.h.requests[i].started_ms,
                                to_string(log.outcome)));
  }
  return result("served_during_outage", bad.empty(),
                bad.empty() ? fmt::format("all {} requests answered by a model", x.h.requests.size())
                            : fmt::format("not served: {}", fmt::join(bad, "; ")));
}

std::optional<CheckResult> check_recovered(const Ctx& x) {
  if (!x.c.sequence || !x.c.sequence->recovered_within_ms) return std::nullopt;
  const double end = x.outage_end_ms();
  const double from = end + x.scaled(*x.c.sequence->recovered_within_ms);
  std::vector<std::string> bad;
  int after = 0;
  for (std::size_t i = 0; i < x.h.requests.size(); ++i) {
    const auto& r = x.h.requests[i];
    if (r.started_ms < from) continue;
    ++after;
    if (r.log.outcome != Outcome::primary_success || r.log.route != x.c.policy.workflow.primary)
      bad.push_back(fmt::format("request {} at {:.0f} ms: {} via \"{}\"", i + 1, r.started_ms,
                                to_string(r.log.outcome), r.log.route));
  }
  if (after == 0)
    return result("recovered_within", false,
                  fmt::format("no request started after {:.0f} ms (outage ended at {:.0f} ms): "
                              "the sequence is too short to show recovery",
                              from, end));
  return result("recovered_within", bad.empty(),
                bad.empty()
                    ? fmt::format("{} request(s) after {:.0f} ms served by the primary", after, from)
                    : fmt::format("outage ended at {:.0f} ms; not recovered: {}", end, fmt::join(bad, "; ")));
}

std::optional<CheckResult> check_outage_attempts(const Ctx& x) {
  if (!x.c.sequence || !x.c.sequence->max_outage_attempts) return std::nullopt;
  const double end = x.outage_end_ms();
  const auto& route = x.c.sequence->outage_route;
  const auto n = std::count_if(x.h.ledger.begin(), x.h.ledger.end(), [&](const LedgerEntry& e) {
    return e.route == route && e.received_at_ms < end;
  });
  return result("max_outage_attempts", n <= *x.c.sequence->max_outage_attempts,
                fmt::format("{} attempt(s) on \"{}\" during the outage (until {:.0f} ms), at most {}", n,
                            route, end, *x.c.sequence->max_outage_attempts));
}

// ---- tiers ----

// The requests the case's tier refused: as many as expected, and by the ledger none of them reached the
// mock (a refusal happens before the stack runs the request).
std::optional<CheckResult> check_rate_limited(const Ctx& x) {
  if (!x.c.expect_rate_limited) return std::nullopt;
  int refused = 0;
  std::vector<std::string> which, leaked;
  for (std::size_t i = 0; i < x.views.size(); ++i) {
    const auto& log = x.views[i].request->log;
    if (log.limited_by.empty()) continue;
    ++refused;
    which.push_back(fmt::format("{} ({})", i + 1, log.limited_by));
    if (!x.views[i].entries.empty())
      leaked.push_back(fmt::format("request {} was refused but the mock received {} attempt(s) of it", i + 1,
                                   x.views[i].entries.size()));
  }
  const bool ok = refused == *x.c.expect_rate_limited && leaked.empty();
  auto message =
      fmt::format("expected {} request(s) refused by the tier, {} were{}{}", *x.c.expect_rate_limited,
                  refused, which.empty() ? "" : ": request ", fmt::format("{}", fmt::join(which, ", ")));
  if (!leaked.empty()) message += fmt::format("; {}", fmt::join(leaked, "; "));
  if (!ok) message += "; timeline: " + timeline(x);
  return result("expect_rate_limited", ok, std::move(message));
}

// By the ledger alone: no window of the tier's minute (day) holds the first attempts of more than rpm
// (rpd) requests. A window is shortened by the real tolerance: a request admitted right at the end of
// a window may reach the mock a few ms later than the one it replaced.
std::optional<CheckResult> check_tier_windows(const Ctx& x) {
  if (!x.c.tier) return std::nullopt;
  std::vector<double> firsts;
  for (const auto& v : x.views) {
    double first = std::numeric_limits<double>::infinity();
    for (const auto* e : v.entries) first = std::min(first, e->received_at_ms);
    if (std::isfinite(first)) firsts.push_back(first);
  }
  std::sort(firsts.begin(), firsts.end());
  std::vector<std::string> bad, good;
  auto window_check = [&](std::optional<int> limit, double window_ms, std::string_view name) {
    if (!limit) return;
    const double window = std::max(0.0, x.scaled(window_ms) - x.opt.elapsed_tolerance_ms);
    int worst = 0;
    for (std::size_t i = 0, j = 0; i < firsts.size(); ++i) {
      while (firsts[i] - firsts[j] >= window) ++j;
      worst = std::max(worst, static_cast<int>(i - j + 1));
    }
    (worst <= *limit ? good : bad)
        .push_back(fmt::format("{}: at most {} request(s) reached the mock per {:.0f} ms, limit {}", name,
                               worst, window, *limit));
  };
  window_check(x.c.tier->requests_per_minute, 60'000, "rpm");
  window_check(x.c.tier->requests_per_day, 24 * 3'600'000.0, "rpd");
  if (good.empty() && bad.empty())
    return result("within_tier_limits", true, "the tier sets no request limit (tpm only)");
  return result("within_tier_limits", bad.empty(),
                fmt::format("{}", fmt::join(bad.empty() ? good : bad, "; ")));
}

using CheckFn = std::optional<CheckResult> (*)(const Ctx&);
struct CheckSpec {
  std::string_view name;  // the name its CheckResult carries
  CheckFn run;
};
// The one table of checks, in report order.
constexpr CheckSpec all_checks[] = {
    {"action", check_action},
    {"expect_at", check_expect_at},
    {"action_agreement", check_agreement},
    {"expect_outcome", check_outcome},
    {"expect_attempts", check_attempts},
    {"expect_share", check_share},
    {"max_total_attempts", check_max_attempts},
    {"max_elapsed_ms", check_elapsed},
    {"max_extra_cost_usd", check_cost},
    {"no_duplicate_commit", check_duplicates},
    {"timeline", check_timeline},
    {"no_hang", check_no_hang},
    {"no_truncated_success", check_truncation},
    {"retry_after_honoured", check_retry_after},
    {"backoff_bounds", check_backoff},
    {"no_hammering", check_hammering},
    {"max_wall_ms", check_wall},
    {"alive_after", check_alive},
    {"names_serving_route", check_serving_route},
    {"served_during_outage", check_served},
    {"recovered_within", check_recovered},
    {"max_outage_attempts", check_outage_attempts},
    {"expect_rate_limited", check_rate_limited},
    {"within_tier_limits", check_tier_windows},
    {"cooldown_by_owner", detail::check_cooldown_by_owner},
    {"cooldown_extends", detail::check_cooldown_extends},
    {"caller_timeout_no_cooldown", detail::check_caller_timeout_no_cooldown},
    {"fallback_without_waiting", detail::check_fallback_without_waiting},
    {"retry_after_forwarded", detail::check_retry_after_forwarded},
};

}  // namespace

Verdict combine(const std::vector<CheckResult>& checks, bool any_unknown) {
  if (any_unknown) return Verdict::unknown;
  for (const auto& c : checks)
    if (!c.ok) return Verdict::fail;
  return Verdict::pass;
}

CaseResult check_case(const Case& c, const History& h, const CheckOptions& options) {
  CaseResult r;
  r.name = c.name;
  r.description = c.description;
  r.file = c.file;
  r.folder = c.folder;
  r.tags = c.tags;
  r.expected = c.expect;
  r.expected_outcome = c.expect_outcome;
  r.policy_name = c.policy.workflow.name;
  r.policy_file = c.policy_file;
  r.ledger = h.ledger;
  r.foreign = h.foreign;
  r.side_effects = h.side_effects;
  for (const auto& req : h.requests) {
    r.logs.push_back(req.log);
    r.request_started_ms.push_back(req.started_ms);
  }
  for (const auto& req : h.requests)
    for (const auto& again : req.redeliveries) r.logs.push_back(again);
  if (h.alive) r.alive_log = h.alive->log;
  r.wall_ms = h.wall_ms;
  if (!h.requests.empty()) r.observed_outcome = h.requests.front().log.outcome;
  for (const auto& [name, route] : c.script.routes) r.attempts_by_route[name] = 0;
  for (const auto& e : h.ledger) ++r.attempts_by_route[e.route];

  bool unknown = false;
  auto fail_unknown = [&](const std::string& what, const std::string& why) {
    r.checks.push_back({what, false, "unknown: the checker failed: " + why});
    if (!unknown) r.unknown_reason = fmt::format("error: {}: {}", what, why);
    unknown = true;
  };
  try {
    Ctx x{c, h, options, {}, {}, {}, {}};
    x.views = group_by_request(h, &x.unmatched, c.group_of);
    // Foreign traffic on a completion path took its script step too: the steps are the whole namespace's.
    auto all = h.ledger;
    all.insert(all.end(), h.foreign.begin(), h.foreign.end());
    x.steps = resolve_steps(c.script, all, options.time_scale);
    for (const auto& v : x.views) {
      for (auto& p : derive_points(v, c.policy, h.has_decision_log, c.group_of)) {
        p.point = static_cast<int>(x.points.size()) + 1;
        p.expected = c.expected_at(p.point).value_or(Action::none);
        x.points.push_back(std::move(p));
      }
    }
    r.points = x.points;
    for (const auto& p : x.points) r.observed_actions.push_back(x.observed(p));
    r.observed = r.observed_actions.empty() ? Action::none : r.observed_actions.front();
    for (const auto& check : all_checks) {
      try {
        if (auto res = check.run(x)) r.checks.push_back(std::move(*res));
      } catch (const std::exception& e) {
        fail_unknown(std::string(check.name), e.what());
      }
    }
  } catch (const std::exception& e) {
    fail_unknown("history", e.what());
  }
  r.verdict = combine(r.checks, unknown);
  return r;
}

}  // namespace llmchaos::harness
