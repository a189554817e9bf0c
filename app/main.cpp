// llmchaos: one CLI over the mock provider, the client stack and the harness.
#include <iostream>

#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"llmchaos: fault-injection chaos tests for the resilience layer of LLM API clients"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "llmchaos 0.1.0");
  int exit_code = 0;
  for (auto add : llmchaos::app::all_commands) add(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;  // usage errors exit 2 (SPEC 7)
  }
  return exit_code;
}
