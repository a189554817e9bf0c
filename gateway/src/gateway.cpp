// The gateway's server (gateway.hpp): one thread per connection with blocking Beast I/O, requests run
// through the client stacks one at a time. Routing of a chat request: key -> tier -> quality chain ->
// that chain's ClientStack (breakers per route, persisting across requests) -> UpstreamTransport
// (model groups balanced per attempt) -> the live HTTP transport.
#include "llmchaos/gateway/gateway.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <ctime>
#include <map>
#include <mutex>
#include <thread>

#include "admission.hpp"
#include "llmchaos/client/breaker.hpp"
#include "llmchaos/client/executor.hpp"
#include "llmchaos/client/http_transport.hpp"
#include "llmchaos/client/limiter.hpp"
#include "llmchaos/client/points_header.hpp"
#include "llmchaos/core/clock.hpp"
#include "openai_wire.hpp"
#include "upstreams.hpp"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;

namespace llmchaos::gateway {

bool is_loopback_address(const std::string& address) {
  boost::system::error_code ec;
  auto a = asio::ip::make_address(address, ec);
  return !ec && a.is_loopback();
}

namespace {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// One quality chain's stack, with the state /stats reads without taking the stack's lock.
struct Chain {
  std::string name;
  std::vector<std::string> routes;
  std::unique_ptr<Rng> rng;  // the stack's jitter: a stream of its own, so chains draw apart
  std::unique_ptr<client::ClientStack> stack;
  std::map<std::string, client::CircuitBreaker>
      breakers;  // copied after every request (under Impl::stats_mutex)
};

struct KeyCounters {
  std::string tier;
  long requests = 0, answered = 0, failed = 0, queued = 0, rate_limited = 0;
};

// The outcome a stream's headers announce with its first token, before the stack has decided.
std::string provisional_action(const std::vector<AttemptTrace>& trace, const std::string& primary) {
  if (trace.empty()) return "degraded";
  const auto& last = trace.back();
  if (last.done && !last.ok) return "degraded";  // the answer is the degrade text after a failure
  bool failed_before = false;
  for (std::size_t i = 0; i + 1 < trace.size(); ++i) failed_before |= !trace[i].ok;
  if (last.route != primary) return "fallback_recovery";
  return failed_before ? "retry_recovery" : "primary_success";
}

std::string failure_actions(const client::DecisionLog& log) {
  std::string out;
  for (const auto& f : log.failures) out += (out.empty() ? "" : ",") + std::string(to_string(f.action));
  return out;
}

// The same points for the drain answer, with the rule's text: {"action", "route", "attempt" (null when
// none was sent), "rule", "rule_text"}.
json::array failure_points_json(const client::DecisionLog& log) {
  json::array out;
  for (const auto& f : log.failures)
    out.push_back(json::object{{"action", to_string(f.action)},
                               {"route", f.route},
                               {"attempt", f.attempt < 0 ? json::value(nullptr) : json::value(f.attempt)},
                               {"rule", f.rule},
                               {"rule_text", f.rule_text}});
  return out;
}

// 1-based positions of the failure points at which no attempt was sent (breaker open, budget gate):
// an observer of the upstream traffic cannot see them.
std::vector<int> unsent_points(const client::DecisionLog& log) {
  std::vector<int> out;
  for (const auto& f : log.failures)
    if (f.attempt < 0) out.push_back(f.point);
  return out;
}

// A wait as the caller reads it: retry-after in whole seconds (at least 1) and retry-after-ms exactly.
void add_retry_after(HeaderList& h, double wait_ms) {
  h.emplace_back("retry-after",
                 std::to_string(std::max<long>(1, static_cast<long>(std::ceil(wait_ms / 1000)))));
  h.emplace_back("retry-after-ms", std::to_string(static_cast<long>(std::ceil(wait_ms))));
}

// The OpenAI-shaped error of a request the stack fail-closed: 429 when every route was cooling (the
// caller is told when the soonest is free: add_retry_after), 503 when the last failure point sent no
// attempt (breaker open, budget spent), else 502 naming the upstream failure.
WireError fail_closed_error(const client::DecisionLog& log) {
  WireError e;
  const client::FailurePoint* last = log.failures.empty() ? nullptr : &log.failures.back();
  std::string reason;
  for (auto it = log.attempts.rbegin(); it != log.attempts.rend(); ++it)
    if (it->owner != Owner::none) {
      reason = fmt::format("route {}: {} ({})", it->route, it->reason, to_string(it->owner));
      e.code = std::string(to_string(it->owner));
      break;
    }
  const bool nothing_sent = !last || last->attempt < 0;
  e.status = nothing_sent ? 503 : 502;
  e.type = nothing_sent ? "service_unavailable" : "upstream_error";
  e.message = fmt::format("the gateway failed closed{}{}", last ? ": " + last->rule_text : "",
                          reason.empty() ? "" : "; " + reason);
  if (e.code.empty()) e.code = "fail_closed";
  if (log.retry_after_ms) {
    e.status = 429;
    e.type = "requests";
    e.code = "all_routes_cooling";
    e.message += fmt::format("; every route is cooling, the soonest is free in {:.0f} ms",
                             std::ceil(*log.retry_after_ms));
  }
  return e;
}

}  // namespace

struct Gateway::Impl {
  explicit Impl(GatewayConfig c)
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

