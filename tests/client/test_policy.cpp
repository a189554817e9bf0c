// Policy loader: the keys of issue 4, defaults, validation, and every error message pinned.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <limits>

#include "llmchaos/client/policy.hpp"
#include "llmchaos/core/toml_reader.hpp"

using namespace llmchaos;
using namespace llmchaos::client;

namespace {

const char* issue_example = R"([workflow]
name = "catalog-classification"
primary = "primary"
max_total_attempts = 3
max_elapsed_ms = 6000
max_extra_cost_usd = 0.012
attempt_timeout_ms = 2000
replay_safe = false
fallback = ["backup"]
queue_allowed = true
degrade_allowed = false
degrade_text = "default answer"
output_required = ["label"]

[backoff]
base_ms = 200
cap_ms = 4000

[route.primary]
expected_latency_ms = 800
cost_per_attempt_usd = 0.004
[route.primary.breaker]
failure_threshold = 3
success_threshold = 2
open_ms = 30000
half_open_max_probes = 1

[route.backup]
expected_latency_ms = 2000
approved = true
quota_cooldown_ms = 60000
)";

Policy load(const std::string& text, bool allow_other_keys = true, std::vector<std::string_view> extra = {}) {
  return policy_from_toml(parse_toml(text, "p.toml"), "p.toml", allow_other_keys, extra);
}

std::string error_of(const std::string& text, bool allow_other_keys = true,
                     std::vector<std::string_view> extra = {}) {
  try {
    load(text, allow_other_keys, extra);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "no error";
}

const std::vector<std::string_view> script_keys = {"dialect", "script", "then", "text"};

}  // namespace

TEST_CASE("the issue's policy file loads key for key", "[policy]") {
  auto p = load(issue_example);
  const auto& w = p.workflow;
  CHECK(w.name == "catalog-classification");
  CHECK(w.primary == "primary");
  CHECK(w.max_total_attempts == 3);
  CHECK(w.max_elapsed_ms == 6000);
  CHECK(w.max_extra_cost_usd == 0.012);
  CHECK(w.attempt_timeout_ms == 2000);
  CHECK_FALSE(w.replay_safe);
  CHECK(w.fallback == std::vector<std::string>{"backup"});
  CHECK(w.queue_allowed);
  CHECK_FALSE(w.degrade_allowed);
  CHECK(w.degrade_text == "default answer");
  CHECK(w.output_required == std::vector<std::string>{"label"});
  CHECK(p.backoff.base_ms == 200);
  CHECK(p.backoff.cap_ms == 4000);
  const auto& primary = p.route("primary");
  CHECK(primary.name == "primary");
  CHECK(primary.expected_latency_ms == 800);
  CHECK(primary.cost_per_attempt_usd == 0.004);
  CHECK(primary.approved);
  CHECK(primary.breaker.failure_threshold == 3);
  CHECK(primary.breaker.success_threshold == 2);
  CHECK(primary.breaker.open_ms == 30000);
  CHECK(primary.breaker.half_open_max_probes == 1);
  CHECK(p.route("backup").expected_latency_ms == 2000);
  CHECK(p.routes.size() == 2);
}

TEST_CASE("without route tables the named routes exist with defaults", "[policy]") {
  auto p = load("[workflow]\nprimary = \"a\"\nfallback = [\"b\", \"c\"]\n");
  CHECK(p.routes.size() == 3);
  CHECK(p.route("c").name == "c");
  CHECK(p.route("c").expected_latency_ms == RoutePolicy{}.expected_latency_ms);
  CHECK(p.workflow.max_extra_cost_usd == std::numeric_limits<double>::infinity());
  // An unlisted route answers with the defaults.
  CHECK(p.route("nowhere").breaker.failure_threshold == BreakerSettings{}.failure_threshold);
}

TEST_CASE("a case file's other tables and the mock's route keys are accepted", "[policy]") {
  const std::string text = R"(name = "a case"
expect = "fallback"
[workflow]
primary = "primary"
fallback = ["backup"]
[route.primary]
dialect = "openai"
script = [{ fault = "rate_429" }]
[route.backup]
dialect = "anthropic"
expected_latency_ms = 2000
)";
  auto p = load(text, true, script_keys);
  CHECK(p.route("backup").expected_latency_ms == 2000);
  // Lenient when nobody names the other keys: the script loader checks the same tables.
  CHECK(load(text).routes.size() == 2);
}

