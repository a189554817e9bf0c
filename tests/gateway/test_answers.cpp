// The gateway's request logic (gateway/src/answers.hpp) without a socket: which endpoint a path is,
// what the headers say about a decision, and the reply or the stream's end for a decision log.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "answers.hpp"

using namespace llmchaos;
using namespace llmchaos::gateway;

namespace {

std::string header(const HeaderList& headers, std::string_view name) {
  for (const auto& [k, v] : headers)
    if (k == name) return v;
  return "(absent)";
}

client::FailurePoint point(int n, int attempt, Action action) {
  client::FailurePoint f;
  f.point = n;
  f.attempt = attempt;
  f.route = "primary";
  f.action = action;
  f.rule = 4;
  f.rule_text = "rule 4: transient failure, retry fits";
  return f;
}

client::AttemptRecord failed_attempt(std::string route, Owner owner) {
  client::AttemptRecord a;
  a.route = std::move(route);
  a.owner = owner;
  a.status = 500;
  a.reason = "HTTP 500";
  return a;
}

// A request answered on the primary after one retry.
client::DecisionLog answered_after_retry() {
  client::DecisionLog log;
  log.operation_id = "op-1";
  log.outcome = Outcome::retry_recovery;
  log.answered = true;
  log.route = "primary";
  log.text = "hello";
  log.attempts = {failed_attempt("primary", Owner::transient), client::AttemptRecord{}};
  log.attempts[1].route = "primary";
  log.failures = {point(1, 0, Action::retry)};
  return log;
}

const AnswerId id{"chatcmpl-1", 1700000000, "m"};

}  // namespace

TEST_CASE("gateway routes: each path to its endpoint and the one method it answers", "[gateway][answers]") {
  CHECK(route_of("/v1/chat/completions").endpoint == Endpoint::chat);
  CHECK(route_of("/v1/chat/completions").method == "POST");
  CHECK(route_of("/v1/llmchaos/drain").endpoint == Endpoint::drain);
  CHECK(route_of("/health").endpoint == Endpoint::health);
  CHECK(route_of("/__llmchaos/health").endpoint == Endpoint::health);
  CHECK(route_of("/__llmchaos/ready").endpoint == Endpoint::ready);
  CHECK(route_of("/stats").method == "GET");
  CHECK(route_of("/metrics").endpoint == Endpoint::metrics);
  CHECK(route_of("/v1/chat").endpoint == Endpoint::not_found);
  CHECK(route_of("/health/").endpoint == Endpoint::not_found);
  // The request's path is its target without the query; a header is found whatever its case.
  Request req{"POST", "/v1/chat/completions?x=1", true, {{"Authorization", "Bearer k-1"}}, ""};
  CHECK(req.path() == "/v1/chat/completions");
  CHECK(req.header("authorization") == "Bearer k-1");
  CHECK(req.header("x-llmchaos-quality").empty());
  CHECK(bearer_key(req.header("authorization")) == "k-1");
  CHECK(bearer_key("Bearer ").empty());
  CHECK(bearer_key("Basic k-1").empty());
  CHECK(bearer_key("").empty());
}

TEST_CASE("gateway: a stream's provisional action from the attempts so far", "[gateway][answers]") {
  const AttemptTrace ok_primary{"primary", "up-1", true, true},
      failed_primary{"primary", "up-1", true, false}, backup_streaming{"backup", "up-2", false, false};
  CHECK(provisional_action({}, "primary") == "degraded");
  CHECK(provisional_action({ok_primary}, "primary") == "primary_success");
  CHECK(provisional_action({failed_primary, ok_primary}, "primary") == "retry_recovery");
  CHECK(provisional_action({failed_primary, backup_streaming}, "primary") == "fallback_recovery");
  CHECK(provisional_action({failed_primary}, "primary") == "degraded");  // the degrade text follows
}

TEST_CASE("gateway: an answer's headers say the decision, its points and who served", "[gateway][answers]") {
  auto log = answered_after_retry();
  log.failures.push_back(point(2, -1, Action::fallback));  // no attempt sent (breaker open)
  const std::vector<AttemptTrace> trace{{"primary", "up-1", true, false}, {"primary", "up-2", true, true}};
  const auto h = answer_headers(log, trace, "fast");
  CHECK(header(h, "x-llmchaos-action") == "retry_recovery");
  CHECK(header(h, "x-llmchaos-attempts") == "2");
  CHECK(header(h, "x-llmchaos-route") == "primary");
  CHECK(header(h, "x-llmchaos-upstream") == "up-2");
  CHECK(header(h, "x-llmchaos-quality") == "fast");
  CHECK(header(h, "x-llmchaos-actions") == "retry,fallback");
  CHECK(header(h, "x-llmchaos-unsent-points") == "2");
  CHECK(header(h, "x-llmchaos-points") == "retry primary 0 4,fallback primary - 4");
  CHECK(header(h, "x-llmchaos-operation-id") == "op-1");
  // The gateway's own refusals: action rejected, no attempt, no upstream.
  const auto r = rejection_headers();
  CHECK(header(r, "x-llmchaos-action") == "rejected");
  CHECK(header(r, "x-llmchaos-attempts") == "0");
  CHECK(header(r, "x-llmchaos-upstream") == "(absent)");
}

