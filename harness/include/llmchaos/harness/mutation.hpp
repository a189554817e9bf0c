#pragma once
// Deliberately broken client stacks, for testing the tester: `llmchaos run --mutate NAME` and `llmchaos
// explore --mutate NAME` run the reference stack (inproc driver) with one rule flipped through the policy
// the stack is given, while the case and every check keep the real policy. explore must find each one
// and shrink it to a small case that `llmchaos run --mutate NAME` fails and `llmchaos run` passes.
// One table (mutation.cpp); a mutation is one function over the stack's policy.
#include <span>
#include <string>
#include <string_view>

#include "llmchaos/client/policy.hpp"

namespace llmchaos::harness {

struct Mutation {
  std::string_view name;
  std::string_view summary;
  void (*apply)(client::Policy& stack_policy);
};

std::span<const Mutation> mutations();
const Mutation* find_mutation(std::string_view name);  // nullptr when unknown
std::string mutation_names();                          // "a, b, c" for usage messages
// The policy the stack runs with: `policy` unchanged for "", else mutated. Throws std::invalid_argument
// for an unknown name.
client::Policy mutated(const client::Policy& policy, std::string_view name);

}  // namespace llmchaos::harness
