// The case timeline as every format prints it: the case's own attempt numbers, how a held attempt
// ended, and a description cut to a bounded size.
#include <catch2/catch.hpp>
#include <string>

#include "llmchaos/reports/reports.hpp"
#include "sample_run.hpp"

namespace {

using namespace llmchaos;

std::string as(std::string_view format, const harness::RunResult& run) {
  const auto* f = reports::find_format(format);
  REQUIRE(f != nullptr);
  return reports::render(*f, run);
}

// A failing case late in a run: its ledger entries carry run-wide sequence numbers (95, 96); the first
// attempt was held by the mock (no_response, hold 1000 ms) and the client gave up at its 200 ms timeout.
harness::RunResult late_run_with_a_held_attempt() {
  auto c = sample::retry_fail();
  c.name = "a held attempt the client gave up on";
  c.ledger = {sample::entry(95, "primary", 0, FaultKind::no_response, 0, 0.5, 200.5),
              sample::entry(96, "primary", 1, FaultKind::ok, 200, 210, 212)};
  c.ledger[0].outcome = AttemptOutcome::held_then_closed;
  c.ledger[0].planned_latency_ms = 1000;
  harness::RunResult r;
  r.cases = {c};
  return r;
}

}  // namespace

TEST_CASE("timeline: a held attempt the client gave up on reads so, numbered as the case's own attempt",
          "[reports][timeline]") {
  const auto run = late_run_with_a_held_attempt();
  for (const char* format : {"junit", "html"}) {
    INFO(format);
    const auto out = as(format, run);
    CHECK_THAT(out, Catch::Contains("held, client gave up at 200.5 ms"));
    CHECK_THAT(out, Catch::Contains("completed at 212.0 ms"));
    CHECK_THAT(out, !Catch::Contains("seq 95") && !Catch::Contains("seq 96"));
  }
  const auto junit = as("junit", run);
  CHECK_THAT(junit, Catch::Contains("attempt 1  primary#0"));
  CHECK_THAT(junit, Catch::Contains("attempt 2  primary#1"));
  CHECK_THAT(as("html", run), Catch::Contains("<tr><td>1</td><td>primary#0</td>"));
}

TEST_CASE("timeline: a hold that ran its full length was closed by the mock, one never ended is still open",
          "[reports][timeline]") {
  auto run = late_run_with_a_held_attempt();
  auto& e = run.cases[0].ledger[0];
  e.finished_at_ms = 1000.5;  // the whole planned hold
  CHECK_THAT(as("junit", run), Catch::Contains("held 1.00 s, closed by the mock at 1.00 s"));
  e.finished = false;
  e.outcome = AttemptOutcome::completed;  // what an entry still being served carries
  const auto junit = as("junit", run);
  CHECK_THAT(junit, Catch::Contains("held, still open when the case ended"));
  CHECK_THAT(junit, !Catch::Contains("completed at 1000"));
}

TEST_CASE("reports cut an oversized description and say so", "[reports][timeline]") {
  auto run = late_run_with_a_held_attempt();
  run.cases[0].description = std::string(50u << 20, 'x');  // 50 MiB
  for (const char* format : {"json", "html", "junit", "markdown"}) {
    INFO(format);
    const auto out = as(format, run);
    CHECK(out.size() < 200'000);
  }
  CHECK_THAT(as("json", run),
             Catch::Contains("[description cut: 52428800 bytes, the reports keep the first 4096]"));
  CHECK_THAT(as("html", run),
             Catch::Contains("[description cut: 52428800 bytes, the reports keep the first 4096]"));
  // A short one is kept whole, a cut never splits a UTF-8 sequence.
  run.cases[0].description = "short and whole";
  CHECK_THAT(as("json", run), Catch::Contains("\"short and whole\""));
  run.cases[0].description = std::string(4095, 'y') + "\xC3\xA9" + std::string(10, 'z');
  const auto json = as("json", run);
  CHECK_THAT(json, Catch::Contains(std::string(4095, 'y') + " [description cut: 4107 bytes"));
}
