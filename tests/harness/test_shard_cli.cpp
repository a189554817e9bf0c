// run --shard K/N and report merge through the real CLI: four shards of a copy of the catalog, merged,
// give the verdicts, counts, reports and baseline result of one unsharded run (virtual time: fast).
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <iterator>
#include <regex>

#include "cli_run.hpp"

using namespace llmchaos;
namespace fs = std::filesystem;

namespace {

// Each case's name, verdict and observed action, in report order, from a pretty report.json (a case's
// own fields are the lines indented by six spaces).
std::vector<std::string> case_lines(const std::string& json) {
  std::vector<std::string> out;
  static const std::regex line(R"re(\n      "(name|verdict|observed|unknown_reason)": [^\n]*)re");
  for (std::sregex_iterator it(json.begin(), json.end(), line), end; it != end; ++it) out.push_back((*it)[0]);
  return out;
}

// A report without what differs between any two runs (the run's start, durations, shards merged). The
// Markdown's run line reads "... · 840 ms · ..." or, past a second (a sanitizer build), "... · 1.26 s · ...".
std::string stable(const std::string& text) {
  static const std::regex volatile_line(
      R"re([^\n]*("started_at"|"duration_ms"|"wall_ms"|"merged_shards"|timestamp=|time=|[0-9] m?s · )[^\n]*\n)re");
  return std::regex_replace(text, volatile_line, "");
}

// A shard's report.json (compact: the run's fields on the first line, then a case a line): its case
// lines, and the whole without the run's start and durations.
std::size_t compact_cases(const std::string& json) {
  static const std::regex line(R"re(\n\{"name":)re");
  return static_cast<std::size_t>(std::distance(std::sregex_iterator(json.begin(), json.end(), line), {}));
}
std::string stable_compact(const std::string& json) {
  static const std::regex volatile_value(R"re("(started_at|duration_ms|wall_ms)":("[^"]*"|[-0-9.e+]+))re");
  return std::regex_replace(json, volatile_value, "");
}

std::string attr(const std::string& xml, const std::string& name) {
  std::smatch m;
  return std::regex_search(xml, m, std::regex("<testsuites[^>]* " + name + "=\"([^\"]*)\"")) ? m[1].str()
                                                                                             : "?";
}

// A baseline where one retry case was recorded as a fallback: the gate must name it, unsharded and merged.
void record_one_retry_as_fallback(const fs::path& baseline) {
  std::string base = test::slurp(baseline);
  const std::string from = R"("action":"retry","actions":["retry"])";
  const auto at = base.find(from);
  REQUIRE(at != std::string::npos);
  base.replace(at, from.size(), R"("action":"fallback","actions":["fallback"])");
  std::ofstream(baseline) << base;
}

// Shard 3/4 again with every format: each names the shard, and its report.json is the --json one.
void check_every_format_names_the_shard(const std::string& c, const std::string& d, const std::string& json) {
  const auto dir3 = d + "/shard-3";
  REQUIRE(test::run_cli("run " + c + " --shard 3/4 --report-dir '" + dir3 + "'").code == 0);
  CHECK_THAT(test::slurp(dir3 + "/junit.xml"), Catch::Contains("<property name=\"shard\" value=\"3/4\"/>"));
  CHECK_THAT(test::slurp(dir3 + "/report.md"), Catch::Contains(" · shard 3/4 · "));
  CHECK_THAT(test::slurp(dir3 + "/report.html"), Catch::Contains("shard <b>3/4</b>"));
  CHECK(stable_compact(test::slurp(dir3 + "/report.json")) == stable_compact(json));
}

// The four shards' runs, each --json to d/shard-K.json: the files (quoted, space-separated) and the
// number of cases they hold together.
std::pair<std::string, std::size_t> run_four_shards(const std::string& c, const std::string& d) {
  std::string shard_files;
  std::size_t total = 0;
  for (int k = 1; k <= 4; ++k) {
    const auto file = d + "/shard-" + std::to_string(k) + ".json";
    auto s = test::run_cli("run " + c + " --shard " + std::to_string(k) + "/4 --json '" + file + "'");
    INFO(s.text);
    REQUIRE(s.code == 0);
    CHECK_THAT(s.text, Catch::Contains("shard " + std::to_string(k) + "/4: "));
    const auto json = test::slurp(file);
    CHECK_THAT(json, Catch::Contains("\"shard\":{\"index\":" + std::to_string(k) + ",\"count\":4}"));
    CHECK(static_cast<std::size_t>(std::count(json.begin(), json.end(), '\n')) ==
          compact_cases(json) + 2);  // compact: the run, a line a case, the end
    total += compact_cases(json);
    if (k == 3) check_every_format_names_the_shard(c, d, json);
    shard_files += " '" + file + "'";
  }
  return {shard_files, total};
}

// Shards that do not make one run are refused, and say why; so are a bad --shard and a file that is
// no report. `c0`: the catalog's run options without a seed (the shards ran with `c`, seed 7).
void check_merges_refused(const fs::path& cat, const std::string& c0, const std::string& c,
                          const std::string& d, const std::string& shard_files) {
  auto missing = test::run_cli("report merge '" + d + "/shard-1.json' '" + d + "/shard-3.json'");
  CHECK(missing.code == 2);
  CHECK_THAT(missing.text, Catch::Contains("missing shard(s): 2/4, 4/4"));
  auto twice = test::run_cli("report merge" + shard_files + " '" + d + "/shard-2.json'");
  CHECK(twice.code == 2);
  CHECK_THAT(twice.text, Catch::Contains("shard 2/4 given 2 times"));
  REQUIRE(test::run_cli("run " + c0 + " --seed 8 --shard 4/4 --json '" + d + "/seed8.json'").code == 0);
  auto seeds = test::run_cli("report merge '" + d + "/shard-1.json' '" + d + "/shard-2.json' '" + d +
                             "/shard-3.json' '" + d + "/seed8.json'");
  CHECK(seeds.code == 2);
  CHECK_THAT(seeds.text, Catch::Contains("has seed 8, but"));
  fs::remove_all(cat / "queue");  // another catalog
  REQUIRE(test::run_cli("run " + c + " --shard 4/4 --json '" + d + "/other.json'").code <= 1);
  auto catalogs = test::run_cli("report merge '" + d + "/shard-1.json' '" + d + "/shard-2.json' '" + d +
                                "/shard-3.json' '" + d + "/other.json'");
  CHECK(catalogs.code == 2);
  CHECK_THAT(catalogs.text, Catch::Contains("has catalog"));
  // Bad input: a shard that does not parse, a file that is not a report.
  CHECK(test::run_cli("run " + c + " --shard 5/4").code == 2);
  { std::ofstream(d + "/not.json") << "{\"schema\": 1,"; }
  auto bad = test::run_cli("report merge '" + d + "/not.json'");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.text, Catch::Contains("not.json:1:"));
}

}  // namespace

