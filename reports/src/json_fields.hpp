#pragma once
// The JSON report's codec: one table of fields per type, each field a key with how to write it and how
// to read it back. The writer (json.cpp) and the reader (json_read.cpp) both walk these tables, so a key
// cannot be written under one name and read under another. A field without a reader is derived (the
// totals, a case's summary): written for tools, recomputed from the rest when a report is read back.
#include <boost/json.hpp>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "llmchaos/core/ledger_json.hpp"
#include "llmchaos/results/result.hpp"

namespace llmchaos::reports::detail::jsonf {
namespace json = boost::json;

// A value that does not fit its field; the reader adds where it sits ("cases[3].logs[0].status").
struct BadValue : std::runtime_error {
  using std::runtime_error::runtime_error;
  std::string path;  // "cases[3].logs[0].status", built on the way out
  std::string where() const { return path.empty() ? std::string(what()) : path + ": " + what(); }
};

template <class T>
struct Field {
  std::string_view key;
  json::value (*write)(const T&);
  void (*read)(const json::value&, T&);  // nullptr: derived, written only
};

template <class T>
struct table;  // specialised below: static std::span<const Field<T>> fields()

template <class T>
concept Tabled = requires {
  table<T>::fields();
};
template <class E>
concept Named = std::is_enum_v<E> && requires {
  enum_names<E>::table;
};

template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

// ---- writing ----
template <class V>
json::value encode(const V& v);

template <class T>
json::object encode_object(const T& t) {
  json::object o;
  for (const auto& f : table<T>::fields()) o.emplace(f.key, f.write(t));
  return o;
}

template <class V>
json::value encode(const V& v) {
  if constexpr (std::is_same_v<V, bool> || std::is_arithmetic_v<V>) {
    return json::value(v);
  } else if constexpr (std::is_same_v<V, std::string>) {
    return json::value(v);
  } else if constexpr (Named<V>) {
    return json::value(to_string(v));
  } else if constexpr (std::is_same_v<V, LedgerEntry> || std::is_same_v<V, SideEffect>) {
    return llmchaos::to_json_value(v);
  } else if constexpr (is_optional<V>::value) {
    return v ? encode(*v) : json::value(nullptr);
  } else if constexpr (is_vector<V>::value) {
    json::array a;
    a.reserve(v.size());
    for (const auto& x : v) a.push_back(encode(x));
    return a;
  } else if constexpr (std::is_same_v<V, std::map<std::string, int>>) {
    json::object o;
    for (const auto& [k, n] : v) o[k] = n;
    return o;
  } else {
    static_assert(Tabled<V>, "no JSON codec for this type");
    return encode_object(v);
  }
}

// ---- reading ----
inline std::string_view kind_name(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null:
      return "null";
    case json::kind::bool_:
      return "a boolean";
    case json::kind::string:
      return "a string";
    case json::kind::array:
      return "an array";
    case json::kind::object:
      return "an object";
    default:
      return "a number";
  }
}
[[noreturn]] inline void expected(std::string_view what, const json::value& v) {
  throw BadValue("expected " + std::string(what) + ", found " + std::string(kind_name(v)));
}

template <class V>
void decode(const json::value& j, V& out);

template <class T>
void decode_object(const json::value& j, T& out) {
  const auto* o = j.if_object();
  if (!o) expected("an object", j);
  for (const auto& f : table<T>::fields()) {
    if (!f.read) continue;
    const auto* v = o->if_contains(f.key);
    if (!v) continue;  // absent: the default (an older report, or a compact one)
    try {
      f.read(*v, out);
    } catch (BadValue& e) {
      e.path = std::string(f.key) + (e.path.empty() || e.path[0] == '[' ? "" : ".") + e.path;
      throw;
    }
  }
}

template <class V>
void decode(const json::value& j, V& out) {
  if constexpr (std::is_same_v<V, bool>) {
    if (!j.is_bool()) expected("true or false", j);
    out = j.get_bool();
  } else if constexpr (std::is_arithmetic_v<V>) {
    if (!j.is_number()) expected("a number", j);
    boost::system::error_code ec;
    out = j.to_number<V>(ec);
    if (ec) {
      if constexpr (std::is_floating_point_v<V>) throw BadValue("not a number: " + ec.message());
      // A whole number written as a double ("12.0") still reads as an integer.
      const double d = j.to_number<double>();
      out = static_cast<V>(d);
      if (static_cast<double>(out) != d) throw BadValue("expected a whole number");
    }
  } else if constexpr (std::is_same_v<V, std::string>) {
    if (!j.is_string()) expected("a string", j);
    out = std::string(j.get_string());
  } else if constexpr (Named<V>) {
    if (!j.is_string()) expected("a string", j);
    auto e = parse_enum<V>(std::string_view(j.get_string()));
    if (!e) throw BadValue("\"" + std::string(j.get_string()) + "\" is not one of " + enum_choices<V>());
    out = *e;
  } else if constexpr (std::is_same_v<V, LedgerEntry>) {
    try {
      out = ledger_entry_from_json_value(j);
    } catch (const std::runtime_error& e) {
      throw BadValue(e.what());
    }
  } else if constexpr (std::is_same_v<V, SideEffect>) {
    try {
      out = side_effect_from_json_value(j);
    } catch (const std::runtime_error& e) {
      throw BadValue(e.what());
    }
  } else if constexpr (is_optional<V>::value) {
    if (j.is_null()) {
      out.reset();
    } else {
      out.emplace();
      decode(j, *out);
    }
  } else if constexpr (is_vector<V>::value) {
    const auto* a = j.if_array();
    if (!a) expected("an array", j);
    out.clear();
    out.resize(a->size());
    for (std::size_t i = 0; i < a->size(); ++i) {
      try {
        decode((*a)[i], out[i]);
      } catch (BadValue& e) {
        e.path = "[" + std::to_string(i) + "]" + (e.path.empty() || e.path[0] == '[' ? "" : ".") + e.path;
        throw;
      }
    }
  } else if constexpr (std::is_same_v<V, std::map<std::string, int>>) {
    const auto* o = j.if_object();
    if (!o) expected("an object", j);
    out.clear();
    for (const auto& [k, v] : *o) decode(v, out[std::string(k)]);
  } else {
    static_assert(Tabled<V>, "no JSON codec for this type");
    decode_object(j, out);
  }
}

// One field bound to a data member: written and read with the codec of the member's type.
template <class>
struct member_of;
template <class T, class V>
struct member_of<V T::*> {
  using owner = T;
  using type = V;
};
template <auto M>
constexpr Field<typename member_of<decltype(M)>::owner> field(std::string_view key) {
  using T = typename member_of<decltype(M)>::owner;
  return {key, [](const T& t) { return encode(t.*M); }, [](const json::value& j, T& t) { decode(j, t.*M); }};
}

}  // namespace llmchaos::reports::detail::jsonf
