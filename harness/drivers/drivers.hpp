#pragma once
// The driver units; registry.cpp lists them in the one table.
#include "llmchaos/harness/driver.hpp"

namespace llmchaos::harness::driver_units {

Driver inproc();
Driver exec();
Driver http();

}  // namespace llmchaos::harness::driver_units
