// The gateway's request logic (gateway.hpp): a request through admission (admission.hpp), its
// quality chain's ClientStack (breakers per route, persisting across requests; requests overlap on one
// stack, which locks itself and lets go while an attempt is on the wire) -> UpstreamTransport (model
// groups balanced per attempt) -> the live HTTP transport; what to answer is answers.hpp's pure
// functions, and the I/O is http_server.hpp's (one thread per connection, blocking Beast I/O).
#include "llmchaos/gateway/gateway.hpp"

#include <fmt/format.h>

#include <atomic>
#include <boost/asio/ip/address.hpp>
#include <boost/json.hpp>
#include <ctime>
#include <map>
#include <mutex>
#include <thread>

#include "admission.hpp"
#include "answers.hpp"
#include "http_server.hpp"
#include "llmchaos/client/breaker.hpp"
#include "llmchaos/client/executor.hpp"
#include "llmchaos/client/http_transport.hpp"
#include "llmchaos/client/limiter.hpp"
#include "llmchaos/core/clock.hpp"
#include "openai_wire.hpp"
#include "upstreams.hpp"

namespace json = boost::json;

namespace llmchaos::gateway {

bool is_loopback_address(const std::string& address) {
  boost::system::error_code ec;
  auto a = boost::asio::ip::make_address(address, ec);
  return !ec && a.is_loopback();
}

namespace {

// One quality chain's stack, with the state /stats reads without taking the stack's lock.
struct Chain {
  std::string name;
  std::vector<std::string> routes;
  std::unique_ptr<Rng> rng;  // the stack's jitter: a stream of its own, so chains draw apart
  std::unique_ptr<client::ClientStack> stack;
  std::map<std::string, client::CircuitBreaker>
      breakers;  // copied after every request (under Service::stats_mutex)
};

struct KeyCounters {
  std::string tier;
  long requests = 0, answered = 0, failed = 0, queued = 0, rate_limited = 0;
};

// A stream's tokens go out as they arrive; the first one sends the headers, whose outcome is only
// provisional then (provisional_action over the attempts so far).
void relay_tokens(client::WorkflowRequest& wr, Responder& out, const AnswerId& id,
                  const UpstreamTransport& upstreams, const std::string& primary,
                  const std::string& quality) {
  wr.on_token = [&out, &id, &upstreams, &primary, &quality,
                 serving = std::this_thread::get_id()](std::string_view token) {
    const bool first = !out.stream_started();
    if (first) {
      const auto trace = upstreams.trace(serving);
      out.start_stream(decision_headers(provisional_action(trace, primary), trace.size(),
                                        trace.empty() ? "" : trace.back().route,
                                        trace.empty() ? "" : trace.back().upstream, quality));
    }
    out.send(content_frame(id, token, first));
  };
}

// The end of a stream that started or has an answer; false when the client left.
bool finish_stream(Responder& out, const AnswerId& id, const client::DecisionLog& log,
                   const HeaderList& headers) {
  if (!out.stream_started()) out.start_stream(headers);  // answered without a visible token
  for (const auto& frame : stream_end_frames(id, log)) out.send(frame);
  out.end_stream();
  return !out.broken();
}

// The chains' stacks, the tier limiter and the counters /stats and /metrics read; shared with the
// connection threads (through the server's handler), which may outlive stop().
class Service {
 public:
  explicit Service(GatewayConfig c)
      : config(std::move(c)),
        rng(gateway_seed),
        wire([&] {
          client::HttpTransportOptions o;
          o.api_key = config.upstream_api_key;
          return o;
        }()),
        upstreams(config, wire, rng) {
    for (const auto& [key, tier] : config.keys) {
      limiter.configure(key, config.tiers.at(tier).limits, limiter_now());
      key_counters[masked(key)].tier = tier;
    }
    for (const auto& [name, routes] : config.qualities) {
      std::map<std::string, client::Endpoint> endpoints;
      for (const auto& r : routes) endpoints[r] = upstreams.endpoint_for(r);
      Chain chain{name, routes, std::make_unique<Rng>(derive_seed(gateway_seed, name)), nullptr, {}};
      chain.stack = std::make_unique<client::ClientStack>(chain_policy(config, routes), std::move(endpoints),
                                                          clock, *chain.rng, upstreams);
      for (const auto& r : routes)
        chain.breakers.emplace(r, client::CircuitBreaker(chain.stack->policy().route(r).breaker));
      chains.emplace(name, std::move(chain));
    }
  }

  // The tiers' windows follow [gateway] time_scale like every policy time: the limiter runs on scripted ms.
  double limiter_now() { return clock.now_ms() / config.time_scale; }

