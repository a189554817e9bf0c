// The virtual-time transport: plays mock plans under the executor's clock and reads the answer with the
// live transport's reader. Every branch mirrors a branch of the Beast session (mockprovider/serving/)
// on one side and of the HTTP client (client/src/http_transport.cpp) on the other.
#include "llmchaos/harness/virtual_transport.hpp"

#include <algorithm>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <cctype>
#include <optional>

#include "llmchaos/client/dialect_codec.hpp"
#include "llmchaos/client/http_transport.hpp"
#include "llmchaos/client/response_reader.hpp"
#include "llmchaos/mockprovider/router.hpp"

namespace llmchaos::harness {
namespace {

using client::TransportEvent;

// "http://host:port/ns/route" -> "/ns/route": the virtual wire has no host, only the path the router reads.
std::string path_of(const std::string& base_url) {
  const auto scheme = base_url.find("://");
  const auto from = scheme == std::string::npos ? 0 : scheme + 3;
  const auto slash = base_url.find('/', from);
  return slash == std::string::npos ? std::string() : base_url.substr(slash);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The head the Beast session would write for this plan (apply_headers plus the framing headers).
client::Headers head_of(const mock::Plan& plan) {
  client::Headers h;
  h.emplace_back("server", "llmchaos");
  for (const auto& [k, v] : plan.headers) h.emplace_back(lower(k), v);
  if (plan.streamed)
    h.emplace_back("transfer-encoding", "chunked");
  else
    h.emplace_back("content-length", std::to_string(plan.body.size()));
  return h;
}

// Live messages, so reports read the same either way.
constexpr const char* timeout_text = "The socket was closed due to a timeout";
constexpr const char* cut_text = "partial message";

// The request exactly as the live transport puts it on the wire.
mock::RawRequest wire_request(const client::AttemptRequest& req, const std::string& api_key) {
  const auto& codec = client::codec_for(req.endpoint.dialect);
  mock::RawRequest raw;
  raw.method = client::attempt_method(req);
  raw.target = path_of(req.endpoint.base_url) + codec.target(req);
  raw.headers = {{"content-type", "application/json"}, {"accept", "application/json"}};
  if (!req.operation_id.empty()) raw.headers.emplace_back("idempotency-key", req.operation_id);
  for (const auto& [name, value] : client::request_headers(req, api_key))
    raw.headers.emplace_back(lower(name), value);
  raw.body = codec.request_body(req);
  return raw;
}

// One routed plan played to the client's reader under the executor's clock, phase by phase.
struct Playback {
  client::ResponseReader& reader;
  Clock& clock;
  mock::Engine& engine;
  const mock::Routed& routed;
  const double timeout;
  const mock::Plan& plan = routed.plan;

  // How the mock saw the attempt end (Engine::finish), and what the client saw.
  client::AttemptResult end(AttemptOutcome outcome, int events, int status) {
    if (routed.seq) engine.finish(*routed.seq, outcome, events, status);
    reader.result().ended_ms = clock.now_ms();
    return reader.take();
  }

  client::AttemptResult no_response(TransportEvent event, const std::string& what, AttemptOutcome outcome) {
    reader.fail(event, what);
    return end(outcome, 0, 0);
  }

  // The client gave up waiting for the next byte after `events` content frames.
  client::AttemptResult idle_timeout(int events) {
    clock.sleep_ms(timeout);
    reader.broken(true, timeout_text);
    return end(AttemptOutcome::client_closed, events, plan.status);
  }

  // Up to the response head: the attempt's result when there is none, nullopt once the reader has it.
  std::optional<client::AttemptResult> head() {
    switch (plan.action) {
      case mock::WireAction::reset_after_head:
        return no_response(TransportEvent::reset_before_response, "no response: Connection reset by peer",
                           AttemptOutcome::reset);
      case mock::WireAction::hold:
        if (plan.hold_ms < timeout) {
          clock.sleep_ms(plan.hold_ms);  // the mock closes first
          return no_response(TransportEvent::reset_before_response, "no response: end of stream",
                             AttemptOutcome::held_then_closed);
        }
        clock.sleep_ms(timeout);
        return no_response(TransportEvent::timeout_no_byte, "timeout, no response byte",
                           AttemptOutcome::held_then_closed);
      case mock::WireAction::respond:
        break;
    }
    if (plan.latency_ms >= timeout) {
      clock.sleep_ms(timeout);
      return no_response(TransportEvent::timeout_no_byte, "timeout, no response byte",
                         AttemptOutcome::client_closed);
    }
    clock.sleep_ms(plan.latency_ms);
    reader.head(plan.status, head_of(plan));
    return std::nullopt;
  }

  // After the frames or the partial body: the connection either ends, or stalls and then closes.
  client::AttemptResult tail(int events) {
    switch (plan.end) {
      case mock::StreamEnd::complete:
        reader.end();
        return end(AttemptOutcome::completed, events, plan.status);
      case mock::StreamEnd::stall_then_abort:
        if (plan.stall_ms >= timeout) return idle_timeout(events);
        clock.sleep_ms(plan.stall_ms);
        break;
      case mock::StreamEnd::abort:
        break;
    }
    reader.broken(false, cut_text);
    return end(AttemptOutcome::cut, events, plan.status);
  }

  client::AttemptResult whole_body() {
    const bool whole = plan.end == mock::StreamEnd::complete;
    reader.feed(whole ? std::string_view(plan.body)
                      : std::string_view(plan.body).substr(0, std::min(plan.body_cut_at, plan.body.size())));
    return tail(0);
  }

  client::AttemptResult frames() {
    int events = 0;  // content frames the mock wrote (the ledger's events_sent)
    for (std::size_t i = 0; i < plan.frames.size(); ++i) {
      const double delay = i == 0 ? plan.first_event_ms : plan.inter_event_ms;
      if (delay >= timeout) return idle_timeout(events);
      clock.sleep_ms(delay);
      if (plan.frames[i].content) ++events;
      if (reader.feed(plan.frames[i].bytes)) continue;
      // The client hung up (error or malformed event): the mock notices at its next write or wait; a
      // last frame is followed only by the end of the body, which still fits the socket buffer.
      const bool last = i + 1 == plan.frames.size() && plan.end == mock::StreamEnd::complete;
      return end(last ? AttemptOutcome::completed : AttemptOutcome::client_closed, events, plan.status);
    }
    return tail(events);
  }
};

}  // namespace

struct VirtualTransport::Impl {
  explicit Impl(mock::Engine& e) : engine(e), router(e, mock::RouterOptions{}) {}
  mock::Engine& engine;
  mock::Router router;
  const std::string api_key = client::HttpTransportOptions{}.api_key;
};

VirtualTransport::VirtualTransport(mock::Engine& engine) : impl_(std::make_unique<Impl>(engine)) {}
VirtualTransport::~VirtualTransport() = default;

client::AttemptResult VirtualTransport::send(const client::AttemptRequest& req, Clock& clock,
                                             const std::function<void(std::string_view)>& on_token) {
  client::ResponseReader reader(req, on_token);
  reader.result().started_ms = clock.now_ms();
  const mock::Routed routed = impl_->router.handle(wire_request(req, impl_->api_key));
  Playback play{reader, clock, impl_->engine, routed,
                std::max(req.timeout_ms, 1.0)};  // the live timers' floor
  if (auto unanswered = play.head()) return std::move(*unanswered);
  return routed.plan.streamed ? play.frames() : play.whole_body();
}

bool VirtualTransport::side_effect(const client::Endpoint& endpoint, const std::string& operation_id,
                                   const std::string& tool) {
  mock::RawRequest raw;
  raw.method = "POST";
  raw.target = path_of(endpoint.base_url) + "/__llmchaos/side_effect";
  raw.headers = {{"content-type", "application/json"}, {"idempotency-key", operation_id}};
  raw.body = boost::json::serialize(boost::json::object{{"operation_id", operation_id}, {"tool", tool}});
  return impl_->router.handle(raw).plan.status / 100 == 2;
}

TransportFactory virtual_transport() {
  return [](const CaseEnv& env) -> std::unique_ptr<client::Transport> {
    if (!env.engine) throw std::logic_error("virtual transport: the case has no mock engine");
    return std::make_unique<VirtualTransport>(*env.engine);
  };
}

}  // namespace llmchaos::harness
