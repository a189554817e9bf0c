// llmchaos lint: check case and policy files without running them. Every error as file:line:col: message;
// exit 2 on any error (or a path that does not exist), 0 otherwise. An empty file or a folder without a
// .toml file is a warning ("no case or policy here").
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "commands.hpp"
#include "llmchaos/harness/case.hpp"

namespace llmchaos::app {
namespace {

int lint(const std::vector<std::string>& paths, bool quiet) {
  const auto report = harness::lint_paths(paths.empty() ? std::vector<std::string>{"cases"} : paths);
  for (const auto& e : report.errors) std::cerr << e.what() << "\n";
  for (const auto& w : report.warnings) std::cerr << w.pos().str() << ": warning: " << w.message() << "\n";
  const auto errors = report.errors.size();
  if (!quiet || errors)
    std::cerr << fmt::format("llmchaos lint: {} file(s), {} error(s){}\n", report.files, errors,
                             report.warnings.empty() ? "" : fmt::format(", {} warning(s)", report.warnings.size()));
  return errors ? 2 : 0;
}

}  // namespace

void add_lint(CLI::App& app, int& exit_code) {
  auto paths = std::make_shared<std::vector<std::string>>();
  auto quiet = std::make_shared<bool>(false);
  auto* sub = app.add_subcommand("lint", "check case and policy files without running them");
  sub->add_option("paths", *paths, "case / policy files or folders (default: cases/)");
  sub->add_flag("--quiet,-q", *quiet, "print only the errors");
  sub->callback([paths, quiet, &exit_code] { exit_code = lint(*paths, *quiet); });
}

}  // namespace llmchaos::app
