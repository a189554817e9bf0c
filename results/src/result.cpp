#include "llmchaos/results/result.hpp"

#include <algorithm>

namespace llmchaos::harness {

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::pass:
      return "pass";
    case Verdict::fail:
      return "fail";
    case Verdict::unknown:
      return "unknown";
    case Verdict::na:
      return "n/a";
  }
  return "?";
}

namespace {
int count(const std::vector<CaseResult>& cases, Verdict v) {
  return static_cast<int>(
      std::count_if(cases.begin(), cases.end(), [v](const CaseResult& c) { return c.verdict == v; }));
}
}  // namespace

int RunResult::passed() const {
  return count(cases, Verdict::pass);
}
int RunResult::failed() const {
  return count(cases, Verdict::fail);
}
int RunResult::unknown() const {
  return count(cases, Verdict::unknown);
}
int RunResult::not_applicable() const {
  return count(cases, Verdict::na);
}

std::map<Outcome, int> RunResult::outcome_split() const {
  std::map<Outcome, int> split;
  for (const auto& [o, name] : enum_names<Outcome>::table) split[o] = 0;
  // Every request of every case, by its first delivery (a redelivery is the same request).
  for (const auto& c : cases)
    for (const auto& log : c.logs)
      if (log.delivery <= 1 && log.limited_by.empty())
        ++split[log.outcome];  // a tier refusal: the stack never ran it
  return split;
}

}  // namespace llmchaos::harness
