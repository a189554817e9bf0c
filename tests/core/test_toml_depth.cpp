// The depth bound in front of toml++ (issue 13): a 100,000-part dotted key segfaulted every loader.
#include <catch2/catch.hpp>
#include <string>

#include "llmchaos/core/toml_reader.hpp"

using namespace llmchaos;

namespace {
std::string repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// The error parse_toml throws for `text`, "" when it parses.
std::string error_of(const std::string& text) {
  try {
    (void)parse_toml(text, "deep.toml");
    return "";
  } catch (const SpecError& e) {
    return e.what();
  }
}
}  // namespace

TEST_CASE("a dotted key deeper than the limit is a file:line:col error, not a stack overflow",
          "[core][toml]") {
  const std::string limit = std::to_string(toml_depth_limit);
  // The repro: a table header of 100,000 parts (it crashed from about 35,000).
  CHECK(error_of("name = \"k\"\nexpect = \"none\"\n[" + repeat("a.", 100000) + "b]\n[route.primary]\n") ==
        "deep.toml:3:2: key nested too deep (limit " + limit + ")");
  // A dotted value key, at the top level and under a header.
  CHECK(error_of("x = 1\n  " + repeat("a.", 100000) + "b = 1\n") ==
        "deep.toml:2:3: key nested too deep (limit " + limit + ")");
  CHECK(error_of("[t.u]\n" + repeat("a.", toml_depth_limit - 2) + "b = 1\n").find("key nested too deep") !=
        std::string::npos);
  // Inline tables and arrays count too, and the keys inside them.
  CHECK(error_of("a = " + repeat("{b=", 100000) + "1" + repeat("}", 100000) + "\n")
            .find("nested too deep (limit " + limit + ")") != std::string::npos);
  CHECK(error_of("a = " + repeat("[", 100000) + repeat("]", 100000) + "\n") ==
        "deep.toml:1:" + std::to_string(4 + toml_depth_limit) + ": value nested too deep (limit " + limit +
            ")");
  CHECK(error_of("a = [\n  [\n" + repeat("[", 100) + "\n").find("deep.toml:3:") == 0);
}

TEST_CASE("the depth bound accepts every ordinary shape at and below the limit", "[core][toml]") {
  // Exactly the limit: a header of limit parts; a key of limit parts; nesting of limit levels.
  CHECK(error_of("[" + repeat("a.", toml_depth_limit - 1) + "b]\n") == "");
  CHECK(error_of(repeat("a.", toml_depth_limit - 1) + "b = 1\n") == "");
  CHECK(error_of("a = " + repeat("[", toml_depth_limit - 1) + repeat("]", toml_depth_limit - 1) + "\n") ==
        "");
  // Dots and brackets inside strings, comments and numbers are not levels.
  const std::string quoted = "\"" + repeat("a.[{", 1000) + "\"";
  CHECK(error_of("a = " + quoted + "\nb = '" + repeat(".[", 1000) + "'\n") == "");
  CHECK(error_of("a = \"\"\"\n" + repeat("x.[{\n", 1000) + "\"\"\"\nb = '''" + repeat("..", 1000) +
                 "'''\n") == "");
  CHECK(error_of("# " + repeat("a.[", 1000) + "\na = 1.5 # " + repeat("[", 1000) + "\n") == "");
  CHECK(error_of("\"" + repeat("a.", 1000) + "\" = 1\n[\"" + repeat("x.", 1000) + "\".y]\nz = 2\n") == "");
  CHECK(error_of("a = \"esc \\\" " + repeat("[", 1000) + "\"\n") == "");
  CHECK(error_of("a = \"\"\"x\"\"\"\"\nb = 1\n") == "");  // a multi-line string ending in a quote
  CHECK(error_of("pts = [ { x = 1.5, y.z = 2 }, { x = 3 } ]\n[[arr.of]]\nk = [1, [2, [3]]]\n") == "");
}
