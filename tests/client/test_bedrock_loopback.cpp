// The bedrock codec against the real mock provider over loopback (127.0.0.1:0): what each fault looks
// like to the HTTP transport and the classifier, and the client stack's decision on a few, with the
// SDK's headers (one invocation id per call, the attempt count) as the mock saw them.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "llmchaos/client/executor.hpp"
#include "llmchaos/client/http_transport.hpp"
#include "mock_fixture.hpp"

using namespace llmchaos;
using namespace llmchaos::client;
using llmchaos::test::MockFixture;
using llmchaos::test::route_toml;

namespace {

const std::string canonical = "alpha beta gamma delta";

struct Sent {
  AttemptResult result;
  std::vector<std::string> tokens;
  Classification c;
};

struct Loopback {
  MockFixture mock;
  HttpTransport transport;
  SteadyClock clock;

  Sent send(const std::string& step, bool stream, const std::string& route_extra = {}) {
    mock.install(route_toml("r", Dialect::bedrock, step) + route_extra);
    AttemptRequest req;
    req.endpoint = mock.endpoint("r", Dialect::bedrock);
    req.stream = stream;
    req.operation_id = "op-loop";
    req.timeout_ms = 2000;
    Sent s;
    s.result = transport.send(req, clock, [&](std::string_view t) { s.tokens.emplace_back(t); });
    Observation obs;
    obs.dialect = Dialect::bedrock;
    obs.status = s.result.status;
    obs.body = s.result.body;
    obs.headers = s.result.headers;
    obs.event = s.result.event;
    obs.visible_tokens = static_cast<int>(s.tokens.size());
    obs.finish_reason = s.result.finish_reason;
    obs.error_type = s.result.error_type;
    s.c = classify(obs);
    return s;
  }
};

}  // namespace

TEST_CASE("bedrock loopback: a healthy Converse answer, plain and streamed", "[bedrock][loopback]") {
  const bool stream = GENERATE(false, true);
  CAPTURE(stream);
  Loopback t;
  const auto s = t.send(R"({ fault = "ok" })", stream, "require_auth = true\n");
  CHECK(s.result.status == 200);  // the SigV4-shaped Authorization passed the mock's check
  CHECK(s.result.event == TransportEvent::none);
  CHECK(s.result.text == canonical);
  CHECK(s.result.model == "mock-model");
  CHECK(s.result.output_tokens > 0);
  CHECK(s.c.owner == Owner::none);
  if (stream) {
    CHECK(s.result.terminated);
    CHECK(s.tokens.size() == 4);
  }
  const auto ledger = t.mock.ledger(1);
  REQUIRE(ledger.size() == 1);
  CHECK(ledger[0].stream == stream);
  CHECK(ledger[0].idempotency_key == "op-loop");
}

TEST_CASE("bedrock loopback: each fault before a stream, classified by its exception",
          "[bedrock][loopback]") {
  struct Row {
    const char* step;
    int status;
    Owner owner;
  };
  const Row rows[] = {
      {R"({ fault = "rate_429", retry_after_ms = 1500 })", 429, Owner::rate},
      {R"({ fault = "rate_429", body = "model_not_ready" })", 429, Owner::transient},
      {R"({ fault = "quota_429" })", 400, Owner::quota},
      {R"({ fault = "payment_402" })", 403, Owner::quota},
      {R"({ fault = "overloaded" })", 503, Owner::transient},
      {R"({ fault = "server_500" })", 500, Owner::unknown},
      {R"({ fault = "server_500_context" })", 500, Owner::request},
      {R"({ fault = "bad_request" })", 400, Owner::request},
      {R"({ fault = "auth" })", 403, Owner::auth},
  };
  const bool stream = GENERATE(false, true);
  for (const auto& row : rows) {
    CAPTURE(row.step, stream);
    Loopback t;
    const auto s = t.send(row.step, stream);
    CHECK(s.result.status == row.status);
    CHECK(s.c.owner == row.owner);
    CHECK(s.tokens.empty());
  }
  Loopback t;
  // A refusal: a 400 ValidationException before a stream, a content_filtered stop in one.
  const auto refused = t.send(R"({ fault = "policy", cut_after_events = 0 })", stream);
  CHECK(refused.result.status == (stream ? 200 : 400));
  CHECK(refused.c.owner == Owner::policy);
  const auto s = t.send(R"({ fault = "rate_429", retry_after_ms = 1500 })", stream);
  REQUIRE(s.c.retry_after_ms);
  CHECK(*s.c.retry_after_ms == Approx(1500));  // x-amz-retry-after, in ms
}

