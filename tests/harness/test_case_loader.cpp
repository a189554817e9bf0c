// The case loader: what a valid case becomes, and every error pinned with its file:line:col.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "llmchaos/harness/case.hpp"
#include "llmchaos/harness/runner.hpp"
#include "test_env.hpp"

using namespace llmchaos;
using namespace llmchaos::harness;
namespace fs = std::filesystem;

namespace {

const std::string routes = R"(
[route.primary]
dialect = "openai"
script = [{ fault = "rate_429", retry_after_ms = 500 }]

[route.backup]
dialect = "anthropic"
)";

const std::string workflow = R"(
[workflow]
primary = "primary"
fallback = ["backup"]
)";

std::vector<std::string> errors_of(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& e : load_case_text(text, "c.toml").errors) out.push_back(e.what());
  return out;
}

std::string only_error(const std::string& text) {
  auto errors = errors_of(text);
  INFO(text);
  REQUIRE(errors.size() == 1);
  return errors.front();
}

// A scratch folder with files, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           fs::path("llmchaos-loader-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::string write(const std::string& name, const std::string& text) const {
    auto p = path / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
};

}  // namespace

TEST_CASE("a complete case loads into its expectation, policy, script, request and checks", "[loader]") {
  const std::string text = R"(name = "rate 429 retried"
tags = ["rate", "openai"]
expect = "retry"
expect_outcome = "retry_recovery"
expect_attempts = { primary = 2, backup = 0 }
[[expect_at]]
point = 2
action = "fallback"
)" + workflow + R"(max_total_attempts = 4
[request]
stream = true
model = "gpt-x"
[checks]
retry_after_honoured = true
no_hammering = { route = "primary", max_attempts = 2, window_ms = 1000 }
cooldown = { quota_window_ms = 60000, caller_timeout_no_cooldown = true, fallback_within_ms = 50, retry_after_forwarded = true }
[sequence]
count = 3
interval_ms = 100
)" + routes;
  auto loaded = load_case_text(text, "c.toml", "staging");
  REQUIRE(loaded.errors.empty());
  const Case& c = *loaded.value;
  CHECK(c.name == "rate 429 retried");
  CHECK(c.folder == "staging");
  CHECK(c.tags == std::vector<std::string>{"rate", "openai"});
  CHECK(c.expect == Action::retry);
  CHECK(c.expect_outcome == Outcome::retry_recovery);
  CHECK(c.expect_attempts == std::map<std::string, int>{{"backup", 0}, {"primary", 2}});
  CHECK(c.expected_at(1) == Action::retry);
  CHECK(c.expected_at(2) == Action::fallback);
  CHECK_FALSE(c.expected_at(3).has_value());
  CHECK(c.policy.workflow.max_total_attempts == 4);
  CHECK(c.policy.workflow.fallback == std::vector<std::string>{"backup"});
  REQUIRE(c.script.routes.size() == 2);
  CHECK(c.script.routes.at("backup").dialect == Dialect::anthropic);
  CHECK(c.script.routes.at("primary").steps.at(0).retry_after_ms == 500);
  CHECK(c.request.stream);
  CHECK(c.request.model == "gpt-x");
  CHECK(c.checks.retry_after_honoured);
  REQUIRE(c.checks.no_hammering);
  CHECK(c.checks.no_hammering->max_attempts == 2);
  REQUIRE(c.checks.cooldown);
  CHECK(c.checks.cooldown->slack_ms == 250);  // the default
  CHECK(c.checks.cooldown->quota_window_ms == 60000);
  CHECK(c.checks.cooldown->caller_timeout_no_cooldown);
  CHECK(c.checks.cooldown->fallback_within_ms == 50);
  CHECK(c.checks.cooldown->retry_after_forwarded);
  REQUIRE(c.sequence);
  CHECK(c.sequence->count == 3);
  CHECK(c.sequence->outage_route == "primary");  // defaults to the workflow's primary
  CHECK(c.request_count() == 3);
}

