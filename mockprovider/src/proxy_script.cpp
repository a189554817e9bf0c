// A proxy script: a fault script whose routes may name their upstream (`upstream = "URL"`).
#include <fmt/format.h>

#include "llmchaos/core/toml_reader.hpp"
#include "llmchaos/mockprovider/proxy.hpp"

namespace llmchaos::mock {
namespace {

// The synthetic answer of a proxied route is never sent: it only sizes the plans. A long one keeps a
// step's cut_after_events (clamped to the synthetic answer's words) meaning N real content events.
constexpr int synthetic_words = 4096;

ProxyScript from_toml(const toml::table& doc, const std::string& file) {
  ProxyScript out;
  out.script = script_from_toml(doc, file, {"upstream"});
  std::string words;
  for (int i = 0; i < synthetic_words; ++i) words += i == 0 ? "w" : " w";
  const auto* routes = doc["route"].as_table();
  for (auto& [name, route] : out.script.routes) {
    const auto* table = routes ? (*routes)[name].as_table() : nullptr;
    bool own_text = false;
    if (table) {
      TomlReader r(*table, file, "route." + name);
      if (auto url = r.opt_string("upstream")) {
        if (url->rfind("http://", 0) != 0 && url->rfind("https://", 0) != 0)
          throw SpecError(r.pos("upstream"), fmt::format("route.{}.upstream: expected an http:// or https:// URL, got \"{}\"",
                                                         name, *url));
        out.upstreams[name] = *url;
      }
      own_text = r.has("text");
    }
    if (!own_text) route.default_text = words;
  }
  return out;
}

}  // namespace

ProxyScript load_proxy_script(const std::string& path) { return from_toml(parse_toml_file(path), path); }

ProxyScript parse_proxy_script(std::string_view text, const std::string& source_name) {
  return from_toml(parse_toml(text, source_name), source_name);
}

}  // namespace llmchaos::mock
