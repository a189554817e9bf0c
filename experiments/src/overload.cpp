#include "llmchaos/experiments/overload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <functional>
#include <queue>
#include <stdexcept>

#include "llmchaos/experiments/stats.hpp"

namespace llmchaos::experiments {

namespace {
constexpr double infinity = std::numeric_limits<double>::infinity();

// The CLI names of the gates (the study's words; client::GateKind calls the last one wait_budget).
constexpr std::array<std::pair<client::GateKind, std::string_view>, 3> gate_names = {
    {{client::GateKind::unbounded, "unbounded"},
     {client::GateKind::bounded, "bounded"},
     {client::GateKind::wait_budget, "admission"}}};

client::AdmissionSettings admission_settings(const GateSpec& gate, int slots) {
  client::AdmissionSettings s;
  s.kind = gate.kind;
  s.workers = slots;
  s.wait_cap_ms = gate.wait_cap_ms;
  s.max_queue = gate.queue_limit;
  s.wait_budget_ms = gate.budget_ms;
  return s;
}
}  // namespace

std::string GateSpec::label() const {
  switch (kind) {
    case client::GateKind::unbounded:
      return fmt::format("unbounded:{:g}", wait_cap_ms);
    case client::GateKind::bounded:
      return fmt::format("bounded:{}", queue_limit);
    case client::GateKind::wait_budget:
      return fmt::format("admission:{:g}", budget_ms);
  }
  return "?";
}

GateSpec parse_gate(std::string_view text) {
  const auto colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument(fmt::format(
        "gate \"{}\": {} (expected unbounded:WAITCAP_MS, bounded:N or admission:BUDGET_MS)", text, why));
  };
  GateSpec gate;
  const auto* entry =
      std::find_if(gate_names.begin(), gate_names.end(), [&](const auto& e) { return e.second == name; });
  if (entry == gate_names.end()) throw bad(fmt::format("unknown gate \"{}\"", name));
  if (colon == std::string_view::npos || colon + 1 == text.size()) throw bad("missing the value after ':'");
  const std::string_view value = text.substr(colon + 1);
  double number = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (ec != std::errc{} || ptr != value.data() + value.size() || !std::isfinite(number) || number < 0)
    throw bad(fmt::format("\"{}\" is not a number >= 0", value));
  gate.kind = entry->first;
  switch (gate.kind) {
    case client::GateKind::unbounded:
      gate.wait_cap_ms = number;
      break;
    case client::GateKind::bounded:
      if (number != std::floor(number) || number > 1e6) throw bad("the queue length must be a whole number");
      gate.queue_limit = static_cast<int>(number);
      break;
    case client::GateKind::wait_budget:
      gate.budget_ms = number;
      break;
  }
  return gate;
}

int OverloadSettings::model_slots() const {
  return std::max(1, static_cast<int>(std::lround(capacity_per_sec * service_ms / 1000.0)));
}

std::vector<double> arrival_times(double rate_per_sec, double duration_ms, ArrivalProcess process, Rng& rng) {
  std::vector<double> out;
  if (!(rate_per_sec > 0) || !(duration_ms > 0)) return out;
  const double gap_ms = 1000.0 / rate_per_sec;
  out.reserve(static_cast<std::size_t>(duration_ms / gap_ms * 1.2) + 16);
  if (process == ArrivalProcess::constant) {
    for (std::size_t i = 0;; ++i) {
      const double t = static_cast<double>(i) * gap_ms;
      if (t >= duration_ms) break;
      out.push_back(t);
    }
    return out;
  }
  // Poisson: exponential gaps, mean gap_ms.
  for (double t = -gap_ms * std::log(1.0 - rng.uniform()); t < duration_ms;
       t += -gap_ms * std::log(1.0 - rng.uniform()))
    out.push_back(t);
  return out;
}

std::vector<double> arrivals_for(const OverloadSettings& settings, double load) {
  Rng rng(settings.seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(std::llround(load * 1000)));
  return arrival_times(load * settings.capacity_per_sec, settings.duration_ms, settings.arrivals, rng);
}

ServiceCore::ServiceCore(const GateSpec& gate, const OverloadSettings& settings)
    : gate_(admission_settings(gate, settings.model_slots())),
      service_ms_(settings.service_ms),
      workers_(settings.workers),
      slots_(settings.model_slots()) {
  if (workers_ < 1) throw std::invalid_argument("overload: workers must be >= 1");
}

ServiceCore::ArrivalResult ServiceCore::arrive(std::size_t id, double now_ms) {
  if (workers_busy_ >= workers_) return {Fate::never_accepted, false};
  const auto decision = gate_.decide(static_cast<int>(queue_.size()), slots_busy_, service_ms_, now_ms);
  if (decision.verdict == client::AdmissionVerdict::reject_degrade) return {Fate::degraded, false};
  ++workers_busy_;
  if (queue_.empty() && slots_busy_ < slots_) {
    ++slots_busy_;
    return {Fate::pending, true};
  }
  queue_.push_back({id, now_ms, decision.give_up_at_ms});
  return {Fate::pending, false};
}

std::vector<std::size_t> ServiceCore::finish(double now_ms, std::vector<std::size_t>& gave_up) {
  if (slots_busy_ > 0) --slots_busy_;
  if (workers_busy_ > 0) --workers_busy_;
  std::vector<std::size_t> start;
  while (slots_busy_ < slots_ && !queue_.empty()) {
    const Waiting w = queue_.front();
    queue_.pop_front();
    if (gate_.on_dequeue(w.enqueued_ms, now_ms).verdict == client::AdmissionVerdict::reject_degrade) {
      --workers_busy_;
      gave_up.push_back(w.id);
      continue;
    }
    ++slots_busy_;
    start.push_back(w.id);
  }
  return start;
}

