#pragma once
// Injected randomness: a small seeded generator (splitmix64-seeded xoshiro256**), identical on every
// platform so a seed in a report reproduces the run.
#include <cstdint>

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

}  // namespace llmchaos
