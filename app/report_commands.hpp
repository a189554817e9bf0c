#pragma once
// `llmchaos report SUB`: one function per sub-command (each in its own cmd_report_*.cpp), listed in one
// table in cmd_report.cpp. Adding a sub-command is one file and one table line.
#include <CLI/CLI.hpp>

namespace llmchaos::app {

// Adds the sub-command under `report`; when it is chosen and parsed, its callback stores the exit code.
using AddReportCommand = void (*)(CLI::App& report, int& exit_code);

void add_report_merge(CLI::App& report, int& exit_code);      // cmd_report_merge.cpp
void add_report_scorecard(CLI::App& report, int& exit_code);  // cmd_report_scorecard.cpp

}  // namespace llmchaos::app
