// SPEC section 3, rules 2 and 4, end to end: a timeout with no byte received is owner transient; its
// commit state is unknown (rule 2: fail_closed) unless the workflow is replay_safe, where it is none and
// rules 4-7 decide (a retry while the budget has room). A bare 500 stays owner unknown (rule 3: queue).
// The client cannot tell no_response from a late answer (slow_first_token): both decide the same, through
// every driver: inproc, --virtual-time, and http through `llmchaos gateway`.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>

#include "cli_run.hpp"

using llmchaos::test::run_cli;
using llmchaos::test::slurp;
using llmchaos::test::source_dir;

namespace {

struct Silent {
  const char* file;
  const char* fault;  // the primary's first step
  bool replay_safe;
  bool stream;
  const char* expect;
};

// attempt_timeout_ms 1000 against a 10 s silence: every attempt past it has received nothing (a plain
// slow_first_token answer comes after latency + first_token_ms; a streamed one sends its head at once).
const Silent silent_cases[] = {
    {"no-response-replay-safe", R"(fault = "no_response", hold_ms = 10000)", true, false, "retry"},
    {"no-response", R"(fault = "no_response", hold_ms = 10000)", false, false, "fail_closed"},
    {"late-answer-replay-safe", R"(fault = "slow_first_token", first_token_ms = 10000)", true, false,
     "retry"},
    {"late-answer", R"(fault = "slow_first_token", first_token_ms = 10000)", false, false, "fail_closed"},
    {"no-response-streamed-replay-safe", R"(fault = "no_response", hold_ms = 10000)", true, true, "retry"},
    {"late-first-token-streamed-replay-safe", R"(fault = "slow_first_token", first_token_ms = 10000)", true,
     true, "retry"},
    {"bare-500", R"(fault = "server_500")", false, false, "queue"},
    {"bare-500-replay-safe", R"(fault = "server_500")", true, false, "queue"},
};

void write_cases(const std::filesystem::path& dir) {
  for (const auto& s : silent_cases) {
    std::ofstream(dir / (std::string(s.file) + ".toml"))
        << "name = \"" << s.file << "\"\n"
        << "expect = \"" << s.expect << "\"\n"
        << "[workflow]\nmax_total_attempts = 3\nmax_elapsed_ms = 8000\nattempt_timeout_ms = 1000\n"
        << "queue_allowed = true\nfallback = [\"backup\"]\nreplay_safe = "
        << (s.replay_safe ? "true" : "false") << "\n"
        << "[route.primary]\ndialect = \"openai\"\nexpected_latency_ms = 300\nscript = [{ " << s.fault
        << " }]\n"
        << "[route.backup]\ndialect = \"anthropic\"\nexpected_latency_ms = 500\n"
        << "[request]\nstream = " << (s.stream ? "true" : "false") << "\n";
  }
}

// name -> observed action, from the JSON report of `llmchaos run DIR EXTRA`.
std::map<std::string, std::string> observed(const std::filesystem::path& dir, const std::string& extra) {
  const auto report = (dir / "report.json").string();
  const auto r =
      run_cli("run '" + dir.string() + "' --time-scale 0.1 -j 2 --quiet --json '" + report + "' " + extra);
  INFO(r.text);
  CHECK(r.code == 0);
  std::map<std::string, std::string> out;
  const auto parsed = boost::json::parse(slurp(report));  // held: the loop walks into it
  for (const auto& c : parsed.at("cases").as_array())
    out[std::string(c.at("name").as_string())] = std::string(c.at("observed").as_string());
  return out;
}

}  // namespace

TEST_CASE(
    "a silent timeout: retried when replay safe, failed closed when not, the same for a late answer, a bare "
    "500 queued",
    "[silent_timeout][driver]") {
  llmchaos::test::TempDir dir("silent-timeout");
  write_cases(dir.path);
  const auto src = source_dir();
  const std::map<std::string, std::string> drivers = {
      {"inproc", ""},
      {"virtual", "--virtual-time"},
      {"http", "--driver http --target 'http://127.0.0.1:{port}' --target-config '" + src +
                   "/examples/gateway-case-template.toml' --target-command \"'" +
                   llmchaos::test::llmchaos_bin() + "' gateway --config {config} --port {port}\""},
  };
  for (const auto& [driver, extra] : drivers) {
    INFO(driver);
    const auto seen = observed(dir.path, extra);
    for (const auto& s : silent_cases) {
      INFO(s.file);
      CHECK(seen.at(s.file) == s.expect);
    }
    // The same event to the client, the same decision.
    CHECK(seen.at("late-answer-replay-safe") == seen.at("no-response-replay-safe"));
    CHECK(seen.at("late-answer") == seen.at("no-response"));
    CHECK(seen.at("late-first-token-streamed-replay-safe") == seen.at("no-response-streamed-replay-safe"));
  }
}

TEST_CASE("a silent attempt the client gave up on reads so in the timeline, numbered as the case's own",
          "[silent_timeout][reports]") {
  llmchaos::test::TempDir dir("silent-timeline");
  write_cases(dir.path);
  const auto junit = (dir.path / "junit.xml").string();
  const auto r = run_cli("run '" + (dir.path / "no-response-replay-safe.toml").string() +
                         "' --time-scale 0.1 --quiet --junit '" + junit + "'");
  INFO(r.text);
  CHECK(r.code == 0);
  const auto text = slurp(junit);
  INFO(text);
  // The held first attempt ended when the client gave up at its 100 ms timeout (not "completed", not
  // "unfinished"), then the retry was answered.
  CHECK_THAT(text, Catch::Contains("held, client gave up at"));
  CHECK_THAT(text, Catch::Contains("attempt 1  primary#0"));
  CHECK_THAT(text, Catch::Contains("attempt 2  primary#1"));
  CHECK_THAT(text, !Catch::Contains("unfinished"));
}
