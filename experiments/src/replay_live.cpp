#include <stdexcept>

#include "llmchaos/experiments/replay_live.hpp"

namespace llmchaos::experiments {

LiveReplayResult replay_live(std::span<const TraceRow>, std::span<const PolicyConfig>, const LiveReplayOptions&) {
  throw std::runtime_error("live replay: not built yet");
}

}  // namespace llmchaos::experiments
