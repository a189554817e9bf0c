// End to end through the real CLI ($LLMCHAOS_BIN): the bundled catalog passes against the reference
// stack, lint and run report file errors with positions, and the baseline gate names flipped cases.
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cli_run.hpp"
#include "llmchaos/harness/baseline.hpp"
#include "llmchaos/harness/runner.hpp"

using namespace llmchaos;
using namespace llmchaos::harness;
namespace fs = std::filesystem;

namespace {

// The catalog at this scale: a 60 s retry-after becomes 6 s, an 8 s budget 800 ms (margins that hold
// on a loaded 2-core machine running other tests).
constexpr const char* time_scale = "0.1";

using Output = test::CliOutput;
constexpr auto& run = test::run_cli;
using test::TempDir;

std::string source_cases() {
  return test::source_dir() + "/cases";
}

using test::slurp;

}  // namespace

TEST_CASE("the bundled catalog passes against the reference stack and writes every report", "[cli][e2e]") {
  TempDir dir("e2e");
  const auto report_dir = (dir.path / "report").string();
  const auto baseline = (dir.path / "baseline.json").string();
  auto out = run("run '" + source_cases() + "' -q --time-scale " + time_scale + " --seed 11 --report-dir '" +
                 report_dir + "' --write-baseline '" + baseline + "'");
  INFO(out.text);
  CHECK(out.code == 0);
  for (const char* f : {"junit.xml", "report.json", "report.md", "report.html"}) {
    INFO(f);
    CHECK(fs::file_size(fs::path(report_dir) / f) > 0);
  }
  // Every case file of the catalog ran, and each passed; the exact_time ones on a virtual clock inside the
  // live run (the in-process driver needs no socket), and the reports say so.
  auto suite = load_suite({source_cases()}, {});
  REQUIRE(suite.errors.empty());
  const auto exact = static_cast<std::size_t>(
      std::count_if(suite.cases.begin(), suite.cases.end(), [](const Case& c) { return c.exact_time; }));
  CHECK(exact > 0);
  CHECK(out.text.find(std::to_string(exact) + " exact_time case(s) played under virtual time") !=
        std::string::npos);
  const auto recorded = baseline_from_json(slurp(baseline), baseline);
  CHECK(recorded.size() == suite.cases.size());
  const auto json = boost::json::parse(slurp(report_dir + "/report.json"));
  CHECK(json.at("totals").at("cases").to_number<std::int64_t>() ==
        static_cast<std::int64_t>(suite.cases.size()));
  CHECK(json.at("totals").at("not_applicable").to_number<std::int64_t>() == 0);
  CHECK(json.at("totals").at("passed").to_number<std::int64_t>() ==
        static_cast<std::int64_t>(suite.cases.size()));
  std::size_t virtual_cases = 0;
  for (const auto& c : json.at("cases").as_array()) virtual_cases += c.at("virtual_time").as_bool();
  CHECK(virtual_cases == exact);
  CHECK_THAT(slurp(report_dir + "/report.md"), Catch::Contains("ran under virtual time"));
  CHECK_THAT(slurp(report_dir + "/report.html"), Catch::Contains("ran under virtual time"));
  const auto doc = slurp(baseline);
  CHECK(doc.find("\"verdict\":\"fail\"") == std::string::npos);
  CHECK(doc.find("\"verdict\":\"unknown\"") == std::string::npos);

  // The catalog under virtual time is a run of its own, every case included.
  const auto virtual_baseline = (dir.path / "virtual-baseline.json").string();
  auto virt = run("run '" + source_cases() +
                  "' -q --virtual-time --time-scale 1 --seed 11 --write-baseline '" + virtual_baseline + "'");
  INFO(virt.text);
  CHECK(virt.code == 0);
  CHECK(baseline_from_json(slurp(virtual_baseline), virtual_baseline).size() == suite.cases.size());
}

TEST_CASE("a live in-process run plays an exact_time case on a virtual clock and says so in report.json",
          "[cli][virtual]") {
  TempDir dir("exact-live");
  const auto report_dir = (dir.path / "report").string();
  auto out =
      run("run '" + source_cases() +
          "/budget/time-exactly-fits-retry.toml' -q --time-scale 0.1 --report-dir '" + report_dir + "'");
  INFO(out.text);
  CHECK(out.code == 0);
  const auto json = boost::json::parse(slurp(report_dir + "/report.json"));
  const auto& c = json.at("cases").as_array().at(0);
  CHECK(c.at("verdict").as_string() == "pass");
  CHECK(c.at("virtual_time").as_bool());
}

