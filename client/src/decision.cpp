#include "llmchaos/client/decision.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>

namespace llmchaos::client {
namespace {

bool retryable_owner(Owner o) {
  return o == Owner::transient || o == Owner::rate;
}
// SPEC 3 rule 5 names transient, rate and quota only: a contract break (schema_missing) is not
// routed elsewhere automatically; it queues, degrades or fails closed (rules 6-7).
bool fallback_owner(Owner o) {
  return retryable_owner(o) || o == Owner::quota;
}

// Why a retry of the current route does not apply (empty: it does). Order = SPEC 3 rule 4's wording.
std::string_view retry_blocker(const DecisionInput& in, double retry_after) {
  if (!retryable_owner(in.failure.owner)) return "owner";
  if (in.attempts_left <= 0) return "no attempts left";
  if (in.time_left_ms < retry_after + in.current.expected_latency_ms)
    return "retry-after + latency > time left";
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

// Builds "key=value key=value ..." straight into the decision's inline text (decide is on the hot
// path, bench/decide: no format-string parsing, no allocation, no copy). Whole numbers print as
// integers, others with up to 6 decimals. An explanation longer than the limit is cut with "...".
class Inputs {
 public:
  static constexpr std::size_t limit = decision_inputs_limit;
  explicit Inputs(DecisionText& out) : out_(out), buf_(out.storage()) {}

  // Keys are literals: their length is known at compile time, so the copy is a few moves.
  template <std::size_t N>
  Inputs& operator()(const char (&key)[N], std::string_view value) {
    start(key);
    raw(value);
    return *this;
  }
  // Named apart: a string literal would otherwise convert to bool before string_view.
  template <std::size_t N>
  Inputs& flag(const char (&key)[N], bool value) {
    return (*this)(key, std::string_view(value ? "true" : "false"));
  }
  template <std::size_t N>
  Inputs& operator()(const char (&key)[N], double value) {
    start(key);
    number(value);
    return *this;
  }
  template <std::size_t N>
  Inputs& operator()(const char (&key)[N], int value) {
    start(key);
    integer(value);
    return *this;
  }
  __attribute__((always_inline)) void raw(std::string_view text) {
    if (text.size() > room()) {
      text = text.substr(0, room());
      cut_ = true;
    }
    copy(buf_ + n_, text.data(), text.size());
    n_ += text.size();
  }
  __attribute__((always_inline)) void raw(char c) {
    if (room() == 0) {
      cut_ = true;
      return;
    }
    buf_[n_++] = c;
  }
  void number(double v) {
    // Budgets are whole ms or small dollar amounts: print through integers (fast, and 0.012 - 0.004
    // reads 0.008, not 0.008000000000000002); anything else through fmt.
    const double a = std::fabs(v);
    if (!(a < 1e15)) {  // huge, inf, nan
      char tmp[32];
      auto end = fmt::format_to_n(tmp, sizeof tmp, "{}", v).out;
      raw(std::string_view(tmp, static_cast<std::size_t>(end - tmp)));
      return;
    }
    const auto whole = static_cast<long long>(v);
    if (static_cast<double>(whole) == v) return integer(whole);
    const auto micros = static_cast<long long>(a * 1e6 + 0.5);
    if (v < 0) raw('-');
    integer(micros / 1'000'000);
    const auto frac = static_cast<std::uint32_t>(micros % 1'000'000);
    if (frac == 0) return;
    if constexpr (std::endian::native == std::endian::little) {
      // The six decimals as six ASCII bytes of one word, two digits per table read (no bytes stored
      // one by one and read back as a word: that stalls), cut after the last one that is not 0.
      const std::uint64_t six = pair(frac / 10'000) | pair(frac / 100 % 100) << 16 | pair(frac % 100) << 32;
      const auto last = static_cast<std::size_t>(63 - __builtin_clzll(six ^ 0x303030303030ULL)) / 8;
      put(six << 8 | '.', last + 2);
    } else {
      char tmp[7] = {'.'};
      std::size_t shown = 0;
      for (std::uint32_t rest = frac, k = 6; k >= 1; --k, rest /= 10) {
        tmp[k] = static_cast<char>('0' + rest % 10);
        if (shown == 0 && rest % 10 != 0) shown = k;
      }
      raw(std::string_view(tmp, shown + 1));
    }
  }
  __attribute__((always_inline)) void integer(long long v) {
    // Digits written in place, two at a time (a budget is a short number: a general formatter costs
    // more); the length first, so they go straight to their spot. Near the end of the buffer, through
    // raw() (which cuts).
    unsigned long long u =
        v < 0 ? 0ULL - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
    std::size_t len = 1;
    for (unsigned long long bound = 10; len < 20 && u >= bound; bound *= 10) ++len;
    char tmp[24];
    const bool direct = room() >= len + 1;
    char* p = (direct ? buf_ + n_ : tmp) + len + (v < 0);
    char* const end = p;
    while (u >= 100) {
      const auto two = static_cast<unsigned>(u % 100) * 2;
      u /= 100;
      *--p = pairs[two + 1];
      *--p = pairs[two];
    }
    if (u >= 10) {
      *--p = pairs[u * 2 + 1];
      *--p = pairs[u * 2];
    } else {
      *--p = static_cast<char>('0' + u);
    }
    if (v < 0) *--p = '-';
    if (direct)
      n_ = static_cast<std::size_t>(end - buf_);
    else
      raw(std::string_view(p, static_cast<std::size_t>(end - p)));
  }
  // The text ends here: its length, and the mark of a cut.
  void finish() {
    if (cut_) {
      std::memcpy(buf_ + n_, "...", 3);
      n_ += 3;
    }
    out_.resize(n_);
  }

 private:
  std::size_t room() const { return limit - n_; }
  static constexpr char pairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  // The two ASCII digits of n < 100, the first in the low byte.
  static std::uint64_t pair(std::uint32_t n) {
    std::uint16_t two;
    std::memcpy(&two, pairs + 2 * n, 2);
    return two;
  }
  // The first `len` (<= 8) bytes of `word` (little-endian), with one 8-byte store when there is room.
  void put(std::uint64_t word, std::size_t len) {
    if (room() < 8) {
      char bytes[8];
      std::memcpy(bytes, &word, 8);
      return raw(std::string_view(bytes, len));
    }
    std::memcpy(buf_ + n_, &word, 8);  // the bytes past `len` are overwritten by what comes next
    n_ += len;
  }
  // The texts are mostly a few bytes (values, route names, separators): copied inline as two
  // overlapping fixed-size moves, without a library call each; longer ones through memcpy.
  __attribute__((always_inline)) static void copy(char* to, const char* from, std::size_t n) {
    if (n >= 8 && n <= 16) {
      std::memcpy(to, from, 8);
      std::memcpy(to + n - 8, from + n - 8, 8);
    } else if (n >= 4 && n < 8) {
      std::memcpy(to, from, 4);
      std::memcpy(to + n - 4, from + n - 4, 4);
    } else if (n > 0 && n < 4) {
      to[0] = from[0];
      to[n / 2] = from[n / 2];
      to[n - 1] = from[n - 1];
    } else if (n > 16) {
      std::memcpy(to, from, n);
    }
  }
  template <std::size_t N>
  void start(const char (&key)[N]) {
    if (N + 1 > room()) return raw(std::string_view(key, N - 1));  // cut: raw marks it
    if (n_ > 0) buf_[n_++] = ' ';
    std::memcpy(buf_ + n_, key, N - 1);
    n_ += N - 1;
    buf_[n_++] = '=';
  }
  DecisionText& out_;
  char* const buf_;  // out_'s bytes: `limit` for the text, three more for "..."
  std::size_t n_ = 0;
  bool cut_ = false;
};

// The rules; writes what they looked at to `inputs` and the verdict to `d`.
void settle(Decision& d, Action action, int rule, std::string_view text) {
  d.action = action;
  d.rule = rule;
  d.rule_text = text;
}

// 0. A cut background response goes on where it broke: the provider's resume duplicates nothing.
bool rule_resume(const DecisionInput& in, Inputs& inputs, Decision& d) {
  if (!in.resumable_cut) return false;
  inputs.flag("resumable_cut", true)("attempts_left", in.attempts_left)("time_left_ms", in.time_left_ms);
  inputs.raw(" (expected_ms=");
  inputs.number(in.current.expected_latency_ms);
  inputs.raw(')');
  // A resume is an attempt of the budget like any other, its price included (the gate before every
  // attempt checks the cost left too).
  const bool attempt = in.attempts_left > 0, time = in.time_left_ms >= in.current.expected_latency_ms,
             cost = in.cost_left_usd >= in.current.cost_usd;
  if (attempt && time && cost) {
    d.target_route = in.current.route;
    settle(d, Action::resume, 0, "0: a cut background response with a known id and sequence: resume");
    return true;
  }
  inputs("resume", !attempt ? "no(no attempts left)"
                   : !time  ? "no(latency > time left)"
                            : "no(cost > cost left)");
  return false;
}

// 4. Retry the same route.
bool rule_retry(const DecisionInput& in, Inputs& inputs, Decision& d) {
  const double retry_after = in.failure.retry_after_ms.value_or(0);
  inputs("attempts_left", in.attempts_left)("time_left_ms", in.time_left_ms)(
      "cost_left_usd", in.cost_left_usd)("retry_after_ms", retry_after)("current", in.current.route);
  inputs.raw("(expected_ms=");
  inputs.number(in.current.expected_latency_ms);
  inputs.raw(" cost_usd=");
  inputs.number(in.current.cost_usd);
  inputs.raw(in.current_breaker_open || !in.current.healthy ? " breaker=open)" : " breaker=closed)");
  const auto retry_no = retry_blocker(in, retry_after);
  if (retry_no.empty()) {
    d.target_route = in.current.route;
    d.wait_ms = retry_after;
    settle(d, Action::retry, 4, "4: transient/rate failure, retry fits the budget, breaker closed");
    return true;
  }
  if (retryable_owner(in.failure.owner)) {
    inputs("retry", "no(");
    inputs.raw(retry_no);
    inputs.raw(')');
  }
  return false;
}

// 5. Fall back to the first approved, healthy route that fits the budget.
bool rule_fallback(const DecisionInput& in, Inputs& inputs, Decision& d) {
  if (!fallback_owner(in.failure.owner)) return false;
  inputs("fallbacks", "[");
  bool first = true;
  for (const auto& r : in.fallbacks) {
    const auto no = fallback_blocker(in, r);
    if (!first) inputs.raw(',');
    first = false;
    inputs.raw(r.route);
    inputs.raw(':');
    inputs.raw(no.empty() ? "fits" : no);
    if (no.empty()) {
      inputs.raw(']');
      d.target_route = r.route;
      settle(d, Action::fallback, 5, "5: fallback to the first approved, healthy route that fits the budget");
      return true;
    }
  }
  inputs.raw(']');
  return false;
}

// 7. A full queue is no outlet (rules 3 and 6 would queue): the last one the policy allows.
void rule_queue_full(const DecisionInput& in, Decision& d) {
  in.degrade_allowed
      ? settle(d, Action::degrade, 7, "7: the queue is full; degrade approved")
      : settle(d, Action::fail_closed, 7, "7: the queue is full; degrade not approved -> fail_closed");
}

void apply_rules(const DecisionInput& in, Inputs& inputs, Decision& d) {
  const Owner owner = in.failure.owner;
  const CommitState commit = in.failure.commit;
  auto done = [&](Action action, int rule, std::string_view text) { settle(d, action, rule, text); };

  inputs("owner", to_string(owner))("commit", to_string(commit));
  if (owner == Owner::none) return done(Action::none, 0, "0: not a failure");
  if (rule_resume(in, inputs, d)) return;

  // 1. The request or the credentials are wrong; a refusal must not be routed to a laxer model.
  if (owner == Owner::request || owner == Owner::auth || owner == Owner::policy)
    return done(Action::fail_closed, 1,
                "1: owner is request/auth/policy: fix the request or the credentials");

  // 2. Work may already have happened: reconcile outside automatic branching.
  if (commit == CommitState::committed || commit == CommitState::unknown)
    return done(Action::fail_closed, 2, "2: commit state is committed/unknown: reconcile, do not replay");

  // 3. Nobody knows whose fault it is: wait for it rather than hammer or switch.
  if (owner == Owner::unknown) {
    inputs.flag("queue_allowed", in.queue_allowed);
    if (in.queue_allowed && in.queue_full) return rule_queue_full(in, d);
    return in.queue_allowed
               ? done(Action::queue, 3, "3: owner unknown: queue")
               : done(Action::fail_closed, 3, "3: owner unknown and queueing not allowed: fail closed");
  }

  if (rule_retry(in, inputs, d) || rule_fallback(in, inputs, d)) return;

  // 6. Wait in the queue (any owner that reaches this rule, as SPEC 3 orders it).
  inputs.flag("queue_allowed", in.queue_allowed).flag("degrade_allowed", in.degrade_allowed);
  if (in.queue_allowed && in.queue_full) return rule_queue_full(in, d);
  if (in.queue_allowed) return done(Action::queue, 6, "6: no retry or fallback fits: queue");

  // 7. The last outlet.
  return in.degrade_allowed ? done(Action::degrade, 7, "7: no retry, fallback or queue: degrade")
                            : done(Action::fail_closed, 7,
                                   "7: no retry, fallback or queue, degrade not approved: fail closed");
}

}  // namespace

void decide_into(const DecisionInput& in, Decision& d) {
  d.action = Action::fail_closed;
  d.rule = 0;
  d.rule_text = {};
  d.target_route.clear();
  d.wait_ms = 0;
  Inputs inputs(d.inputs);
  apply_rules(in, inputs, d);
  inputs.finish();
}

Decision decide(const DecisionInput& in) {
  Decision d;
  decide_into(in, d);
  return d;
}

}  // namespace llmchaos::client
