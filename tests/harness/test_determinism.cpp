// --seed reaches the live mock: each case's namespace draws (the `slow` fault's lognormal latency) from
// (--seed, case name), so a live run draws the same latencies whatever --jobs is, and the same as
// --virtual-time; another seed draws others.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <vector>

#include "cli_run.hpp"

using llmchaos::test::run_cli;
using llmchaos::test::slurp;

namespace {

using Draws = std::map<std::string, std::vector<double>>;  // case name -> planned latency of each attempt

void write_cases(const std::filesystem::path& dir) {
  for (int k = 1; k <= 6; ++k)
    std::ofstream(dir / ("slow-" + std::to_string(k) + ".toml"))
        << "name = \"slow draw " << k << "\"\nexpect = \"none\"\n"
        << "[workflow]\nmax_total_attempts = 3\nmax_elapsed_ms = 20000\nattempt_timeout_ms = 10000\n"
        << "[route.primary]\ndialect = \"openai\"\n"
        << "script = [{ fault = \"slow\", p50_ms = 40, p95_ms = 400, times = 3 }]\n"
        << "[sequence]\ncount = 3\ninterval_ms = 0\n";
}

Draws draws(const std::filesystem::path& dir, const std::string& args) {
  const auto report = (dir / "report.json").string();
  const auto r =
      run_cli("run '" + dir.string() + "' --time-scale 0.1 --quiet --json '" + report + "' " + args);
  INFO(r.text);
  CHECK(r.code == 0);
  Draws out;
  const auto parsed = boost::json::parse(slurp(report));  // held: the loop walks into it
  for (const auto& c : parsed.at("cases").as_array()) {
    auto& d = out[std::string(c.at("name").as_string())];
    for (const auto& e : c.at("ledger").as_array())
      d.push_back(e.at("planned_latency_ms").to_number<double>());
  }
  return out;
}

}  // namespace

TEST_CASE("a live run with the same --seed draws the same latencies whatever --jobs is",
          "[determinism][runner]") {
  llmchaos::test::TempDir dir("determinism");
  write_cases(dir.path);
  const auto serial = draws(dir.path, "--seed 7 -j 1");
  const auto parallel = draws(dir.path, "--seed 7 -j 4");
  REQUIRE(serial.size() == 6);
  for (const auto& [name, d] : serial) {
    INFO(name);
    REQUIRE(d.size() == 3);
    for (double ms : d) CHECK(ms > 0);  // a draw, scaled (p50 40 ms x 0.1)
  }
  CHECK(parallel == serial);
  CHECK(draws(dir.path, "--seed 7 --virtual-time") == serial);  // live and virtual draw alike
  // Cases draw apart from each other, and another seed draws other latencies.
  CHECK(serial.at("slow draw 1") != serial.at("slow draw 2"));
  CHECK(draws(dir.path, "--seed 8 -j 4") != serial);
}