std::vector<std::size_t> ServiceCore::expire(double now_ms) {
  // Give-up times grow with the enqueue order (same cap for all), so the expired ones are at the front.
  std::vector<std::size_t> out;
  while (!queue_.empty() && queue_.front().give_up_at_ms <= now_ms) {
    out.push_back(queue_.front().id);
    queue_.pop_front();
    --workers_busy_;
  }
  return out;
}

double ServiceCore::next_expiry_ms() const {
  return queue_.empty() ? infinity : queue_.front().give_up_at_ms;
}

OverloadRow summarize_overload(const GateSpec& gate, double load, double duration_ms,
                               const std::vector<Fate>& fates, const std::vector<double>& served_latency_ms) {
  OverloadRow row;
  row.gate = gate.label();
  row.load = load;
  row.offered = fates.size();
  for (const Fate f : fates) {
    switch (f) {
      case Fate::served:
        ++row.served;
        break;
      case Fate::degraded:
        ++row.degraded;
        break;
      case Fate::gave_up:
        ++row.gave_up;
        ++row.degraded;  // the default answer, after the wait cap
        break;
      case Fate::never_accepted:
        ++row.never_accepted;
        break;
      case Fate::model_error:
        ++row.model_errors;
        break;
      case Fate::pending:
        break;
    }
  }
  row.accepted = row.offered - row.never_accepted;
  const double seconds = duration_ms / 1000.0;
  row.offered_per_sec = static_cast<double>(row.offered) / seconds;
  row.achieved_per_sec = static_cast<double>(row.accepted) / seconds;
  row.coverage = row.accepted == 0 ? 0 : static_cast<double>(row.served) / static_cast<double>(row.accepted);
  row.biased = static_cast<double>(row.accepted) < 0.95 * static_cast<double>(row.offered);
  std::vector<double> latencies = served_latency_ms;
  constexpr std::array<double, 3> percents = {50, 95, 99};
  const auto p = percentiles(latencies, percents);
  row.p50_ms = p[0];
  row.p95_ms = p[1];
  row.p99_ms = p[2];
  return row;
}

OverloadRow run_overload(const GateSpec& gate, const OverloadSettings& settings, double load,
                         const std::vector<double>& arrivals, ModelBackend& backend) {
  ServiceCore core(gate, settings);
  Clock& clock = backend.clock();
  const double origin = clock.now_ms();
  const std::size_t n = arrivals.size();
  std::vector<Fate> fates(n, Fate::pending);
  std::vector<double> served_latency;
  served_latency.reserve(n);
  std::vector<std::size_t> gave_up;
  std::size_t next = 0, in_flight = 0;
  for (;;) {
    const double now = clock.now_ms() - origin;
    // Late arrivals (live: the loop was busy) are still measured from their intended time.
    for (; next < n && arrivals[next] <= now; ++next) {
      const auto r = core.arrive(next, now);
      fates[next] = r.fate;
      if (r.start_now) {
        backend.start(next);
        ++in_flight;
      }
    }
    for (const std::size_t id : core.expire(now)) fates[id] = Fate::gave_up;
    const double deadline = std::min(next < n ? arrivals[next] : infinity, core.next_expiry_ms());
    if (deadline == infinity && in_flight == 0) break;
    const auto done = backend.wait(deadline == infinity ? infinity : deadline + origin);
    if (!done) continue;
    --in_flight;
    const double end = clock.now_ms() - origin;
    if (done->ok) {
      fates[done->id] = Fate::served;
      served_latency.push_back(end - arrivals[done->id]);
    } else {
      fates[done->id] = Fate::model_error;
    }
    gave_up.clear();
    for (const std::size_t id : core.finish(end, gave_up)) {
      backend.start(id);
      ++in_flight;
    }
    for (const std::size_t id : gave_up) fates[id] = Fate::gave_up;
  }
  return summarize_overload(gate, load, settings.duration_ms, fates, served_latency);
}

namespace {
// Model calls of exactly service_ms on a virtual clock; ties finish in start order.
class VirtualModel final : public ModelBackend {
 public:
  explicit VirtualModel(double service_ms) : service_ms_(service_ms) {}
  Clock& clock() override { return clock_; }
  void start(std::size_t id) override { calls_.push({clock_.now_ms() + service_ms_, seq_++, id}); }
  std::optional<Completion> wait(double deadline_ms) override {
    if (!calls_.empty() && calls_.top().end_ms <= deadline_ms) {
      const Call c = calls_.top();
      calls_.pop();
      clock_.set(c.end_ms);
      return Completion{c.id, true};
    }
    if (deadline_ms != infinity) clock_.set(deadline_ms);
    return std::nullopt;
  }

 private:
  struct Call {
    double end_ms;
    std::uint64_t seq;
    std::size_t id;
    bool operator>(const Call& o) const { return end_ms != o.end_ms ? end_ms > o.end_ms : seq > o.seq; }
  };
  ManualClock clock_;
  double service_ms_;
  std::uint64_t seq_ = 0;
  std::priority_queue<Call, std::vector<Call>, std::greater<Call>> calls_;
};
}  // namespace

OverloadRow simulate_overload(const GateSpec& gate, const OverloadSettings& settings, double load) {
  VirtualModel model(settings.service_ms);
  return run_overload(gate, settings, load, arrivals_for(settings, load), model);
}

}  // namespace llmchaos::experiments
