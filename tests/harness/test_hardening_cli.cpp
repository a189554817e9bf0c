// Issue 13, through the real CLI: input that crashed or aborted (a 100,000-part dotted key, a symlink
// loop, a folder given as a file) is a clear error with exit 2; lint reports every problem; numbers on
// the command line are checked; an exec target that does not start is a harness error.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_run.hpp"

using namespace llmchaos;
namespace fs = std::filesystem;

namespace {
using test::TempDir;
constexpr auto& cli = test::run_cli;

std::string q(const fs::path& p) {
  return "'" + p.string() + "'";
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

std::string repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// A small valid case, its name and optional extra text given.
std::string case_text(const std::string& name, const std::string& extra = {}) {
  return "name = \"" + name + "\"\nexpect = \"none\"\n" + extra +
         "[workflow]\nprimary = \"primary\"\n[route.primary]\ndialect = \"openai\"\n";
}
}  // namespace

TEST_CASE("a dotted key of 100,000 parts is 'key nested too deep' in lint, run and serve, not a segfault",
          "[cli][hardening]") {
  TempDir dir("deep");
  const auto file = dir.path / "k.toml";
  write(file, "name=\"k\"\nexpect=\"none\"\n[" + repeat("a.", 100000) + "b]\n[route.primary]\n");
  const std::string expected = file.string() + ":3:2: key nested too deep (limit 64)";
  for (const std::string command : {"lint", "run", "serve --port 0 --script"}) {
    INFO(command);
    const auto out = cli(command + " " + q(file));
    CHECK(out.code == 2);
    CHECK(out.text.find(expected) != std::string::npos);
  }
  write(file, "name=\"k\"\nexpect=\"none\"\n" + repeat("a.", 100000) + "b = 1\n[route.primary]\n");
  const auto value_key = cli("lint " + q(file));
  CHECK(value_key.code == 2);
  CHECK(value_key.text.find(file.string() + ":3:1: key nested too deep (limit 64)") != std::string::npos);
}

TEST_CASE("a symlink loop in a case folder is named with its reason, exit 2, in run and lint",
          "[cli][hardening]") {
  TempDir dir("loop");
  const auto loop = dir.path / "loop";
  fs::create_directories(loop);
  fs::create_symlink("self", loop / "self");
  for (const std::string command : {"run", "lint"}) {
    INFO(command);
    const auto out = cli(command + " " + q(loop));
    CHECK(out.code == 2);
    CHECK(out.text.find((loop / "self").generic_string() +
                        ": cannot read: Too many levels of symbolic links") != std::string::npos);
    CHECK(out.text.find("terminate") == std::string::npos);
  }
  // The loop given directly, and a case whose policy is the loop.
  const auto direct = cli("lint " + q(loop / "self"));
  CHECK(direct.code == 2);
  CHECK(direct.text.find("cannot read: Too many levels of symbolic links") != std::string::npos);
  write(dir.path / "c" / "case.toml", case_text("c", "policy = \"../loop/self\"\n"));
  const auto policy = cli("lint " + q(dir.path / "c"));
  CHECK(policy.code == 2);
  CHECK(policy.text.find("policy: cannot read") != std::string::npos);
}

TEST_CASE("a folder or a missing file where a file is expected: the exact path and the errno text, exit 2",
          "[cli][hardening]") {
  TempDir dir("paths");
  const auto replay_dir = cli("replay " + q(dir.path));
  CHECK(replay_dir.code == 2);
  CHECK(replay_dir.text.find(dir.path.string() + ": cannot read the trace file: Is a directory") !=
        std::string::npos);
  CHECK(replay_dir.text.find("underflow") == std::string::npos);
  const auto replay_missing = cli("replay " + q(dir.path / "none.jsonl"));
  CHECK(replay_missing.code == 2);
  CHECK(replay_missing.text.find((dir.path / "none.jsonl").string() +
                                 ": cannot open the trace file: No such file or directory") !=
        std::string::npos);
  write(dir.path / "c.toml", case_text("c"));
  const auto baseline = cli("run --quiet --baseline " + q(dir.path) + " " + q(dir.path / "c.toml"));
  CHECK(baseline.code == 2);
  CHECK(baseline.text.find(dir.path.string() + ": cannot read: Is a directory") != std::string::npos);
  const auto script_dir = cli("serve --port 0 --script " + q(dir.path));
  CHECK(script_dir.code == 2);
  CHECK(script_dir.text.find(dir.path.string() + ": cannot read: Is a directory") != std::string::npos);
  const auto gateway_dir = cli("gateway --config " + q(dir.path));
  CHECK(gateway_dir.code == 2);
  CHECK(gateway_dir.text.find(dir.path.string()) != std::string::npos);
  const auto report_dir = cli("run --quiet --json " + q(dir.path) + " " + q(dir.path / "c.toml"));
  CHECK(report_dir.code == 2);
  CHECK(report_dir.text.find(dir.path.string()) != std::string::npos);
}

TEST_CASE("lint reports every problem of a file, duplicate case names, and warns on an empty file or folder",
          "[cli][hardening]") {
  TempDir dir("lint");
  // Two unknown keys in one table, two broken steps of one route, an unknown key in another table.
  write(dir.path / "many.toml",
        "name = \"many\"\nexpect = \"none\"\n"
        "[checks]\ntypo_one = true\ntypo_two = true\n"
        "[workflow]\nprimary = \"primary\"\nfallback = [\"b\"]\n"
        "[route.primary]\ndialect = \"openai\"\n"
        "script = [{ fault = \"nope\" }, { fault = \"ok\", times = 0 }]\n"
        "[route.b]\nbogus = 1\n");
  const auto many = cli("lint " + q(dir.path / "many.toml"));
  CHECK(many.code == 2);
  for (const std::string e :
       {":4:12: checks.typo_one: unknown key", ":5:12: checks.typo_two: unknown key",
        ":11:21: route.primary.script[0].fault: unknown fault \"nope\"",
        "route.primary.script[1].times: must be at least 1", ":13:9: route.b.bogus: unknown key"}) {
    INFO(e);
    CHECK(many.text.find(e) != std::string::npos);
  }
  CHECK(many.text.find("5 error(s)") != std::string::npos);

  write(dir.path / "dup" / "a.toml", case_text("same"));
  write(dir.path / "dup" / "b.toml", case_text("same"));
  const auto dup = cli("lint " + q(dir.path / "dup"));
  CHECK(dup.code == 2);
  CHECK(dup.text.find((dir.path / "dup" / "b.toml").generic_string() +
                      ":1:8: name: \"same\" is already the name of " +
                      (dir.path / "dup" / "a.toml").generic_string()) != std::string::npos);

  write(dir.path / "empty.toml", "# nothing yet\n");
  fs::create_directories(dir.path / "nothing");
  const auto empty = cli("lint " + q(dir.path / "empty.toml") + " " + q(dir.path / "nothing"));
  CHECK(empty.code == 0);
  CHECK(empty.text.find((dir.path / "empty.toml").string() + ": warning: no case or policy here") !=
        std::string::npos);
  CHECK(empty.text.find((dir.path / "nothing").string() + ": warning: no case or policy here") !=
        std::string::npos);
}

TEST_CASE("a policy reference naming a case blames the reference, not the case", "[cli][hardening]") {
  TempDir dir("policy-case");
  write(dir.path / "x.toml", case_text("x"));
  write(dir.path / "case.toml", "name = \"c\"\npolicy = \"x.toml\"\nexpect = \"none\"\n[route.primary]\n");
  const auto out = cli("lint " + q(dir.path / "case.toml"));
  CHECK(out.code == 2);
  CHECK(out.text.find((dir.path / "case.toml").string() + ":2:10: policy: x.toml is a case, not a policy") !=
        std::string::npos);
  CHECK(out.text.find("unknown key") == std::string::npos);
  write(dir.path / "self.toml", "name = \"s\"\npolicy = \"self.toml\"\nexpect = \"none\"\n[route.primary]\n");
  CHECK(cli("lint " + q(dir.path / "self.toml"))
            .text.find(":2:10: policy: self.toml is a case, not a policy") != std::string::npos);
}

TEST_CASE("non-finite or absurd numbers on the command line are usage errors with readable bounds",
          "[cli][hardening]") {
  TempDir dir("numbers");
  write(dir.path / "c.toml", case_text("c"));
  const auto file = q(dir.path / "c.toml");
  for (const std::string& args :
       std::vector<std::string>{"run --time-scale nan " + file, "run --time-scale inf " + file,
                                "run --time-scale -1 " + file, "serve --port 0 --time-scale nan",
                                "serve --port 0 --idle-timeout-ms -5", "serve --port 0 --max-connections 0",
                                "replay --timeout inf " + file, "replay --timeout 1e308 " + file,
                                "replay --timeout 2,nan " + file, "replay --live --time-scale nan " + file}) {
    INFO(args);
    const auto out = cli(args);
    CHECK(out.code == 2);
    CHECK(out.text.size() < 2000);
    CHECK(out.text.find("000000000000") ==
          std::string::npos);  // bounds print as 1e+308, 86400, not 309 digits
    CHECK(out.text.find("listening") == std::string::npos);
  }
  const auto bounds = cli("replay --timeout 1e308 " + file);
  CHECK(bounds.text.find("1e+308 is out of range (0, 86400]") != std::string::npos);
  CHECK(cli("run --time-scale nan " + file).text.find("must be a finite number in (0, 1000] (got nan)") !=
        std::string::npos);
}

TEST_CASE("an exec target that is not found is a harness error: unknown, target did not start",
          "[cli][hardening]") {
  TempDir dir("exec");
  write(dir.path / "c.toml", case_text("c"));
  const auto out =
      cli("run --quiet --driver exec --exec ./no-such-program-llmchaos " + q(dir.path / "c.toml"));
  CHECK(out.code == 1);
  CHECK(out.text.find("unknown  ") != std::string::npos);
  CHECK(out.text.find("unknown: target did not start") != std::string::npos);
  CHECK(out.text.find("shell exit 127, command not found") != std::string::npos);
  CHECK(out.text.find("no-such-program-llmchaos") != std::string::npos);
}
