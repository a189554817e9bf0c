#include <iostream>

#include "commands.hpp"

namespace llmchaos::app {

void add_lint(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("lint", "(not built yet)");
  sub->callback([&exit_code] {
    std::cerr << "llmchaos lint: not implemented yet\n";
    exit_code = 2;
  });
}

}  // namespace llmchaos::app
