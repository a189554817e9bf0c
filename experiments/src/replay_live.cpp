#include "llmchaos/experiments/replay_live.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <thread>

#include "llmchaos/client/http_transport.hpp"
#include "llmchaos/mockprovider/server.hpp"

namespace llmchaos::experiments {

namespace {

// The answer's text is not needed, only how the attempt ended.
const std::function<void(std::string_view)> ignore_tokens = [](std::string_view) {};

// One recorded attempt as a scripted step: the recorded latency, then the answer or a bare 500.
mock::Step step_of(const TraceAttempt& a) {
  mock::Step s;
  s.fault = a.ok ? FaultKind::ok : FaultKind::server_500;
  s.latency_ms = a.sec * 1000.0;  // the server scales it by time_scale
  return s;
}

mock::Script script_of(const TraceRow& row) {
  mock::Script script;
  mock::RouteScript primary;
  primary.name = "primary";
  primary.steps = {step_of(row.primary_1), step_of(row.primary_2)};
  mock::RouteScript alternate;
  alternate.name = "alternate";
  alternate.steps = {step_of(row.alternate)};
  script.routes.emplace("primary", std::move(primary));
  script.routes.emplace("alternate", std::move(alternate));
  return script;
}

constexpr const char* warmup_ns = "replay-warmup";

mock::Script warmup_script() {
  mock::Script script;
  mock::RouteScript primary;
  primary.name = "primary";
  script.routes.emplace("primary", std::move(primary));  // no steps: every attempt gets `then` (ok)
  return script;
}

std::string ns_of(std::size_t config, std::size_t row) {
  return fmt::format("replay-{}-{}", config, row);
}

bool succeeded(const client::AttemptResult& r) {
  return r.event == client::TransportEvent::none && r.status == 200;
}

}  // namespace

LiveReplayResult replay_live(std::span<const TraceRow> trace, std::span<const PolicyConfig> configs,
                             const LiveReplayOptions& options) {
  const double scale = options.time_scale;
  mock::ServerOptions server_options;
  server_options.time_scale = scale;
  server_options.threads = 2;
  mock::MockServer server(server_options);
  server.start();
  for (std::size_t c = 0; c < configs.size(); ++c)
    for (std::size_t i = 0; i < trace.size(); ++i) server.engine().install(ns_of(c, i), script_of(trace[i]));

  // An attempt with no T (wait, and the second attempt) may take as long as the slowest recording.
  double longest_sec = 0;
  for (const auto& row : trace)
    longest_sec = std::max({longest_sec, row.primary_1.sec, row.primary_2.sec, row.alternate.sec});
  const double open_timeout_ms = longest_sec * 1000.0 * scale * 1.5 + 1000.0;

  client::HttpTransportOptions transport_options;
  transport_options.max_idle_per_host = static_cast<std::size_t>(std::max(1, options.concurrency));
  client::HttpTransport transport(transport_options);
  SteadyClock clock;

  LiveReplayResult result;
  result.outcomes.assign(configs.size(), std::vector<RequestOutcome>(trace.size()));
  auto attempt = [&](std::size_t c, std::size_t i, const char* route, double timeout_ms) {
    client::AttemptRequest req;
    req.endpoint = {route, Dialect::openai, server.base_url() + "/" + ns_of(c, i) + "/" + route};
    req.timeout_ms = timeout_ms;
    return succeeded(transport.send(req, clock, ignore_tokens));
  };
  // One request under one policy, as the offline model defines it (see replay.hpp).
  auto play_live = [&](std::size_t c, std::size_t i) {
    const PolicyConfig& config = configs[c];
    const double start = clock.now_ms();
    const auto elapsed_sec = [&] { return (clock.now_ms() - start) / scale / 1000.0; };
    if (config.policy == ReplayPolicy::wait) {
      const bool ok = attempt(c, i, "primary", open_timeout_ms);
      return RequestOutcome{ok, elapsed_sec(), 0};
    }
    const double t_ms = config.timeout_sec * 1000.0 * scale;
    if (attempt(c, i, "primary", t_ms)) return RequestOutcome{true, elapsed_sec(), 0};
    // A failure before T is acted on at T, as offline.
    const double wait_ms = start + t_ms - clock.now_ms();
    if (wait_ms > 0) clock.sleep_ms(wait_ms);
    const bool ok =
        attempt(c, i, config.policy == ReplayPolicy::retry ? "primary" : "alternate", open_timeout_ms);
    return RequestOutcome{ok, elapsed_sec(), 1};
  };

  // Requests of every configuration interleaved, `concurrency` at a time. Each worker first makes one
  // untimed call, so connection set-up and first-use costs stay out of the figures.
  server.engine().install(warmup_ns, warmup_script());
  const std::size_t total = configs.size() * trace.size();
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    client::AttemptRequest warm;
    warm.endpoint = {"primary", Dialect::openai, server.base_url() + "/" + warmup_ns + "/primary"};
    warm.timeout_ms = 5000;
    transport.send(warm, clock, ignore_tokens);
    for (std::size_t k = next++; k < total; k = next++) {
      const std::size_t i = k / configs.size(), c = k % configs.size();
      result.outcomes[c][i] = play_live(c, i);
    }
  };
  std::vector<std::thread> workers;
  const auto threads = static_cast<std::size_t>(std::max(1, options.concurrency));
  for (std::size_t w = 0; w < std::min(threads, total); ++w) workers.emplace_back(worker);
  for (auto& w : workers) w.join();

  for (const auto& entry : server.engine().ledger_all())
    result.mock_attempts += entry.ns != warmup_ns ? 1 : 0;
  server.stop();
  for (std::size_t c = 0; c < configs.size(); ++c)
    result.stats.push_back(summarize(configs[c], result.outcomes[c]));
  return result;
}

}  // namespace llmchaos::experiments
