// The run's plain data (results/): the verdict names the reports print and the counts and the metric
// split every report's header reads.
#include <catch2/catch.hpp>

#include "llmchaos/results/result.hpp"

using namespace llmchaos;
using harness::CaseResult;
using harness::RunResult;
using harness::Verdict;

namespace {

CaseResult case_with(Verdict verdict) {
  CaseResult c;
  c.verdict = verdict;
  return c;
}

client::DecisionLog log_of(Outcome outcome, int delivery = 1, std::string limited_by = {}) {
  client::DecisionLog log;
  log.outcome = outcome;
  log.delivery = delivery;
  log.limited_by = std::move(limited_by);
  return log;
}

}  // namespace

TEST_CASE("verdicts are named as the reports print them", "[results]") {
  CHECK(harness::to_string(Verdict::pass) == "pass");
  CHECK(harness::to_string(Verdict::fail) == "fail");
  CHECK(harness::to_string(Verdict::unknown) == "unknown");
  CHECK(harness::to_string(Verdict::na) == "n/a");
}

TEST_CASE("a run counts its cases by verdict, n/a apart from pass and fail", "[results]") {
  RunResult run;
  for (auto v :
       {Verdict::pass, Verdict::pass, Verdict::fail, Verdict::unknown, Verdict::na, Verdict::na, Verdict::na})
    run.cases.push_back(case_with(v));
  CHECK(run.passed() == 2);
  CHECK(run.failed() == 1);
  CHECK(run.unknown() == 1);
  CHECK(run.not_applicable() == 3);
}

TEST_CASE("the metric split counts each request once, by its first delivery, and no tier refusal",
          "[results]") {
  RunResult run;
  auto c = case_with(Verdict::pass);
  c.logs = {log_of(Outcome::queued), log_of(Outcome::primary_success, 2),  // a redelivery: the same request
            log_of(Outcome::fallback_recovery), log_of(Outcome::fail_closed, 1, "requests_per_minute")};
  run.cases.push_back(c);
  run.cases.push_back(c);
  const auto split = run.outcome_split();
  CHECK(split.size() == std::size(enum_names<Outcome>::table));  // every outcome, zeros included
  CHECK(split.at(Outcome::queued) == 2);
  CHECK(split.at(Outcome::fallback_recovery) == 2);
  CHECK(split.at(Outcome::primary_success) == 0);
  CHECK(split.at(Outcome::fail_closed) == 0);
  CHECK(split.at(Outcome::degraded) == 0);
}
