#pragma once
// CLI validator for numeric options: a finite number within bounds printed readably ("[0.001, 1000]"),
// else a usage error (exit 2). CLI11's own checks let nan through (it compares false with every bound)
// and print 1e308 with all its digits.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <string>

namespace llmchaos::app {

// Accepts min <= v <= max (min < v when `min_open`).
inline CLI::Validator finite_between(double min, double max, bool min_open = false) {
  const std::string range = fmt::format("{}{}, {}]", min_open ? "(" : "[", min, max);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0') return fmt::format("\"{}\" is not a number", text);
        if (!std::isfinite(v)) return fmt::format("must be a finite number in {} (got {})", range, text);
        if (v < min || v > max || (min_open && v == min))
          return fmt::format("{} is out of range {}", v, range);
        return {};
      },
      "in " + range);
}

}  // namespace llmchaos::app
