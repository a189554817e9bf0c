#pragma once
// The JSON report as a Boost.JSON value, for tools inside the project (keys in a fixed order), and read back.
#include <boost/json/value.hpp>

#include "llmchaos/results/result.hpp"

namespace llmchaos::reports {

inline constexpr std::string_view json_schema_id = "llmchaos.report/1";

boost::json::value to_json_value(const harness::RunResult& run);
boost::json::value to_json_value(const client::DecisionLog& log);

// The reader: a report.json back into the run it was written from, with the writer's own field table
// (derived fields such as the totals are recomputed from the cases). Throws SpecError naming `source`
// (with line:col when the text is not JSON, with the field's place when a value does not fit).
harness::RunResult run_from_json(std::string_view text, const std::string& source);
harness::RunResult read_json_report(const std::string& path);

}  // namespace llmchaos::reports