TEST_CASE("scaled multiplies every time value and nothing else", "[policy]") {
  auto p = load(issue_example);
  auto s = p.scaled(0.01);
  CHECK(s.workflow.max_elapsed_ms == Approx(60));
  CHECK(s.workflow.attempt_timeout_ms == Approx(20));
  CHECK(s.backoff.base_ms == Approx(2));
  CHECK(s.backoff.cap_ms == Approx(40));
  CHECK(s.route("primary").expected_latency_ms == Approx(8));
  CHECK(s.route("primary").breaker.open_ms == Approx(300));
  CHECK(s.route("backup").expected_latency_ms == Approx(20));
  CHECK(s.route("backup").quota_cooldown_ms == Approx(600));
  CHECK(s.route("primary").quota_cooldown_ms == 0);  // default: no quota cooldown kept
  CHECK(s.workflow.max_total_attempts == 3);
  CHECK(s.workflow.max_extra_cost_usd == 0.012);
  CHECK(s.route("primary").cost_per_attempt_usd == 0.004);
  CHECK(s.route("primary").breaker.failure_threshold == 3);
}

TEST_CASE("policy errors name file:line:col and the key", "[policy]") {
  struct Row {
    const char* name;
    std::string text;
    std::string error;
    bool allow_other_keys = true;
    std::vector<std::string_view> extra = {};
  };
  const Row rows[] = {
      {"unknown workflow key", "[workflow]\nprimary = \"p\"\nretries = 2\n",
       "p.toml:3:11: workflow.retries: unknown key"},
      {"unknown backoff key", "[backoff]\nbase_ms = 1\njitter = \"full\"\n",
       "p.toml:3:10: backoff.jitter: unknown key"},
      {"unknown breaker key", "[route.primary.breaker]\nfailures = 3\n",
       "p.toml:2:12: route.primary.breaker.failures: unknown key"},
      {"unknown route key when the script keys are named", "[route.primary]\ndialekt = \"openai\"\n",
       "p.toml:2:11: route.primary.dialekt: unknown key", true, script_keys},
      {"a script key in a strict standalone policy", "[route.primary]\ndialect = \"openai\"\n",
       "p.toml:2:11: route.primary.dialect: unknown key", false},
      {"unknown top-level table in a strict policy", "[workflow]\nprimary = \"p\"\n[cases]\nx = 1\n",
       "p.toml:3:1: cases: unknown key", false},
      {"primary names no route table", "[workflow]\nprimary = \"main\"\n[route.primary]\n[route.backup]\n",
       "p.toml:2:11: workflow.primary: unknown route \"main\" (routes: backup, primary)"},
      {"route tables without a workflow: the default primary must be one of them",
       "name = \"x\"\n[route.a]\n", "p.toml:1:1: workflow.primary: unknown route \"primary\" (routes: a)"},
      {"fallback names no route table",
       "[workflow]\nprimary = \"primary\"\nfallback = [\"backup\", "
       "\"spare\"]\n[route.primary]\n[route.backup]\n",
       "p.toml:3:12: workflow.fallback: unknown route \"spare\" (routes: backup, primary)"},
      {"fallback lists the primary", "[workflow]\nprimary = \"p\"\nfallback = [\"p\"]\n",
       "p.toml:3:12: workflow.fallback: lists the primary route \"p\""},
      {"fallback lists a route twice", "[workflow]\nprimary = \"p\"\nfallback = [\"b\", \"b\"]\n",
       "p.toml:3:12: workflow.fallback: lists route \"b\" twice"},
      {"empty primary", "[workflow]\nprimary = \"\"\n", "p.toml:2:11: workflow.primary: must name a route"},
      {"zero attempts", "[workflow]\nmax_total_attempts = 0\n",
       "p.toml:2:22: workflow.max_total_attempts: 0 is out of range [1, 1000000]"},
      {"negative elapsed budget", "[workflow]\nmax_elapsed_ms = -1\n",
       "p.toml:2:18: workflow.max_elapsed_ms: -1 is out of range [0, inf]"},
      {"negative cost budget", "[workflow]\nmax_extra_cost_usd = -0.5\n",
       "p.toml:2:22: workflow.max_extra_cost_usd: -0.5 is out of range [0, inf]"},
      {"negative attempt timeout", "[workflow]\nattempt_timeout_ms = -10\n",
       "p.toml:2:22: workflow.attempt_timeout_ms: -10 is out of range [0, inf]"},
      {"boolean of the wrong type", "[workflow]\nqueue_allowed = \"yes\"\n",
       "p.toml:2:17: workflow.queue_allowed: expected true or false"},
      {"fallback not an array", "[workflow]\nfallback = \"backup\"\n",
       "p.toml:2:12: workflow.fallback: expected an array of strings"},
      {"output_required with a number", "[workflow]\noutput_required = [\"label\", 3]\n",
       "p.toml:2:29: workflow.output_required: expected a string"},
      {"cap below base", "[backoff]\nbase_ms = 500\ncap_ms = 100\n",
       "p.toml:3:10: backoff.cap_ms: 100 is below base_ms (500)"},
      {"negative base", "[backoff]\nbase_ms = -5\n",
       "p.toml:2:11: backoff.base_ms: -5 is out of range [0, inf]"},
      {"negative route latency", "[route.primary]\nexpected_latency_ms = -1\n",
       "p.toml:2:23: route.primary.expected_latency_ms: -1 is out of range [0, inf]"},
      {"negative route cost", "[route.primary]\ncost_per_attempt_usd = -1\n",
       "p.toml:2:24: route.primary.cost_per_attempt_usd: -1 is out of range [0, inf]"},
      {"approved not a boolean", "[route.primary]\napproved = 1\n",
       "p.toml:2:12: route.primary.approved: expected true or false"},
      {"failure threshold zero", "[route.primary.breaker]\nfailure_threshold = 0\n",
       "p.toml:2:21: route.primary.breaker.failure_threshold: 0 is out of range [1, 1000000]"},
      {"success threshold zero", "[route.primary.breaker]\nsuccess_threshold = 0\n",
       "p.toml:2:21: route.primary.breaker.success_threshold: 0 is out of range [1, 1000000]"},
      {"probes zero", "[route.primary.breaker]\nhalf_open_max_probes = 0\n",
       "p.toml:2:24: route.primary.breaker.half_open_max_probes: 0 is out of range [1, 1000000]"},
      {"negative open time", "[route.primary.breaker]\nopen_ms = -1\n",
       "p.toml:2:11: route.primary.breaker.open_ms: -1 is out of range [0, inf]"},
      {"breaker not a table", "[route.primary]\nbreaker = 3\n",
       "p.toml:2:11: route.primary.breaker: expected a table"},
      {"route not a table", "route.primary = 3\n", "p.toml:1:17: route.primary: expected a table"},
      {"workflow not a table", "workflow = 3\n", "p.toml:1:12: workflow: expected a table"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    CHECK(error_of(row.text, row.allow_other_keys, row.extra) == row.error);
  }
}

TEST_CASE("load_policy_file is strict and names the file", "[policy]") {
  auto dir = std::filesystem::temp_directory_path() / "llmchaos-test-policy";
  std::filesystem::create_directories(dir);
  auto path = (dir / "policy.toml").string();
  {
    std::ofstream out(path);
    out << issue_example;
  }
  auto p = load_policy_file(path);
  CHECK(p.workflow.name == "catalog-classification");
  {
    std::ofstream out(path);
    out << "name = \"a case\"\n[workflow]\n";
  }
  try {
    load_policy_file(path);
    FAIL("expected an error");
  } catch (const SpecError& e) {
    CHECK(std::string(e.what()) == path + ":1:8: name: unknown key");
  }
  {
    std::ofstream out(path);
    out << "[route.primary]\ndialect = \"openai\"\nexpected_latency_ms = 5\n";
  }
  CHECK(load_policy_file(path, script_keys).route("primary").expected_latency_ms == 5);
  std::filesystem::remove_all(dir);
}