TEST_CASE("four shards merged give what one unsharded run gives, baseline gate included", "[cli][shard]") {
  test::TempDir dir("shards");
  const fs::path cat = dir.path / "catalog";
  fs::copy(test::source_dir() + "/cases", cat, fs::copy_options::recursive);
  const std::string c0 = "'" + cat.string() + "' --virtual-time -q", c = c0 + " --seed 7";
  const std::string d = dir.path.string();

  auto full =
      test::run_cli("run " + c + " --report-dir '" + d + "/full' --write-baseline '" + d + "/base.json'");
  INFO(full.text);
  REQUIRE(full.code == 0);
  record_one_retry_as_fallback(dir.path / "base.json");
  full = test::run_cli("run " + c + " --report-dir '" + d + "/full' --baseline '" + d + "/base.json'");
  CHECK(full.code == 1);

  const auto [shard_files, total] = run_four_shards(c, d);
  const auto full_json = test::slurp(dir.path / "full/report.json");
  CHECK(total == case_lines(full_json).size() / 4);

  auto merged = test::run_cli("report merge" + shard_files + " --report-dir '" + d + "/merged' --baseline '" +
                              d + "/base.json'");
  INFO(merged.text);
  CHECK(merged.code == full.code);
  CHECK_THAT(merged.text, Catch::Contains("merged 4 shard report(s)"));
  CHECK_THAT(merged.text, Catch::Contains("1 case(s) changed action"));
  CHECK_THAT(full.text, Catch::Contains("1 case(s) changed action"));

  // The same cases, in the same order, with the same verdicts and actions.
  const auto merged_json = test::slurp(dir.path / "merged/report.json");
  CHECK(case_lines(merged_json) == case_lines(full_json));
  CHECK(case_lines(full_json).size() > 4 * 50);
  // The same counts in every format, and the same Markdown (totals, failures, the baseline change).
  const auto full_junit = test::slurp(dir.path / "full/junit.xml"),
             merged_junit = test::slurp(dir.path / "merged/junit.xml");
  for (const char* a : {"tests", "failures", "errors"}) CHECK(attr(merged_junit, a) == attr(full_junit, a));
  CHECK(stable(test::slurp(dir.path / "merged/report.md")) ==
        stable(test::slurp(dir.path / "full/report.md")));
  CHECK(fs::exists(dir.path / "merged/report.html"));

  check_merges_refused(cat, c0, c, d, shard_files);
}

TEST_CASE("durations from an earlier report balance the shards by time", "[cli][shard]") {
  test::TempDir dir("durations");
  const std::string c = "'" + test::source_dir() + "/cases' --virtual-time -q";
  const std::string d = dir.path.string();
  REQUIRE(test::run_cli("run " + c + " --json '" + d + "/all.json'").code == 0);
  std::size_t total = 0, suite = 0;
  for (int k = 1; k <= 3; ++k) {
    auto s = test::run_cli("run " + c + " --shard " + std::to_string(k) + "/3 --durations '" + d +
                           "/all.json' --json '" + d + "/s.json'");
    INFO(s.text);
    REQUIRE(s.code == 0);
    std::smatch m;
    REQUIRE(std::regex_search(s.text, m, std::regex("shard \\d/3: (\\d+) of the suite's (\\d+) case")));
    total += std::stoul(m[1].str());
    suite = std::stoul(m[2].str());
  }
  CHECK(total == suite);
  CHECK(suite > 50);
  CHECK(test::run_cli("run " + c + " --shard 1/3 --durations '" + d + "/nope.json'").code == 2);
}
