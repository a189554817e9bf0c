#include <iostream>

#include "commands.hpp"

namespace llmchaos::app {

void add_run(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("run", "(not built yet)");
  sub->callback([&exit_code] {
    std::cerr << "llmchaos run: not implemented yet\n";
    exit_code = 2;
  });
}

}  // namespace llmchaos::app
