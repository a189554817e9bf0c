#pragma once
// Injected randomness: a small seeded generator (splitmix64-seeded xoshiro256**), identical on every
// platform so a seed in a report reproduces the run.
#include <cstdint>
#include <string_view>

namespace llmchaos {

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0);
  std::uint64_t next();
  // Uniform in [0, 1).
  double uniform();
  // Uniform integer in [lo, hi] (inclusive).
  std::int64_t between(std::int64_t lo, std::int64_t hi);
  // An independent stream derived from this one (e.g. one per case).
  Rng fork();

 private:
  std::uint64_t s_[4];
};

// A seed of its own for a named part of a run (a case, a mock namespace) from the run's seed: the same
// (seed, name) always gives the same seed, whatever else runs beside it (FNV-1a of the name, xor seed).
std::uint64_t derive_seed(std::uint64_t seed, std::string_view name);

}  // namespace llmchaos
