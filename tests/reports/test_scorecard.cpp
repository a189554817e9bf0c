// The scorecard: several runs (one per target) as one case x target matrix, from literal runs and
// through the CLI from the JSON reports the writer wrote.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <fstream>

#include "cli_run.hpp"
#include "llmchaos/reports/json.hpp"
#include "llmchaos/reports/scorecard.hpp"

namespace llmchaos::reports {
namespace {

harness::CaseResult case_of(const std::string& name, harness::Verdict v, std::vector<Action> actions,
                            std::string reason = {}) {
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
  run.settings = {
      {"driver", "http"}, {"time_scale", "1"}, {"target_command", "examples/targets/portkey/start {port}"}};
  run.cases = std::move(cases);
  return run;
}

// A case whose ledger shows `attempts` rate 429s then an answer, the last at `last_ms`.
harness::CaseResult with_ledger(harness::CaseResult c, int attempts, double last_ms) {
  for (int k = 0; k < attempts; ++k) {
    LedgerEntry e;
    e.route = "primary";
    e.attempt = k;
    e.fault = k + 1 < attempts ? FaultKind::rate_429 : FaultKind::ok;
    e.status = k + 1 < attempts ? 429 : 200;
    e.received_at_ms = k + 1 < attempts ? 0.0 : last_ms;
    e.finished_at_ms = e.received_at_ms + 5;
    e.finished = true;
    c.ledger.push_back(e);
  }
  c.observed_outcome = attempts > 1 ? Outcome::retry_recovery : Outcome::fail_closed;
  return c;
}

}  // namespace

TEST_CASE("scorecard --changes: the cases whose actions, outcome or verdict differ, with both timelines",
          "[reports][scorecard]") {
  using harness::Verdict;
  const auto old_run =
      run_of("openai-go v2", {with_ledger(case_of("ra-90", Verdict::pass, {Action::retry}), 2, 90000),
                              with_ledger(case_of("same", Verdict::fail, {Action::retry}), 2, 8000),
                              with_ledger(case_of("outcome", Verdict::pass, {Action::retry}), 2, 500),
                              case_of("dropped", Verdict::pass, {})});
  auto outcome_changed = with_ledger(case_of("outcome", Verdict::pass, {Action::retry}), 2, 500);
  outcome_changed.observed_outcome = Outcome::fail_closed;
  const auto new_run =
      run_of("openai-go v3", {with_ledger(case_of("ra-90", Verdict::fail, {Action::fail_closed}), 1, 0),
                              with_ledger(case_of("same", Verdict::fail, {Action::retry}), 2, 8000),
                              outcome_changed, case_of("added", Verdict::na, {})});
  const auto ch = scorecard_changes(old_run, new_run);
  CHECK(ch.compared == 3);
  REQUIRE(ch.changed.size() == 4);
  CHECK(ch.changed[0].name == "ra-90");
  CHECK(ch.changed[1].name == "outcome");
  CHECK((ch.changed[2].name == "dropped" && ch.changed[2].after == nullptr));
  CHECK((ch.changed[3].name == "added" && ch.changed[3].before == nullptr));

  const auto md = changes_markdown({old_run.label, &old_run}, {new_run.label, &new_run});
  INFO(md);
  CHECK(md.find("## llmchaos scorecard --changes: openai-go v2 -&gt; openai-go v3") != std::string::npos);
  CHECK(md.find("**2 of 3 case(s) changed, 2 run by only one of the two**") != std::string::npos);
  CHECK(md.find("| ra-90 | fallback -&gt; fallback\\_recovery | pass: retry -&gt; retry\\_recovery | FAIL: "
                "fail\\_closed -&gt; fail\\_closed |") != std::string::npos);
  CHECK(md.find("| dropped | fallback -&gt; fallback\\_recovery | pass: none | not run |") !=
        std::string::npos);
  CHECK(md.find("| same |") == std::string::npos);
  // Both timelines: the old run's retry at 90 s, the new run's single attempt.
  const auto section = md.find("### ra-90");
  REQUIRE(section != std::string::npos);
  CHECK(md.find("mock ledger (2 attempts)", section) != std::string::npos);
  CHECK(md.find("90.00 s", section) != std::string::npos);
  CHECK(md.find("mock ledger (1 attempt)", section) != std::string::npos);

  const auto html = changes_html({old_run.label, &old_run}, {new_run.label, &new_run});
  CHECK(html.find("<td class=\"pass\">pass: retry -&gt; retry_recovery<pre>") != std::string::npos);
  CHECK(html.find("<td class=\"\">not run<pre></pre></td>") != std::string::npos);
  CHECK(html.find("<link") == std::string::npos);

  const auto none = changes_markdown({"a", &old_run}, {"b", &old_run});
  CHECK(none.find("**none changed out of 4**") != std::string::npos);
  CHECK(none.find("| case |") == std::string::npos);
}

TEST_CASE("scorecard: case x target, each cell a verdict and the observed actions", "[reports][scorecard]") {
  const auto a =
      run_of("portkey 1.15.2", {case_of("quota", harness::Verdict::fail, {Action::retry, Action::fallback}),
                                case_of("queued", harness::Verdict::na, {}, "needs capability queue")});
  auto b = run_of("openai-hardened", {case_of("quota", harness::Verdict::pass, {Action::fallback}),
                                      case_of("stall", harness::Verdict::unknown, {})});
  b.warnings = {"--time-scale 0.2: not followed"};
  const std::vector<ScorecardColumn> cols{{a.label, &a}, {b.label, &b}};
  const auto md = scorecard_markdown(cols);
  INFO(md);
  CHECK(md.find("## llmchaos scorecard: 3 case(s) x 2 target(s)") != std::string::npos);
  CHECK(md.find("| portkey 1.15.2 | driver=http, time\\_scale=1, "
                "target\\_command=examples/targets/portkey/start {port} (llmchaos 0.1.0) |") !=
        std::string::npos);
  CHECK(md.find("| quota | fallback -&gt; fallback\\_recovery | **FAIL**: retry &gt; fallback | pass: "
                "fallback |") != std::string::npos);
  CHECK(md.find("| queued | fallback -&gt; fallback\\_recovery | n/a | - |") != std::string::npos);
  CHECK(md.find("| stall | fallback -&gt; fallback\\_recovery | - | unknown: hang |") != std::string::npos);
  CHECK(md.find("> **openai-hardened:** --time-scale 0.2: not followed") != std::string::npos);
  CHECK(md.find("0/2 pass, 1 fail, 0 unknown, 1 n/a") != std::string::npos);

  const auto html = scorecard_html(cols);
  CHECK(
      html.find("<td class=\"fail\">FAIL: retry &gt; fallback</td><td class=\"pass\">pass: fallback</td>") !=
      std::string::npos);
  CHECK(html.find("<td class=\"na\">n/a</td><td class=\"\">-</td>") != std::string::npos);
  CHECK(html.find("<link") == std::string::npos);  // self-contained
}

TEST_CASE("scorecard: llmchaos report scorecard reads the runs' JSON reports", "[reports][scorecard][cli]") {
  test::TempDir dir("scorecard");
  const auto a =
      run_of("portkey 1.15.2", {case_of("quota", harness::Verdict::fail, {Action::retry, Action::fallback},
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
  CHECK(r.text.find("| case | expected | portkey 1.15.2 | sdk-hardened |") !=
        std::string::npos);  // no label: its folder
  CHECK(r.text.find("**FAIL**: retry &gt; fallback (target error after a healthy upstream answer)") !=
        std::string::npos);
  CHECK(test::slurp(dir.path / "s.html").find("<h1>llmchaos scorecard: 1 case(s) x 2 target(s)</h1>") !=
        std::string::npos);
  const auto bad = test::run_cli("report scorecard '" + (dir.path / "s.html").string() + "'");
  CHECK(bad.code == 2);
}

TEST_CASE("scorecard --changes: llmchaos report scorecard --changes OLD.json NEW.json",
          "[reports][scorecard][cli]") {
  test::TempDir dir("scorecard-changes");
  const auto before = run_of(
      "openai 5.23.2", {with_ledger(case_of("ra-90", harness::Verdict::pass, {Action::retry}), 2, 90000),
                        with_ledger(case_of("same", harness::Verdict::pass, {Action::retry}), 2, 300)});
  const auto after = run_of(
      "openai 6.49.0", {with_ledger(case_of("ra-90", harness::Verdict::fail, {Action::fail_closed}), 1, 0),
                        with_ledger(case_of("same", harness::Verdict::pass, {Action::retry}), 2, 300)});
  std::ofstream(dir.path / "old.json") << boost::json::serialize(to_json_value(before));
  std::ofstream(dir.path / "new.json") << boost::json::serialize(to_json_value(after));
  const auto old_path = "'" + (dir.path / "old.json").string() + "'",
             new_path = "'" + (dir.path / "new.json").string() + "'";
  const auto r = test::run_cli("report scorecard --changes " + old_path + " " + new_path + " --html '" +
                               (dir.path / "c.html").string() + "'");
  INFO(r.text);
  CHECK(r.code == 0);
  CHECK(r.text.find("**1 of 2 case(s) changed**") != std::string::npos);
  CHECK(r.text.find("| ra-90 | fallback -&gt; fallback\\_recovery | pass: retry -&gt; retry\\_recovery | "
                    "FAIL: fail\\_closed -&gt; fail\\_closed |") != std::string::npos);
  CHECK(r.text.find("### ra-90") != std::string::npos);
  CHECK(r.text.find("### same") == std::string::npos);
  CHECK(test::slurp(dir.path / "c.html")
            .find("<h1>llmchaos scorecard --changes: openai 5.23.2 -&gt; openai 6.49.0</h1>") !=
        std::string::npos);

  const auto same = test::run_cli("report scorecard --changes " + old_path + " " + old_path +
                                  " --markdown '" + (dir.path / "c.md").string() + "'");
  CHECK(same.code == 0);
  CHECK(test::slurp(dir.path / "c.md").find("**none changed out of 2**") != std::string::npos);

  const auto three =
      test::run_cli("report scorecard --changes " + old_path + " " + new_path + " " + old_path);
  CHECK(three.code == 2);
  CHECK(three.text.find("--changes compares two reports") != std::string::npos);
}

}  // namespace llmchaos::reports