TEST_CASE("case errors name file:line:col", "[loader]") {
  SECTION("missing name") {
    CHECK(only_error("expect = \"retry\"\n" + workflow + routes) ==
          "c.toml:1:1: missing required key \"name\"");
  }
  SECTION("missing expect") {
    CHECK(only_error("name = \"x\"\n" + workflow + routes) ==
          "c.toml:1:1: missing required key \"expect\" (retry, fallback, queue, degrade, fail_closed, resume "
          "or none)");
  }
  SECTION("unknown action") {
    CHECK(only_error("name = \"x\"\nexpect = \"retyr\"\n" + workflow + routes) ==
          "c.toml:2:10: expect: unknown value \"retyr\" (expected one of: none, retry, fallback, queue, "
          "degrade, fail_closed, resume)");
  }
  SECTION("unknown top-level key") {
    CHECK(only_error("name = \"x\"\nexpect = \"retry\"\nexpcet_outcome = \"queued\"\n" + workflow + routes) ==
          "c.toml:3:18: expcet_outcome: unknown key");
  }
  SECTION("unknown outcome") {
    CHECK(only_error("name = \"x\"\nexpect = \"retry\"\nexpect_outcome = \"ok\"\n" + workflow + routes) ==
          "c.toml:3:18: expect_outcome: unknown value \"ok\" (expected one of: primary_success, "
          "retry_recovery, "
          "fallback_recovery, degraded, queued, fail_closed)");
  }
  SECTION("expect_attempts names an unknown route") {
    CHECK(only_error("name = \"x\"\nexpect = \"retry\"\nexpect_attempts = { primray = 1 }\n" + workflow +
                     routes) ==
          "c.toml:3:31: expect_attempts.primray: unknown route (routes: backup, primary)");
  }
  SECTION("expect_at point 1 contradicts expect") {
    CHECK(only_error("name = \"x\"\nexpect = \"retry\"\n[[expect_at]]\npoint = 1\naction = \"queue\"\n" +
                     workflow + routes) ==
          "c.toml:3:1: expect_at: point 1 is \"queue\" but expect is \"retry\"");
  }
  SECTION("a route the workflow never uses") {
    CHECK(only_error("name = \"x\"\nexpect = \"retry\"\n" + workflow + routes + "[route.spare]\n") ==
          "c.toml:14:1: route.spare: the workflow never uses this route (primary = \"primary\", fallback = "
          "[backup])");
  }
  SECTION("a typo in a request key") {
    CHECK(only_error("name = \"x\"\nexpect = \"retry\"\n[request]\nstrem = true\n" + workflow + routes) ==
          "c.toml:4:9: request.strem: unknown key");
  }
  SECTION("a check missing its bound") {
    CHECK(only_error("name = \"x\"\nexpect = \"retry\"\n[checks]\nno_hammering = { max_attempts = 2 }\n" +
                     workflow + routes) ==
          "c.toml:4:16: checks.no_hammering: missing required key \"window_ms\"");
  }
  SECTION("recovery needs an outage window") {
    CHECK(only_error("name = \"x\"\nexpect = \"retry\"\n[sequence]\ncount = 3\nrecovered_within_ms = 100\n" +
                     workflow + routes) ==
          "c.toml:3:1: sequence: recovered_within_ms and max_outage_attempts need an outage: a step with "
          "until_ms in route.primary");
  }
  SECTION("a TOML syntax error") {
    CHECK(only_error("name = \"x\"\nexpect = = \"retry\"\n") ==
          "c.toml:2:10: Error while parsing value: could not determine value type");
  }
}

TEST_CASE("script and policy keys of a route table are checked by their owners, with positions", "[loader]") {
  SECTION("a script key") {
    auto e = only_error("name = \"x\"\nexpect = \"retry\"\n" + workflow +
                        "[route.primary]\nscript = [{ fault = \"rate_249\" }]\n[route.backup]\n");
    CHECK_THAT(e, Catch::StartsWith("c.toml:8:"));
    CHECK_THAT(e, Catch::Contains("rate_249"));
  }
  SECTION("a policy key") {
    auto e = only_error("name = \"x\"\nexpect = \"retry\"\n" + workflow +
                        "[route.primary]\nexpected_latency_ms = -5\n[route.backup]\n");
    CHECK_THAT(e, Catch::StartsWith("c.toml:8:"));
    CHECK_THAT(e, Catch::Contains("expected_latency_ms"));
  }
  SECTION("a key neither owns") {
    CHECK(only_error("name = \"x\"\nexpect = \"retry\"\n" + workflow +
                     "[route.primary]\ndialekt = \"openai\"\n[route.backup]\n") ==
          "c.toml:8:11: route.primary.dialekt: unknown key");
  }
}

TEST_CASE("every broken section of a file is reported at once", "[loader]") {
  auto errors = errors_of(
      "name = \"x\"\nexpect = \"retyr\"\n[request]\nstrem = true\n[checks]\nno_hang_ms = \"soon\"\n" +
      workflow + routes);
  REQUIRE(errors.size() == 3);
  CHECK_THAT(errors[0], Catch::StartsWith("c.toml:2:10: expect: unknown value"));
  CHECK(errors[1] == "c.toml:4:9: request.strem: unknown key");
  CHECK(errors[2] == "c.toml:6:14: checks.no_hang_ms: expected a number");
}

