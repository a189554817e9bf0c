// What cases/README.md and the README tell a new user, checked against the code and the catalog: the
// sample's path and shape, the catalog's counts, every documented policy default, --filter's globs, and
// what `run` says about reports.
#include <fmt/format.h>
#include <toml++/toml.h>

#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "cli_run.hpp"
#include "llmchaos/client/policy.hpp"
#include "llmchaos/harness/runner.hpp"

namespace fs = std::filesystem;
using namespace llmchaos;
using llmchaos::test::run_cli;
using llmchaos::test::slurp;
using llmchaos::test::source_dir;

namespace {

std::string cases_readme() {
  return slurp(source_dir() + "/cases/README.md");
}

// The first ```toml block after `marker`.
std::string toml_block_after(const std::string& text, const std::string& marker) {
  const auto at = text.find(marker);
  REQUIRE(at != std::string::npos);
  const auto open = text.find("```toml\n", at);
  REQUIRE(open != std::string::npos);
  const auto close = text.find("```", open + 8);
  REQUIRE(close != std::string::npos);
  return text.substr(open + 8, close - open - 8);
}

}  // namespace

TEST_CASE("docs: the sample case names a file that exists, and lints clean", "[docs]") {
  const auto readme = cases_readme();
  const auto sample = toml_block_after(readme, "# Cases: the format");
  std::smatch m;
  REQUIRE(std::regex_search(sample, m, std::regex(R"((cases/[\w/.-]+\.toml))")));
  INFO(m[1]);
  CHECK(fs::is_regular_file(source_dir() + "/" + m[1].str()));
  llmchaos::test::TempDir dir("docs-sample");
  const auto file = dir.path / "sample.toml";
  std::ofstream(file) << sample;
  const auto lint = run_cli("lint '" + file.string() + "'");
  INFO(lint.text);
  CHECK(lint.code == 0);
}

TEST_CASE("docs: the catalog table's case counts are the folders' counts", "[docs]") {
  const auto readme = cases_readme();
  const auto table = readme.substr(readme.find("| folder | cases | what |"));
  // Rows "| `a/`, `b/` | 22, 22 | ..." : each folder with its count.
  std::map<std::string, int> documented;
  const std::regex row(R"(^\| ((?:`[\w/]+/`(?:, )?)+) \| ([\d, ]+) \|)");
  const std::regex folder_re("`([\\w/]+)/`"), number_re("\\d+");
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line) && !line.empty();) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    std::vector<std::string> folders;
    const std::string names = m[1];
    for (std::sregex_iterator it(names.begin(), names.end(), folder_re), end; it != end; ++it)
      folders.push_back((*it)[1]);
    std::vector<int> counts;
    const std::string numbers = m[2];
    for (std::sregex_iterator it(numbers.begin(), numbers.end(), number_re), end; it != end; ++it)
      counts.push_back(std::stoi((*it)[0]));
    REQUIRE(folders.size() == counts.size());
    for (std::size_t k = 0; k < folders.size(); ++k) documented[folders[k]] = counts[k];
  }
  REQUIRE(documented.size() >= 10);
  int documented_total = 0;
  for (const auto& [folder, n] : documented) {
    INFO(folder);
    int files = 0;
    for (const auto& e : fs::directory_iterator(source_dir() + "/cases/" + folder))
      if (e.path().extension() == ".toml") ++files;
    CHECK(files == n);
    documented_total += n;
  }
  // Every case folder is in the table.
  int all = 0;
  for (const auto& e : fs::recursive_directory_iterator(source_dir() + "/cases"))
    if (e.path().extension() == ".toml" && e.path().parent_path().filename() != "policies") ++all;
  CHECK(documented_total == all);
}

