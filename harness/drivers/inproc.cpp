// inproc: the reference client stack (client::ClientStack) in this process, one per case, talking to
// the mock through the transport the runner gives it (live sockets, or virtual time later).
#include <optional>
#include <stdexcept>

#include "drivers.hpp"
#include "llmchaos/client/limiter.hpp"
#include "llmchaos/core/rng.hpp"
#include "llmchaos/harness/mutation.hpp"

namespace llmchaos::harness::driver_units {
namespace {

class InprocSession final : public CaseSession {
 public:
  InprocSession(const CaseEnv& env, const DriverOptions& options)
      : rng_(env.seed),
        transport_(env.make_transport(env)),
        stack_(mutated(env.c->policy, options.mutation).scaled(env.time_scale), env.endpoints, *env.clock, rng_,
               *transport_),
        clock_(*env.clock),
        time_scale_(env.time_scale) {
    if (env.c->tier) tier_.emplace(*env.c->tier, tier_now());
  }

  // The case's [tier] in front of the stack, as the gateway puts a key's tier in front of its stacks:
  // the prompt's estimate is admitted or refused, then settled to the answer's real usage.
  client::DecisionLog send(const client::WorkflowRequest& request) override {
    if (!tier_) return stack_.execute(request);
    const double estimate = client::estimate_tokens(request.prompt);
    const auto verdict = tier_->try_acquire(tier_now(), estimate);
    if (!verdict.allowed) {
      client::DecisionLog refused;
      refused.limited_by = verdict.limit;
      return refused;
    }
    auto log = stack_.execute(request);
    tier_->settle(estimate, log.input_tokens + log.output_tokens, tier_now());
    return log;
  }
  std::vector<client::DecisionLog> drain() override { return stack_.queued() ? stack_.drain() : std::vector<client::DecisionLog>{}; }
  bool has_decision_log() const override { return true; }

 private:
  Rng rng_;
  std::unique_ptr<client::Transport> transport_;  // before stack_: the stack holds a reference
  client::ClientStack stack_;
  Clock& clock_;
  double time_scale_;
  std::optional<client::KeyLimiter> tier_;
  // The tier's windows run on scripted ms, like every time of the case.
  double tier_now() const { return clock_.now_ms() / time_scale_; }
};

std::string no_options(const DriverOptions& o) {
  if (!o.exec_command.empty()) return "--exec is for --driver exec";
  if (!o.target_url.empty() || !o.target_config.empty() || !o.target_command.empty())
    return "--target, --target-config and --target-command are for --driver http";
  if (!o.mutation.empty() && !find_mutation(o.mutation))
    return "unknown mutation \"" + o.mutation + "\" (mutations: " + mutation_names() + ")";
  return {};
}

std::unique_ptr<CaseSession> open(const CaseEnv& env, const DriverOptions& options) {
  if (!env.make_transport) throw std::logic_error("inproc driver: no transport factory");
  return std::make_unique<InprocSession>(env, options);
}

}  // namespace

Driver inproc() { return {"inproc", "the reference client stack in this process", no_options, open}; }

}  // namespace llmchaos::harness::driver_units
