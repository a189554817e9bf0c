// `llmchaos faults` prints the fault table from the specs themselves, and mockprovider/faults/README.md's
// catalog table agrees with it: every fault kind has its row, and the row names every step key of its own.
#include <catch2/catch.hpp>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"

using llmchaos::test::run_cli;
using llmchaos::test::slurp;
using llmchaos::test::source_dir;

namespace {

// Rows of a Markdown table whose first cell is a `code` name: name -> the rest of the row.
std::map<std::string, std::string> named_rows(const std::string& text) {
  std::map<std::string, std::string> rows;
  static const std::regex row(R"(^\| `([a-z0-9_]+)` \|(.*)$)");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, row)) rows.emplace(m[1], m[2]);
  }
  return rows;
}

// The `key` names in a cell.
std::vector<std::string> code_names(const std::string& cell) {
  std::vector<std::string> out;
  static const std::regex code("`([a-z0-9_]+)`");
  for (std::sregex_iterator it(cell.begin(), cell.end(), code), end; it != end; ++it) out.push_back((*it)[1]);
  return out;
}

}  // namespace

TEST_CASE("llmchaos faults lists every fault kind with its own keys, and the faults README agrees") {
  const auto out = run_cli("faults --markdown");
  REQUIRE(out.code == 0);
  const auto printed = named_rows(out.text);
  REQUIRE(printed.size() >= 20);
  CHECK(printed.count("rate_429") == 1);
  CHECK(printed.at("rate_429").find("retry hint 1000 ms") != std::string::npos);
  CHECK(printed.at("stream_stall").find("breaks the stream") != std::string::npos);

  const auto readme = named_rows(slurp(source_dir() + "/mockprovider/faults/README.md"));
  for (const auto& [name, row] : printed) {
    INFO("fault " << name);
    REQUIRE(readme.count(name) == 1);
    const auto own_keys_cell = row.substr(0, row.find(" | "));
    const auto readme_keys_cell = readme.at(name).substr(0, readme.at(name).find(" | "));
    for (const auto& key : code_names(own_keys_cell)) {
      INFO("own key " << key);
      CHECK(readme_keys_cell.find("`" + key + "`") != std::string::npos);
    }
  }
}

TEST_CASE("llmchaos faults without --markdown prints one line per fault kind") {
  const auto out = run_cli("faults");
  REQUIRE(out.code == 0);
  CHECK(out.text.find("rate_429") != std::string::npos);
  CHECK(out.text.find("keys: `cut_after_events`, `stall_ms`") != std::string::npos);
}
