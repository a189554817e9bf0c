#pragma once
// Each subcommand is one file that adds itself to the CLI; commands.cpp lists them in one table.
#include <CLI/CLI.hpp>

namespace llmchaos::app {

// Adds the subcommand to `app`; when it is chosen and parsed, its callback stores the exit code.
using AddCommand = void (*)(CLI::App& app, int& exit_code);

void add_serve(CLI::App& app, int& exit_code);
void add_run(CLI::App& app, int& exit_code);
void add_lint(CLI::App& app, int& exit_code);
void add_replay(CLI::App& app, int& exit_code);
void add_overload(CLI::App& app, int& exit_code);
void add_gateway(CLI::App& app, int& exit_code);
void add_explore(CLI::App& app, int& exit_code);
void add_report(CLI::App& app, int& exit_code);  // cmd_report.cpp: its own table of sub-commands
void add_proxy(CLI::App& app, int& exit_code);
void add_faults(CLI::App& app, int& exit_code);  // cmd_faults.cpp: the fault table from the specs
void add_probe(CLI::App& app, int& exit_code);   // cmd_probe.cpp: a health check without curl

inline constexpr AddCommand all_commands[] = {add_serve,    add_run,     add_lint,    add_replay,
                                              add_overload, add_gateway, add_explore, add_report,
                                              add_proxy,    add_faults,  add_probe};

}  // namespace llmchaos::app
