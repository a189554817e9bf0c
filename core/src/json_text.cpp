// compact_json (llmchaos/core/json_text.hpp).
#include "llmchaos/core/json_text.hpp"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <cmath>

namespace json = boost::json;

namespace llmchaos {
namespace {

void write_json(std::string& out, const json::value& v, DoubleForm form) {
  switch (v.kind()) {
    case json::kind::object: {
      out += '{';
      bool first = true;
      for (const auto& [k, item] : v.get_object()) {
        if (!first) out += ',';
        first = false;
        out += json::serialize(json::string(k));
        out += ':';
        write_json(out, item, form);
      }
      out += '}';
      break;
    }
    case json::kind::array: {
      out += '[';
      bool first = true;
      for (const auto& item : v.get_array()) {
        if (!first) out += ',';
        first = false;
        write_json(out, item, form);
      }
      out += ']';
      break;
    }
    case json::kind::double_: {
      const double d = v.get_double();
      if (!std::isfinite(d))
        out += "null";
      else
        out += fmt::format("{}", form == DoubleForm::milliseconds ? std::round(d * 1000) / 1000 : d);
      break;
    }
    default:
      out += json::serialize(v);
      break;
  }
}

}  // namespace

std::string compact_json(const json::value& v, DoubleForm form) {
  std::string out;
  write_json(out, v, form);
  return out;
}

}  // namespace llmchaos
