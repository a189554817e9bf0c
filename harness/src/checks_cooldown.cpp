// Cooldown conformance (SPEC 5, issue 27): over the case's sequence of requests, a route that answered
// a 429 or 402 is left alone for as long as its owner says, and no longer than needed. Judged from the
// ledger alone, so it applies to every driver.
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checker_ctx.hpp"
#include "retry_hint.hpp"
#include "llmchaos/mockprovider/fault_traits.hpp"

namespace llmchaos::harness::detail {

std::optional<double> sent_hint_ms(const Ctx& x, const LedgerEntry& e) {
  const auto h = readable_sent_hint(e, x.step(e), x.opt.time_scale);
  return h ? std::optional<double>(h->ms) : std::nullopt;
}

namespace {

bool quota_like(FaultKind f) { return f == FaultKind::quota_429 || f == FaultKind::payment_402; }

// One route's cooldown as the ledger's answers set it (real ms after the case started).
struct RouteCooldown {
  double rate_end = -1;   // end of the longest Retry-After seen so far (a later longer one extends it)
  double quota_end = -1;  // end of the quota window
  bool rate_due = false;  // a rate cooldown ended and the route has not been tried since
};

}  // namespace

// A route is not tried before its cooldown ends (rate: the Retry-After; quota / 402: the case's quota
// window), and once a rate cooldown ends, traffic served elsewhere past the stated slack means the
// stack kept the route cool too long (a per-minute limit locked out for a day).
std::optional<CheckResult> check_cooldown_by_owner(const Ctx& x) {
  const auto& cd = x.c.checks.cooldown;
  if (!cd) return std::nullopt;
  // Real sockets: the mock stamps its end after the write; 5 ms + 5% as retry_after_honoured allows.
  const auto early_ok = [&](double at, double end, double span) { return at + 5 + 0.05 * span >= end; };
  const double slack = x.scaled(cd->slack_ms) + (x.opt.exact_time ? 0 : x.opt.elapsed_tolerance_ms);
  std::map<std::string, RouteCooldown> state;
  std::vector<std::string> bad;
  int cooled = 0;
  for (const auto& e : x.h.ledger) {
    for (auto& [route, st] : state)  // a route free since rate_end + slack while traffic went elsewhere
      if (route != e.route && st.rate_due && e.received_at_ms > st.rate_end + slack) {
        bad.push_back(fmt::format("{}: cooldown ended at {:.0f} ms, but #{} went to {} at {:.0f} ms (slack {:.0f} ms)",
                                  route, st.rate_end, e.seq, e.route, e.received_at_ms, slack));
        st.rate_due = false;
      }
    auto& st = state[e.route];
    if (st.rate_end >= 0 && !early_ok(e.received_at_ms, st.rate_end, st.rate_end))
      bad.push_back(fmt::format("{}: #{} at {:.0f} ms, inside the rate cooldown ending at {:.0f} ms", e.route, e.seq,
                                e.received_at_ms, st.rate_end));
    if (st.quota_end >= 0 && e.received_at_ms < st.quota_end)
      bad.push_back(fmt::format("{}: #{} at {:.0f} ms, inside the quota window ending at {:.0f} ms", e.route, e.seq,
                                e.received_at_ms, st.quota_end));
    st.rate_due = false;
    if (e.fault == FaultKind::rate_429)
      if (auto hint = sent_hint_ms(x, e)) {
        st.rate_end = std::max(st.rate_end, e.finished_at_ms + *hint);
        st.rate_due = true;
        ++cooled;
      }
    if (quota_like(e.fault) && cd->quota_window_ms) {
      st.quota_end = e.finished_at_ms + x.scaled(*cd->quota_window_ms);
      ++cooled;
    }
  }
  if (cooled == 0) return result("cooldown_by_owner", true, "no attempt set a cooldown");
  return result("cooldown_by_owner", bad.empty(),
                bad.empty() ? fmt::format("{} cooldown(s) kept by their owner's length", cooled)
                            : fmt::format("{}; timeline: {}", fmt::join(bad, "; "), timeline(x)));
}

namespace {

// The caller gave up on this attempt while the provider was healthy, only slow (its own attempt timeout).
bool abandoned_by_caller(const LedgerEntry& e) {
  const bool healthy_fault = e.fault == FaultKind::ok || e.fault == FaultKind::slow || e.fault == FaultKind::slow_first_token;
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
      bad.push_back(fmt::format("the caller abandoned #{} on {} at {:.0f} ms (provider healthy, slow), and the next "
                                "request started on {} (#{} at {:.0f} ms): its own timeout cooled the route",
                                gave_up->seq, primary, gave_up->finished_at_ms, firsts[i]->route, firsts[i]->seq,
                                firsts[i]->received_at_ms));
  }
  if (judged == 0) return result("caller_timeout_no_cooldown", true, "no request followed an attempt the caller abandoned");
  return result("caller_timeout_no_cooldown", bad.empty(),
                bad.empty() ? fmt::format("{} request(s) after an abandoned attempt started on {}", judged, primary)
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
        bad.push_back(fmt::format("#{} on {} started {:.0f} ms after #{} on {} failed (bound {:.0f} ms)", next.seq,
                                  next.route, gap, failed.seq, failed.route, bound));
    }
  if (fallbacks == 0) return result("fallback_without_waiting", true, "no fallback was taken");
  return result("fallback_without_waiting", bad.empty(),
                bad.empty() ? fmt::format("{} fallback(s), each started within {:.0f} ms", fallbacks, bound)
                            : fmt::format("{}; timeline: {}", fmt::join(bad, "; "), timeline(x)));
}

}  // namespace llmchaos::harness::detail