  // --- serving ---
  void accept_loop();
  void serve_connection(std::shared_ptr<tcp::socket> socket);
  bool handle(const http::request<http::string_body>& req, tcp::socket& socket);
  bool chat(const http::request<http::string_body>& req, tcp::socket& socket);
  // chat's phases after admit(): each one job (admission.hpp has the pure one).
  bool refuse(tcp::socket& socket, const Refusal& refusal, const std::string& key, bool keep_alive);
  AnswerId answer_id(const client::WorkflowRequest& wr);
  struct StackRun {
    client::DecisionLog log;
    std::vector<AttemptTrace> trace;  // the attempts' upstreams
  };
  // Through the chain's stack, one request at a time; the chain's breakers are copied for /stats.
  StackRun run_stack(Chain& chain, const client::WorkflowRequest& wr);
  void copy_breakers(Chain& chain);  // the caller holds stats_mutex
  void record_answer(const std::string& key, const client::DecisionLog& log);
  bool drain(const http::request<http::string_body>& req, tcp::socket& socket);
  std::string stats_json();
  std::string metrics_text();

  // --- state ---
  GatewayConfig config;
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

  asio::io_context ioc;  // owns the sockets; never run (every operation is blocking)
  std::optional<tcp::acceptor> acceptor;
  std::thread accept_thread;
  std::atomic<bool> stopping{false};
  std::mutex conn_mutex;
  std::condition_variable conn_cv;
  std::map<tcp::socket*, std::shared_ptr<tcp::socket>> connections;
  std::uint16_t bound_port = 0;
  std::weak_ptr<Impl> self;
};

namespace {

template <class Message>
void set_common(Message& h, int status, bool keep_alive) {
  h.result(static_cast<unsigned>(status));
  h.version(11);
  h.set(http::field::server, "llmchaos-gateway");
  h.keep_alive(keep_alive);
}

void write_plain(tcp::socket& socket, int status, std::string body, std::string_view content_type,
                 const HeaderList& headers, bool keep_alive) {
  http::response<http::string_body> res;
  set_common(res, status, keep_alive);
  res.set(http::field::content_type, content_type);
  for (const auto& [k, v] : headers) res.set(k, v);
  res.body() = std::move(body);
  res.prepare_payload();
  beast::error_code ec;
  http::write(socket, res, ec);  // a client that left is no error of ours
}

void write_error(tcp::socket& socket, const WireError& e, HeaderList headers, bool keep_alive) {
  write_plain(socket, e.status, error_body(e), "application/json", headers, keep_alive);
}

// A chunked SSE body written as tokens arrive (from the transport's thread while the request thread
// waits in the stack); a client that left makes every later write a no-op.
class SseWriter {
 public:
  SseWriter(tcp::socket& socket, bool keep_alive) : socket_(socket), keep_alive_(keep_alive) {}
  bool started() const { return started_; }
  void start(const HeaderList& headers) {
    http::response<http::empty_body> res;
    set_common(res, 200, keep_alive_);
    res.set(http::field::content_type, "text/event-stream");
    res.set(http::field::cache_control, "no-cache");
    for (const auto& [k, v] : headers) res.set(k, v);
    res.chunked(true);
    http::response_serializer<http::empty_body> sr(res);
    beast::error_code ec;
    http::write_header(socket_, sr, ec);
    broken_ = broken_ || ec;
    started_ = true;
  }
  void send(const std::string& frame) {
    if (broken_ || frame.empty()) return;
    beast::error_code ec;
    asio::write(socket_, http::make_chunk(asio::buffer(frame)), ec);
    broken_ = broken_ || ec;
  }
  void end() {
    if (broken_) return;
    beast::error_code ec;
    asio::write(socket_, http::make_chunk_last(), ec);
    broken_ = broken_ || ec;
  }
  bool broken() const { return broken_; }

