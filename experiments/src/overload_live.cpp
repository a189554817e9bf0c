#include "llmchaos/experiments/overload_live.hpp"

#include <fmt/format.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <tuple>

#include "llmchaos/client/http_transport.hpp"
#include "llmchaos/mockprovider/server.hpp"

namespace llmchaos::experiments {

namespace {

// The answer's text is not needed, only how the attempt ended.
const std::function<void(std::string_view)> ignore_tokens = [](std::string_view) {};

constexpr const char* model_ns = "overload";
constexpr const char* model_route = "model";

// The model: every call answers after service_ms, for as many calls as the run makes.
mock::Script model_script(double service_ms) {
  mock::RouteScript route;
  route.name = model_route;
  route.dialect = Dialect::openai;
  mock::Step step;
  step.fault = FaultKind::ok;
  step.latency_ms = service_ms;
  step.times = INT_MAX;
  step.times_given = true;
  route.steps.push_back(step);
  mock::Script script;
  script.routes.emplace(model_route, std::move(route));
  return script;
}

// Model calls over real sockets: `slots` threads take request ids from a queue, make one HTTP call
// each and post the completion back to the event loop.
class LiveModel final : public ModelBackend {
 public:
  LiveModel(const std::string& base_url, const OverloadSettings& settings)
      : transport_(transport_options(settings.model_slots())) {
    request_.endpoint = {model_route, Dialect::openai, base_url + "/" + model_ns + "/" + model_route};
    request_.timeout_ms = settings.service_ms * 20 + 2000;  // a hung call ends as an error, never a hang
    for (int i = 0; i < settings.model_slots(); ++i) callers_.emplace_back([this] { call_loop(); });
  }
  ~LiveModel() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    work_ready_.notify_all();
    for (auto& t : callers_) t.join();
  }

  Clock& clock() override { return clock_; }

  void start(std::size_t id) override {
    {
      std::lock_guard lock(mutex_);
      work_.push_back(id);
      ++in_flight_;
    }
    work_ready_.notify_one();
  }

  std::optional<Completion> wait(double deadline_ms) override {
    std::unique_lock lock(mutex_);
    const auto ready = [&] { return !done_.empty(); };
    if (std::isinf(deadline_ms)) {
      if (in_flight_ == 0 && done_.empty()) return std::nullopt;
      done_ready_.wait(lock, ready);
    } else {
      const auto wait_for =
          std::chrono::duration<double, std::milli>(std::max(0.0, deadline_ms - clock_.now_ms()));
      const auto until =
          std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::nanoseconds>(wait_for);
      if (!done_ready_.wait_until(lock, until, ready)) return std::nullopt;
    }
    const Completion c = done_.front();
    done_.pop_front();
    --in_flight_;
    return c;
  }

 private:
  static client::HttpTransportOptions transport_options(int slots) {
    client::HttpTransportOptions o;
    o.max_idle_per_host = static_cast<std::size_t>(slots);
    return o;
  }

  void call_loop() {
    for (;;) {
      std::size_t id = 0;
      {
        std::unique_lock lock(mutex_);
        work_ready_.wait(lock, [&] { return stopping_ || !work_.empty(); });
        if (work_.empty()) return;  // stopping
        id = work_.front();
        work_.pop_front();
      }
      const auto result = transport_.send(request_, clock_, ignore_tokens);
      const bool ok = result.event == client::TransportEvent::none && result.status == 200;
      {
        std::lock_guard lock(mutex_);
        done_.push_back({id, ok});
      }
      done_ready_.notify_one();
    }
  }

  SteadyClock clock_;
  client::HttpTransport transport_;
  client::AttemptRequest request_;
  std::mutex mutex_;
  std::condition_variable work_ready_, done_ready_;
  std::deque<std::size_t> work_;
  std::deque<Completion> done_;
  std::size_t in_flight_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> callers_;
};

}  // namespace

std::vector<OverloadRow> overload_live(std::span<const GateSpec> gates, std::span<const double> loads,
                                       const OverloadSettings& settings) {
  mock::ServerOptions options;
  options.threads = 2;
  mock::MockServer server(options);
  server.start();
  server.engine().install(model_ns, model_script(settings.service_ms));
  std::vector<OverloadRow> rows;
  for (const auto& gate : gates) {
    for (const double load : loads) {
      LiveModel model(server.base_url(), settings);  // fresh clock and connections per run
      rows.push_back(run_overload(gate, settings, load, arrivals_for(settings, load), model));
    }
  }
  server.stop();
  return rows;
}

std::vector<OverloadRow> overload_virtual(std::span<const GateSpec> gates, std::span<const double> loads,
                                          const OverloadSettings& settings) {
  std::vector<OverloadRow> rows;
  for (const auto& gate : gates)
    for (const double load : loads) rows.push_back(simulate_overload(gate, settings, load));
  return rows;
}

OverloadAgreement compare_overload(std::span<const OverloadRow> live, std::span<const OverloadRow> simulated,
                                   double slack_ms) {
  OverloadAgreement out;
  out.tolerance = fmt::format(
      "coverage within 0.05 + 10%, achieved load within 5% of offered, p50 and p95 within 20% + {:g} ms of "
      "the "
      "simulation",
      slack_ms);
  if (live.size() != simulated.size()) {
    out.disagreements.push_back(fmt::format("{} live rows, {} simulated", live.size(), simulated.size()));
    return out;
  }
  for (std::size_t i = 0; i < live.size(); ++i) {
    const auto& l = live[i];
    const auto& s = simulated[i];
    const std::string name = fmt::format("{} at {:g}x", l.gate, l.load);
    if (l.model_errors > 0)
      out.disagreements.push_back(fmt::format("{}: {} model calls failed", name, l.model_errors));
    if (std::abs(l.coverage - s.coverage) > 0.05 + 0.1 * s.coverage)
      out.disagreements.push_back(
          fmt::format("{}: coverage {:.3f} live, {:.3f} simulated", name, l.coverage, s.coverage));
    const double offered = std::max(1.0, s.offered_per_sec);
    if (std::abs(l.achieved_per_sec - s.achieved_per_sec) > 0.05 * offered)
      out.disagreements.push_back(fmt::format("{}: achieved {:.1f}/s live, {:.1f}/s simulated", name,
                                              l.achieved_per_sec, s.achieved_per_sec));
    for (const auto& [what, lv, sv] :
         {std::tuple{"p50", l.p50_ms, s.p50_ms}, std::tuple{"p95", l.p95_ms, s.p95_ms}}) {
      if (std::isnan(lv) != std::isnan(sv) || (!std::isnan(sv) && std::abs(lv - sv) > 0.2 * sv + slack_ms))
        out.disagreements.push_back(
            fmt::format("{}: {} {:.1f} ms live, {:.1f} ms simulated", name, what, lv, sv));
    }
  }
  return out;
}

}  // namespace llmchaos::experiments
