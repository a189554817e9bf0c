// The CLI end to end: `llmchaos replay` and `llmchaos overload` as a user runs them (LLMCHAOS_BIN).
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_run.hpp"

namespace fs = std::filesystem;

namespace {
struct Run {
  int code = -1;
  std::string out, err;
};

using llmchaos::test::slurp;

fs::path scratch_dir() {
  const auto dir = fs::temp_directory_path() / ("llmchaos-exp-cli-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

using llmchaos::test::source_dir;
std::string bin() {
  return llmchaos::test::llmchaos_bin();
}

Run run(const std::string& args) {
  const auto dir = scratch_dir();
  const std::string cmd =
      "'" + bin() + "' " + args + " >" + (dir / "out").string() + " 2>" + (dir / "err").string();
  const int status = std::system(cmd.c_str());
  Run r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  return r;
}
}  // namespace

TEST_CASE("replay --synth writes a trace that replay reads and reports as text, JSON, Markdown and SVG",
          "[experiments][cli]") {
  const auto dir = scratch_dir();
  const auto trace = (dir / "t.jsonl").string();
  const auto synth = run("replay --synth 2000 --out " + trace + " --seed 4 --outage 100,200");
  INFO(synth.err);
  REQUIRE(synth.code == 0);
  const auto r = run("replay " + trace + " --timeout 2.5,3.5 --json " + (dir / "r.json").string() +
                     " --markdown " + (dir / "r.md").string() + " --svg " + (dir / "svg").string());
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("2000 requests") != std::string::npos);
  CHECK(r.out.find("switch") != std::string::npos);
  const auto doc = boost::json::parse(slurp(dir / "r.json")).as_object();
  CHECK(doc.at("rows").as_array().size() == 5);
  CHECK(doc.at("requests").as_int64() == 2000);
  CHECK(slurp(dir / "r.md").find("| retry | 2.5 |") != std::string::npos);
  for (const char* p : {"replay-wait.svg", "replay-retry.svg", "replay-switch.svg"})
    CHECK(slurp(dir / "svg" / p).find("</svg>") != std::string::npos);
}

TEST_CASE("replay reads the shipped sample trace", "[experiments][cli]") {
  const auto r = run("replay " + source_dir() + "/examples/sample-trace.jsonl");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("retry") != std::string::npos);
}

TEST_CASE("replay refuses a trace with bad lines, naming file:line:col, unless --skip-bad",
          "[experiments][cli]") {
  const auto dir = scratch_dir();
  const auto trace = (dir / "bad.jsonl").string();
  {
    std::ofstream out(trace);
    out << R"({"primary_1":{"sec":1,"ok":true},"primary_2":{"sec":1,"ok":true},"alternate":{"sec":1,"ok":true}})"
           "\n"
        << R"({"primary_1":{"sec":"x","ok":true}})"
           "\n";
  }
  const auto r = run("replay " + trace);
  CHECK(r.code == 2);
  CHECK(r.err.find(trace + ":2:21: \"primary_1\".sec: expected a finite number") != std::string::npos);
  const auto skipped = run("replay --skip-bad " + trace);
  CHECK(skipped.code == 0);
  CHECK(skipped.out.find("1 requests") != std::string::npos);
  CHECK(run("replay " + (dir / "missing.jsonl").string()).code == 2);
  CHECK(run("replay " + trace + " --timeout 0").code == 2);
}

TEST_CASE("overload --virtual prints every gate and load and flags the biased rows in JSON",
          "[experiments][cli]") {
  const auto dir = scratch_dir();
  const auto r = run("overload --virtual --duration 10 --json " + (dir / "o.json").string());
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("admission:100") != std::string::npos);
  CHECK(r.out.find("* biased") != std::string::npos);
  const auto doc = boost::json::parse(slurp(dir / "o.json")).as_object();
  const auto& rows = doc.at("rows").as_array();
  REQUIRE(rows.size() == 9);  // 3 gates x 3 loads
  for (const auto& row : rows) {
    const auto& o = row.as_object();
    const bool biased = o.at("achieved_per_sec").as_double() < 0.95 * o.at("offered_per_sec").as_double();
    CHECK(o.at("biased").as_bool() == biased);
  }
  CHECK(run("overload --virtual --gate fifo:3").code == 2);
}
