#include "llmchaos/harness/mutation.hpp"

#include <fmt/format.h>

#include <array>
#include <stdexcept>

namespace llmchaos::harness {
namespace {

void extra_attempt(client::Policy& p) {
  ++p.workflow.max_total_attempts;
}
void ignore_unknown_commit(client::Policy& p) {
  p.workflow.replay_safe = true;
}
void no_fallback(client::Policy& p) {
  for (const auto& name : p.workflow.fallback) {
    auto route = p.route(name);  // an unlisted route has the defaults: list it to change it
    route.approved = false;
    p.routes[name] = route;
  }
}

// Waits ten times the backoff: only backoff_bounds sees it (the rules' actions stay right while time is
// plentiful), so explore finds it only when it judges with the whole checker.
void slow_backoff(client::Policy& p) {
  p.backoff.base_ms *= 10;
  p.backoff.cap_ms *= 10;
}

}  // namespace

std::span<const Mutation> mutations() {
  static constexpr std::array table{
      Mutation{"extra_attempt",
               "the stack spends one attempt more than the budget (an SDK retry under the app's)",
               extra_attempt},
      Mutation{"ignore_unknown_commit", "rule 2 broken: a timeout with no byte counts as not committed",
               ignore_unknown_commit},
      Mutation{"no_fallback", "rule 5 broken: the stack never takes an approved fallback", no_fallback},
      Mutation{"slow_backoff", "the stack waits ten times the backoff before a retry", slow_backoff},
  };
  return table;
}

const Mutation* find_mutation(std::string_view name) {
  for (const auto& m : mutations())
    if (m.name == name) return &m;
  return nullptr;
}

std::string mutation_names() {
  std::string out;
  for (const auto& m : mutations()) out += (out.empty() ? "" : ", ") + std::string(m.name);
  return out;
}

client::Policy mutated(const client::Policy& policy, std::string_view name) {
  client::Policy out = policy;
  if (name.empty()) return out;
  const auto* m = find_mutation(name);
  if (!m)
    throw std::invalid_argument(
        fmt::format("unknown mutation \"{}\" (mutations: {})", name, mutation_names()));
  m->apply(out);
  return out;
}

}  // namespace llmchaos::harness
