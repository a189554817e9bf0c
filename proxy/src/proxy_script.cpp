// A proxy script: a fault script whose routes may name their upstream (`upstream = "URL"`).
#include <fmt/format.h>

#include <algorithm>

#include "llmchaos/core/toml_reader.hpp"
#include "llmchaos/proxy/proxy.hpp"

namespace llmchaos::proxy {

// The mock's vocabulary (plans, the forward hook, dialects, scripts) the proxy is written in.
using mock::RouteScript;
using mock::script_from_toml;
namespace {

// The synthetic answer of a proxied route is never sent: it only sizes the plans. It is longer than every
// step's cut_after_events (which is clamped to the synthetic answer's words), so N keeps meaning N real
// content events; and no longer, since every attempt builds it (4096 words cost some 250 us a request).
constexpr int min_synthetic_words = 8;

std::string synthetic_text(const RouteScript& route) {
  int words = min_synthetic_words;
  for (const auto& step : route.steps)
    if (step.cut_after_events) words = std::max(words, *step.cut_after_events + 2);
  std::string text;
  for (int i = 0; i < words; ++i) text += i == 0 ? "w" : " w";
  return text;
}

ProxyScript from_toml(const toml::table& doc, const std::string& file) {
  ProxyScript out;
  out.script = script_from_toml(doc, file, {"upstream"});
  const auto* routes = doc["route"].as_table();
  for (auto& [name, route] : out.script.routes) {
    const auto* table = routes ? (*routes)[name].as_table() : nullptr;
    bool own_text = false;
    if (table) {
      TomlReader r(*table, file, "route." + name);
      if (auto url = r.opt_string("upstream")) {
        if (url->rfind("http://", 0) != 0 && url->rfind("https://", 0) != 0)
          throw SpecError(
              r.pos("upstream"),
              fmt::format("route.{}.upstream: expected an http:// or https:// URL, got \"{}\"", name, *url));
        out.upstreams[name] = *url;
      }
      own_text = r.has("text");
    }
    if (!own_text) route.default_text = synthetic_text(route);
  }
  return out;
}

}  // namespace

ProxyScript load_proxy_script(const std::string& path) {
  return from_toml(parse_toml_file(path), path);
}

ProxyScript parse_proxy_script(std::string_view text, const std::string& source_name) {
  return from_toml(parse_toml(text, source_name), source_name);
}

}  // namespace llmchaos::proxy
