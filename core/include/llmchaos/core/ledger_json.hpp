#pragma once
// Boost.JSON conversions of ledger types, for code that builds larger JSON documents.
#include <boost/json/value.hpp>

#include "llmchaos/core/ledger.hpp"

namespace llmchaos {
boost::json::value to_json_value(const LedgerEntry& e);
LedgerEntry ledger_entry_from_json_value(const boost::json::value& v);
boost::json::value to_json_value(const SideEffect& e);
SideEffect side_effect_from_json_value(const boost::json::value& v);  // throws std::runtime_error
}  // namespace llmchaos
