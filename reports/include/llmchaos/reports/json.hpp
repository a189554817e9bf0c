#pragma once
// The JSON report as a Boost.JSON value, for tools inside the project (keys in a fixed order).
#include <boost/json/value.hpp>

#include "llmchaos/harness/result.hpp"

namespace llmchaos::reports {

inline constexpr std::string_view json_schema_id = "llmchaos.report/1";

boost::json::value to_json_value(const harness::RunResult& run);
boost::json::value to_json_value(const client::DecisionLog& log);

}  // namespace llmchaos::reports
