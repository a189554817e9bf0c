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

}  // namespace llmchaos::harness::detail
