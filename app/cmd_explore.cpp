#include <iostream>

#include "commands.hpp"

namespace llmchaos::app {

void add_explore(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("explore", "(not built yet)");
  sub->callback([&exit_code] {
    std::cerr << "llmchaos explore: not implemented yet\n";
    exit_code = 2;
  });
}

}  // namespace llmchaos::app
