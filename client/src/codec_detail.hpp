#pragma once
// Shared by the dialect codecs (private to the client library): JSON look-ups that never throw, and the
// pieces every dialect's request carries (the tool schema, the follow-up arguments).
#include <boost/json.hpp>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

#include "llmchaos/client/dialect_codec.hpp"

namespace llmchaos::client::detail {

namespace json = boost::json;

// One step of a path into a JSON document: an object key or an array index.
struct PathStep {
  PathStep(const char* key) : key(key) {}
  PathStep(int index) : index(index), is_index(true) {}
  std::string_view key;
  int index = 0;
  bool is_index = false;
};

// nullptr when any step is missing or of the wrong kind.
inline const json::value* find(const json::value& root, std::initializer_list<PathStep> path) {
  const json::value* v = &root;
  for (const auto& step : path) {
    if (step.is_index) {
      const auto* a = v->if_array();
      if (!a || step.index < 0 || static_cast<std::size_t>(step.index) >= a->size()) return nullptr;
      v = &(*a)[static_cast<std::size_t>(step.index)];
    } else {
      const auto* o = v->if_object();
      if (!o) return nullptr;
      auto it = o->find(step.key);
      if (it == o->end()) return nullptr;
      v = &it->value();
    }
  }
  return v;
}

inline std::string str_at(const json::value& root, std::initializer_list<PathStep> path) {
  const auto* v = find(root, path);
  if (!v || !v->is_string()) return {};
  return std::string(v->get_string());
}

inline int int_at(const json::value& root, std::initializer_list<PathStep> path) {
  const auto* v = find(root, path);
  if (!v) return 0;
  if (v->is_int64()) return static_cast<int>(v->get_int64());
  if (v->is_uint64()) return static_cast<int>(v->get_uint64());
  if (v->is_double()) {  // clamped: a cast of an out-of-range double is undefined behaviour
    const double d = v->get_double();
    if (!(d > -2147483648.0 && d < 2147483647.0)) return 0;
    return static_cast<int>(d);
  }
  return 0;
}

// Parse without throwing; false on anything that is not JSON.
inline bool parse_json(std::string_view text, json::value& out) {
  boost::system::error_code ec;
  out = json::parse(text, ec);
  return !ec;
}

// The JSON-schema parameters of the workflow tool (the same for every dialect).
inline json::object tool_parameters() {
  return json::object{{"type", "object"},
                      {"properties", json::object{{"label", json::object{{"type", "string"}}}}},
                      {"required", json::array{"label"}}};
}
inline constexpr std::string_view tool_description = "Record the label chosen for the item.";

// A tool call's JSON arguments as an object (an empty object when they are not JSON).
inline json::value tool_arguments_object(const std::string& arguments) {
  json::value v;
  if (parse_json(arguments, v) && v.is_object()) return v;
  return json::object{};
}

// The assistant prefill a prefill request ends with: the opening of the JSON answer.
inline constexpr std::string_view prefill_text = "{";

}  // namespace llmchaos::client::detail