TEST_CASE("a shared policy file is merged under the case, the case's keys winning", "[loader]") {
  TempDir dir;
  dir.write("policies/p.toml", R"([workflow]
primary = "primary"
fallback = ["backup"]
max_total_attempts = 3
max_elapsed_ms = 5000
[route.primary]
expected_latency_ms = 300
[route.backup]
cost_per_attempt_usd = 0.01
)");
  const auto file = dir.write("cases/a.toml", R"(name = "x"
expect = "retry"
policy = "../policies/p.toml"
[workflow]
max_total_attempts = 1
[route.primary]
script = [{ fault = "overloaded" }]
[route.backup]
dialect = "gemini"
)");
  auto loaded = load_case_file(file);
  REQUIRE(loaded.errors.empty());
  const auto& c = *loaded.value;
  CHECK(c.policy.workflow.max_total_attempts == 1);  // the case's own key
  CHECK(c.policy.workflow.max_elapsed_ms == 5000);   // from the policy file
  CHECK(c.policy.route("primary").expected_latency_ms == 300);
  CHECK(c.policy.route("backup").cost_per_attempt_usd == 0.01);
  CHECK(c.script.routes.at("backup").dialect == Dialect::gemini);
  CHECK_THAT(c.policy_file, Catch::EndsWith("policies/p.toml"));
}

TEST_CASE("an error inside a shared policy file names the policy file", "[loader]") {
  TempDir dir;
  const auto policy = dir.write("p.toml", "[workflow]\nprimary = \"primary\"\nmax_total_attempts = 0\n");
  const auto file =
      dir.write("a.toml", "name = \"x\"\nexpect = \"retry\"\npolicy = \"p.toml\"\n[route.primary]\n");
  auto errors = load_case_file(file).errors;
  REQUIRE(errors.size() == 1);
  CHECK(std::string(errors[0].what()) ==
        policy + ":3:22: workflow.max_total_attempts: 0 is out of range [1, 1000000]");

  const auto missing =
      dir.write("b.toml", "name = \"x\"\nexpect = \"retry\"\npolicy = \"nope.toml\"\n[route.primary]\n");
  auto e2 = load_case_file(missing).errors;
  REQUIRE(e2.size() == 1);
  CHECK(std::string(e2[0].what()) ==
        missing + ":3:10: policy: no such file \"" + (dir.path / "nope.toml").string() + "\"");
}

TEST_CASE("lint checks policy files strictly and tells them from cases", "[loader]") {
  TempDir dir;
  const auto policy = dir.write("p.toml", "[workflow]\nprimary = \"primary\"\nmax_total_atempts = 2\n");
  auto errors = lint_file(policy);
  REQUIRE(errors.size() == 1);
  CHECK(std::string(errors[0].what()) == policy + ":3:21: workflow.max_total_atempts: unknown key");
  const auto good = dir.write("q.toml", "[workflow]\nprimary = \"primary\"\n");
  CHECK(lint_file(good).empty());
  const auto c = dir.write("c.toml", "name = \"x\"\nexpect = \"retyr\"\n[route.primary]\n");
  REQUIRE(lint_file(c).size() == 1);
}

TEST_CASE("a suite skips policy files, rejects duplicate names and filters by tag or glob", "[loader]") {
  TempDir dir;
  dir.write("policies/p.toml", "[workflow]\nprimary = \"primary\"\n");
  dir.write("a/one.toml", "name = \"one rate\"\ntags = [\"rate\"]\nexpect = \"retry\"\n[route.primary]\n");
  dir.write("a/two.toml",
            "name = \"two quota\"\ntags = [\"quota\"]\nexpect = \"fallback\"\n[route.primary]\n");
  dir.write("b/three.toml", "name = \"three\"\nexpect = \"none\"\n[route.primary]\n");

  auto all = load_suite({dir.path.string()}, {});
  REQUIRE(all.errors.empty());
  CHECK(all.skipped_policy_files == 1);
  REQUIRE(all.cases.size() == 3);
  CHECK(all.cases[0].folder == "a");
  CHECK(all.cases[2].folder == "b");

  CHECK(load_suite({dir.path.string()}, {"quota"}).cases.size() == 1);
  CHECK(load_suite({dir.path.string()}, {"t*"}).cases.size() == 2);  // "two quota", "three"
  CHECK(load_suite({dir.path.string()}, {"*/b/*"}).cases.size() == 1);

  dir.write("b/four.toml", "name = \"three\"\nexpect = \"none\"\n[route.primary]\n");
  auto dup = load_suite({dir.path.string()}, {});
  REQUIRE(dup.errors.size() == 1);
  CHECK_THAT(dup.errors[0].what(), Catch::Contains("name: \"three\" is already the name of"));

  auto missing = load_suite({(dir.path / "nope").string()}, {});
  REQUIRE(missing.errors.size() == 1);
  CHECK_THAT(missing.errors[0].what(), Catch::EndsWith("nope: no such file or directory"));
}

TEST_CASE("every bundled case and policy file lints clean", "[loader]") {
  auto files = expand_paths({test::source_dir() + "/cases"});
  REQUIRE_FALSE(files.empty());
  for (const auto& f : files) {
    INFO(f.path);
    auto errors = lint_file(f.path);
    for (const auto& e : errors) UNSCOPED_INFO(e.what());
    CHECK(errors.empty());
  }
}
