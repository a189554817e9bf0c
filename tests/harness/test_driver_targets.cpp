// Third-party targets through the http driver (issue 14): tests/harness/fake_gateway.py behaves as
// real gateways did when llmchaos was pointed at them, and each behaviour must get the right verdict:
// a forwarded drain or a health probe is foreign traffic (shown apart, never the case's attempts), the
// target's own 500 after a healthy upstream answer is its failure, a time scale the target cannot
// follow is warned about or refused, a case needing a capability the target lacks is n/a (in every
// report format), and per-request headers carry the case's routes and policy as escaped JSON.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <fstream>

#include "cli_run.hpp"

namespace llmchaos::harness {
namespace {

std::string target_case(const char* file) {
  return "'" + test::source_dir() + "/tests/harness/target_cases/" + file + "' ";
}

// `llmchaos run CASE --driver http` against fake_gateway.py in MODES; reports in `dir`. A 20 s hard
// deadline: a Python target starts slowly on a loaded machine (start-up gets half of it).
test::CliOutput run_fake(const std::string& cases, const std::string& modes, const test::TempDir& dir,
                         const std::string& extra = {}, const std::string& config = "fake_gateway.toml") {
  const auto src = test::source_dir();
  return test::run_cli(
      "run " + cases + " --driver http --target 'http://127.0.0.1:{port}' --target-config '" + src +
      "/tests/harness/" + config + "' --target-command \"python3 '" + src +
      "/tests/harness/fake_gateway.py' {config} {port} " + modes +
      "\" --min-deadline-ms 20000 --quiet --report-dir '" + dir.path.string() + "' " + extra);
}

boost::json::value report(const test::TempDir& dir) {
  return boost::json::parse(test::slurp(dir.path / "report.json"));
}

}  // namespace

TEST_CASE("targets: a catch-all proxy gets no drain unless it queued; a forced drain is foreign traffic",
          "[driver][http][targets]") {
  test::TempDir dir("targets-drain");
  auto r = run_fake(target_case("ok.toml"), "catchall", dir);
  INFO(r.text);
  CHECK(r.code == 0);
  auto c = report(dir).at("cases").at(0);
  CHECK(c.at("verdict") == "pass");
  CHECK(c.at("attempts_by_route").at("primary") == 1);
  CHECK(c.at("foreign_traffic").as_array().empty());

  // Asked for (--target-drain): the proxy forwards it upstream; the mock sees it, the case does not count it.
  test::TempDir forced("targets-drain-forced");
  r = run_fake(target_case("ok.toml"), "catchall", forced, "--target-drain /v1/llmchaos/drain");
  INFO(r.text);
  CHECK(r.code == 0);
  c = report(forced).at("cases").at(0);
  CHECK(c.at("verdict") == "pass");
  CHECK(c.at("attempts_by_route").at("primary") == 1);
  REQUIRE(c.at("foreign_traffic").as_array().size() == 1);
  CHECK(c.at("foreign_traffic").at(0).at("path") == "/v1/llmchaos/drain");
  CHECK(test::slurp(forced.path / "report.md").find("### Foreign traffic (1 case") != std::string::npos);
}

TEST_CASE("targets: a health probe with an Idempotency-Key of its own is foreign traffic, not an attempt",
          "[driver][http][targets]") {
  test::TempDir dir("targets-probe");
  const auto r = run_fake(target_case("ok.toml"), "healthcheck", dir);
  INFO(r.text);
  CHECK(r.code == 0);
  const auto c = report(dir).at("cases").at(0);
  CHECK(c.at("verdict") == "pass");
  CHECK(c.at("observed") == "none");
  CHECK(c.at("attempts_by_route").at("primary") == 1);
  REQUIRE(c.at("foreign_traffic").as_array().size() == 1);
  CHECK(c.at("foreign_traffic").at(0).at("idempotency_key") == "health-probe");
}

TEST_CASE("targets: the target's 500 after a complete healthy upstream stream is its own failure",
          "[driver][http][targets]") {
  test::TempDir dir("targets-broken");
  const auto r = run_fake(target_case("ok-streamed.toml") + target_case("ok.toml"), "broken", dir);
  INFO(r.text);
  CHECK(r.code == 1);
  CHECK(r.text.find("fail: target error after a healthy upstream answer") != std::string::npos);
  const auto run = report(dir);
  for (const auto& c : run.at("cases").as_array()) {
    if (c.at("name") == "fake target: healthy plain answer") {
      CHECK(c.at("verdict") == "pass");  // only streams break through this gateway
      continue;
    }
    CHECK(c.at("verdict") == "fail");
    CHECK(c.at("reason") == "target error after a healthy upstream answer");
  }
}

TEST_CASE("targets: a time scale the target's config does not follow is warned about, or refused",
          "[driver][http][targets]") {
  test::TempDir dir("targets-scale");
  auto r = run_fake(target_case("ok.toml"), "catchall", dir, "--time-scale 0.5");
  INFO(r.text);
  CHECK(r.code == 0);
  CHECK(r.text.find("warning: --time-scale 0.5: the target's config") != std::string::npos);
  const auto warnings = report(dir).at("warnings").as_array();
  REQUIRE(warnings.size() == 1);
  CHECK(std::string_view(warnings.at(0).as_string()).find("does not use {{time_scale}}") !=
        std::string_view::npos);
  CHECK(test::slurp(dir.path / "report.md").find("> **warning:** --time-scale 0.5") != std::string::npos);
  CHECK(test::slurp(dir.path / "report.html").find("does not use {{time_scale}}") != std::string::npos);

  test::TempDir refused("targets-scale-refused");
  r = run_fake(target_case("ok.toml"), "catchall", refused, "--time-scale 0.5",
               "fake_gateway_fixed_timers.toml");
  INFO(r.text);
  CHECK(r.code == 2);
  CHECK(r.text.find("llmchaos.time_scale = false): run it with --time-scale 1") != std::string::npos);
  r = run_fake(target_case("ok.toml"), "catchall", refused, "--time-scale 1",
               "fake_gateway_fixed_timers.toml");
  CHECK(r.code == 0);
  CHECK(r.text.find("warning") == std::string::npos);
}

TEST_CASE("targets: a case needing a capability the target lacks is n/a in every report",
          "[driver][http][targets]") {
  test::TempDir dir("targets-na");
  auto r = run_fake(target_case("server-500-queued.toml") + target_case("ok.toml"), "catchall", dir,
                    "--target-capabilities degrade");
  INFO(r.text);
  CHECK(r.code == 0);  // n/a is no failure
  CHECK(r.text.find("1 passed, 0 failed, 0 unknown, 1 n/a") != std::string::npos);
  const auto run = report(dir);
  CHECK(run.at("totals").at("not_applicable") == 1);
  for (const auto& c : run.at("cases").as_array())
    if (c.at("name") == "fake target: bare 500 with a queue allowed is queued") {
      CHECK(c.at("verdict") == "n/a");
      CHECK(c.at("reason") == "needs capability queue (the target has: degrade)");
      CHECK(c.at("ledger").as_array().empty());  // not played
    }
  CHECK(test::slurp(dir.path / "junit.xml").find("<skipped message=\"n/a: needs capability queue") !=
        std::string::npos);
  CHECK(test::slurp(dir.path / "report.md").find("n/a") != std::string::npos);
  CHECK(test::slurp(dir.path / "report.md").find("needs capability queue") != std::string::npos);
  CHECK(test::slurp(dir.path / "report.html").find("needs capability queue") != std::string::npos);

  // Declared in the template (llmchaos.capabilities) as well; an unknown name is a usage error.
  test::TempDir declared("targets-na-declared");
  r = run_fake(target_case("server-500-queued.toml"), "catchall", declared, "",
               "fake_gateway_fixed_timers.toml");
  INFO(r.text);
  CHECK(r.code == 0);
  CHECK(report(declared).at("cases").at(0).at("verdict") == "n/a");
  r = run_fake(target_case("ok.toml"), "catchall", declared, "--target-capabilities queue,teleport");
  CHECK(r.code == 2);
  CHECK(r.text.find("unknown capability \"teleport\"") != std::string::npos);
}

TEST_CASE("targets: --target-header carries the case's routes and policy as escaped JSON, per case",
          "[driver][http][targets]") {
  test::TempDir dir("targets-header");
  const std::string header =
      R"(--target-header 'x-fake-config: {"case": "{{case}}", "targets": {{routes_json}}, "fallback": {{fallback_json}}, )"
      R"("backup": "{{route.backup.sdk_base_url?}}", "policy": {{policy_json}}, "retries": {{workflow.max_retries}}}')";
  const auto r = run_fake(target_case("quota-429-falls-back.toml") + target_case("server-500-queued.toml"),
                          "header", dir, header + " --target-capabilities queue");
  INFO(r.text);
  const auto run = report(dir);
  for (const auto& c : run.at("cases").as_array()) {
    INFO(boost::json::serialize(c.at("checks")));
    if (c.at("name") == "fake target: quota 429 \"falls back\" to the backup") {
      CHECK(c.at("verdict") == "pass");  // the backup came from the header: fallback
      CHECK(c.at("attempts_by_route").at("backup") == 1);
    } else {
      CHECK(c.at("observed_outcome") ==
            "fail_closed");  // no backup route: "" (optional), the gateway has one target
      CHECK(c.at("attempts_by_route").at("primary") == 1);
    }
  }
  const auto bad =
      test::run_cli("run " + target_case("ok.toml") +
                    " --driver http --target http://127.0.0.1:9 --target-header 'no colon here' --quiet");
  CHECK(bad.code == 2);
  CHECK(bad.text.find("is not \"NAME: TEMPLATE\"") != std::string::npos);
}

TEST_CASE(
    "targets: a declared route field renders per the route's dialect, and a bad declaration is a usage error "
    "naming its line",
    "[driver][http][targets]") {
  test::TempDir dir("targets-route-field");
  const auto r = run_fake(target_case("ok.toml"), "plain", dir, {}, "fake_gateway_route_fields.toml");
  INFO(r.text);
  CHECK(r.code == 0);  // upstream = base_url + the openai value "/v1": the fake target reached the mock
  CHECK(report(dir).at("cases").at(0).at("attempts_by_route").at("primary") == 1);

  const auto with_declaration = [&](const std::string& declaration, const std::string& body) {
    const auto file = dir.path / "template.toml";
    std::ofstream(file) << "# a template\n# " << declaration << "\n" << body << "\n";
    return test::run_cli("run " + target_case("ok.toml") +
                         " --driver http --target 'http://127.0.0.1:{port}' --target-config '" +
                         file.string() + "' --target-command true --quiet");
  };
  const auto bad_dialect = with_declaration("llmchaos.route_field.api_path = openai: /v1, klingon: /x",
                                            "upstream = \"{{route.primary.api_path}}\"");
  CHECK(bad_dialect.code == 2);
  CHECK(bad_dialect.text.find("template.toml:2: llmchaos.route_field.api_path: \"klingon: /x\" is not") !=
        std::string::npos);
  const auto shadow = with_declaration("llmchaos.route_field.dialect = openai: x",
                                       "upstream = \"{{route.primary.dialect}}\"");
  CHECK(shadow.code == 2);
  CHECK(shadow.text.find("template.toml:2: llmchaos.route_field.dialect is not a new field name") !=
        std::string::npos);
  const auto undeclared = with_declaration("llmchaos.route_field.api_path = openai: /v1",
                                           "upstream = \"{{route.primary.other}}\"");
  CHECK(undeclared.code == 2);
  CHECK(undeclared.text.find("template.toml:3: unknown placeholder {{route.primary.other}}") !=
        std::string::npos);
}

}  // namespace llmchaos::harness
