// A sequence of requests through an outage ([sequence]): served during it, back on the primary after it,
// and the outage route left alone while it lasts.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "checker_ctx.hpp"

namespace llmchaos::harness::detail {
namespace {

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

}  // namespace

extern const CheckSpec served_during_outage_check{"served_during_outage", check_served};
extern const CheckSpec recovered_within_check{"recovered_within", check_recovered};
extern const CheckSpec max_outage_attempts_check{"max_outage_attempts", check_outage_attempts};

}  // namespace llmchaos::harness::detail
