#include "llmchaos/client/decision.hpp"

#include <cmath>
#include <iterator>

#include <fmt/format.h>

namespace llmchaos::client {
namespace {

bool retryable_owner(Owner o) { return o == Owner::transient || o == Owner::rate; }
// Contract joins rule 5: a route that passed the equivalence contract may serve what this one broke.
bool fallback_owner(Owner o) { return retryable_owner(o) || o == Owner::quota || o == Owner::contract; }

// Why a retry of the current route does not apply (empty: it does). Order = SPEC 3 rule 4's wording.
std::string_view retry_blocker(const DecisionInput& in, double retry_after) {
  if (!retryable_owner(in.failure.owner)) return "owner";
  if (in.attempts_left <= 0) return "no attempts left";
  if (in.time_left_ms < retry_after + in.current.expected_latency_ms) return "retry-after + latency > time left";
  if (in.cost_left_usd < in.current.cost_usd) return "cost > cost left";
  if (in.current_breaker_open || !in.current.healthy) return "breaker open";
  return {};
}

// Why a fallback candidate does not apply (empty: it does). Retry-after is the primary's: not here.
std::string_view fallback_blocker(const DecisionInput& in, const RouteOption& r) {
  if (r.route == in.current.route) return "same route";
  if (!r.approved) return "not approved";
  if (!r.healthy) return "unhealthy";
  if (in.attempts_left <= 0) return "no attempts left";
  if (in.time_left_ms < r.expected_latency_ms) return "latency > time left";
  if (in.cost_left_usd < r.cost_usd) return "cost > cost left";
  return {};
}

// Builds "key=value key=value ..." by appending (no format-string parsing: decide is on the hot path,
// bench/decide). Whole numbers print as integers, others with 6 significant digits.
class Inputs {
 public:
  explicit Inputs(std::string& out) : out_(out) { out_.reserve(256); }
  Inputs& operator()(std::string_view key, std::string_view value) {
    start(key);
    out_ += value;
    return *this;
  }
  // Named apart: a string literal would otherwise convert to bool before string_view.
  Inputs& flag(std::string_view key, bool value) { return (*this)(key, std::string_view(value ? "true" : "false")); }
  Inputs& operator()(std::string_view key, double value) {
    start(key);
    number(value);
    return *this;
  }
  Inputs& operator()(std::string_view key, int value) { return (*this)(key, static_cast<double>(value)); }
  void raw(std::string_view text) { out_ += text; }
  void number(double v) {
    // Budgets are whole ms or small dollar amounts: print through integers (fast, and 0.012 - 0.004
    // reads 0.008, not 0.008000000000000002); anything else through fmt.
    if (v == std::trunc(v) && std::fabs(v) < 1e15) {
      integer(static_cast<long long>(v));
    } else if (std::fabs(v) < 1e9) {
      long long micros = std::llround(std::fabs(v) * 1e6);
      if (v < 0) out_ += '-';
      integer(micros / 1'000'000);
      int frac = static_cast<int>(micros % 1'000'000), digits = 6;
      for (; digits > 0 && frac % 10 == 0; --digits) frac /= 10;
      if (digits > 0) {
        char buf[7];
        for (int k = digits - 1; k >= 0; --k, frac /= 10) buf[k] = static_cast<char>('0' + frac % 10);
        out_ += '.';
        out_.append(buf, static_cast<std::size_t>(digits));
      }
    } else {
      fmt::format_to(std::back_inserter(out_), "{}", v);  // huge, inf, nan
    }
  }
  void integer(long long v) {
    fmt::format_int digits(v);
    out_.append(digits.data(), digits.size());
  }
 private:
  void start(std::string_view key) {
    if (!out_.empty()) out_ += ' ';
    out_ += key;
    out_ += '=';
  }
  std::string& out_;
};

}  // namespace

Decision decide(const DecisionInput& in) {
  Decision d;
  Inputs inputs(d.inputs);
  const Owner owner = in.failure.owner;
  const CommitState commit = in.failure.commit;
  auto done = [&](Action action, int rule, std::string_view text) {
    d.action = action;
    d.rule = rule;
    d.rule_text = text;
    return d;
  };

  inputs("owner", to_string(owner))("commit", to_string(commit));
  if (owner == Owner::none) return done(Action::none, 0, "0: not a failure");

  // 1. The request or the credentials are wrong; a refusal must not be routed to a laxer model.
  if (owner == Owner::request || owner == Owner::auth || owner == Owner::policy)
    return done(Action::fail_closed, 1, "1: owner is request/auth/policy: fix the request or the credentials");

  // 2. Work may already have happened: reconcile outside automatic branching.
  if (commit == CommitState::committed || commit == CommitState::unknown)
    return done(Action::fail_closed, 2, "2: commit state is committed/unknown: reconcile, do not replay");

  // 3. Nobody knows whose fault it is: wait for it rather than hammer or switch.
  if (owner == Owner::unknown) {
    inputs.flag("queue_allowed", in.queue_allowed);
    return in.queue_allowed ? done(Action::queue, 3, "3: owner unknown: queue")
                            : done(Action::fail_closed, 3, "3: owner unknown and queueing not allowed: fail closed");
  }

  // 4. Retry the same route.
  const double retry_after = in.failure.retry_after_ms.value_or(0);
  inputs("attempts_left", in.attempts_left)("time_left_ms", in.time_left_ms)("cost_left_usd", in.cost_left_usd)(
      "retry_after_ms", retry_after)("current", in.current.route);
  inputs.raw("(expected_ms=");
  inputs.number(in.current.expected_latency_ms);
  inputs.raw(" cost_usd=");
  inputs.number(in.current.cost_usd);
  inputs.raw(in.current_breaker_open || !in.current.healthy ? " breaker=open)" : " breaker=closed)");
  const auto retry_no = retry_blocker(in, retry_after);
  if (retry_no.empty()) {
    d.target_route = in.current.route;
    d.wait_ms = retry_after;
    return done(Action::retry, 4, "4: transient/rate failure, retry fits the budget, breaker closed");
  }
  if (retryable_owner(owner)) {
    inputs("retry", "no(");
    inputs.raw(retry_no);
    inputs.raw(")");
  }

  // 5. Fall back to the first approved, healthy route that fits the budget.
  if (fallback_owner(owner)) {
    inputs("fallbacks", "[");
    bool first = true;
    for (const auto& r : in.fallbacks) {
      const auto no = fallback_blocker(in, r);
      if (!first) inputs.raw(",");
      first = false;
      inputs.raw(r.route);
      inputs.raw(":");
      inputs.raw(no.empty() ? "fits" : no);
      if (no.empty()) {
        inputs.raw("]");
        d.target_route = r.route;
        return done(Action::fallback, 5, "5: fallback to the first approved, healthy route that fits the budget");
      }
    }
    inputs.raw("]");
  }

  // 6. Wait in the queue. A contract break is skipped: a redelivery reaches the route that broke it.
  inputs.flag("queue_allowed", in.queue_allowed).flag("degrade_allowed", in.degrade_allowed);
  if (in.queue_allowed && owner != Owner::contract)
    return done(Action::queue, 6, "6: no retry or fallback fits: queue");

  // 7. The last outlet.
  return in.degrade_allowed ? done(Action::degrade, 7, "7: no retry, fallback or queue: degrade")
                            : done(Action::fail_closed, 7, "7: no retry, fallback or queue, degrade not approved: fail closed");
}

}  // namespace llmchaos::client