TEST_CASE("lint and run print file errors as file:line:col and exit 2", "[cli]") {
  TempDir dir("lint");
  const auto bad = (dir.path / "bad.toml").string();
  std::ofstream(bad) << "name = \"x\"\nexpect = \"retyr\"\n[request]\nstrem = true\n[route.primary]\n";
  auto lint = run("lint '" + bad + "'");
  CHECK(lint.code == 2);
  CHECK_THAT(lint.text, Catch::Contains(bad + ":2:10: expect: unknown value \"retyr\""));
  CHECK_THAT(lint.text, Catch::Contains(bad + ":4:9: request.strem: unknown key"));

  auto r = run("run '" + bad + "'");
  CHECK(r.code == 2);
  CHECK_THAT(r.text, Catch::Contains(bad + ":2:10: expect: unknown value \"retyr\""));

  CHECK(run("lint '" + source_cases() + "' -q").code == 0);
  CHECK(run("run '" + (dir.path / "missing").string() + "'").code == 2);
  CHECK(run("run '" + source_cases() + "' --driver nope").code == 2);
  CHECK(run("run '" + source_cases() + "' --filter no-such-tag").code == 2);
}

TEST_CASE("the baseline gate names every case a max_total_attempts cut from 3 to 1 flips", "[cli][e2e]") {
  TempDir dir("gate");
  const auto cases = dir.path / "cases";
  fs::copy(source_cases(), cases, fs::copy_options::recursive);
  const auto baseline = (dir.path / "baseline.json").string();
  const std::string common = " -q --time-scale " + std::string(time_scale) + " --seed 5";

  // The gate is about actions, not verdicts: a failing case still records its observed actions.
  auto first = run("run '" + cases.string() + "'" + common + " --write-baseline '" + baseline + "'");
  INFO(first.text);
  REQUIRE((first.code == 0 || first.code == 1));
  REQUIRE(fs::exists(baseline));

  // The policy change under review: every case sharing the standard policy gets one attempt.
  const auto policy = cases / "policies" / "standard.toml";
  auto text = slurp(policy);
  const std::string from = "max_total_attempts = 3";
  REQUIRE(text.find(from) != std::string::npos);
  text.replace(text.find(from), from.size(), "max_total_attempts = 1");
  std::ofstream(policy, std::ios::trunc) << text;

  // Cases the change reaches: now limited to one attempt. Those whose baseline relied on a retry or a
  // fallback must flip; no case the change does not reach may be named.
  const auto before = read_baseline(baseline);
  std::set<std::string> reached, must_flip;
  for (const auto& c : load_suite({cases.string()}, {}).cases) {
    if (c.policy.workflow.max_total_attempts != 1)
      continue;  // exact_time cases too: played on a virtual clock
    reached.insert(c.name);
    const auto& acts = before.at(c.name).actions;
    if (std::find(acts.begin(), acts.end(), Action::retry) != acts.end() ||
        std::find(acts.begin(), acts.end(), Action::fallback) != acts.end())
      must_flip.insert(c.name);
  }
  REQUIRE_FALSE(must_flip.empty());

  const auto after_file = (dir.path / "after.json").string();
  auto second = run("run '" + cases.string() + "'" + common + " --baseline '" + baseline +
                    "' --write-baseline '" + after_file + "'");
  INFO(second.text);
  CHECK(second.code == 1);
  std::set<std::string> named;
  std::istringstream lines(second.text);
  const std::string marker = "  changed: ";
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(marker, 0) != 0) continue;
    const auto rest = line.substr(marker.size());
    named.insert(rest.substr(0, rest.rfind(": ")));
    CHECK_THAT(rest, Catch::Contains(" -> "));
  }
  // The gate names exactly the cases whose recorded actions differ between the two runs.
  const auto after = read_baseline(after_file);
  std::set<std::string> differ;
  for (const auto& [name, b] : before)
    if (after.contains(name) && after.at(name).actions != b.actions) differ.insert(name);
  CHECK(named == differ);
  for (const auto& name : must_flip) {
    INFO(name);
    CHECK(named.contains(name));
  }
  for (const auto& name : named) {
    INFO(name);
    CHECK(reached.contains(name));
  }

  // Accepted changes do not fail the gate (the cases themselves still fail their expectations).
  auto accepted =
      run("run '" + cases.string() + "'" + common + " --baseline '" + baseline + "' --accept-changes");
  CHECK_THAT(accepted.text, Catch::Contains("changes accepted (--accept-changes)"));
}
