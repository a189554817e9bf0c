#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "llmchaos/core/ledger_json.hpp"
#include "llmchaos/reports/reports.hpp"
#include "sample_run.hpp"

using namespace llmchaos;
namespace json = boost::json;

namespace {

std::string json_text(const harness::RunResult& run) {
  return reports::render(*reports::find_format("json"), run);
}

std::vector<std::string> keys(const json::object& o) {
  std::vector<std::string> out;
  for (const auto& kv : o) out.emplace_back(kv.key());
  return out;
}

}  // namespace

TEST_CASE("JSON report parses back and holds every case, ledger, decision log and the split",
          "[reports][json]") {
  const auto run = sample::run();
  const auto doc = json::parse(json_text(run)).as_object();
  CHECK(doc.at("seed").to_number<std::uint64_t>() == run.seed);
  CHECK(doc.at("driver").as_string() == run.driver);
  CHECK(doc.at("time_scale").to_number<double>() == Approx(run.time_scale));
  CHECK(doc.at("totals").at("failed").to_number<int>() == run.failed());
  CHECK(doc.at("totals").at("unknown").to_number<int>() == run.unknown());

  const auto split = run.outcome_split();
  const auto& outcomes = doc.at("outcome_split").as_object();
  for (const auto& [o, name] : enum_names<Outcome>::table) {
    REQUIRE(outcomes.contains(name));
    CHECK(outcomes.at(name).to_number<int>() == (split.count(o) ? split.at(o) : 0));
  }

  const auto& cases = doc.at("cases").as_array();
  REQUIRE(cases.size() == run.cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i].as_object();
    const auto& want = run.cases[i];
    CHECK(c.at("name").as_string() == want.name);
    CHECK(c.at("verdict").as_string() == harness::to_string(want.verdict));
    CHECK(c.at("expected").as_string() == to_string(want.expected));
    CHECK(c.at("observed").as_string() == to_string(want.observed));
    CHECK(c.at("points").as_array().size() == want.points.size());
    CHECK(c.at("checks").as_array().size() == want.checks.size());
    CHECK(c.at("side_effects").as_array().size() == want.side_effects.size());
    // The ledger and the decision logs round-trip through the shared converters.
    const auto& ledger = c.at("ledger").as_array();
    REQUIRE(ledger.size() == want.ledger.size());
    for (std::size_t k = 0; k < ledger.size(); ++k) {
      const auto back = ledger_entry_from_json_value(ledger[k]);
      CHECK(back.seq == want.ledger[k].seq);
      CHECK(back.fault == want.ledger[k].fault);
      CHECK(back.finished == want.ledger[k].finished);
    }
    const auto& logs = c.at("logs").as_array();
    REQUIRE(logs.size() == want.logs.size());
    for (std::size_t k = 0; k < logs.size(); ++k) {
      CHECK(logs[k].at("attempts").as_array().size() == want.logs[k].attempts.size());
      CHECK(logs[k].at("failures").as_array().size() == want.logs[k].failures.size());
      CHECK(logs[k].at("delivery").to_number<int>() == want.logs[k].delivery);
      CHECK(logs[k].at("outcome").as_string() == to_string(want.logs[k].outcome));
    }
  }
  const auto& changes = doc.at("baseline_changes").as_array();
  REQUIRE(changes.size() == run.baseline_changes.size());
  CHECK(changes[0].at("before").as_string() == "queue");
  CHECK(changes[0].at("after").as_string() == "retry");
  CHECK(changes[0].at("after_all").as_array().size() == run.baseline_changes[0].after_all.size());
  CHECK(doc.at("baseline").as_string() == run.baseline);
}

TEST_CASE("JSON keeps journal lines as objects and an unparsable line whole", "[reports][json]") {
  const auto doc = json::parse(json_text(sample::run()));
  const auto& journal = doc.at("cases").at(0).at("logs").at(0).at("journal").as_array();
  REQUIRE(journal.size() == 2);
  CHECK(journal[0].at("state").as_string() == "requested");
  CHECK(journal[1].at("unparsed").as_string() == "not json at all");
}

TEST_CASE("JSON keys come in a fixed order and rendering is deterministic", "[reports][json]") {
  const auto run = sample::run();
  const auto text = json_text(run);
  CHECK(text == json_text(run));
  const auto doc = json::parse(text).as_object();
  CHECK(keys(doc) == std::vector<std::string>{
                         "schema",        "tool_version",  "seed",     "driver",           "time_scale",
                         "label",         "settings",      "warnings", "started_at",       "duration_ms",
                         "shard",         "merged_shards", "catalog",  "catalog_cases",    "totals",
                         "outcome_split", "requests",      "baseline", "baseline_changes", "cases"});
  const auto& first = doc.at("cases").as_array().at(0).as_object();
  CHECK(keys(first).front() == "name");
  CHECK(keys(first).back() == "driver_output");
  // Indented, one key per line, so two reports diff line by line.
  CHECK_THAT(text, Catch::StartsWith("{\n  \"schema\": "));
  CHECK_THAT(text, Catch::Contains("\"time_scale\": 0.05,\n"));
}

TEST_CASE("JSON strings survive control characters and invalid UTF-8", "[reports][json]") {
  auto run = sample::run();
  run.cases[0].name = std::string("ctl \x01 quote \" backslash \\ bad \xff\xfe end");
  const auto doc = json::parse(json_text(run));  // Boost.JSON rejects invalid UTF-8
  CHECK(doc.at("cases").at(0).at("name").as_string() ==
        "ctl \x01 quote \" backslash \\ bad \xEF\xBF\xBD\xEF\xBF\xBD end");
}

TEST_CASE("JSON renders a case with no outcome and a hang as nulls and empty lists", "[reports][json]") {
  const auto doc = json::parse(json_text(sample::run()));
  const auto& hang = doc.at("cases").at(2).as_object();
  CHECK(hang.at("verdict").as_string() == "unknown");
  CHECK(hang.at("unknown_reason").as_string() == "hang");
  CHECK(hang.at("observed_outcome").is_null());
  CHECK(hang.at("alive_log").is_null());
  CHECK(hang.at("logs").as_array().empty());
}
