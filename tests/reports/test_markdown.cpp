#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "llmchaos/reports/reports.hpp"
#include "sample_run.hpp"

using namespace llmchaos;
using test_helpers::count;

namespace {
std::string markdown(const harness::RunResult& run) {
  return reports::render(*reports::find_format("markdown"), run);
}
}  // namespace

TEST_CASE("Markdown lists each outcome of the split apart, never one success rate", "[reports][markdown]") {
  const auto run = sample::run();
  const auto md = markdown(run);
  const auto split = run.outcome_split();
  int total = 0;
  for (const auto& [o, n] : split) total += n;
  CHECK_THAT(md, Catch::Contains("### Outcomes of " + std::to_string(total) + " requests"));
  for (const auto& [o, name] : enum_names<Outcome>::table) {
    std::string label(name);
    std::replace(label.begin(), label.end(), '_', ' ');
    const int n = split.count(o) ? split.at(o) : 0;
    CHECK_THAT(md, Catch::Contains("| " + label + " | " + std::to_string(n) + " | "));
  }
  CHECK_THAT(md, !Catch::Contains("success rate |"));
}

TEST_CASE("Markdown shows each failure with expected vs observed and the rule", "[reports][markdown]") {
  const auto run = sample::run();
  const auto md = markdown(run);
  CHECK_THAT(md, Catch::StartsWith("## llmchaos: 2 of 5 cases did not pass"));
  CHECK_THAT(md, Catch::Contains("### Failures (1)"));
  CHECK_THAT(md, Catch::Contains("expected `queue`, observed `retry`"));
  CHECK_THAT(md, Catch::Contains("outcome expected `queued`, observed `retry_recovery`"));
  CHECK_THAT(md, Catch::Contains("(rule 4: transient, retry fits)"));
  CHECK_THAT(md,
             Catch::Contains("- check `action_agreement`: point 2: log says retry, ledger says fallback"));
  CHECK_THAT(md, Catch::Contains("### Unknown (hang or crash) (1)"));
  CHECK_THAT(md, Catch::Contains("unknown: hang"));
  // Each case that did not pass has its timeline folded under it.
  CHECK(count(md, "<details><summary>Timeline</summary>") ==
        static_cast<std::size_t>(run.failed() + run.unknown()));
}

TEST_CASE(
    "a failure point's rule is named once: the stack's text, or the number alone from an outside target",
    "[reports][markdown]") {
  auto run = sample::run();
  auto& failing = *std::find_if(run.cases.begin(), run.cases.end(),
                                [](const auto& c) { return c.verdict == harness::Verdict::fail; });
  REQUIRE(failing.logs.size() >= 1);
  REQUIRE(failing.logs[0].failures.size() >= 1);
  auto& point = failing.logs[0].failures[0];
  point.rule = 4;
  point.rule_text =
      "4: transient/rate failure, retry fits the budget, breaker closed";  // as decide() words it
  auto md = markdown(run);
  CHECK_THAT(md, Catch::Contains("[rule 4: transient/rate failure, retry fits the budget, breaker closed]"));
  CHECK_THAT(md, !Catch::Contains("rule 4: 4:"));
  point.rule_text.clear();  // the http driver's points from a header: the number only
  md = markdown(run);
  CHECK_THAT(md, Catch::Contains("[rule 4]"));
}

TEST_CASE("Markdown lists the action changes vs the baseline", "[reports][markdown]") {
  const auto run = sample::run();
  const auto md = markdown(run);
  CHECK_THAT(md, Catch::Contains("### Action changes vs baseline (1)"));
  CHECK_THAT(md, Catch::Contains("Compared with `reports/baseline.json`."));
  CHECK_THAT(md, Catch::Contains(" | `queue` | `retry → retry` |"));

  auto unchanged = run;
  unchanged.baseline_changes.clear();
  CHECK_THAT(markdown(unchanged),
             Catch::Contains("No case changed its action vs baseline `reports/baseline.json`."));
  unchanged.baseline.clear();
  CHECK_THAT(markdown(unchanged), !Catch::Contains("baseline"));
}

