// The capability table (capabilities.hpp) and what each case needs of a target.
#include "llmchaos/harness/capabilities.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace llmchaos::harness {
namespace {

bool pins(const Case& c, Action a) {
  if (c.expect == a) return true;
  return std::any_of(c.expect_at.begin(), c.expect_at.end(),
                     [a](const ExpectAt& at) { return at.action == a; });
}

bool needs_queue(const Case& c) {
  return pins(c, Action::queue) || c.expect_outcome == Outcome::queued;
}
bool needs_degrade(const Case& c) {
  return pins(c, Action::degrade) || c.expect_outcome == Outcome::degraded;
}
bool needs_output_contract(const Case& c) {
  return !c.policy.workflow.output_required.empty();
}
// A point pinned after the first queued one is the redelivery's own decision.
bool needs_redelivery(const Case& c) {
  if (!needs_queue(c)) return false;
  int queued_at = c.expect == Action::queue ? 1 : 0;
  for (const auto& at : c.expect_at)
    if (at.action == Action::queue && (queued_at == 0 || at.point < queued_at)) queued_at = at.point;
  if (queued_at == 0) return false;
  return std::any_of(c.expect_at.begin(), c.expect_at.end(),
                     [&](const ExpectAt& at) { return at.point > queued_at; });
}

bool needs_tier(const Case& c) {
  return c.tier.has_value();
}
bool needs_groups(const Case& c) {
  return !c.groups.empty();
}

constexpr Capability table[] = {
    {"queue", "queues a request it cannot serve now (SPEC rule 6), answering 202", needs_queue},
    {"degrade", "answers a request with the workflow's degrade text (rule 7)", needs_degrade},
    {"output_contract", "checks an answer against the workflow's required output fields",
     needs_output_contract},
    {"redelivery", "redelivers what it queued on the budget already spent (the drain)", needs_redelivery},
    {"tier_limits",
     "refuses a request over its key's tier limits (rpm, rpd, tpm) with a 429 before running it", needs_tier},
    {"model_groups", "balances a model group's member routes ({{groups}}) as one route of the workflow",
     needs_groups},
};

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out.empty() ? "none" : out;
}

}  // namespace

std::span<const Capability> capabilities() {
  return table;
}

std::string capability_names() {
  std::string out;
  for (const auto& c : table) out += (out.empty() ? "" : ", ") + std::string(c.name);
  return out;
}

std::vector<std::string> parse_capabilities(std::string_view list) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at <= list.size();) {
    const auto end = std::min(list.find(',', at), list.size());
    auto item = list.substr(at, end - at);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    at = end + 1;
    if (item.empty() || item == "none") continue;
    if (std::none_of(std::begin(table), std::end(table), [&](const Capability& c) { return c.name == item; }))
      throw std::invalid_argument(
          fmt::format("unknown capability \"{}\" (capabilities: {}, or none)", item, capability_names()));
    if (std::find(out.begin(), out.end(), item) == out.end()) out.emplace_back(item);
  }
  return out;
}

std::vector<std::string> needed_capabilities(const Case& c) {
  std::vector<std::string> out;
  for (const auto& cap : table)
    if (cap.needed_by(c)) out.emplace_back(cap.name);
  return out;
}

std::string missing_capability(const Case& c, const std::optional<std::vector<std::string>>& declared) {
  if (!declared) return {};
  std::vector<std::string> missing;
  for (const auto& need : needed_capabilities(c))
    if (std::find(declared->begin(), declared->end(), need) == declared->end()) missing.push_back(need);
  if (missing.empty()) return {};
  return fmt::format("needs capability {} (the target has: {})", join(missing), join(*declared));
}

}  // namespace llmchaos::harness