  // One request on the connection it came on; whether the connection stays open.
  bool handle(const Request& req, Responder& out);

 private:
  // chat's phases after admit(): each one job (admission.hpp and answers.hpp have the pure ones).
  bool chat(const Request& req, Responder& out);
  bool refuse(Responder& out, const Refusal& refusal, const std::string& key, bool keep_alive);
  AnswerId answer_id(const client::WorkflowRequest& wr);
  struct StackRun {
    client::DecisionLog log;
    std::vector<AttemptTrace> trace;  // the attempts' upstreams
  };
  // Through the chain's stack; the chain's breakers are copied for /stats.
  StackRun run_stack(Chain& chain, const client::WorkflowRequest& wr);
  void copy_breakers(Chain& chain);  // the caller holds stats_mutex
  void record_answer(const std::string& key, const client::DecisionLog& log);
  bool drain(const Request& req, Responder& out);
  std::string stats_json();
  std::string metrics_text();

 public:
  GatewayConfig config;

 private:
  SteadyClock clock;
  static constexpr std::uint64_t gateway_seed = 0x9a7e3a1;
  Rng rng;  // the balancers' (under the group transport's lock); each chain's stack has its own
  std::atomic<std::uint64_t> answer_ids{0};  // ids of answers without an Idempotency-Key (any thread)
  client::HttpTransport wire;
  UpstreamTransport upstreams;
  client::RateLimiter limiter;
  std::map<std::string, Chain> chains;