TEST_CASE("Markdown escapes characters that would break tables or inject HTML", "[reports][markdown]") {
  const auto md = markdown(sample::run());
  // The failing case's name holds '|', '<', '&' and quotes.
  CHECK_THAT(md, Catch::Contains("bare 500 &lt;queues&gt; &amp; \"never\" retries \\| 'twice'"));
  CHECK_THAT(md, !Catch::Contains("<queues>"));
  for (std::size_t pos = md.find("\n| "); pos != std::string::npos; pos = md.find("\n| ", pos + 1)) {
    const auto line = md.substr(pos + 1, md.find('\n', pos + 1) - pos - 1);
    const auto header = md.rfind("\n\n", pos);
    const auto table_head = md.substr(header + 2, md.find('\n', header + 2) - header - 2);
    // Unescaped pipes per row equal the header's: no cell text split a row.
    auto pipes = [](const std::string& s) {
      std::size_t n = 0;
      for (std::size_t i = 0; i < s.size(); ++i) n += s[i] == '|' && (i == 0 || s[i - 1] != '\\');
      return n;
    };
    INFO(line);
    CHECK(pipes(line) == pipes(table_head));
  }
}

TEST_CASE("Markdown says so when every case passed", "[reports][markdown]") {
  harness::RunResult run;
  run.cases = {sample::fallback_pass(), sample::breaker_sequence()};
  const auto md = markdown(run);
  CHECK_THAT(md, Catch::StartsWith("## llmchaos: all 2 cases passed"));
  CHECK_THAT(md, !Catch::Contains("### Failures"));
  CHECK_THAT(md, !Catch::Contains("### Unknown"));
}

TEST_CASE("Markdown stays under the comment limit for a run of any size, failures and changes first",
          "[reports][markdown]") {
  const auto sample_run = sample::run();
  harness::RunResult run = sample_run;
  run.cases.clear();
  run.baseline_changes.clear();
  for (int i = 0; i < 10'000; ++i) {
    auto c = sample_run.cases[static_cast<std::size_t>(i) % sample_run.cases.size()];
    c.name += " #" + std::to_string(i);
    run.cases.push_back(c);
    if (i % 3 == 0)
      run.baseline_changes.push_back(
          {c.name, Action::queue, Action::retry, {Action::queue}, {Action::retry}});
  }
  const auto md = markdown(run);
  CHECK(md.size() < reports::max_markdown_chars);
  CHECK_THAT(md, Catch::Contains(fmt::format("### Failures ({})", run.failed())));
  CHECK_THAT(
      md, Catch::Contains(fmt::format("### Action changes vs baseline ({})", run.baseline_changes.size())));
  CHECK_THAT(md, Catch::Contains("more not shown here"));
  CHECK_THAT(md, Catch::Contains("more changes not shown here"));
  CHECK_THAT(md, Catch::Contains(fmt::format("{} passing cases, counted by folder", run.passed())));
  // Passing cases are counted, not listed.
  for (const auto& c : run.cases)
    if (c.verdict == harness::Verdict::pass) {
      CHECK_THAT(md, !Catch::Contains(c.name));
      break;
    }
  // A small run shows every failure and change in full.
  const auto small = markdown(sample_run);
  CHECK_THAT(small, !Catch::Contains("not shown here"));
}

TEST_CASE("Markdown lists a case not run (n/a) with its reason and no empty timeline",
          "[reports][markdown]") {
  auto run = sample::run();
  auto& not_run = run.cases.front();
  not_run.verdict = harness::Verdict::na;
  not_run.reason = "needs capability queue";
  not_run.logs.clear();
  not_run.ledger.clear();
  const auto md = markdown(run);
  CHECK_THAT(md, Catch::Contains("### Not applicable, not run"));
  CHECK_THAT(md, Catch::Contains("needs capability queue"));
  CHECK(count(md, "<details><summary>Timeline</summary>") ==
        static_cast<std::size_t>(run.failed() + run.unknown()));
}
