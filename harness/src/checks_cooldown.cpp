// Cooldown conformance (SPEC 5, issue 27): over the case's sequence of requests, a route that answered
// a 429 or 402 is left alone for as long as its owner says, and no longer than needed. Judged from the
// ledger alone, so it applies to every driver.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "checker_ctx.hpp"
#include "llmchaos/mockprovider/fault_traits.hpp"
#include "retry_hint.hpp"

namespace llmchaos::harness::detail {

std::optional<double> sent_hint_ms(const Ctx& x, const LedgerEntry& e) {
  const auto h = readable_sent_hint(e, x.step(e), x.opt.time_scale);
  return h ? std::optional<double>(h->ms) : std::nullopt;
}

namespace {

bool quota_like(FaultKind f) {
  return f == FaultKind::quota_429 || f == FaultKind::payment_402;
}

// One route's cooldown as the ledger's answers set it (real ms after the case started).
struct RouteCooldown {
  double rate_end = -1;   // end of the longest Retry-After seen so far (a later longer one extends it)
  double quota_end = -1;  // end of the quota window
  bool rate_due = false;  // a rate cooldown ended and the route has not been tried since
  double end() const { return std::max(rate_end, quota_end); }
};

// The cooldown an attempt's answer sets on its route's state (a rate 429 with a readable hint: that
// hint; a quota 429 / 402: the case's quota window). Returns whether it set one.
bool cool_by(const Ctx& x, const LedgerEntry& e, RouteCooldown& st) {
  const auto& cd = *x.c.checks.cooldown;
  bool cooled = false;
  if (e.fault == FaultKind::rate_429)
    if (auto hint = sent_hint_ms(x, e)) {
      st.rate_end = std::max(st.rate_end, e.finished_at_ms + *hint);
      st.rate_due = true;
      cooled = true;
    }
  if (quota_like(e.fault) && cd.quota_window_ms) {
    st.quota_end = std::max(st.quota_end, e.finished_at_ms + x.scaled(*cd.quota_window_ms));
    cooled = true;
  }
  return cooled;
}

// The ledger as the client lived it: each attempt's arrival and, once it finished, its answer, in time
// order (an arrival first at a tie: it was sent before the answer could be read). With requests one at a
// time this is the ledger's order; overlapping requests send before earlier answers come back.
struct CooldownEvent {
  double at_ms;
  bool answer;
  const LedgerEntry* entry;
};

std::vector<CooldownEvent> cooldown_events(const Ctx& x) {
  std::vector<CooldownEvent> out;
  for (const auto& e : x.h.ledger) {
    out.push_back({e.received_at_ms, false, &e});
    if (e.finished) out.push_back({e.finished_at_ms, true, &e});
  }
  std::stable_sort(out.begin(), out.end(), [](const CooldownEvent& a, const CooldownEvent& b) {
    return a.at_ms < b.at_ms || (a.at_ms == b.at_ms && !a.answer && b.answer);
  });
  return out;
}

// Real sockets: the mock stamps its end after the write; 5 ms + 5% as retry_after_honoured allows.
bool early_ok(double at, double end, double span) {
  return at + 5 + 0.05 * span >= end;
}

}  // namespace

// A route is not tried before its cooldown ends (rate: the Retry-After; quota / 402: the case's quota
// window), and once a rate cooldown ends, traffic served elsewhere past the stated slack means the
// stack kept the route cool too long (a per-minute limit locked out for a day).
std::optional<CheckResult> check_cooldown_by_owner(const Ctx& x) {
  const auto& cd = x.c.checks.cooldown;
  if (!cd) return std::nullopt;
  const double slack = x.scaled(cd->slack_ms) + (x.opt.exact_time ? 0 : x.opt.elapsed_tolerance_ms);
  std::map<std::string, RouteCooldown> state;
  std::vector<std::string> bad;
  int cooled = 0;
  for (const auto& [at, answer, entry] : cooldown_events(x)) {
    const LedgerEntry& e = *entry;
    if (answer) {
      if (cool_by(x, e, state[e.route])) ++cooled;
      continue;
    }
    for (auto& [route, st] : state)  // a route free since rate_end + slack while traffic went elsewhere
      if (route != e.route && st.rate_due && e.received_at_ms > st.rate_end + slack) {
        bad.push_back(
            fmt::format("{}: cooldown ended at {:.0f} ms, but #{} went to {} at {:.0f} ms (slack {:.0f} ms)",
                        route, st.rate_end, e.seq, e.route, e.received_at_ms, slack));
        st.rate_due = false;
      }
    auto& st = state[e.route];
    if (st.rate_end >= 0 && !early_ok(e.received_at_ms, st.rate_end, st.rate_end))
      bad.push_back(fmt::format("{}: #{} at {:.0f} ms, inside the rate cooldown ending at {:.0f} ms", e.route,
                                e.seq, e.received_at_ms, st.rate_end));
    if (st.quota_end >= 0 && e.received_at_ms < st.quota_end)
      bad.push_back(fmt::format("{}: #{} at {:.0f} ms, inside the quota window ending at {:.0f} ms", e.route,
                                e.seq, e.received_at_ms, st.quota_end));
    st.rate_due = false;
  }
  if (cooled == 0) return result("cooldown_by_owner", true, "no attempt set a cooldown");
  return result("cooldown_by_owner", bad.empty(),
                bad.empty() ? fmt::format("{} cooldown(s) kept by their owner's length", cooled)
                            : fmt::format("{}; timeline: {}", fmt::join(bad, "; "), timeline(x)));
}

namespace {

// A rate 429 that came back while its route already cooled (overlapping requests), and what a stack
// that mishandles it would do: free the route at `wrong_end` (ignoring a longer hint: the old end;
// taking a shorter one: its end) instead of at `end`.
struct CooldownChange {
  const LedgerEntry* by;
  double wrong_end, end;
  bool longer;
};

}  // namespace

// A 429 with a longer Retry-After during a cooldown extends it; a shorter one does not shorten it.
// Judged only where such a 429 came back (overlapping requests): the route gets no attempt between the
// end a stack that mishandles it would use and the real end.
std::optional<CheckResult> check_cooldown_extends(const Ctx& x) {
  if (!x.c.checks.cooldown) return std::nullopt;
  std::map<std::string, double> end;  // the rate cooldown's end per route (-1: none yet)
  std::map<std::string, std::optional<CooldownChange>> change;
  std::vector<std::string> bad;
  int judged = 0;
  for (const auto& [at, answer, entry] : cooldown_events(x)) {
    const LedgerEntry& e = *entry;
    auto& route_end = end.try_emplace(e.route, -1).first->second;
    if (!answer) {
      const auto& c = change[e.route];
      if (c && e.received_at_ms >= c->wrong_end && !early_ok(e.received_at_ms, c->end, c->end - c->wrong_end))
        bad.push_back(fmt::format(
            "{}: #{} at {:.0f} ms, before {:.0f} ms: #{}'s {} Retry-After {} the cooldown "
            "to end at {:.0f} ms",
            e.route, e.seq, e.received_at_ms, c->end, c->by->seq, c->longer ? "longer" : "shorter",
            c->longer ? "extended" : "did not shorten", c->end));
      continue;
    }
    const auto hint = e.fault == FaultKind::rate_429 ? sent_hint_ms(x, e) : std::nullopt;
    if (!hint) continue;
    const double new_end = e.finished_at_ms + *hint;
    if (route_end > e.finished_at_ms && new_end != route_end) {
      ++judged;
      const bool longer = new_end > route_end;
      change[e.route] =
          CooldownChange{&e, longer ? route_end : new_end, std::max(route_end, new_end), longer};
    }
    route_end = std::max(route_end, new_end);
  }
  if (judged == 0) return std::nullopt;
  return result("cooldown_extends", bad.empty(),
                bad.empty()
                    ? fmt::format("{} Retry-After(s) during a cooldown: each kept the later end", judged)
                    : fmt::format("{}; timeline: {}", fmt::join(bad, "; "), timeline(x)));
}

namespace {

// The caller gave up on this attempt while the provider was healthy, only slow (its own attempt timeout).
bool abandoned_by_caller(const LedgerEntry& e) {
  const bool healthy_fault =
      e.fault == FaultKind::ok || e.fault == FaultKind::slow || e.fault == FaultKind::slow_first_token;
  return e.outcome == AttemptOutcome::client_closed && healthy_fault;
}

// The first attempt of each request, in arrival order (a request the mock never saw has none).
std::vector<const LedgerEntry*> first_attempts(const Ctx& x) {
  std::vector<const LedgerEntry*> firsts;
  for (const auto& v : x.views)
    if (!v.entries.empty()) firsts.push_back(v.entries.front());
  std::sort(firsts.begin(), firsts.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
  return firsts;
}

// The primary's last abandoned attempt before seq `before`, unless the provider failed it since (a
// failure of its own word may cool it): the attempt that must not keep the next request away.
const LedgerEntry* abandoned_since_provider_spoke(const Ctx& x, std::uint64_t before) {
  const LedgerEntry* abandoned = nullptr;
  for (const auto& e : x.h.ledger) {
    if (e.seq >= before || x.c.logical_route(e.route) != x.c.policy.workflow.primary) continue;
    if (abandoned_by_caller(e))
      abandoned = &e;
    else if (attempt_failed(e, x.c.policy))
      abandoned = nullptr;
  }
  return abandoned;
}

}  // namespace

// An attempt the caller abandoned (its own timeout, the provider healthy but slow) says nothing about
// the route's capacity: the next request still starts on the primary, not on a fallback.
std::optional<CheckResult> check_caller_timeout_no_cooldown(const Ctx& x) {
  const auto& cd = x.c.checks.cooldown;
  if (!cd || !cd->caller_timeout_no_cooldown) return std::nullopt;
  const auto& primary = x.c.policy.workflow.primary;
  std::vector<std::string> bad;
  int judged = 0;
  const auto firsts = first_attempts(x);
  for (std::size_t i = 1; i < firsts.size(); ++i) {
    const auto* gave_up = abandoned_since_provider_spoke(x, firsts[i]->seq);
    if (!gave_up) continue;
    ++judged;
    if (x.c.logical_route(firsts[i]->route) != primary)
      bad.push_back(
          fmt::format("the caller abandoned #{} on {} at {:.0f} ms (provider healthy, slow), and the next "
                      "request started on {} (#{} at {:.0f} ms): its own timeout cooled the route",
                      gave_up->seq, primary, gave_up->finished_at_ms, firsts[i]->route, firsts[i]->seq,
                      firsts[i]->received_at_ms));
  }
  if (judged == 0)
    return result("caller_timeout_no_cooldown", true, "no request followed an attempt the caller abandoned");
  return result("caller_timeout_no_cooldown", bad.empty(),
                bad.empty()
                    ? fmt::format("{} request(s) after an abandoned attempt started on {}", judged, primary)
                    : fmt::format("{}; timeline: {}", fmt::join(bad, "; "), timeline(x)));
}

// When a failure point's action is fallback, the fallback attempt starts at once: the retry backoff and
// the failed route's Retry-After are the failed route's, not the fallback's (SPEC 3 rule 5).
std::optional<CheckResult> check_fallback_without_waiting(const Ctx& x) {
  const auto& cd = x.c.checks.cooldown;
  if (!cd || !cd->fallback_within_ms) return std::nullopt;
  const double bound = x.bound(*cd->fallback_within_ms);
  std::vector<std::string> bad;
  int fallbacks = 0;
  for (const auto& v : x.views)
    for (std::size_t i = 0; i + 1 < v.entries.size(); ++i) {
      const auto &failed = *v.entries[i], &next = *v.entries[i + 1];
      const bool fallback = v.entry_delivery[i] == v.entry_delivery[i + 1] &&
                            x.c.logical_route(failed.route) != x.c.logical_route(next.route);
      if (!fallback) continue;
      ++fallbacks;
      const double gap = next.received_at_ms - failed.finished_at_ms;
      if (gap > bound)
        bad.push_back(fmt::format("#{} on {} started {:.0f} ms after #{} on {} failed (bound {:.0f} ms)",
                                  next.seq, next.route, gap, failed.seq, failed.route, bound));
    }
  if (fallbacks == 0) return result("fallback_without_waiting", true, "no fallback was taken");
  return result("fallback_without_waiting", bad.empty(),
                bad.empty() ? fmt::format("{} fallback(s), each started within {:.0f} ms", fallbacks, bound)
                            : fmt::format("{}; timeline: {}", fmt::join(bad, "; "), timeline(x)));
}

namespace {

// The soonest end among the workflow's routes' cooldowns as the ledger's answers finished by `at_ms` set
// them; nothing when one of the routes is free at `at_ms`.
std::optional<double> every_route_cooling_until(const Ctx& x, double at_ms) {
  std::map<std::string, RouteCooldown> state;
  for (const auto& e : x.h.ledger)
    if (e.finished_at_ms <= at_ms) cool_by(x, e, state[x.c.logical_route(e.route)]);
  std::vector<std::string> routes{x.c.policy.workflow.primary};
  routes.insert(routes.end(), x.c.policy.workflow.fallback.begin(), x.c.policy.workflow.fallback.end());
  std::optional<double> soonest;
  for (const auto& route : routes) {
    const double end = state[route].end();
    if (end <= at_ms) return std::nullopt;
    soonest = std::min(soonest.value_or(end), end);
  }
  return soonest;
}

}  // namespace

// A request the target answered itself while every route was cooling carries a Retry-After that points
// no earlier than the soonest route's cooldown end: a caller that waits it out is served. Judged where the
// driver sees the target's answer (inproc: the stack's log; http: the target's 429 and its Retry-After).
std::optional<CheckResult> check_retry_after_forwarded(const Ctx& x) {
  const auto& cd = x.c.checks.cooldown;
  if (!cd || !cd->retry_after_forwarded || !x.h.has_decision_log) return std::nullopt;
  std::vector<std::string> bad;
  int judged = 0;
  for (std::size_t i = 0; i < x.h.requests.size(); ++i) {
    const auto& req = x.h.requests[i];
    const double end = req.started_ms + req.wall_ms;
    const auto soonest = req.log.answered ? std::nullopt : every_route_cooling_until(x, end);
    if (!soonest) continue;
    ++judged;
    const auto& wait = req.log.retry_after_ms;
    if (!wait)
      bad.push_back(fmt::format(
          "request {} was refused at {:.0f} ms while every route was cooling (the soonest free at "
          "{:.0f} ms), with no Retry-After",
          i + 1, end, *soonest));
    else if (end + *wait + 5 < *soonest)
      bad.push_back(fmt::format(
          "request {} was refused at {:.0f} ms with a Retry-After of {:.0f} ms, before the soonest "
          "cooldown end at {:.0f} ms",
          i + 1, end, *wait, *soonest));
  }
  if (judged == 0)
    return result("retry_after_forwarded", true, "no request was refused while every route was cooling");
  return result("retry_after_forwarded", bad.empty(),
                bad.empty()
                    ? fmt::format("{} refusal(s) while every route was cooling, each with a Retry-After past "
                                  "the soonest cooldown end",
                                  judged)
                    : fmt::format("{}; timeline: {}", fmt::join(bad, "; "), timeline(x)));
}

extern const CheckSpec cooldown_by_owner_check{"cooldown_by_owner", check_cooldown_by_owner};
extern const CheckSpec cooldown_extends_check{"cooldown_extends", check_cooldown_extends};
extern const CheckSpec caller_timeout_no_cooldown_check{"caller_timeout_no_cooldown",
                                                        check_caller_timeout_no_cooldown};
extern const CheckSpec fallback_without_waiting_check{"fallback_without_waiting",
                                                      check_fallback_without_waiting};
extern const CheckSpec retry_after_forwarded_check{"retry_after_forwarded", check_retry_after_forwarded};

}  // namespace llmchaos::harness::detail
