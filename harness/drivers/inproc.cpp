// inproc: the reference client stack (client::ClientStack) in this process, one per case, talking to
// the mock through the transport the runner gives it (live sockets, or virtual time later).
#include <mutex>
#include <optional>
#include <stdexcept>

#include "drivers.hpp"
#include "llmchaos/client/group_transport.hpp"
#include "llmchaos/client/limiter.hpp"
#include "llmchaos/core/rng.hpp"
#include "llmchaos/harness/mutation.hpp"

namespace llmchaos::harness::driver_units {
namespace {

// The case's [groups] as the balancer's groups, each member with its `weight` (default 1).
std::vector<client::ModelGroupSpec> group_specs(const Case& c) {
  std::vector<client::ModelGroupSpec> out;
  for (const auto& [name, members] : c.groups) {
    client::ModelGroupSpec g{name, {}};
    for (const auto& m : members) g.members.push_back({m, c.weight_of(m)});
    out.push_back(std::move(g));
  }
  return out;
}

// The case's groups in front of the runner's transport, as the gateway puts them in front of its
// upstreams: the stack sees each group as one route, the balancer picks a member per attempt. The
// balancer draws from its own RNG, so a case without groups draws the same jitter as before.
std::unique_ptr<client::Transport> with_groups(const CaseEnv& env, std::unique_ptr<client::Transport> wire,
                                               std::unique_ptr<client::Transport>& inner, Rng& rng) {
  if (env.c->groups.empty()) return wire;
  inner = std::move(wire);
  return std::make_unique<client::GroupTransport>(env.endpoints, group_specs(*env.c), *inner, rng,
                                                  client::group_balancer_settings(env.time_scale));
}

std::map<std::string, client::Endpoint> stack_endpoints(const CaseEnv& env,
                                                        const client::Transport& transport) {
  auto out = env.endpoints;
  if (const auto* groups = dynamic_cast<const client::GroupTransport*>(&transport))
    for (const auto& [name, members] : env.c->groups) out[name] = groups->endpoint_for(name);
  return out;
}

class InprocSession final : public CaseSession {
 public:
  InprocSession(const CaseEnv& env, const DriverOptions& options)
      : rng_(env.seed),
        balancer_rng_(env.seed ^ 0x6a09e667f3bcc908ULL),
        transport_(with_groups(env, env.make_transport(env), wire_, balancer_rng_)),
        stack_(mutated(env.c->policy, options.mutation).scaled(env.time_scale),
               stack_endpoints(env, *transport_), *env.clock, rng_, *transport_),
        clock_(*env.clock),
        time_scale_(env.time_scale) {
    if (env.c->tier) tier_.emplace(*env.c->tier, tier_now());
  }

  // The case's [tier] in front of the stack, as the gateway puts a key's tier in front of its stacks:
  // the prompt's estimate is admitted or refused, then settled to the answer's real usage.
  // Overlapping requests (`[sequence] overlap`) call this at once: the stack locks itself, the tier here.
  client::DecisionLog send(const client::WorkflowRequest& request) override {
    if (!tier_) return stack_.execute(request);
    const double estimate = client::estimate_tokens(request.prompt);
    {
      std::lock_guard lock(tier_mutex_);
      const auto verdict = tier_->try_acquire(tier_now(), estimate);
      if (!verdict.allowed) {
        client::DecisionLog refused;
        refused.limited_by = verdict.limit;
        return refused;
      }
    }
    auto log = stack_.execute(request);
    std::lock_guard lock(tier_mutex_);
    tier_->settle(estimate, log.input_tokens + log.output_tokens, tier_now());
    return log;
  }
  std::vector<client::DecisionLog> drain() override {
    return stack_.queued() ? stack_.drain() : std::vector<client::DecisionLog>{};
  }
  bool has_decision_log() const override { return true; }

 private:
  Rng rng_;
  Rng balancer_rng_;
  std::unique_ptr<client::Transport> wire_;       // the runner's transport under the groups (when any)
  std::unique_ptr<client::Transport> transport_;  // before stack_: the stack holds a reference
  client::ClientStack stack_;
  Clock& clock_;
  double time_scale_;
  std::optional<client::KeyLimiter> tier_;
  std::mutex tier_mutex_;
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

Driver inproc() {
  return {"inproc",
          "the reference client stack in this process",
          no_options,
          open,
          nullptr,
          /*overlapping_sends=*/true};
}

}  // namespace llmchaos::harness::driver_units