TEST_CASE("gateway: a wait reads as whole seconds (at least 1) and exact ms", "[gateway][answers]") {
  HeaderList h;
  add_retry_after(h, 1500.2);
  CHECK(header(h, "retry-after") == "2");
  CHECK(header(h, "retry-after-ms") == "1501");
  HeaderList short_wait;
  add_retry_after(short_wait, 3);
  CHECK(header(short_wait, "retry-after") == "1");
  CHECK(header(short_wait, "retry-after-ms") == "3");
}

TEST_CASE("gateway: the replies to a decision: 200, 202 queued, 502/503 failed closed, 429 cooling",
          "[gateway][answers]") {
  const auto answered = answer_reply(id, answered_after_retry(), {});
  CHECK(answered.status == 200);
  CHECK(boost::json::parse(answered.body).at("id").as_string() == "chatcmpl-1");

  client::DecisionLog queued;
  queued.outcome = Outcome::queued;
  queued.operation_id = "op-q";
  const auto q = answer_reply(id, queued, {});
  CHECK(q.status == 202);
  CHECK(boost::json::parse(q.body).at("status").as_string() == "queued");
  CHECK(boost::json::parse(q.body).at("operation_id").as_string() == "op-q");

  client::DecisionLog failed;
  failed.outcome = Outcome::fail_closed;
  failed.attempts = {failed_attempt("primary", Owner::transient)};
  failed.failures = {point(1, 0, Action::fail_closed)};
  const auto upstream = answer_reply(id, failed, {});
  CHECK(upstream.status == 502);
  const auto error = boost::json::parse(upstream.body).at("error");
  CHECK(error.at("type").as_string() == "upstream_error");
  CHECK(error.at("code").as_string() == "transient");
  CHECK_THAT(std::string(error.at("message").as_string()),
             Catch::Contains("rule 4: transient failure, retry fits; route primary: HTTP 500 (transient)"));

  failed.failures = {point(1, -1, Action::fail_closed)};  // nothing sent: breaker open, budget spent
  CHECK(answer_reply(id, failed, {}).status == 503);
  CHECK(fail_closed_error(client::DecisionLog{}).code == "fail_closed");

  failed.retry_after_ms = 2400;  // every route cooling
  const auto cooling = answer_reply(id, failed, {});
  CHECK(cooling.status == 429);
  CHECK(header(cooling.headers, "retry-after") == "3");
  CHECK(header(cooling.headers, "retry-after-ms") == "2400");
  CHECK(boost::json::parse(cooling.body).at("error").at("code").as_string() == "all_routes_cooling");
}

TEST_CASE("gateway: a stream ends with [DONE] only when answered", "[gateway][answers]") {
  const auto whole = stream_end_frames(id, answered_after_retry());
  REQUIRE(whole.size() == 3);
  CHECK_THAT(whole[0], Catch::Contains("\"finish_reason\":\"stop\""));
  CHECK_THAT(whole[1], Catch::Contains("\"usage\""));
  CHECK(whole[2] == "data: [DONE]\n\n");
  client::DecisionLog cut;
  cut.outcome = Outcome::fail_closed;
  const auto frames = stream_end_frames(id, cut);
  REQUIRE(frames.size() == 1);
  CHECK_THAT(frames[0], Catch::StartsWith("data: {\"error\":"));
}

TEST_CASE("gateway: a redelivery's drain entry, an unsent point's attempt null", "[gateway][answers]") {
  auto log = answered_after_retry();
  log.failures.push_back(point(2, -1, Action::fallback));
  const auto entry = redelivery_json(log, "fast");
  CHECK(entry.at("quality").as_string() == "fast");
  CHECK(entry.at("actions").as_string() == "retry,fallback");
  CHECK(entry.at("attempts").to_number<int>() == 2);
  CHECK(entry.at("unsent_points").as_array() == boost::json::array{2});
  CHECK(entry.at("points").as_array()[0].at("attempt").to_number<int>() == 0);
  CHECK(entry.at("points").as_array()[1].at("attempt").is_null());
  CHECK(entry.at("points").as_array()[1].at("rule_text").as_string() ==
        "rule 4: transient failure, retry fits");
}

TEST_CASE("gateway: what the server answers by itself, and 404 / 405", "[gateway][answers]") {
  const auto replies = server_replies();
  CHECK(replies.overloaded.status == 503);
  CHECK(boost::json::parse(replies.overloaded.body).at("error").at("code").as_string() == "overloaded");
  CHECK(replies.too_large.status == 413);
  CHECK(header(replies.too_large.headers, "x-llmchaos-action") == "rejected");
  const auto wrong_method = method_not_allowed("/stats", "GET");
  CHECK(wrong_method.status == 405);
  CHECK(boost::json::parse(wrong_method.body).at("error").at("message").as_string() == "/stats needs GET");
  const auto missing = not_found("GET", "/nope");
  CHECK(missing.status == 404);
  CHECK(boost::json::parse(missing.body).at("error").at("message").as_string() == "no route GET /nope");
}
