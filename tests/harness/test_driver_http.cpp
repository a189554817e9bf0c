// The http driver end to end through the CLI: `llmchaos run --driver http` starts `llmchaos gateway`
// per case (its config rendered from examples/gateway-case-template.toml with the case's routes in
// its mock namespace) and reads the outcome from the gateway's answers and the ledger; the gateway's
// failure points (x-llmchaos-points) are cross-checked against the ledger, and a tiny target that
// misreports them (points_target.py) is caught.
#include <sys/wait.h>

#include <algorithm>
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "cli_run.hpp"

namespace llmchaos::harness {
namespace {

// `llmchaos run ARGS`, stdout and stderr together.
test::CliOutput run_cli(const std::string& args) {
  return test::run_cli("run " + args);
}

// `llmchaos run PATHS --driver http` against a gateway started per case, at time scale 0.1 times a
// sanitizer's slowdown: under TSan one 429 takes ~170 ms to deliver, more than the 50 ms the cooldown
// cases leave at 0.1 (their Retry-After decisions sit 0.5 s from the budget's edge).
std::string http_run_args(const std::string& paths, const std::string& extra = {}) {
  const auto src = test::source_dir();
  return paths + " --driver http --target 'http://127.0.0.1:{port}' --target-config '" + src +
         "/examples/gateway-case-template.toml' --target-command \"'" + test::llmchaos_bin() +
         "' gateway --config {config} --port {port}\" --time-scale " +
         std::to_string(0.1 * test::slowdown()) + " -j 2 --quiet " + extra;
}

std::string cases(std::initializer_list<const char*> files) {
  std::string out;
  for (const auto* f : files) out += "'" + test::source_dir() + "/cases/" + f + "' ";
  return out;
}

// The case files of the bundled catalog (cases/policies/ holds policy files, not cases), and how many of
// them a live target does not play (an exact_time case needs a virtual clock: n/a, not run).
int catalog_case_count(bool exact_time_only = false) {
  namespace fs = std::filesystem;
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator(test::source_dir() + "/cases"))
    if (e.path().extension() == ".toml" && e.path().parent_path().filename() != "policies" &&
        (!exact_time_only || test::slurp(e.path().string()).find("\nexact_time = true") != std::string::npos))
      ++n;
  return n;
}

// One case through tests/harness/points_target.py in MODE; the case's JSON report. A 20 s hard deadline:
// the target is a Python interpreter, slow to start on a loaded machine (start-up gets half of it).
boost::json::value run_points_target(const std::string& mode, test::CliOutput& r,
                                     const char* case_file = "faults/openai/bad-request-fails-closed.toml") {
  const auto src = test::source_dir();
  const std::string report = "/tmp/llmchaos-test-points-" + mode + "-" + std::to_string(::getpid()) + ".json";
  r = run_cli(cases({case_file}) + " --driver http --target 'http://127.0.0.1:{port}' --target-config '" +
              src + "/tests/harness/points_target.toml' --target-command \"python3 '" + src +
              "/tests/harness/points_target.py' {config} {port} " + mode +
              "\" --time-scale 0.1 --min-deadline-ms 20000 --quiet --json '" + report + "'");
  auto v = boost::json::parse(test::slurp(report));
  std::remove(report.c_str());
  return v.at("cases").at(0);
}

}  // namespace

TEST_CASE("http driver: catalog cases pass through a gateway started per case", "[driver][http]") {
  const std::string report = "/tmp/llmchaos-test-http-" + std::to_string(::getpid()) + ".json";
  auto r = run_cli(http_run_args(
      cases({"staging/healthy-primary.toml", "staging/rate-429-short-retry-after.toml",
             "staging/quota-429-falls-back.toml", "staging/stream-cut-after-tokens-fails-closed.toml",
             "commit/tool-call-healthy.toml", "queue/server-500-queued-and-redelivered.toml"}),
      "--json '" + report + "'"));
  INFO(r.text);
  CHECK(r.code == 0);
  CHECK(r.text.find("6 cases: 6 passed, 0 failed, 0 unknown") != std::string::npos);
  CHECK(r.text.find("driver http") != std::string::npos);

  auto v = boost::json::parse(test::slurp(report));
  std::remove(report.c_str());
  for (const auto& c : v.at("cases").as_array()) {
    INFO(c.at("name"));
    // A plain (not streamed) answer carries the gateway's points: the actions are the log's, checked
    // against the ledger's (a ledger-only point has no rule). A stream's head goes out before them.
    const auto& tags = c.at("tags").as_array();
    if (std::find(tags.begin(), tags.end(), boost::json::value("stream")) == tags.end())
      for (const auto& p : c.at("points").as_array()) CHECK(p.at("rule") != "");
    // The gateway's output and the driver's notes of every request are in the report.
    const auto& out = c.at("driver_output").as_string();
    CHECK(std::string_view(out).find("listening on http://127.0.0.1:") != std::string_view::npos);
    CHECK(std::string_view(out).find("action=") != std::string_view::npos);
  }
}

TEST_CASE("http driver: a target command that exits before listening makes the case unknown: crash",
          "[driver][http]") {
  auto r = run_cli(cases({"staging/healthy-primary.toml"}) +
                   " --driver http --target 'http://127.0.0.1:{port}' --target-command 'echo broken config "
                   ">&2; exit 3' --quiet");
  INFO(r.text);
  CHECK(r.code == 1);
  CHECK(r.text.find("unknown: crash") != std::string::npos);
  CHECK(r.text.find("exit 3") != std::string::npos);
}

