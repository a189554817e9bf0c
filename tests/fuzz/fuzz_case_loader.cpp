// TOML text -> case / script / policy loaders: a validated spec or SpecError naming the file; no other
// exception may escape (an escaping exception aborts, which libFuzzer reports).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "llmchaos/client/policy.hpp"
#include "llmchaos/core/spec_error.hpp"
#include "llmchaos/core/toml_reader.hpp"
#include "llmchaos/harness/case.hpp"
#include "llmchaos/mockprovider/script.hpp"

using namespace llmchaos;

namespace {
const std::string file = LLMCHAOS_FUZZ_CASE_FILE;  // never read: a name for positions and relative paths

void check(const SpecError& e) {
  if (e.pos().file.empty() || std::string_view(e.what()).empty()) __builtin_trap();  // errors say where
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto loaded = harness::load_case_text(text, file);
    if (loaded.value.has_value() == !loaded.errors.empty()) __builtin_trap();  // exactly one of the two
    for (const auto& e : loaded.errors) check(e);
  } catch (const SpecError& e) {
    check(e);
  }
  try {
    (void)mock::parse_script_text(text, file);
  } catch (const SpecError& e) {
    check(e);
  }
  try {
    const auto doc = parse_toml(text, file);
    (void)client::policy_from_toml(doc, file, /*allow_other_keys=*/false);
  } catch (const SpecError& e) {
    check(e);
  }
  return 0;
}
