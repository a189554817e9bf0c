// A tier in front of the stack ([tier], expect_rate_limited): the requests it refused never reached the
// mock, and no window holds more requests than the tier allows.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "checker_ctx.hpp"

namespace llmchaos::harness::detail {
namespace {

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

}  // namespace

extern const CheckSpec expect_rate_limited_check{"expect_rate_limited", check_rate_limited};
extern const CheckSpec within_tier_limits_check{"within_tier_limits", check_tier_windows};

}  // namespace llmchaos::harness::detail