TEST_CASE("http driver: usage errors name the missing option", "[driver][http]") {
  auto no_target = run_cli(cases({"staging/healthy-primary.toml"}) + " --driver http");
  CHECK(no_target.code == 2);
  CHECK(no_target.text.find("--target") != std::string::npos);
  auto config_alone = run_cli(cases({"staging/healthy-primary.toml"}) +
                              " --driver http --target http://127.0.0.1:1 --target-config '" +
                              test::source_dir() + "/examples/gateway-case-template.toml'");
  CHECK(config_alone.code == 2);
  CHECK(config_alone.text.find("--target-command") != std::string::npos);

  const std::string bad_template = "/tmp/llmchaos-test-http-template-" + std::to_string(::getpid()) + ".toml";
  std::FILE* f = std::fopen(bad_template.c_str(), "w");
  REQUIRE(f);
  std::fputs("[gateway]\ntime_scale = {{time_scale}}\n{{polcy}}\n", f);
  std::fclose(f);
  auto typo = run_cli(cases({"staging/healthy-primary.toml"}) +
                      " --driver http --target 'http://127.0.0.1:{port}' --target-config '" + bad_template +
                      "' --target-command 'true'");
  std::remove(bad_template.c_str());
  INFO(typo.text);
  CHECK(typo.code == 2);
  CHECK(typo.text.find(bad_template + ":3: unknown placeholder {{polcy}}") != std::string::npos);
}

TEST_CASE("http driver: the whole catalog through the gateway, in under a minute",
          "[driver][http][catalog]") {
  auto r = run_cli(http_run_args("'" + test::source_dir() + "/cases'"));
  INFO(r.text);
  std::smatch m;
  REQUIRE(std::regex_search(
      r.text, m, std::regex(R"((\d+) cases: (\d+) passed, (\d+) failed, (\d+) unknown, (\d+) n/a)")));
  const int total = std::stoi(m[1]), passed = std::stoi(m[2]), failed = std::stoi(m[3]),
            unknown = std::stoi(m[4]);
  const int not_run = std::stoi(m[5]);
  CHECK(total == catalog_case_count());
  CHECK(not_run == catalog_case_count(true));
  CHECK(failed == 0);
  // Points the gateway decided without an attempt (breaker open, budget gate) come with its
  // x-llmchaos-points, so no pinned point is left unobservable.
  CHECK(unknown == 0);
  CHECK(passed == total - not_run);
  CHECK(r.seconds < 60 * test::slowdown());
}

TEST_CASE("http driver: a target whose reported points match the ledger passes with its decision log",
          "[driver][http][points]") {
  test::CliOutput r;
  const auto c = run_points_target("honest", r);
  INFO(r.text);
  CHECK(c.at("verdict") == "pass");
  const auto& point = c.at("points").at(0);
  CHECK(point.at("from_log") == "fail_closed");
  CHECK(point.at("from_ledger") == "fail_closed");
  CHECK(point.at("rule") == "rule 1");
}

TEST_CASE("http driver: a target that reports a point action the ledger contradicts fails the case",
          "[driver][http][points]") {
  test::CliOutput r;
  const auto c = run_points_target("lie", r);
  INFO(r.text);
  CHECK(r.code == 1);
  CHECK(c.at("verdict") == "fail");
  bool caught = false;
  for (const auto& check : c.at("checks").as_array())
    if (check.at("name") == "action_agreement") {
      CHECK(check.at("ok") == false);
      caught = std::string_view(check.at("message").as_string())
                   .find("decision log says retry, ledger says fail_closed") != std::string_view::npos;
    }
  CHECK(caught);
}

TEST_CASE("http driver: a reported point on an attempt the mock saw on another route breaks the contract",
          "[driver][http][points]") {
  test::CliOutput r;
  const auto c = run_points_target("wrong-route", r);
  INFO(r.text);
  CHECK(c.at("verdict") == "unknown");
  CHECK(c.at("unknown_reason") == "error: contract");
}

TEST_CASE("http driver: a target without x-llmchaos-points is judged on the ledger alone",
          "[driver][http][points]") {
  test::CliOutput r;
  const auto c = run_points_target("silent", r);
  INFO(r.text);
  CHECK(c.at("verdict") == "pass");
  CHECK(c.at("points").at(0).at("rule") == "");  // ledger-derived: no rule
}

TEST_CASE("http driver: a target's stream that ends cleanly without [DONE] is a whole answer, not a failure",
          "[driver][http]") {
  // SPEC section 2: no_terminator is committed and not a failure; the target relays the mock's stream as
  // it came (text/event-stream, no [DONE]), and the driver reads it as the answer it is.
  test::CliOutput r;
  const auto c = run_points_target("relay", r, "faults/openai/no-terminator-streamed.toml");
  INFO(r.text);
  CHECK(r.code == 0);
  CHECK(c.at("verdict") == "pass");
  CHECK(c.at("observed") == "none");
  CHECK(c.at("observed_outcome") == "primary_success");
  const auto& out = c.at("driver_output").as_string();
  CHECK(std::string_view(out).find("missing_terminator") !=
        std::string_view::npos);  // the driver saw no [DONE]
}

}  // namespace llmchaos::harness
