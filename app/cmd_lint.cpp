// llmchaos lint: check case, policy and cassette files without running them. Every error as
// file:line:col: message; exit 2 on any error (or a path that does not exist), 0 otherwise. An empty file
// or a folder without a .toml or .cassette.json file is a warning ("no case or policy here").
// Cassettes (KEY.cassette.json, proxy/CASSETTES.md) are found in the folders given and checked by
// mockprovider's reader: JSON errors at file:line:col, an unknown format, a missing or mistyped field, a key
// that is not the request's hash.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "llmchaos/harness/case.hpp"
#include "llmchaos/proxy/cassette.hpp"

namespace llmchaos::app {
namespace {

namespace fs = std::filesystem;

bool is_cassette(const fs::path& p) {
  const auto name = p.filename().string();
  return name.size() > proxy::cassette_suffix.size() && name.ends_with(proxy::cassette_suffix);
}

// The cassettes of the paths (sorted), and the paths left for the case and policy lint: a folder holding
// cassettes and no .toml file is not one of them (it would only warn "no case or policy here").
struct Split {
  std::vector<std::string> cassettes;
  std::vector<std::string> others;
};

Split split_paths(const std::vector<std::string>& paths) {
  Split out;
  for (const auto& arg : paths) {
    std::error_code ec;
    if (fs::is_regular_file(arg, ec) && is_cassette(arg)) {
      out.cassettes.push_back(arg);
      continue;
    }
    if (!fs::is_directory(arg, ec)) {
      out.others.push_back(arg);
      continue;
    }
    std::vector<std::string> found;
    bool toml = false;
    for (fs::recursive_directory_iterator it(arg, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code entry_ec;
      if (!it->is_regular_file(entry_ec) || entry_ec) continue;  // lint_paths reports unreadable entries
      if (is_cassette(it->path())) found.push_back(it->path().generic_string());
      toml = toml || it->path().extension() == ".toml";
    }
    std::sort(found.begin(), found.end());
    out.cassettes.insert(out.cassettes.end(), found.begin(), found.end());
    if (toml || found.empty() || ec) out.others.push_back(arg);
  }
  return out;
}

int lint(const std::vector<std::string>& paths, bool quiet) {
  const auto split = split_paths(paths.empty() ? std::vector<std::string>{"cases"} : paths);
  harness::LintReport report;
  if (!split.others.empty() || split.cassettes.empty()) report = harness::lint_paths(split.others);
  for (const auto& c : split.cassettes) {
    auto errors = proxy::lint_cassette_file(c);
    report.errors.insert(report.errors.end(), errors.begin(), errors.end());
    ++report.files;
  }
  for (const auto& e : report.errors) std::cerr << e.what() << "\n";
  for (const auto& w : report.warnings) std::cerr << w.pos().str() << ": warning: " << w.message() << "\n";
  const auto errors = report.errors.size();
  if (!quiet || errors)
    std::cerr << fmt::format(
        "llmchaos lint: {} file(s), {} error(s){}\n", report.files, errors,
        report.warnings.empty() ? "" : fmt::format(", {} warning(s)", report.warnings.size()));
  return errors ? 2 : 0;
}

}  // namespace

void add_lint(CLI::App& app, int& exit_code) {
  auto paths = std::make_shared<std::vector<std::string>>();
  auto quiet = std::make_shared<bool>(false);
  auto* sub = app.add_subcommand("lint", "check case, policy and cassette files without running them");
  sub->add_option("paths", *paths, "case / policy / cassette files or folders (default: cases/)");
  sub->add_flag("--quiet,-q", *quiet, "print only the errors");
  sub->callback([paths, quiet, &exit_code] { exit_code = lint(*paths, *quiet); });
}

}  // namespace llmchaos::app