 private:
  tcp::socket& socket_;
  bool keep_alive_;
  bool started_ = false;
  bool broken_ = false;
};

HeaderList decision_headers(std::string_view action, std::size_t attempts, const std::string& route,
                            const std::string& upstream, const std::string& quality) {
  HeaderList h{{"x-llmchaos-action", std::string(action)},
               {"x-llmchaos-attempts", std::to_string(attempts)},
               {"x-llmchaos-route", route}};
  if (!upstream.empty()) h.emplace_back("x-llmchaos-upstream", upstream);
  if (!quality.empty()) h.emplace_back("x-llmchaos-quality", quality);
  return h;
}

HeaderList rejection_headers() {
  return decision_headers("rejected", 0, "", "", "");
}

std::string bearer_key(const http::request<http::string_body>& req) {
  auto auth = req[http::field::authorization];
  constexpr std::string_view prefix = "Bearer ";
  if (auth.size() <= prefix.size() || auth.substr(0, prefix.size()) != prefix) return {};
  return std::string(auth.substr(prefix.size()));
}

// The upstream that served the answer: the last attempt that succeeded ("" when none did).
std::string serving_upstream(const std::vector<AttemptTrace>& trace) {
  for (auto it = trace.rbegin(); it != trace.rend(); ++it)
    if (it->ok && !it->upstream.empty()) return it->upstream;
  return {};
}

// The headers of an answer once the stack has decided: the decision, its failure points, the operation.
HeaderList answer_headers(const client::DecisionLog& log, const std::vector<AttemptTrace>& trace,
                          const std::string& quality) {
  HeaderList headers = decision_headers(to_string(log.outcome), log.attempts.size(), log.route,
                                        serving_upstream(trace), quality);
  headers.emplace_back("x-llmchaos-actions", failure_actions(log));
  if (auto unsent = unsent_points(log); !unsent.empty())
    headers.emplace_back("x-llmchaos-unsent-points", fmt::format("{}", fmt::join(unsent, ",")));
  headers.emplace_back(client::points_header_name,
                       client::encode_points_header(log.failures));  // grammar: points_header.hpp
  headers.emplace_back("x-llmchaos-operation-id", log.operation_id);
  return headers;
}

// A stream's tokens go out as they arrive; the first one sends the headers, whose outcome is only
// provisional then (provisional_action over the attempts so far).
void relay_tokens(client::WorkflowRequest& wr, SseWriter& sse, const AnswerId& id,
                  const UpstreamTransport& upstreams, const std::string& primary,
                  const std::string& quality) {
  wr.on_token = [&sse, &id, &upstreams, &primary, &quality,
                 serving = std::this_thread::get_id()](std::string_view token) {
    const bool first = !sse.started();
    if (first) {
      const auto trace = upstreams.trace(serving);
      sse.start(decision_headers(provisional_action(trace, primary), trace.size(),
                                 trace.empty() ? "" : trace.back().route,
                                 trace.empty() ? "" : trace.back().upstream, quality));
    }
    sse.send(content_frame(id, token, first));
  };
}

// The end of a stream that started or has an answer; false when the client left.
bool finish_stream(SseWriter& sse, const AnswerId& id, const client::DecisionLog& log,
                   const HeaderList& headers) {
  if (!sse.started()) sse.start(headers);  // answered without a visible token (e.g. an empty answer)
  if (log.answered) {
    sse.send(finish_frame(id, "stop"));
    sse.send(usage_frame(id, log, to_string(log.outcome), static_cast<int>(log.attempts.size())));
    sse.send(done_frame());
  } else {
    // Tokens went out, then the stack failed closed: an in-stream error and no [DONE], so no client
    // mistakes the cut answer for a whole one.
    sse.send(error_frame(fail_closed_error(log)));
  }
  sse.end();
  return !sse.broken();
}

// A whole answer: 200 with the completion, 202 when the stack queued it, else the fail-closed error.
void write_answer(tcp::socket& socket, const AnswerId& id, const client::DecisionLog& log, HeaderList headers,
                  bool keep_alive) {
  if (log.answered) {
    write_plain(socket, 200, completion_body(id, log), "application/json", headers, keep_alive);
  } else if (log.outcome == Outcome::queued) {
    json::object body{{"id", id.id},
                      {"object", "llmchaos.queued"},
                      {"status", "queued"},
                      {"operation_id", log.operation_id}};
    write_plain(socket, 202, json::serialize(body), "application/json", headers, keep_alive);
  } else {
    if (log.retry_after_ms)
      add_retry_after(headers, *log.retry_after_ms);  // the stack's ms are real (its policy is scaled)
    write_error(socket, fail_closed_error(log), headers, keep_alive);
  }
}

}  // namespace

void Gateway::Impl::accept_loop() {
  while (!stopping) {
    pollfd pfd{acceptor->native_handle(), POLLIN, 0};
    if (::poll(&pfd, 1, 100) <= 0) continue;  // 100 ms: stop() is noticed within that
    auto socket = std::make_shared<tcp::socket>(ioc);
    beast::error_code ec;
    acceptor->accept(*socket, ec);
    if (ec) continue;
    {
      std::lock_guard lock(conn_mutex);
      if (stopping || connections.size() >= config.max_connections) {
        write_error(*socket,
                    WireError{503, "the gateway has too many open connections", "service_unavailable", "",
                              "overloaded"},
                    rejection_headers(), false);
        socket->close(ec);
        continue;
      }
      connections.emplace(socket.get(), socket);
    }
    // Detached: a thread stuck in an upstream call must not block stop(); it holds the state alive.
    std::thread([impl = self.lock(), socket] { impl->serve_connection(socket); }).detach();
  }
}

void Gateway::Impl::serve_connection(std::shared_ptr<tcp::socket> socket) {
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(8 * 1024 * 1024);
    parser.header_limit(64 * 1024);
    beast::error_code ec;
    http::read(*socket, buffer, parser, ec);
    if (ec == http::error::body_limit || ec == http::error::header_limit) {
      write_error(
          *socket,
          WireError{413, "the request is too large", "invalid_request_error", "", "request_too_large"},
          rejection_headers(), false);
      break;
    }
    if (ec || stopping) break;
    if (!handle(parser.get(), *socket) || stopping) break;
  }
  beast::error_code ec;
  socket->shutdown(tcp::socket::shutdown_both, ec);
  socket->close(ec);
  std::lock_guard lock(conn_mutex);
  connections.erase(socket.get());
  conn_cv.notify_all();
}

