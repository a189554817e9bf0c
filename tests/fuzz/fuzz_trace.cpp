// The replay trace reader (llmchaos replay): any bytes give rows and line errors, never a crash.
// Byte 0 picks the format (detect / JSON lines / CSV); the rest is the trace text.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "llmchaos/experiments/trace.hpp"

using namespace llmchaos::experiments;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  TraceParseOptions options;
  options.format = static_cast<TraceFormat>(data[0] % 3);
  options.max_errors = 5;
  options.threads = 1;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto parsed = parse_trace(text, "fuzz.trace", options);
  if (parsed.errors.size() > options.max_errors || parsed.errors.size() > parsed.error_count)
    __builtin_trap();
  for (const auto& e : parsed.errors)
    if (e.pos.file != "fuzz.trace" || e.pos.line < 1 || e.message.empty())
      __builtin_trap();  // precise errors
  for (const auto& r : parsed.rows)
    for (const auto* a : {&r.primary_1, &r.primary_2, &r.alternate})
      if (!std::isfinite(a->sec) || a->sec < 0) __builtin_trap();  // documented: sec >= 0
  return 0;
}
