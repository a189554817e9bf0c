#pragma once
// The virtual-time transport (`llmchaos run --virtual-time`, `llmchaos explore`): the client stack's
// attempts go to the SAME mock engine the Beast server uses (through its router: Engine::begin -> Plan,
// Engine::finish), and the plan is played under the clock the executor passes in (a ManualClock, shared
// with the engine): latency, holds, resets, frames with their delays, stalls, cuts and missing
// terminators become clock advances and byte feeds, no sockets, no threads. The answer is read by the
// same client::ResponseReader (SSE parser + dialect codec) as the live transport.
//
// What the virtual wire does where the live one races (documented so the two stay comparable):
// - a delay (latency, hold, frame gap, stall) at least as long as the attempt timeout: the client's
//   timeout fires first (the mock then sees the client close);
// - after the client hangs up mid-stream (an error or malformed event), the mock notices at once: no
//   frame after that one is written (live, frames already in flight may still leave; cases that care
//   slow the later events, see cases/README.md).
#include <memory>

#include "llmchaos/client/transport.hpp"
#include "llmchaos/harness/driver.hpp"
#include "llmchaos/mockprovider/engine.hpp"

namespace llmchaos::harness {

class VirtualTransport final : public client::Transport {
 public:
  // `engine` must use the clock the executor passes to send() (a ManualClock) and outlive this.
  explicit VirtualTransport(mock::Engine& engine);
  ~VirtualTransport() override;

  client::AttemptResult send(const client::AttemptRequest& req, Clock& clock,
                             const std::function<void(std::string_view token)>& on_token) override;
  bool side_effect(const client::Endpoint& endpoint, const std::string& operation_id,
                   const std::string& tool) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A TransportFactory that plays each case's plans from `CaseEnv::engine`.
TransportFactory virtual_transport();

}  // namespace llmchaos::harness
