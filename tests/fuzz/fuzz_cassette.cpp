// The cassette reader (`llmchaos serve --cassettes`, `llmchaos lint`): any bytes give a cassette or a
// SpecError naming c.json with a position, never a crash; a cassette read back from its own text is the same.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "llmchaos/proxy/cassette.hpp"

using namespace llmchaos;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  proxy::Cassette c;
  try {
    c = proxy::parse_cassette(text, "c.json");
  } catch (const SpecError& e) {
    if (e.pos().file != "c.json" || e.message().empty()) __builtin_trap();  // precise errors
    return 0;
  }
  const auto again =
      proxy::parse_cassette(proxy::cassette_json(c), "c.json");  // what the recorder writes, read back
  if (again.key != c.key || again.frames.size() != c.frames.size() || again.body != c.body ||
      again.status != c.status)
    __builtin_trap();
  for (std::size_t i = 0; i < c.frames.size(); ++i)
    if (again.frames[i].bytes != c.frames[i].bytes) __builtin_trap();
  return 0;
}
