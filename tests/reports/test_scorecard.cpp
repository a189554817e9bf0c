// The scorecard: several runs (one per target) as one case x target matrix, from literal runs and
// through the CLI from the JSON reports the writer wrote.
#include <catch2/catch.hpp>

#include <fstream>

#include <boost/json.hpp>

#include "cli_run.hpp"
#include "llmchaos/reports/json.hpp"
#include "llmchaos/reports/scorecard.hpp"

namespace llmchaos::reports {
namespace {

harness::CaseResult case_of(const std::string& name, harness::Verdict v, std::vector<Action> actions, std::string reason = {}) {
  harness::CaseResult c;
  c.name = name;
  c.file = "cases/" + name + ".toml";
  c.verdict = v;
  c.expected = Action::fallback;
  c.expected_outcome = Outcome::fallback_recovery;
  c.observed_actions = std::move(actions);
  c.observed = c.observed_actions.empty() ? Action::none : c.observed_actions.front();
  c.reason = std::move(reason);
  if (v == harness::Verdict::unknown) c.unknown_reason = "hang";
  return c;
}

harness::RunResult run_of(const std::string& label, std::vector<harness::CaseResult> cases) {
  harness::RunResult run;
  run.label = label;
  run.driver = "http";
  run.started_at = "2026-12-03T12:00:00Z";
  run.settings = {{"driver", "http"}, {"time_scale", "1"}, {"target_command", "examples/targets/portkey/start {port}"}};
  run.cases = std::move(cases);
  return run;
}

}  // namespace

TEST_CASE("scorecard: case x target, each cell a verdict and the observed actions", "[reports][scorecard]") {
  const auto a = run_of("portkey 1.15.2", {case_of("quota", harness::Verdict::fail, {Action::retry, Action::fallback}),
                                           case_of("queued", harness::Verdict::na, {}, "needs capability queue")});
  auto b = run_of("openai-hardened", {case_of("quota", harness::Verdict::pass, {Action::fallback}),
                                      case_of("stall", harness::Verdict::unknown, {})});
  b.warnings = {"--time-scale 0.2: not followed"};
  const std::vector<ScorecardColumn> cols{{a.label, &a}, {b.label, &b}};
  const auto md = scorecard_markdown(cols);
  INFO(md);
  CHECK(md.find("## llmchaos scorecard: 3 case(s) x 2 target(s)") != std::string::npos);
  CHECK(md.find("| portkey 1.15.2 | driver=http, time\\_scale=1, target\\_command=examples/targets/portkey/start {port} (llmchaos 0.1.0) |") !=
        std::string::npos);
  CHECK(md.find("| quota | fallback -&gt; fallback\\_recovery | **FAIL**: retry &gt; fallback | pass: fallback |") != std::string::npos);
  CHECK(md.find("| queued | fallback -&gt; fallback\\_recovery | n/a | - |") != std::string::npos);
  CHECK(md.find("| stall | fallback -&gt; fallback\\_recovery | - | unknown: hang |") != std::string::npos);
  CHECK(md.find("> **openai-hardened:** --time-scale 0.2: not followed") != std::string::npos);
  CHECK(md.find("0/2 pass, 1 fail, 0 unknown, 1 n/a") != std::string::npos);

  const auto html = scorecard_html(cols);
  CHECK(html.find("<td class=\"fail\">FAIL: retry &gt; fallback</td><td class=\"pass\">pass: fallback</td>") != std::string::npos);
  CHECK(html.find("<td class=\"na\">n/a</td><td class=\"\">-</td>") != std::string::npos);
  CHECK(html.find("<link") == std::string::npos);  // self-contained
}

TEST_CASE("scorecard: llmchaos report scorecard reads the runs' JSON reports", "[reports][scorecard][cli]") {
  test::TempDir dir("scorecard");
  const auto a = run_of("portkey 1.15.2", {case_of("quota", harness::Verdict::fail, {Action::retry, Action::fallback},
                                                   "target error after a healthy upstream answer")});
  const auto b = run_of("", {case_of("quota", harness::Verdict::pass, {Action::fallback})});
  std::filesystem::create_directories(dir.path / "sdk-hardened");
  std::ofstream(dir.path / "a.json") << boost::json::serialize(to_json_value(a));
  std::ofstream(dir.path / "sdk-hardened" / "report.json") << boost::json::serialize(to_json_value(b));
  const auto r = test::run_cli("report scorecard '" + (dir.path / "a.json").string() + "' '" +
                               (dir.path / "sdk-hardened" / "report.json").string() + "' --html '" +
                               (dir.path / "s.html").string() + "'");
  INFO(r.text);
  CHECK(r.code == 0);
  CHECK(r.text.find("| case | expected | portkey 1.15.2 | sdk-hardened |") != std::string::npos);  // no label: its folder
  CHECK(r.text.find("**FAIL**: retry &gt; fallback (target error after a healthy upstream answer)") != std::string::npos);
  CHECK(test::slurp(dir.path / "s.html").find("<h1>llmchaos scorecard: 1 case(s) x 2 target(s)</h1>") != std::string::npos);
  const auto bad = test::run_cli("report scorecard '" + (dir.path / "s.html").string() + "'");
  CHECK(bad.code == 2);
}

}  // namespace llmchaos::reports
