// The JSON report read back (report merge, --durations): the writer's own field tables, so what is
// written reads back whole.
#include <catch2/catch.hpp>

#include "llmchaos/core/spec_error.hpp"
#include "llmchaos/reports/json.hpp"
#include "llmchaos/reports/reports.hpp"
#include "sample_run.hpp"

using namespace llmchaos;

namespace {
std::string json_text(const harness::RunResult& run, bool compact = false) {
  return reports::render(*reports::find_format("json"), run, {.json_compact = compact});
}
std::string error_of(const std::string& text) {
  try {
    reports::run_from_json(text, "r.json");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("a JSON report reads back into the run it was written from, pretty or compact", "[reports][json]") {
  auto run = sample::run();
  run.shard = {2, 4};
  run.catalog = "0123456789abcdef:12";
  run.catalog_cases = 12;
  for (std::size_t i = 0; i < run.cases.size(); ++i) run.cases[i].index = static_cast<int>(3 * i);
  const auto text = json_text(run);
  const auto back = reports::run_from_json(text, "r.json");
  // Written again, it is the same text: every field was read, under the name it was written with.
  CHECK(json_text(back) == text);
  CHECK(back.shard.index == 2);
  CHECK(back.shard.count == 4);
  REQUIRE(back.cases.size() == run.cases.size());
  CHECK(back.cases.back().index == run.cases.back().index);
  CHECK(back.cases[1].logs.size() == run.cases[1].logs.size());
  CHECK(back.baseline_changes.size() == run.baseline_changes.size());
  CHECK(back.failed() == run.failed());
  CHECK(back.unknown() == run.unknown());
  // Every other format renders the read-back run as it renders the run.
  for (const auto& f : reports::formats()) CHECK(reports::render(f, back) == reports::render(f, run));

  const auto compact = json_text(run, true);
  CHECK(compact.size() * 10 < text.size() * 7);  // no indentation
  CHECK(std::count(compact.begin(), compact.end(), '\n') ==
        static_cast<long>(run.cases.size()) + 2);  // one line per case
  CHECK(json_text(reports::run_from_json(compact, "c.json")) == text);
}

TEST_CASE("a file that is not a JSON report is a clear error naming where", "[reports][json]") {
  CHECK_THAT(error_of("{\n  \"schema\": \"llmchaos.report/1\",\n  \"seed\": ]"),
             Catch::StartsWith("r.json:3:11: not a JSON report"));
  CHECK_THAT(error_of("[1, 2]"), Catch::Contains("not an llmchaos JSON report"));
  CHECK_THAT(error_of(R"({"schema": "other/2"})"),
             Catch::Contains("schema: \"other/2\" is not llmchaos.report/1"));
  CHECK_THAT(
      error_of(
          R"({"schema": "llmchaos.report/1", "cases": [{"name": "a"}, {"name": "b", "logs": [{"attempts": [{"status": "x"}]}]}]})"),
      Catch::Contains("cases[1].logs[0].attempts[0].status: expected a number, found a string"));
  CHECK_THAT(error_of(R"({"schema": "llmchaos.report/1", "cases": [{"verdict": "maybe"}]})"),
             Catch::Contains("cases[0].verdict: \"maybe\" is not one of pass, fail, unknown"));
  CHECK_THAT(error_of(R"({"schema": "llmchaos.report/1", "cases": [{"expected": "retry_twice"}]})"),
             Catch::Contains("cases[0].expected: \"retry_twice\" is not one of none, retry"));
  CHECK_THAT(error_of(R"({"schema": "llmchaos.report/1"} x)"), Catch::Contains("r.json:1:"));
}
