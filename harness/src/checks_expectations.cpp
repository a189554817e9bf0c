// What the case expects (expect, [[expect_at]], expect_outcome, [[expect_attempts]], [[expect_share]]), and
// the agreement of the two derivations of every failure point's action: the decision log's and the ledger's.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

#include "checker_ctx.hpp"

namespace llmchaos::harness::detail {
namespace {

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

}  // namespace

extern const CheckSpec action_check{"action", check_action};
extern const CheckSpec expect_at_check{"expect_at", check_expect_at};
extern const CheckSpec action_agreement_check{"action_agreement", check_agreement};
extern const CheckSpec expect_outcome_check{"expect_outcome", check_outcome};
extern const CheckSpec expect_attempts_check{"expect_attempts", check_attempts};
extern const CheckSpec expect_share_check{"expect_share", check_share};

}  // namespace llmchaos::harness::detail
