// The one table of drivers. To add one: write drivers/NAME.cpp returning its Driver, declare it in
// drivers.hpp, list it here (README.md beside this file).
#include <array>

#include "drivers.hpp"

namespace llmchaos::harness {

std::span<const Driver> drivers() {
  static const std::array table{driver_units::inproc(), driver_units::exec(), driver_units::http()};
  return table;
}

const Driver* find_driver(std::string_view name) {
  for (const auto& d : drivers())
    if (d.name == name) return &d;
  return nullptr;
}

std::string driver_names() {
  std::string out;
  for (const auto& d : drivers()) out += (out.empty() ? "" : ", ") + std::string(d.name);
  return out;
}

}  // namespace llmchaos::harness