bool Gateway::Impl::handle(const http::request<http::string_body>& req, tcp::socket& socket) {
  const bool keep_alive = req.keep_alive();
  const std::string_view target(req.target().data(), req.target().size());
  const auto path = target.substr(0, target.find('?'));
  auto not_allowed = [&](std::string_view method) {
    write_error(socket,
                WireError{405, fmt::format("{} needs {}", path, method), "invalid_request_error", "",
                          "method_not_allowed"},
                rejection_headers(), keep_alive);
    return keep_alive;
  };
  if (path == "/v1/chat/completions") {
    if (req.method() != http::verb::post) return not_allowed("POST");
    return chat(req, socket);
  }
  if (path == "/v1/llmchaos/drain") {
    if (req.method() != http::verb::post) return not_allowed("POST");
    return drain(req, socket);
  }
  // /__llmchaos/ready and /__llmchaos/health: the probes serve and proxy answer (image, Helm chart).
  if (path == "/health" || path == "/stats" || path == "/metrics" || path == "/__llmchaos/ready" ||
      path == "/__llmchaos/health") {
    if (req.method() != http::verb::get) return not_allowed("GET");
    if (path == "/__llmchaos/ready")
      write_plain(socket, 200, R"({"status":"ready"})", "application/json", {}, keep_alive);
    else if (path == "/health" || path == "/__llmchaos/health")
      write_plain(socket, 200, R"({"status":"ok"})", "application/json", {}, keep_alive);
    else if (path == "/stats")
      write_plain(socket, 200, stats_json(), "application/json", {}, keep_alive);
    else
      write_plain(socket, 200, metrics_text(), "text/plain; version=0.0.4", {}, keep_alive);
    return keep_alive;
  }
  {
    std::lock_guard lock(stats_mutex);
    ++rejected["not_found"];
  }
  write_error(socket,
              WireError{404, fmt::format("no route {} {}", std::string_view(req.method_string()), path),
                        "invalid_request_error", "", "not_found"},
              rejection_headers(), keep_alive);
  return keep_alive;
}

