#pragma once
// A fault kind is its params (fields of Step) plus one pure function from the attempt to a Plan.
// One fault per file under mockprovider/faults/, listed in one table (faults/registry.cpp).
// The engine decides whether a fault applies (route, attempt, time window); the fault says how.
#include <cstdint>
#include <span>
#include <string_view>

#include "llmchaos/core/rng.hpp"
#include "llmchaos/mockprovider/dialect.hpp"
#include "llmchaos/mockprovider/fault_traits.hpp"
#include "llmchaos/mockprovider/plan.hpp"
#include "llmchaos/mockprovider/script.hpp"

namespace llmchaos::mock {

struct FaultInput {
  const Step& step;
  const ChatRequest& request;
  const DialectSpec& dialect;
  const Answer& answer;         // the healthy answer of this attempt (canonical text, model, ids)
  std::string_view request_id;  // echoed in a header (and in Anthropic error bodies)
  double time_scale = 1;        // every scripted delay is multiplied by it
  Rng& rng;                     // seeded by the engine (slow's latency draw)
  double unix_now_ms = 0;       // the wall clock (Unix ms) for HTTP-date and RFC 3339 retry hints
  // The answer's bytes come from elsewhere (`llmchaos proxy`'s upstream, a cassette): a 2xx plain answer is
  // forwarded, so its body is not rendered (its frames are: a stream's plan is the edit of the real one,
  // but for a fault that keeps the healthy stream, FaultTraits::keeps_healthy_stream).
  bool body_forwarded = false;
};

using FaultFn = Plan (*)(const FaultInput& in);

struct FaultSpec {
  FaultKind kind;
  std::span<const std::string_view> params;  // step keys specific to this fault (beyond the common ones)
  FaultFn plan;
  std::string_view summary;                  // one line, for docs and `--help`
  FaultTraits traits{};                      // what the harness and explore switch on (fault_traits.hpp)
  ErrorKind error_body = ErrorKind::server;  // the error body it renders (rate_limit, quota, payment, ...)
};

// Step keys every fault accepts.
inline constexpr std::string_view common_step_keys[] = {
    "fault",          "times", "until_ms", "latency_ms",     "text",
    "inter_event_ms", "model", "status",   "retry_after_ms", "retry_after_form"};

// The healthy answer of an attempt: the step's text, else the route's `text`; the step's model, else
// the request's, else "mock-model". Tool rule: when the request offers tools and its last message is not
// a tool result, the answer is a call of the first tool offered (arguments {}); after the tool result it
// is the text.
Answer healthy_answer(const RouteScript& route, const Step& step, const ChatRequest& request,
                      std::uint64_t seq);

// The error body a fault that takes `body` renders (rate_429, quota_429, payment_402); others: server.
ErrorKind fault_error_kind(FaultKind kind);

// The one table of fault kinds, in FaultKind order (registry.cpp checks its size against the names).
std::span<const FaultSpec* const> all_faults();
const FaultSpec& fault_spec(FaultKind kind);

}  // namespace llmchaos::mock