TEST_CASE("docs: every policy default the README states is the client's default", "[docs]") {
  const auto block = toml_block_after(cases_readme(), "## The policy:");
  const auto defaults = client::policy_from_toml(toml::table{}, "empty.toml");
  const auto& w = defaults.workflow;
  const auto& r = defaults.route("primary");
  const std::map<std::string, std::string> actual = {
      {"name", "\"" + w.name + "\""},
      {"primary", "\"" + w.primary + "\""},
      {"max_total_attempts", std::to_string(w.max_total_attempts)},
      {"max_elapsed_ms", fmt::format("{}", w.max_elapsed_ms)},
      {"attempt_timeout_ms", fmt::format("{}", w.attempt_timeout_ms)},
      {"replay_safe", w.replay_safe ? "true" : "false"},
      {"background", w.background ? "true" : "false"},
      {"queue_allowed", w.queue_allowed ? "true" : "false"},
      {"degrade_allowed", w.degrade_allowed ? "true" : "false"},
      {"degrade_text", "\"" + w.degrade_text + "\""},
      {"base_ms", fmt::format("{}", defaults.backoff.base_ms)},
      {"cap_ms", fmt::format("{}", defaults.backoff.cap_ms)},
      {"expected_latency_ms", fmt::format("{}", r.expected_latency_ms)},
      {"cost_per_attempt_usd", fmt::format("{}", r.cost_per_attempt_usd)},
      {"approved", r.approved ? "true" : "false"},
      {"failure_threshold", std::to_string(r.breaker.failure_threshold)},
      {"success_threshold", std::to_string(r.breaker.success_threshold)},
      {"open_ms", fmt::format("{}", r.breaker.open_ms)},
      {"half_open_max_probes", std::to_string(r.breaker.half_open_max_probes)},
  };
  std::set<std::string> stated;
  std::istringstream lines(block);
  for (std::string line; std::getline(lines, line);) {
    std::smatch key;
    if (!std::regex_search(line, key, std::regex(R"(^(\w+) = )"))) continue;
    std::smatch d;
    INFO(line);
    REQUIRE(
        std::regex_search(line, d, std::regex(R"(\(default ([^)]*)\))")));  // every key states its default
    stated.insert(key[1]);
    if (auto it = actual.find(key[1]); it != actual.end())
      CHECK(d[1].str().substr(0, it->second.size()) == it->second);
  }
  for (const auto& [k, v] : actual) {
    INFO(k);
    CHECK(stated.count(k) == 1);
  }
}

TEST_CASE("docs: --filter globs match the whole name or file path, '*quota*' selects every quota case",
          "[docs]") {
  const auto cases_dir = source_dir() + "/cases";
  const auto all = harness::load_suite({cases_dir}, {});
  REQUIRE(all.errors.empty());
  std::set<std::string> quota, staging;
  for (const auto& c : all.cases) {
    if (c.name.find("quota") != std::string::npos || c.file.find("quota") != std::string::npos)
      quota.insert(c.name);
    if (c.file.find("/staging/") != std::string::npos) staging.insert(c.name);
  }
  REQUIRE(quota.size() >= 4);
  llmchaos::test::TempDir dir("docs-filter");
  const auto names_run = [&](const std::string& filter) {
    const auto report = (dir.path / "r.json").string();
    const auto r = run_cli("run '" + cases_dir + "' --virtual-time --quiet --filter '" + filter +
                           "' --json '" + report + "'");
    INFO(r.text);
    std::set<std::string> names;
    if (r.code == 2) return names;                          // nothing matched
    const auto parsed = boost::json::parse(slurp(report));  // held: the loop walks into it
    for (const auto& c : parsed.at("cases").as_array()) names.insert(std::string(c.at("name").as_string()));
    return names;
  };
  CHECK(names_run("*quota*") == quota);
  CHECK(names_run("*/staging/*") == staging);
  // A glob matches the WHOLE name or path: 'quota*' only the names that start with it, no path.
  std::set<std::string> starts;
  for (const auto& c : all.cases)
    if (c.name.rfind("quota", 0) == 0) starts.insert(c.name);
  CHECK(names_run("quota*") == starts);
  CHECK(starts.size() < quota.size());
}

TEST_CASE("docs: run without a report flag says that no report was written", "[docs]") {
  const auto one = "'" + source_dir() + "/cases/staging/healthy-primary.toml'";
  const auto none = run_cli("run " + one + " --virtual-time");
  INFO(none.text);
  CHECK(none.code == 0);
  CHECK_THAT(none.text, Catch::Contains("no report written (--report-dir DIR writes"));
  llmchaos::test::TempDir dir("docs-report");
  const auto some = run_cli("run " + one + " --virtual-time --json '" + (dir.path / "r.json").string() + "'");
  CHECK_THAT(some.text, !Catch::Contains("no report written"));
  CHECK_THAT(some.text, Catch::Contains("json report: "));
}
