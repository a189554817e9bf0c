#pragma once
// The engine decides, per attempt, which step applies (namespace, route, attempt index, time window)
// and keeps the ledger. It does no I/O and takes an injected clock, so the Beast server and the
// virtual-time transport share it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/core/clock.hpp"
#include "llmchaos/core/ledger.hpp"
#include "llmchaos/mockprovider/plan.hpp"
#include "llmchaos/mockprovider/script.hpp"

namespace llmchaos::mock {

// A request as Engine::begin reads it: views of the caller's buffers, read during the call only. The
// router makes one of the connection's own request (no copy, no move of its buffers per request).
struct RequestView {
  std::string_view ns;  // "" = default namespace
  std::string_view route;
  std::string_view path;  // below the route, e.g. "/v1/chat/completions"
  std::string_view method = "POST";
  std::string_view body;
  std::string_view idempotency_key;  // "": read from the headers
  std::string_view stainless_retry_count;
  std::span<const std::pair<std::string, std::string>> headers;  // lower-cased names
  WireProtocol protocol = WireProtocol::none;                    // http/1.1 or h2 (none: virtual time)
};

// A request that owns its strings (tests, tools): begin() takes it as its view.
struct IncomingRequest {
  std::string ns;  // "" = default namespace
  std::string route;
  std::string path;  // below the route, e.g. "/v1/chat/completions"
  std::string method = "POST";
  std::string body;
  std::string idempotency_key;
  std::string stainless_retry_count;
  std::vector<std::pair<std::string, std::string>> headers;  // lower-cased names
  WireProtocol protocol = WireProtocol::none;                // http/1.1 or h2 (none: virtual time)
  operator RequestView() const {  // NOLINT(google-explicit-constructor): an owner converts to its view
    return {ns, route, path, method, body, idempotency_key, stainless_retry_count, headers, protocol};
  }
};

struct PlannedAttempt {
  std::uint64_t seq = 0;  // ledger entry to finish later (0: not an attempt, e.g. GET /v1/models)
  Plan plan;
};

class Engine {
 public:
  // `seed`: the server's (`serve --seed`); each namespace draws from a generator of its own.
  explicit Engine(Clock& clock, double time_scale = 1.0, std::uint64_t seed = 0);
  ~Engine();

  // Replaces; resets positions and ledger of ns. The namespace's draws (slow latencies) come from its own
  // generator, seeded with `seed`, or by default from (the engine's seed, ns): what one namespace draws
  // never depends on what the others do or when. reset() restarts the generator.
  void install(const std::string& ns, Script script, std::optional<std::uint64_t> seed = std::nullopt);
  void reset(const std::string& ns);   // clears ledger and script positions
  void reset_all();                    // reset() of every namespace
  void remove(const std::string& ns);  // forgets the namespace (script, ledger)
  std::vector<std::string> routes(const std::string& ns) const;
  bool has_route(const std::string& ns, const std::string& route) const;
  std::optional<Dialect> route_dialect(std::string_view ns, std::string_view route) const;
  // Which of a request path's first two segments name a route, looked up under one lock: 2 when namespace
  // `first` has route `second` (only tried when `second` is not empty), else 1 when the default namespace
  // has route `first`, else 0.
  int route_segments(std::string_view first, std::string_view second) const;

  // Chooses the step, builds the plan (via the dialect and the fault registry) and appends a ledger
  // entry (committed already set for post_commit_timeout). Request errors (bad JSON, unknown path)
  // come back as a plan with the dialect's 4xx body and are ledgered too.
  PlannedAttempt begin(const RequestView& req);
  // How the attempt ended on the wire.
  void finish(std::uint64_t seq, AttemptOutcome outcome, int events_sent, int status);
  // `llmchaos proxy`: the attempt was forwarded; what the upstream answered and when (before finish()),
  // and the response id its answer named, if any (as note_response, under the same lock).
  void note_upstream(std::uint64_t seq, int upstream_status, double head_ms, double total_ms,
                     std::string_view response_id = {});
  // The healthy answers come from elsewhere (`llmchaos proxy`'s upstream, `serve --cassettes`; the server
  // sets it when it has a forwarder): the engine stores no background response of its own, and a
  // retrieve of a stored response (`GET /v1/responses/{id}`, the resume) is planned on the route's
  // synthetic answer and forwarded, ledgered with resume_of when the create's id was noted here.
  void set_answers_forwarded(bool forwarded);
  // The default of routes whose script does not say `require_auth` (`serve --require-auth`; off).
  void set_require_auth(bool required);
  // A forwarded background create's answer carried this response id (issued by the upstream): a later
  // retrieve of it is ledgered as its resume (before finish(); ignored for any other attempt).
  void note_response(std::uint64_t seq, std::string_view response_id);
  // Keeps at most this many ledger entries per namespace, dropping the oldest (0 = unlimited, the
  // default): a long load test would otherwise grow the ledger without bound. /metrics still counts all.
  void set_ledger_limit(std::size_t entries);
  void record_side_effect(const std::string& ns, const std::string& operation_id, const std::string& tool);

  std::vector<LedgerEntry> ledger(const std::string& ns) const;  // arrival order
  std::vector<LedgerEntry> ledger_all() const;
  std::vector<SideEffect> side_effects(const std::string& ns) const;
  std::vector<SideEffect> side_effects_all() const;
  // A named server event (idle timeout, rejected connection, ...): counted in /metrics.
  void count_event(std::string_view event);
  std::string metrics_text() const;  // Prometheus exposition format

  double time_scale() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmchaos::mock
