// slow: the healthy answer after a latency that is fixed (latency_ms) plus, when p50_ms is given, a
// lognormal draw with that median and p95_ms as its 95th percentile (seeded by the engine's RNG).
#include <cmath>

#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
constexpr std::string_view params[] = {"p50_ms", "p95_ms"};
constexpr double z95 = 1.6448536269514722;  // standard normal quantile at 0.95

double lognormal(Rng& rng, double p50, double p95) {
  const double mu = std::log(p50);
  const double sigma = p95 > p50 ? (std::log(p95) - std::log(p50)) / z95 : 0;
  const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();  // Box-Muller; u1 in (0, 1]
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  return std::exp(mu + sigma * z);
}

Plan plan(const FaultInput& in) {
  Plan p = plan_blocks::answer_plan(in, FaultKind::slow);
  if (in.step.p50_ms && *in.step.p50_ms > 0)
    p.latency_ms +=
        plan_blocks::scaled(in, lognormal(in.rng, *in.step.p50_ms, in.step.p95_ms.value_or(*in.step.p50_ms)));
  return p;
}

void draw(ExploreDraw& d) {
  if (d.maybe(0.5)) {
    d.param("latency_ms", d.maybe(0.5) ? d.within() : d.beyond());
  } else {
    const double p50 = d.within();
    d.param("p50_ms", p50);
    d.param("p95_ms", p50 * static_cast<double>(d.rng.between(2, 4)));
  }
}
}  // namespace

extern const FaultSpec slow_fault = {
    .kind = FaultKind::slow,
    .params = params,
    .plan = plan,
    .summary = "the answer after a fixed latency or a p50/p95 lognormal draw",
    .traits = {.keeps_healthy_stream = true, .explore_latency = false, .explore_draw = draw},
};

}  // namespace llmchaos::mock
