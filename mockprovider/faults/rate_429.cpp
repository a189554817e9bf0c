// rate_429: 429 with the dialect's rate-limit body and retry-after / retry-after-ms (default 1000 ms).
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
constexpr std::string_view params[] = {"body"};  // a named real body of the dialect
constexpr double default_retry_after_ms = 1000;

Plan plan(const FaultInput& in) {  // the headers are always sent: a default hint when the step gives none
  return plan_blocks::error_plan(in, FaultKind::rate_429, ErrorKind::rate_limit, {}, default_retry_after_ms);
}

void draw(ExploreDraw& d) {
  constexpr double hints[] = {0, 50, 500, 3000, 60000};
  if (const double h = hints[d.rng.between(0, 4)]; h > 0) d.param("retry_after_ms", h);
}
}  // namespace

extern const FaultSpec rate_429_fault = {
    .kind = FaultKind::rate_429,
    .params = params,
    .plan = plan,
    .summary = "429 rate limit with retry-after (s) and retry-after-ms",
    .traits = {.default_retry_after_ms = default_retry_after_ms, .explore_draw = draw},
    .error_body = ErrorKind::rate_limit,
};

}  // namespace llmchaos::mock