TEST_CASE("bedrock loopback: in-stream exception frames, a bad checksum, no messageStop",
          "[bedrock][loopback]") {
  struct Row {
    const char* exception;
    Owner owner;
  };
  for (const auto& row :
       {Row{"serviceUnavailableException", Owner::transient}, Row{"throttlingException", Owner::rate},
        Row{"modelStreamErrorException", Owner::transient}, Row{"internalServerException", Owner::transient},
        Row{"validationException", Owner::request}}) {
    CAPTURE(row.exception);
    Loopback t;
    const auto s = t.send(
        std::string(R"({ fault = "stream_error", cut_after_events = 1, body = ")") + row.exception + "\" }",
        true);
    CHECK(s.result.status == 200);
    CHECK(s.result.event == TransportEvent::stream_error_event);
    CHECK(s.result.error_type == row.exception);
    CHECK(s.tokens.size() == 1);
    CHECK(s.c.owner == row.owner);
    CHECK(s.c.commit == CommitState::committed);  // a token was already delivered
  }
  Loopback t;
  auto s = t.send(R"({ fault = "stream_error", cut_after_events = 0 })", true);
  CHECK(s.result.error_type == "serviceUnavailableException");  // the default
  CHECK(s.c.commit == CommitState::none);

  s = t.send(R"({ fault = "malformed_event", cut_after_events = 1 })", true);
  CHECK(s.result.event == TransportEvent::malformed_event);
  CHECK(s.tokens.size() == 1);
  CHECK(s.c.owner == Owner::transient);

  s = t.send(R"({ fault = "no_terminator" })", true);
  CHECK(s.result.event == TransportEvent::missing_terminator);
  CHECK(s.result.text == canonical);

  s = t.send(R"({ fault = "stream_cut", cut_after_events = 2 })", true);
  CHECK(s.result.event == TransportEvent::stream_closed);
  CHECK(s.tokens.size() == 2);
}

TEST_CASE("bedrock loopback: the stack retries a throttle after x-amz-retry-after with one invocation id",
          "[bedrock][loopback][executor]") {
  MockFixture mock;
  mock.install(route_toml("primary", Dialect::bedrock,
                          R"({ fault = "rate_429", retry_after_ms = 40 }, { fault = "ok" })") +
               route_toml("backup", Dialect::bedrock, R"({ fault = "ok" })"));
  Policy p;
  p.workflow.name = "bedrock";
  p.workflow.primary = "primary";
  p.workflow.max_total_attempts = 3;
  p.workflow.max_elapsed_ms = 6000;
  p.workflow.attempt_timeout_ms = 2000;
  p.workflow.fallback = {"backup"};
  p.backoff = {5, 20};
  for (const char* name : {"primary", "backup"}) {
    RoutePolicy r;
    r.name = name;
    r.expected_latency_ms = 50;
    p.routes[name] = r;
  }
  HttpTransport transport;
  SteadyClock clock;
  Rng rng{3};
  ClientStack stack(p,
                    {{"primary", mock.endpoint("primary", Dialect::bedrock)},
                     {"backup", mock.endpoint("backup", Dialect::bedrock)}},
                    clock, rng, transport);
  WorkflowRequest req;
  req.stream = true;
  const auto log = stack.execute(req);
  REQUIRE(log.failures.size() == 1);
  CHECK(log.failures[0].action == Action::retry);
  CHECK(log.failures[0].wait_ms >= 40);
  CHECK(log.attempts[0].owner == Owner::rate);
  CHECK(log.outcome == Outcome::retry_recovery);
  CHECK(log.text == canonical);
  const auto l = mock.ledger(2);
  REQUIRE(l.size() == 2);
  CHECK(l[0].route == "primary");
  CHECK(l[1].route == "primary");
  CHECK(l[0].idempotency_key == l[1].idempotency_key);
  // As the AWS SDKs send them: one invocation id for the call, the attempt counted against the budget.
  CHECK(l[0].amz_sdk_invocation_id.size() == 36);
  CHECK(l[0].amz_sdk_invocation_id == l[1].amz_sdk_invocation_id);
  CHECK(l[0].amz_sdk_request == "attempt=1; max=3");
  CHECK(l[1].amz_sdk_request == "attempt=2; max=3");
}