// A chat request's phases: admit (admission.hpp, pure), then through the stack, the counters, the
// headers and the answer; a refusal is counted and answered at once.
bool Gateway::Impl::chat(const http::request<http::string_body>& req, tcp::socket& socket) {
  const bool keep_alive = req.keep_alive();
  const ChatArrival arrival{bearer_key(req), req.body(), std::string(req["x-llmchaos-quality"])};
  auto admission = admit(arrival, config, limiter, limiter_now());
  if (const auto* refusal = std::get_if<Refusal>(&admission))
    return refuse(socket, *refusal, arrival.key, keep_alive);
  auto& admitted = std::get<Admitted>(admission);
  auto& wr = admitted.request.workflow;
  if (auto idem = req["idempotency-key"]; !idem.empty()) wr.operation_id = std::string(idem);
  const AnswerId id = answer_id(wr);
  Chain& chain = chains.at(admitted.quality);
  SseWriter sse(socket, keep_alive);
  if (wr.stream) relay_tokens(wr, sse, id, upstreams, chain.routes.front(), admitted.quality);

  const auto run = run_stack(chain, wr);
  limiter.settle(admitted.key, admitted.estimated_tokens, run.log.input_tokens + run.log.output_tokens,
                 limiter_now());
  record_answer(admitted.key, run.log);
  HeaderList headers = answer_headers(run.log, run.trace, admitted.quality);

  if (wr.stream && (sse.started() || run.log.answered)) {
    const bool intact = finish_stream(sse, id, run.log, headers);
    return keep_alive && intact;
  }
  write_answer(socket, id, run.log, std::move(headers), keep_alive);
  return keep_alive;
}

bool Gateway::Impl::refuse(tcp::socket& socket, const Refusal& refusal, const std::string& key,
                           bool keep_alive) {
  {
    std::lock_guard lock(stats_mutex);
    ++rejected[refusal.reason];
    if (refusal.reason == "rate_limited") ++key_counters[masked(key)].rate_limited;  // a known key's
  }
  HeaderList headers = rejection_headers();
  if (refusal.retry_after_ms) add_retry_after(headers, *refusal.retry_after_ms);
  write_error(socket, refusal.error, std::move(headers), keep_alive);
  return keep_alive;
}

// The caller's Idempotency-Key names the answer when it sent one, else a number of this gateway's.
AnswerId Gateway::Impl::answer_id(const client::WorkflowRequest& wr) {
  return AnswerId{
      "chatcmpl-" + (wr.operation_id.empty() ? fmt::format("{:016x}", ++answer_ids) : wr.operation_id),
      static_cast<long>(std::time(nullptr)), wr.model};
}