  std::mutex stats_mutex;
  std::map<std::string, long> outcomes;  // by outcome name
  std::map<std::string, long> rejected;  // by reason: unauthorized, bad_request, rate_limited, not_found
  std::map<std::string, KeyCounters> key_counters;  // by masked key
  long requests = 0;
  std::atomic<int> in_flight{0};
};

bool Service::handle(const Request& req, Responder& out) {
  const auto path = req.path();
  const Route route = route_of(path);
  if (route.endpoint == Endpoint::not_found) {
    {
      std::lock_guard lock(stats_mutex);
      ++rejected["not_found"];
    }
    out.reply(not_found(req.method, path));
    return req.keep_alive;
  }
  if (req.method != route.method) {
    out.reply(method_not_allowed(path, route.method));
    return req.keep_alive;
  }
  switch (route.endpoint) {
    case Endpoint::chat:
      return chat(req, out);
    case Endpoint::drain:
      return drain(req, out);
    case Endpoint::ready:
      out.reply(ok_reply(R"({"status":"ready"})"));
      break;
    case Endpoint::health:
      out.reply(ok_reply(R"({"status":"ok"})"));
      break;
    case Endpoint::stats:
      out.reply(ok_reply(stats_json()));
      break;
    case Endpoint::metrics:
      out.reply(ok_reply(metrics_text(), "text/plain; version=0.0.4"));
      break;
    case Endpoint::not_found:
      break;
  }
  return req.keep_alive;
}

// A chat request's phases: admit (admission.hpp, pure), then through the stack, the counters, the
// headers and the answer; a refusal is counted and answered at once.
bool Service::chat(const Request& req, Responder& out) {
  const ChatArrival arrival{bearer_key(req.header("authorization")), req.body,
                            std::string(req.header("x-llmchaos-quality"))};
  auto admission = admit(arrival, config, limiter, limiter_now());
  if (const auto* refusal = std::get_if<Refusal>(&admission))
    return refuse(out, *refusal, arrival.key, req.keep_alive);
  auto& admitted = std::get<Admitted>(admission);
  auto& wr = admitted.request.workflow;
  if (auto idem = req.header("idempotency-key"); !idem.empty()) wr.operation_id = std::string(idem);
  const AnswerId id = answer_id(wr);
  Chain& chain = chains.at(admitted.quality);
  if (wr.stream) relay_tokens(wr, out, id, upstreams, chain.routes.front(), admitted.quality);

  const auto run = run_stack(chain, wr);
  limiter.settle(admitted.key, admitted.estimated_tokens, run.log.input_tokens + run.log.output_tokens,
                 limiter_now());
  record_answer(admitted.key, run.log);
  HeaderList headers = answer_headers(run.log, run.trace, admitted.quality);

  if (wr.stream && (out.stream_started() || run.log.answered)) {
    const bool intact = finish_stream(out, id, run.log, headers);
    return req.keep_alive && intact;
  }
  out.reply(answer_reply(id, run.log, std::move(headers)));
  return req.keep_alive;
}

bool Service::refuse(Responder& out, const Refusal& refusal, const std::string& key, bool keep_alive) {
  {
    std::lock_guard lock(stats_mutex);
    ++rejected[refusal.reason];
    if (refusal.reason == "rate_limited") ++key_counters[masked(key)].rate_limited;  // a known key's
  }
  HeaderList headers = rejection_headers();
  if (refusal.retry_after_ms) add_retry_after(headers, *refusal.retry_after_ms);
  out.reply(error_reply(refusal.error, std::move(headers)));
  return keep_alive;
}

// The caller's Idempotency-Key names the answer when it sent one, else a number of this gateway's.
AnswerId Service::answer_id(const client::WorkflowRequest& wr) {
  return AnswerId{
      "chatcmpl-" + (wr.operation_id.empty() ? fmt::format("{:016x}", ++answer_ids) : wr.operation_id),
      static_cast<long>(std::time(nullptr)), wr.model};
}

Service::StackRun Service::run_stack(Chain& chain, const client::WorkflowRequest& wr) {
  StackRun run;
  ++in_flight;
  {
    // Requests overlap on one stack (it locks itself, and lets go while an attempt is on the wire), so
    // a 429 can come back while its route cools and extend the cooldown (SPEC 5's cooldown_extends).
    upstreams.begin_request();
    run.log = chain.stack->execute(wr);
    run.trace = upstreams.take_trace();
    std::lock_guard stats_lock(stats_mutex);
    copy_breakers(chain);
  }
  --in_flight;
  return run;
}

void Service::copy_breakers(Chain& chain) {
  for (auto& [route, breaker] : chain.breakers)
    if (auto b = chain.stack->breaker_state(route)) breaker = *b;
}

void Service::record_answer(const std::string& key, const client::DecisionLog& log) {
  std::lock_guard lock(stats_mutex);
  ++requests;
  ++outcomes[std::string(to_string(log.outcome))];
  auto& counters = key_counters[masked(key)];
  ++counters.requests;
  if (log.outcome == Outcome::queued)
    ++counters.queued;
  else
    ++(log.answered ? counters.answered : counters.failed);
}

// Redeliver what every stack queued (each redelivery on the budget its request already spent).
bool Service::drain(const Request& req, Responder& out) {
  if (!config.keys.contains(bearer_key(req.header("authorization")))) {
    out.reply(error_reply(
        WireError{401, "drain needs a known API key", "invalid_request_error", "", "invalid_api_key"},
        rejection_headers()));
    return req.keep_alive;
  }
  json::array redelivered;
  for (auto& [name, chain] : chains) {
    for (const auto& log : chain.stack->drain()) {
      redelivered.push_back(redelivery_json(log, name));
      std::lock_guard stats_lock(stats_mutex);
      ++outcomes[std::string(to_string(log.outcome))];
    }
    std::lock_guard stats_lock(stats_mutex);
    copy_breakers(chain);
  }
  out.reply(ok_reply(json::serialize(json::object{{"redelivered", std::move(redelivered)}})));
  return req.keep_alive;
}

std::string Service::stats_json() {
  const double now = clock.now_ms();
  json::object routes;
  for (const auto& [name, c] : upstreams.counters())
    routes[name] = json::object{{"attempts", c.attempts},
                                {"successes", c.successes},
                                {"failures", c.failures},
                                {"last_latency_ms", c.last_latency_ms}};
  json::object groups;
  for (const auto& [name, members] : upstreams.groups(now)) {
    json::array arr;
    for (const auto& m : members)
      arr.push_back(json::object{{"route", m.route},
                                 {"picks", m.picks},
                                 {"in_flight", m.in_flight},
                                 {"latency_ema_ms", m.latency_ema_ms},
                                 {"failure_score", m.failure_score},
                                 {"excluded", m.excluded}});
    groups[name] = std::move(arr);
  }
  std::lock_guard lock(stats_mutex);
  json::object breakers;
  for (const auto& [name, chain] : chains) {
    json::object per_route;
    for (const auto& [route, b] : chain.breakers)
      per_route[route] = json::object{{"state", to_string(b.state(now))},
                                      {"consecutive_failures", b.consecutive_failures()},
                                      {"times_opened", b.times_opened()},
                                      {"probes_started", b.probes_started()}};
    breakers[name] = std::move(per_route);
  }
  json::object keys;
  for (const auto& [key, k] : key_counters)
    keys[key] =
        json::object{{"tier", k.tier},     {"requests", k.requests}, {"answered", k.answered},
                     {"failed", k.failed}, {"queued", k.queued},     {"rate_limited", k.rate_limited}};
  json::object outcome_counts, rejected_counts;
  for (const auto& [k, v] : outcomes) outcome_counts[k] = v;
  for (const auto& [k, v] : rejected) rejected_counts[k] = v;
  json::object body{{"requests", requests},
                    {"in_flight", in_flight.load()},
                    {"outcomes", std::move(outcome_counts)},
                    {"rejected", std::move(rejected_counts)},
                    {"routes", std::move(routes)},
                    {"breakers", std::move(breakers)},
                    {"groups", std::move(groups)},
                    {"keys", std::move(keys)}};
  return json::serialize(body);
}

std::string Service::metrics_text() {
  const double now = clock.now_ms();
  std::string out;
  auto family = [&](std::string_view name, std::string_view type, std::string_view help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  const auto counters = upstreams.counters();
  const auto group_views = upstreams.groups(now);
  std::lock_guard lock(stats_mutex);
  family("llmchaos_gateway_requests_total", "counter",
         "Chat requests that ran through the client stack, by outcome.");
  for (const auto& [k, v] : outcomes)
    out += fmt::format("llmchaos_gateway_requests_total{{outcome=\"{}\"}} {}\n", k, v);
  family("llmchaos_gateway_rejected_total", "counter",
         "Requests answered without reaching an upstream, by reason.");
  for (const auto& [k, v] : rejected)
    out += fmt::format("llmchaos_gateway_rejected_total{{reason=\"{}\"}} {}\n", k, v);
  family("llmchaos_gateway_in_flight", "gauge", "Chat requests in progress.");
  out += fmt::format("llmchaos_gateway_in_flight {}\n", in_flight.load());
  family("llmchaos_gateway_upstream_attempts_total", "counter", "Attempts sent to each upstream route.");
  for (const auto& [r, c] : counters)
    out += fmt::format("llmchaos_gateway_upstream_attempts_total{{route=\"{}\"}} {}\n", r, c.attempts);
  family("llmchaos_gateway_upstream_failures_total", "counter",
         "Attempts of each upstream route that failed.");
  for (const auto& [r, c] : counters)
    out += fmt::format("llmchaos_gateway_upstream_failures_total{{route=\"{}\"}} {}\n", r, c.failures);
  family("llmchaos_gateway_breaker_state", "gauge",
         "Circuit breaker per quality chain and route: 0 closed, 1 open, 2 half-open.");
  for (const auto& [name, chain] : chains)
    for (const auto& [route, b] : chain.breakers)
      out += fmt::format("llmchaos_gateway_breaker_state{{quality=\"{}\",route=\"{}\"}} {}\n", name, route,
                         static_cast<int>(b.state(now)));
  family("llmchaos_gateway_group_latency_ema_ms", "gauge", "Latency EMA of each model group member, ms.");
  for (const auto& [g, members] : group_views)
    for (const auto& m : members)
      out += fmt::format("llmchaos_gateway_group_latency_ema_ms{{group=\"{}\",route=\"{}\"}} {:.3f}\n", g,
                         m.route, m.latency_ema_ms);
  family("llmchaos_gateway_group_picks_total", "counter",
         "Attempts the balancer sent to each model group member.");
  for (const auto& [g, members] : group_views)
    for (const auto& m : members)
      out += fmt::format("llmchaos_gateway_group_picks_total{{group=\"{}\",route=\"{}\"}} {}\n", g, m.route,
                         m.picks);
  family("llmchaos_gateway_key_rate_limited_total", "counter",
         "Requests rejected by a tier limit, per (masked) key.");
  for (const auto& [k, c] : key_counters)
    out += fmt::format("llmchaos_gateway_key_rate_limited_total{{key=\"{}\",tier=\"{}\"}} {}\n", k, c.tier,
                       c.rate_limited);
  return out;
}

}  // namespace

// The request logic, and the server that hands it requests (its handler holds the logic alive).
struct Gateway::Impl {
  explicit Impl(GatewayConfig config)
      : service(std::make_shared<Service>(std::move(config))),
        server([s = service](const Request& req, Responder& out) { return s->handle(req, out); },
               server_replies(), ServerLimits{.max_connections = service->config.max_connections}) {}
  std::shared_ptr<Service> service;
  HttpServer server;
};

Gateway::Gateway(GatewayConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}

Gateway::~Gateway() {
  stop();
}

void Gateway::start() {
  impl_->server.start(impl_->service->config.bind, impl_->service->config.port);
}

bool Gateway::stop() {
  return impl_->server.stop();
}

std::uint16_t Gateway::port() const {
  return impl_->server.port();
}

std::string Gateway::base_url() const {
  const auto& bind = impl_->service->config.bind;
  std::string host = bind == "0.0.0.0" ? "127.0.0.1" : bind == "::" ? "[::1]" : bind;
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
  return fmt::format("http://{}:{}", host, impl_->server.port());
}

}  // namespace llmchaos::gateway
