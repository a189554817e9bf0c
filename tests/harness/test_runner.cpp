// The runner's own duties, with a scripted transport in place of sockets: the hard deadline (a hung
// case is `unknown: hang` and the run goes on), a crash is `unknown`, the seed reaches every report.
#include <catch2/catch.hpp>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "llmchaos/harness/runner.hpp"

using namespace llmchaos;
using namespace llmchaos::harness;

namespace {

// Answers every attempt at once, except on the case whose namespace is `hang_ns` (blocks for a while,
// like a stuck socket) or `crash_ns` (throws).
class ScriptedTransport final : public client::Transport {
 public:
  client::AttemptResult send(const client::AttemptRequest& req, Clock&,
                             const std::function<void(std::string_view)>& on_token) override {
    if (req.endpoint.base_url.find("/case1/") != std::string::npos)
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    if (req.endpoint.base_url.find("/case2/") != std::string::npos)
      throw std::runtime_error("transport exploded");
    client::AttemptResult r;
    r.status = 200;
    r.text = "fine";
    r.model = "mock-model";
    r.output_tokens = 1;
    on_token("fine");
    return r;
  }
  bool side_effect(const client::Endpoint&, const std::string&, const std::string&) override { return true; }
};

Case make(const std::string& name) {
  // deadline_ms: the hard deadline (at time scale 1, with the 300 ms floor below).
  auto loaded = load_case_text(
      "name = \"" + name + "\"\nexpect = \"none\"\ndeadline_ms = 300\n[route.primary]\n", name + ".toml");
  REQUIRE(loaded.errors.empty());
  return *loaded.value;
}

}  // namespace

TEST_CASE("a hung case is unknown: hang, a crashing one unknown: crash, and the run goes on", "[runner]") {
  RunOptions o;
  o.jobs = 3;
  o.seed = 42;
  o.min_deadline_ms = 300;
  o.make_transport = [](const CaseEnv&) { return std::make_unique<ScriptedTransport>(); };
  auto out = run_suite({make("hangs"), make("crashes"), make("fine")}, o);
  const auto& run = out.result;
  REQUIRE(run.cases.size() == 3);
  CHECK(run.seed == 42);
  CHECK(run.cases[0].name == "hangs");
  CHECK(run.cases[0].verdict == Verdict::unknown);
  CHECK(run.cases[0].unknown_reason == "hang");
  CHECK(run.cases[0].deadline_ms == 300);
  CHECK(run.cases[1].verdict == Verdict::unknown);
  CHECK(run.cases[1].unknown_reason == "crash: transport exploded");
  CHECK(run.cases[2].verdict == Verdict::pass);
  CHECK(run.unknown() == 2);
  CHECK(run.passed() == 1);
  CHECK(out.abandoned == 0);  // the hung thread ended after the run stopped waiting for it
}

TEST_CASE("a per-case seed depends on the run's seed and the case name only", "[runner]") {
  CHECK(case_seed(1, "a") == case_seed(1, "a"));
  CHECK(case_seed(1, "a") != case_seed(2, "a"));
  CHECK(case_seed(1, "a") != case_seed(1, "b"));
}

TEST_CASE("an unknown driver is a usage error naming the drivers", "[runner]") {
  RunOptions o;
  o.driver = "carrier-pigeon";
  CHECK_THROWS_WITH(run_suite({make("x")}, o),
                    "unknown driver \"carrier-pigeon\" (drivers: " + driver_names() + ")");
  CHECK_THAT(driver_names(), Catch::StartsWith("inproc"));
}
