#pragma once
// What a system under test can do, and what a case needs of it. A target that is not ours declares
// its capabilities (`--target-capabilities`, or `llmchaos.capabilities` in its template); a case that
// needs one it lacks is `n/a`: listed, never counted as a pass or a failure (SPEC section 6).
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/harness/case.hpp"

namespace llmchaos::harness {

struct Capability {
  std::string_view name;
  std::string_view summary;
  bool (*needed_by)(const Case& c);
};

// queue, degrade, output_contract, redelivery (one table line each, capabilities.cpp).
std::span<const Capability> capabilities();
std::string capability_names();  // "queue, degrade, ..." for usage messages

// A comma-separated list ("queue, degrade"; "none" or "" for no capability) checked against the table;
// throws std::invalid_argument naming the unknown one.
std::vector<std::string> parse_capabilities(std::string_view list);

// The capabilities the case needs, in table order.
std::vector<std::string> needed_capabilities(const Case& c);

// "" when the target has every capability the case needs (or declared none: nullopt), else the n/a
// reason: "needs capability queue (the target has: degrade)".
std::string missing_capability(const Case& c, const std::optional<std::vector<std::string>>& declared);

}  // namespace llmchaos::harness
