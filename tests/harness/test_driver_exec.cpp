// The exec driver against the real mock: a tiny Python client (exec_client.py) per request, actions
// derived from the ledger, its contract line read, hangs and crashes reported as unknown.
#include <dirent.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <thread>

#include "llmchaos/harness/runner.hpp"
#include "test_env.hpp"

namespace llmchaos::harness {
namespace {

RunResult run_exec(const std::vector<std::string>& case_files, const std::string& env_prefix,
                   double min_deadline_ms, double time_scale = 0.1) {
  const auto src = test::source_dir();
  std::vector<std::string> paths;
  for (const auto& f : case_files) paths.push_back(src + "/cases/" + f);
  auto suite = load_suite(paths, {});
  REQUIRE(suite.errors.empty());
  RunOptions o;
  o.driver = "exec";
  o.driver_options.exec_command = env_prefix + "python3 '" + src + "/tests/harness/exec_client.py'";
  o.time_scale = time_scale;
  o.jobs = 2;
  // Interpreter start-up on a loaded machine takes seconds; the deadline is a real-time floor.
  o.min_deadline_ms = min_deadline_ms;
  return run_suite(suite.cases, o).result;
}

const CaseResult& by_file(const RunResult& run, const std::string& suffix) {
  for (const auto& c : run.cases)
    if (c.file.size() >= suffix.size() &&
        c.file.compare(c.file.size() - suffix.size(), suffix.size(), suffix) == 0)
      return c;
  FAIL("no case " << suffix);
  throw;
}

// Processes whose command line is exactly "sleep 613" (the hang mode's child).
int stray_sleepers() {
  int n = 0;
  DIR* d = opendir("/proc");
  if (!d) return 0;
  while (auto* e = readdir(d)) {
    std::ifstream f(std::string("/proc/") + e->d_name + "/cmdline");
    const std::string cmd((std::istreambuf_iterator<char>(f)), {});
    if (cmd == std::string("sleep\0"
                           "613",
                           10))
      ++n;  // split: "\0613" would be the octal escape \061
  }
  closedir(d);
  return n;
}

}  // namespace

TEST_CASE("exec driver: the program's routes come from its environment and actions from the ledger",
          "[driver][exec]") {
  const auto run = run_exec({"faults/openai/ok.toml", "faults/openai/payment-402-falls-back.toml",
                             "faults/openai/auth-401-fails-closed.toml"},
                            "", 120000);
  REQUIRE(run.cases.size() == 3);
  CHECK(run.driver == "exec");

  const auto& ok = by_file(run, "openai/ok.toml");
  CHECK(ok.verdict == Verdict::pass);
  CHECK(ok.observed_outcome == Outcome::primary_success);
  CHECK(ok.attempts_by_route.at("primary") == 1);
  CHECK(ok.driver_output.find("\"outcome\": \"primary_success\"") != std::string::npos);
  REQUIRE(ok.logs.size() >= 1);
  CHECK(ok.logs.front().model == "gpt-mock-mini");  // read from the contract line

  const auto& fallback = by_file(run, "payment-402-falls-back.toml");
  CHECK(fallback.verdict == Verdict::pass);
  CHECK(fallback.observed == Action::fallback);
  CHECK(fallback.observed_outcome == Outcome::fallback_recovery);

  // The client falls back on everything: a 401 (the caller's own key) must fail closed, so the
  // ledger shows the wrong action and the case fails, naming it.
  const auto& auth = by_file(run, "auth-401-fails-closed.toml");
  CHECK(auth.verdict == Verdict::fail);
  CHECK(auth.observed == Action::fallback);
  CHECK(auth.attempts_by_route.at("backup") == 1);
}

TEST_CASE("exec driver: without a contract line the exit code decides the outcome", "[driver][exec]") {
  const auto run = run_exec({"faults/openai/ok.toml", "faults/openai/auth-401-fails-closed.toml"},
                            "EXEC_CLIENT_MODE=noline ", 120000);
  CHECK(by_file(run, "openai/ok.toml").observed_outcome == Outcome::primary_success);
  // Exit 0 after the naive fallback: a success, and the ledger says which (served by the backup).
  CHECK(by_file(run, "auth-401-fails-closed.toml").observed_outcome == Outcome::fallback_recovery);
}

TEST_CASE("exec driver: a program past its deadline is killed with its process group: unknown hang",
          "[driver][exec]") {
  const auto run = run_exec({"faults/openai/ok.toml"}, "EXEC_CLIENT_MODE=hang ", 1500);
  REQUIRE(run.cases.size() == 1);
  const auto& c = run.cases.front();
  CHECK(c.verdict == Verdict::unknown);
  CHECK(c.unknown_reason == "hang");
  // The child it was waiting on went with it. SIGKILL ends a process a moment after it is sent (later on
  // a loaded machine), so the check allows 3 s; a stray child would sleep on for 613 s.
  int strays = stray_sleepers();
  for (int i = 0; i < 60 && strays > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    strays = stray_sleepers();
  }
  CHECK(strays == 0);
}

TEST_CASE("exec driver: a program ended by a signal is unknown crash, with its output, and the run goes on",
          "[driver][exec]") {
  const auto run = run_exec({"faults/openai/ok.toml", "faults/openai/payment-402-falls-back.toml"},
                            "EXEC_CLIENT_MODE=crash ", 120000);
  REQUIRE(run.cases.size() == 2);
  for (const auto& c : run.cases) {
    CHECK(c.verdict == Verdict::unknown);
    CHECK(c.unknown_reason == "crash");
    CHECK(c.driver_output.find("about to crash") != std::string::npos);
  }
}

TEST_CASE("exec driver: --exec is required and belongs to it alone", "[driver][exec]") {
  const auto* exec = find_driver("exec");
  REQUIRE(exec);
  CHECK_FALSE(exec->validate(DriverOptions{}).empty());
  DriverOptions o;
  o.exec_command = "true";
  CHECK(exec->validate(o).empty());
  CHECK_FALSE(find_driver("inproc")->validate(o).empty());
}

TEST_CASE("exec driver: the case's tier reaches the program, which refuses a request over it as rate_limited",
          "[driver][exec][tier]") {
  // exec_client.py keeps the tier's windows in LLMCHAOS_STATE_DIR across the case's processes. Unscaled:
  // an interpreter per request takes seconds to start on a loaded machine, longer than a minute x 0.1.
  const auto run =
      run_exec({"tiers/rpm-burst-over-limit-refused.toml", "tiers/rpd-burst-refused.toml"}, "", 120000, 1);
  REQUIRE(run.cases.size() == 2);
  for (const auto& c : run.cases) {
    std::string checks;
    for (const auto& check : c.checks) checks += check.name + ": " + check.message + "\n";
    INFO(c.name << ": " << c.unknown_reason << "\n" << checks);
    CHECK(c.verdict == Verdict::pass);
    const auto limited = std::find_if(c.checks.begin(), c.checks.end(),
                                      [](const CheckResult& r) { return r.name == "expect_rate_limited"; });
    REQUIRE(limited != c.checks.end());
    CHECK(limited->ok);
  }
  CHECK(by_file(run, "rpm-burst-over-limit-refused.toml").attempts_by_route.at("primary") == 3);
  CHECK(by_file(run, "rpd-burst-refused.toml").logs.back().limited_by == "requests_per_day");
}

TEST_CASE("exec driver: a case's model groups and member weights reach the program, which balances by them",
          "[driver][exec][groups]") {
  // exec_group_client.sh finds the primary among LLMCHAOS_GROUPS, its members in LLMCHAOS_GROUP_POOL and
  // their turns in LLMCHAOS_BIG_WEIGHT / LLMCHAOS_SMALL_WEIGHT: eight requests, two rounds of 3 + 1.
  if (std::system("command -v curl >/dev/null 2>&1") != 0) {
    WARN("skipped: exec_group_client.sh needs curl, which is not on PATH");
    return;
  }
  const std::string text = R"(name = "exec groups"
expect = "none"
expect_outcome = "primary_success"
expect_attempts = { pool = 8 }
[[expect_share]]
route = "big"
min = 0.75
max = 0.75
[workflow]
primary = "pool"
max_elapsed_ms = 4000
[groups]
pool = ["big", "small"]
[route.big]
dialect = "openai"
weight = 3
[route.small]
dialect = "openai"
[sequence]
count = 8
[checks]
no_truncated_success = true
names_serving_route = true
)";
  auto loaded = load_case_text(text, "exec-groups.toml");
  REQUIRE(loaded.errors.empty());
  RunOptions o;
  o.driver = "exec";
  o.driver_options.exec_command = "sh '" + test::source_dir() + "/tests/harness/exec_group_client.sh'";
  o.time_scale = 0.1;
  o.min_deadline_ms = 120000;
  const auto run = run_suite({*loaded.value}, o).result;
  REQUIRE(run.cases.size() == 1);
  const auto& c = run.cases.front();
  std::string checks;
  for (const auto& check : c.checks) checks += check.name + ": " + check.message + "\n";
  INFO(c.unknown_reason << "\n" << checks << c.driver_output);
  CHECK(c.verdict == Verdict::pass);
  CHECK(c.attempts_by_route.at("big") == 6);
  CHECK(c.attempts_by_route.at("small") == 2);
}

}  // namespace llmchaos::harness
