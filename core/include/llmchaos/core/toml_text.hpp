#pragma once
// Writing TOML by hand (case files from `llmchaos explore`, the http driver's rendered target config):
// the one escaper of a basic string.
#include <string>
#include <string_view>

namespace llmchaos {

// The content of a TOML basic string: '"' and '\' escaped, newline and tab as \n and \t, any other
// control character as \uXXXX. No quotes around it.
std::string toml_escaped(std::string_view s);
// The same in quotes: a TOML basic string.
std::string toml_string(std::string_view s);

}  // namespace llmchaos
