#pragma once
// Compact JSON with doubles as plain decimals ("5602.304", where Boost.JSON writes "5.602304429000001E3"),
// for answers people and scripts read: the mock's admin ledger, the session API.
#include <boost/json/value.hpp>
#include <string>

namespace llmchaos {

enum class DoubleForm {
  milliseconds,  // rounded to 3 decimals: times in ms read as such (the admin ledger)
  shortest,      // the shortest text that reads back the same (a cost of $0.0004 stays one)
};
std::string compact_json(const boost::json::value& v, DoubleForm form = DoubleForm::milliseconds);

}  // namespace llmchaos