Gateway::Impl::StackRun Gateway::Impl::run_stack(Chain& chain, const client::WorkflowRequest& wr) {
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

void Gateway::Impl::copy_breakers(Chain& chain) {
  for (auto& [route, breaker] : chain.breakers)
    if (auto b = chain.stack->breaker_state(route)) breaker = *b;
}

void Gateway::Impl::record_answer(const std::string& key, const client::DecisionLog& log) {
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
bool Gateway::Impl::drain(const http::request<http::string_body>& req, tcp::socket& socket) {
  const bool keep_alive = req.keep_alive();
  if (!config.keys.contains(bearer_key(req))) {
    write_error(socket,
                WireError{401, "drain needs a known API key", "invalid_request_error", "", "invalid_api_key"},
                rejection_headers(), keep_alive);
    return keep_alive;
  }
  json::array out;
  {
    for (auto& [name, chain] : chains) {
      for (const auto& log : chain.stack->drain()) {
        out.push_back(json::object{{"operation_id", log.operation_id},
                                   {"outcome", to_string(log.outcome)},
                                   {"answered", log.answered},
                                   {"text", log.text},
                                   {"route", log.route},
                                   {"model", log.model},
                                   {"attempts", log.attempts.size()},
                                   {"input_tokens", log.input_tokens},
                                   {"output_tokens", log.output_tokens},
                                   {"actions", failure_actions(log)},
                                   {"unsent_points", json::value_from(unsent_points(log))},
                                   {"points", failure_points_json(log)},
                                   {"quality", name}});
        std::lock_guard stats_lock(stats_mutex);
        ++outcomes[std::string(to_string(log.outcome))];
      }
      std::lock_guard stats_lock(stats_mutex);
      copy_breakers(chain);
    }
  }
  write_plain(socket, 200, json::serialize(json::object{{"redelivered", std::move(out)}}), "application/json",
              {}, keep_alive);
  return keep_alive;
}

std::string Gateway::Impl::stats_json() {
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

std::string Gateway::Impl::metrics_text() {
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

Gateway::Gateway(GatewayConfig config) : impl_(std::make_shared<Impl>(std::move(config))) {
  impl_->self = impl_;
}

Gateway::~Gateway() {
  stop();
}

void Gateway::start() {
  auto& i = *impl_;
  const auto& c = i.config;
  beast::error_code ec;
  const auto address = asio::ip::make_address(c.bind, ec);
  if (ec) throw std::runtime_error(fmt::format("gateway: bind address \"{}\": {}", c.bind, ec.message()));
  i.acceptor.emplace(i.ioc);
  const tcp::endpoint ep(address, c.port);
  i.acceptor->open(ep.protocol(), ec);
  if (!ec) i.acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) i.acceptor->bind(ep, ec);
  if (!ec) i.acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw std::runtime_error(
        fmt::format("gateway: cannot listen on {}:{}: {}", c.bind, c.port, ec.message()));
  i.bound_port = i.acceptor->local_endpoint().port();
  i.accept_thread = std::thread([&i] { i.accept_loop(); });
}

bool Gateway::stop() {
  auto& i = *impl_;
  if (i.stopping.exchange(true)) return true;
  if (i.accept_thread.joinable()) i.accept_thread.join();
  beast::error_code ec;
  if (i.acceptor) i.acceptor->close(ec);
  std::unique_lock lock(i.conn_mutex);
  // shutdown() wakes a thread blocked reading its connection; one inside an upstream call ends with it.
  for (auto& [raw, socket] : i.connections) ::shutdown(socket->native_handle(), SHUT_RDWR);
  return i.conn_cv.wait_for(lock, std::chrono::milliseconds(900), [&] { return i.connections.empty(); });
}

std::uint16_t Gateway::port() const {
  return impl_->bound_port;
}

std::string Gateway::base_url() const {
  const auto& bind = impl_->config.bind;
  std::string host = bind == "0.0.0.0" ? "127.0.0.1" : bind == "::" ? "[::1]" : bind;
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
  return fmt::format("http://{}:{}", host, impl_->bound_port);
}

}  // namespace llmchaos::gateway
