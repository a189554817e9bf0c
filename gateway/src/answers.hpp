#pragma once
// The gateway's request logic as functions over plain data (no socket, no clock, no lock): which
// endpoint a path is, the headers that tell the caller what the stack decided, and the reply or the
// stream's last frames for a decision log. gateway.cpp runs them between the I/O (http_server.hpp) and
// the client stacks; tests/gateway/test_answers.cpp runs them alone.
#include <boost/json/object.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "http_server.hpp"
#include "llmchaos/client/executor.hpp"
#include "openai_wire.hpp"
#include "upstreams.hpp"

namespace llmchaos::gateway {

enum class Endpoint { chat, drain, ready, health, stats, metrics, not_found };
struct Route {
  Endpoint endpoint = Endpoint::not_found;
  std::string_view method;  // the one it answers
};
Route route_of(std::string_view path);  // /__llmchaos/health is health, as serve and proxy answer it

// The key of "Authorization: Bearer KEY"; "" when none.
std::string bearer_key(std::string_view authorization);

// The outcome a stream's headers announce with its first token, before the stack has decided.
std::string provisional_action(const std::vector<AttemptTrace>& trace, const std::string& primary);
std::string failure_actions(const client::DecisionLog& log);  // "retry,fallback"
// 1-based positions of the failure points at which no attempt was sent (breaker open, budget gate):
// an observer of the upstream traffic cannot see them.
std::vector<int> unsent_points(const client::DecisionLog& log);

HeaderList decision_headers(std::string_view action, std::size_t attempts, const std::string& route,
                            const std::string& upstream, const std::string& quality);
HeaderList rejection_headers();  // the gateway's own 4xx / 5xx: action "rejected", no attempt
// The headers of an answer once the stack has decided: the decision, its failure points, the operation.
HeaderList answer_headers(const client::DecisionLog& log, const std::vector<AttemptTrace>& trace,
                          const std::string& quality);
// A wait as the caller reads it: retry-after in whole seconds (at least 1) and retry-after-ms exactly.
void add_retry_after(HeaderList& h, double wait_ms);

// The OpenAI-shaped error of a request the stack failed closed: 429 when every route was cooling, 503
// when the last failure point sent no attempt (breaker open, budget spent), else 502 naming the
// upstream failure.
WireError fail_closed_error(const client::DecisionLog& log);
Reply ok_reply(std::string body, std::string content_type = "application/json");  // 200, no header
Reply error_reply(const WireError& e, HeaderList headers);
// A whole answer: 200 with the completion, 202 when the stack queued it, else the fail-closed error
// (with retry-after when every route was cooling).
Reply answer_reply(const AnswerId& id, const client::DecisionLog& log, HeaderList headers);
// The frames that end a stream: finish, usage and [DONE] when answered; else an in-stream error and
// no [DONE], so no client mistakes the cut answer for a whole one.
std::vector<std::string> stream_end_frames(const AnswerId& id, const client::DecisionLog& log);

// The drain answer's entry for one redelivery, its failure points with their rules' text.
boost::json::object redelivery_json(const client::DecisionLog& log, const std::string& quality);

// What the server answers by itself.
ServerReplies server_replies();
Reply method_not_allowed(std::string_view path, std::string_view method);
Reply not_found(std::string_view method, std::string_view path);

}  // namespace llmchaos::gateway
