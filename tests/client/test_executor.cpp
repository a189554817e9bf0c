// The executor (ClientStack): first over a scripted in-memory transport and a manual clock (every
// staging case of issue 4, the budget, the queue outlet, the journal), then the staging cases again
// against the real mock provider over loopback, checked in the mock's ledger.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "llmchaos/client/breaker.hpp"
#include "llmchaos/client/executor.hpp"
#include "llmchaos/client/http_transport.hpp"
#include "llmchaos/client/journal.hpp"
#include "llmchaos/client/queue.hpp"
#include "llmchaos/core/toml_reader.hpp"
#include "mock_fixture.hpp"

using namespace llmchaos;
using namespace llmchaos::client;

namespace {

// One scripted attempt: what the transport reports, the tokens it streams first, and how long it takes.
struct FakeStep {
  AttemptResult result;
  std::vector<std::string> tokens;
  double latency_ms = 10;
};

FakeStep ok(std::string text = R"({"label":"cat"})", std::vector<std::string> tokens = {}) {
  FakeStep s;
  s.result.status = 200;
  s.result.text = std::move(text);
  s.result.model = "fake-model";
  s.result.terminated = true;
  s.tokens = tokens.empty() ? std::vector<std::string>{s.result.text} : std::move(tokens);
  return s;
}

FakeStep error(int status, std::string body, std::vector<std::pair<std::string, std::string>> headers = {}) {
  FakeStep s;
  s.result.status = status;
  s.result.body = std::move(body);
  s.result.headers = std::move(headers);
  return s;
}

FakeStep event(TransportEvent ev, int status, std::vector<std::string> tokens, double latency_ms = 10) {
  FakeStep s;
  s.result.status = status;
  s.result.event = ev;
  s.tokens = std::move(tokens);
  s.latency_ms = latency_ms;
  return s;
}

const std::string openai_rate =
    R"({"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}})";
const std::string openai_quota =
    R"({"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}})";
const std::string openai_503 =
    R"({"error":{"message":"The engine is currently overloaded, please try again later","type":"service_unavailable_error","param":null,"code":"server_is_overloaded"}})";
const std::string openai_500 =
    R"({"error":{"message":"The server had an error while processing your request","type":"server_error","param":null,"code":null}})";

class FakeTransport final : public Transport {
 public:
  std::map<std::string, std::deque<FakeStep>> script;  // route -> steps; an empty script answers ok()
  std::vector<AttemptRequest> sent;
  std::vector<std::pair<std::string, std::string>> side_effects;  // (operation id, tool)
  bool side_effect_ok = true;

  AttemptResult send(const AttemptRequest& req, Clock& clock,
                     const std::function<void(std::string_view)>& on_token) override {
    sent.push_back(req);
    auto& steps = script[req.endpoint.route];
    FakeStep step = ok();
    if (!steps.empty()) {
      step = steps.front();
      steps.pop_front();
    }
    AttemptResult r = step.result;
    r.started_ms = clock.now_ms();
    clock.sleep_ms(std::min(step.latency_ms, req.timeout_ms));
    for (const auto& t : step.tokens) {
      on_token(t);
      ++r.content_events;
    }
    r.events = r.content_events;
    r.ended_ms = clock.now_ms();
    return r;
  }
  bool side_effect(const Endpoint&, const std::string& operation_id, const std::string& tool) override {
    side_effects.emplace_back(operation_id, tool);
    return side_effect_ok;
  }
  int attempts_on(const std::string& route) const {
    int n = 0;
    for (const auto& r : sent) n += r.endpoint.route == route;
    return n;
  }
};

Policy base_policy() {
  Policy p;
  p.workflow.name = "test";
  p.workflow.primary = "primary";
  p.workflow.max_total_attempts = 3;
  p.workflow.max_elapsed_ms = 6000;
  p.workflow.attempt_timeout_ms = 2000;
  p.workflow.fallback = {"backup"};
  p.backoff = {200, 4000};
  for (const char* name : {"primary", "backup"}) {
    RoutePolicy r;
    r.name = name;
    r.expected_latency_ms = 800;
    r.cost_per_attempt_usd = 0.004;
    r.breaker = {3, 2, 30000, 1};
    p.routes[name] = r;
  }
  return p;
}

std::map<std::string, Endpoint> endpoints() {
  return {{"primary", {"primary", Dialect::openai, "http://fake/primary"}},
          {"backup", {"backup", Dialect::anthropic, "http://fake/backup"}}};
}

struct Fixture {
  ManualClock clock{1000};
  Rng rng{7};
  FakeTransport transport;
  Policy policy = base_policy();
  std::unique_ptr<ClientStack> stack;
  ClientStack& make() {
    stack = std::make_unique<ClientStack>(policy, endpoints(), clock, rng, transport);
    return *stack;
  }
};

std::vector<JournalState> states(const DecisionLog& log) {
  std::vector<JournalState> out;
  for (const auto& line : log.journal) out.push_back(journal_entry_from_line(line).state);
  return out;
}

}  // namespace

TEST_CASE("executor: a healthy primary is a primary success with one attempt", "[executor]") {
  Fixture f;
  auto log = f.make().execute({});
  CHECK(log.outcome == Outcome::primary_success);
  CHECK(log.answered);
  CHECK(log.text == R"({"label":"cat"})");
  CHECK(log.route == "primary");
  CHECK(log.attempts.size() == 1);
  CHECK(log.failures.empty());
  CHECK(log.extra_cost_usd == 0);
  CHECK(log.attempts[0].commit == CommitState::committed);
  CHECK(states(log) == std::vector<JournalState>{JournalState::requested, JournalState::started,
                                                 JournalState::committed, JournalState::acknowledged});
}

TEST_CASE("executor: rate 429 with a short retry-after retries the primary after the retry-after",
          "[executor]") {
  Fixture f;
  f.transport.script["primary"] = {error(429, openai_rate, {{"retry-after-ms", "500"}}), ok()};
  auto log = f.make().execute({});
  REQUIRE(log.failures.size() == 1);
  CHECK(log.failures[0].action == Action::retry);
  CHECK(log.failures[0].rule == 4);
  CHECK(log.failures[0].wait_ms >= 500);
  CHECK(log.attempts[1].start_ms - log.attempts[0].end_ms >= 500);  // the manual clock slept it
  CHECK(log.outcome == Outcome::retry_recovery);
  CHECK(log.attempts[0].owner == Owner::rate);
  CHECK(log.attempts[1].kind == AttemptKind::retry);
  // One operation id on every attempt.
  REQUIRE(f.transport.sent.size() == 2);
  CHECK(f.transport.sent[0].operation_id == log.operation_id);
  CHECK(f.transport.sent[1].operation_id == log.operation_id);
  CHECK(log.extra_cost_usd == Approx(0.004));
}

TEST_CASE("executor: quota 429 falls back to the approved route", "[executor]") {
  Fixture f;
  f.transport.script["primary"] = {error(429, openai_quota)};
  auto log = f.make().execute({});
  REQUIRE(log.failures.size() == 1);
  CHECK(log.failures[0].action == Action::fallback);
  CHECK(log.failures[0].rule == 5);
  CHECK(log.failures[0].next_route == "backup");
  CHECK(log.failures[0].wait_ms == 0);
  CHECK(log.outcome == Outcome::fallback_recovery);
  CHECK(log.route == "backup");
  CHECK(f.transport.attempts_on("primary") == 1);
  CHECK(f.transport.attempts_on("backup") == 1);
}

TEST_CASE("executor: a pre-stream 503 retries", "[executor]") {
  Fixture f;
  f.transport.script["primary"] = {error(503, openai_503), ok()};
  WorkflowRequest req;
  req.stream = true;
  auto log = f.make().execute(req);
  REQUIRE(log.failures.size() == 1);
  CHECK(log.failures[0].action == Action::retry);
  CHECK(log.attempts[0].owner == Owner::transient);
  CHECK(log.outcome == Outcome::retry_recovery);
}

TEST_CASE("executor: a stream cut after visible tokens fails closed (committed)", "[executor]") {
  Fixture f;
  f.transport.script["primary"] = {event(TransportEvent::stream_closed, 200, {"hel", "lo"})};
  WorkflowRequest req;
  req.stream = true;
  std::string seen;
  req.on_token = [&](std::string_view t) { seen += t; };
  auto log = f.make().execute(req);
  REQUIRE(log.failures.size() == 1);
  CHECK(log.failures[0].action == Action::fail_closed);
  CHECK(log.failures[0].rule == 2);
  CHECK(log.attempts[0].commit == CommitState::committed);
  CHECK(log.attempts[0].visible_tokens == 2);
  CHECK(seen == "hello");  // the caller saw the tokens: that is why nothing may be replayed
  CHECK(log.outcome == Outcome::fail_closed);
  CHECK_FALSE(log.answered);
  CHECK(f.transport.sent.size() == 1);
}

TEST_CASE("executor: a stream cut before any visible token retries", "[executor]") {
  Fixture f;
  f.transport.script["primary"] = {event(TransportEvent::stream_closed, 200, {}), ok()};
  WorkflowRequest req;
  req.stream = true;
  auto log = f.make().execute(req);
  REQUIRE(log.failures.size() == 1);
  CHECK(log.failures[0].action == Action::retry);
  CHECK(log.attempts[0].commit == CommitState::none);
  CHECK(log.outcome == Outcome::retry_recovery);
}

TEST_CASE("executor: a timeout after a tool commit fails closed and runs the side effect once",
          "[executor]") {
  Fixture f;
  FakeStep tool = ok("", {});
  tool.tokens.clear();
  tool.result.tool_call = true;
  tool.result.tool_name = "record_label";
  tool.result.tool_call_id = "call_1";
  tool.result.tool_arguments = R"({"label":"cat"})";
  f.transport.script["primary"] = {tool, event(TransportEvent::timeout_no_byte, 0, {}, 5000)};
  WorkflowRequest req;
  req.tool_call = true;
  auto log = f.make().execute(req);
  REQUIRE(log.attempts.size() == 2);
  CHECK(log.attempts[0].tool_call);
  CHECK(log.attempts[1].kind == AttemptKind::initial);  // the second leg, not a retry
  REQUIRE(f.transport.sent[1].tool_turn.has_value());
  CHECK(f.transport.sent[1].tool_turn->call_id == "call_1");
  REQUIRE(log.failures.size() == 1);
  CHECK(log.failures[0].action == Action::fail_closed);
  CHECK(log.failures[0].rule == 2);
  CHECK(log.attempts[1].commit == CommitState::committed);
  REQUIRE(f.transport.side_effects.size() == 1);
  CHECK(f.transport.side_effects[0].first == log.operation_id);
  // Write-ahead: committed is journaled before the side effect, started before each send.
  CHECK(states(log) == std::vector<JournalState>{JournalState::requested, JournalState::started,
                                                 JournalState::committed, JournalState::started,
                                                 JournalState::acknowledged});
}

TEST_CASE("executor: a fallback answer missing a required field degrades or fails closed as configured",
          "[executor]") {
  for (bool degrade : {true, false}) {
    Fixture f;
    f.policy.workflow.output_required = {"label"};
    f.policy.workflow.degrade_allowed = degrade;
    f.policy.workflow.degrade_text = "default answer";
    f.transport.script["primary"] = {error(429, openai_quota)};
    f.transport.script["backup"] = {ok(R"({"confidence":0.9})")};
    WorkflowRequest req;
    std::string seen;
    req.on_token = [&](std::string_view t) { seen += t; };
    auto log = f.make().execute(req);
    REQUIRE(log.failures.size() == 2);
    CHECK(log.failures[0].action == Action::fallback);
    CHECK(log.attempts[1].owner == Owner::contract);
    CHECK(log.attempts[1].commit == CommitState::none);  // held back: the caller never saw it
    CHECK(log.attempts[1].reason.find("label") != std::string::npos);
    if (degrade) {
      CHECK(log.failures[1].action == Action::degrade);
      CHECK(log.outcome == Outcome::degraded);
      CHECK(log.text == "default answer");
      CHECK(seen == "default answer");
    } else {
      CHECK(log.failures[1].action == Action::fail_closed);
      CHECK(log.outcome == Outcome::fail_closed);
      CHECK(seen.empty());
    }
  }
}

TEST_CASE("executor: an open breaker is skipped in favour of the healthy fallback", "[executor]") {
  Fixture f;
  f.policy.routes["primary"].breaker.failure_threshold = 1;
  f.transport.script["primary"] = {error(503, openai_503)};
  auto& stack = f.make();
  auto first = stack.execute({});  // the 503 opens the breaker: no retry on an open breaker
  REQUIRE(first.failures.size() == 1);
  CHECK(first.failures[0].action == Action::fallback);
  CHECK(first.outcome == Outcome::fallback_recovery);

  f.transport.sent.clear();
  auto second = stack.execute({});
  REQUIRE(second.failures.size() == 1);
  CHECK(second.failures[0].attempt == -1);  // nothing was sent to the primary
  CHECK(second.failures[0].action == Action::fallback);
  CHECK(second.failures[0].rule == 5);
  CHECK(second.failures[0].inputs.find("breaker=open") != std::string::npos);
  CHECK(second.outcome == Outcome::fallback_recovery);
  CHECK(f.transport.attempts_on("primary") == 0);
  CHECK(f.transport.attempts_on("backup") == 1);
}

TEST_CASE("executor: retry-after 60 s with 8 s of SLO left and a healthy 2 s fallback falls back, not queue",
          "[executor]") {
  Fixture f;
  f.policy.workflow.max_elapsed_ms = 8000;
  f.policy.workflow.queue_allowed = true;
  f.policy.routes["backup"].expected_latency_ms = 2000;
  f.transport.script["primary"] = {error(429, openai_rate, {{"retry-after", "60"}})};
  f.transport.script["backup"] = {[] {
    auto s = ok();
    s.latency_ms = 2000;
    return s;
  }()};
  auto log = f.make().execute({});
  REQUIRE(log.failures.size() == 1);
  CHECK(log.failures[0].action == Action::fallback);
  CHECK(log.failures[0].rule == 5);
  CHECK(log.outcome == Outcome::fallback_recovery);
  CHECK(f.stack->queued() == 0);
  CHECK(log.elapsed_ms <= 8000);
}

TEST_CASE(
    "executor: a bare 500 is queued, not redelivered in the same call, and redelivery spends the same budget",
    "[executor]") {
  Fixture f;
  f.policy.workflow.queue_allowed = true;
  f.transport.script["primary"] = {error(500, openai_500), error(503, openai_503), ok()};
  auto& stack = f.make();
  auto log = stack.execute({});
  REQUIRE(log.failures.size() == 1);
  CHECK(log.failures[0].action == Action::queue);
  CHECK(log.failures[0].rule == 3);
  CHECK(log.outcome == Outcome::queued);
  CHECK_FALSE(log.answered);
  CHECK(f.transport.sent.size() == 1);
  CHECK(stack.queued() == 1);

  auto logs = stack.drain();
  REQUIRE(logs.size() == 1);
  const auto& again = logs[0];
  CHECK(again.delivery == 2);
  CHECK(again.operation_id == log.operation_id);  // the same Idempotency-Key
  CHECK(again.attempts.front().kind == AttemptKind::redelivery);
  CHECK(again.outcome == Outcome::retry_recovery);
  // 1 (first delivery) + 2 (redelivery) = the workflow's 3 attempts; the cost of the 2nd and 3rd is extra.
  CHECK(f.transport.sent.size() == 3);
  CHECK(again.extra_cost_usd == Approx(0.008));
  for (const auto& r : f.transport.sent) CHECK(r.operation_id == log.operation_id);
  CHECK(stack.queued() == 0);
}

TEST_CASE("executor: a queued request's redelivery does not call the first caller's token callback",
          "[executor]") {
  // The callback belongs to the call that queued the request (the gateway streams to its connection
  // from it); by the time of the drain that call has returned and what it captured is gone.
  Fixture f;
  f.policy.workflow.queue_allowed = true;
  f.transport.script["primary"] = {error(500, openai_500), ok()};
  auto& stack = f.make();
  int tokens_to_first_caller = 0;
  WorkflowRequest request;
  request.on_token = [&](std::string_view) { ++tokens_to_first_caller; };
  auto log = stack.execute(request);
  REQUIRE(log.outcome == Outcome::queued);
  auto logs = stack.drain();
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].outcome == Outcome::retry_recovery);
  CHECK(logs[0].answered);
  CHECK(tokens_to_first_caller == 0);
}

TEST_CASE("executor: a redelivery with no attempt left fails closed at the budget gate without sending",
          "[executor]") {
  Fixture f;
  f.policy.workflow.queue_allowed = true;
  f.policy.workflow.max_total_attempts = 1;
  f.transport.script["primary"] = {error(500, openai_500)};
  auto& stack = f.make();
  auto log = stack.execute({});
  CHECK(log.outcome == Outcome::queued);
  auto again = stack.redeliver_next();
  REQUIRE(again.has_value());
  CHECK(again->attempts.empty());
  REQUIRE(again->failures.size() == 1);
  CHECK(again->failures[0].rule == 0);
  CHECK(again->outcome == Outcome::fail_closed);
  CHECK(f.transport.sent.size() == 1);
  CHECK_FALSE(stack.redeliver_next().has_value());
}

TEST_CASE("executor: every layer draws on one attempt budget", "[executor]") {
  Fixture f;
  f.policy.workflow.max_total_attempts = 3;
  f.transport.script["primary"] = {error(503, openai_503), error(503, openai_503), error(503, openai_503)};
  f.transport.script["backup"] = {error(503, openai_503), error(503, openai_503)};
  auto log = f.make().execute({});
  CHECK(f.transport.sent.size() == 3);
  CHECK(log.attempts.size() == 3);
  CHECK(log.outcome == Outcome::fail_closed);
  CHECK(log.failures.back().inputs.find("attempts_left=0") != std::string::npos);
}

TEST_CASE("executor: request, auth and policy errors fail closed at once", "[executor]") {
  Fixture f;
  f.transport.script["primary"] = {error(
      401,
      R"({"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}})")};
  auto log = f.make().execute({});
  REQUIRE(log.failures.size() == 1);
  CHECK(log.failures[0].action == Action::fail_closed);
  CHECK(log.failures[0].rule == 1);
  CHECK(f.transport.sent.size() == 1);
  // A client error is not the route's fault: the breaker did not count it.
  CHECK(f.stack->breaker("primary")->consecutive_failures() == 0);
}

TEST_CASE("executor: a silent timeout is commit-unknown unless the workflow is replay-safe, then retried",
          "[executor]") {
  for (bool replay_safe : {false, true}) {
    Fixture f;
    f.policy.workflow.replay_safe = replay_safe;
    f.policy.workflow.queue_allowed = true;
    f.transport.script["primary"] = {event(TransportEvent::timeout_no_byte, 0, {}, 2000)};
    auto log = f.make().execute({});
    REQUIRE_FALSE(log.failures.empty());
    if (replay_safe) {
      CHECK(log.attempts[0].commit == CommitState::none);
      CHECK(log.attempts[0].owner == Owner::transient);
      CHECK(log.failures[0].action == Action::retry);  // transient, nothing committed, budget left: rule 4
      CHECK(log.failures[0].rule == 4);
    } else {
      CHECK(log.attempts[0].commit == CommitState::unknown);
      CHECK(log.failures[0].action == Action::fail_closed);
      CHECK(log.failures[0].rule == 2);
    }
  }
}

TEST_CASE("executor: the attempt timeout never outlives the time budget", "[executor]") {
  Fixture f;
  f.policy.workflow.max_elapsed_ms = 500;
  f.policy.workflow.attempt_timeout_ms = 2000;
  auto log = f.make().execute({});
  REQUIRE(f.transport.sent.size() == 1);
  CHECK(f.transport.sent[0].timeout_ms == 500);
  CHECK(log.outcome == Outcome::primary_success);
}

TEST_CASE("executor: the same seed gives the same backoff and operation ids", "[executor]") {
  auto run = [] {
    Fixture f;
    f.transport.script["primary"] = {error(503, openai_503), error(503, openai_503), ok()};
    auto log = f.make().execute({});
    std::vector<double> waits;
    for (const auto& p : log.failures) waits.push_back(p.wait_ms);
    return std::make_pair(log.operation_id, waits);
  };
  auto a = run(), b = run();
  CHECK(a == b);
  REQUIRE(a.second.size() == 2);
  CHECK(a.second[0] <= 200);  // full jitter under base * 2^0
  CHECK(a.second[1] <= 400);
}

TEST_CASE("executor: the journal goes to a file as well, one JSON line per state", "[executor]") {
  Fixture f;
  const auto path = (std::filesystem::temp_directory_path() /
                     ("llmchaos-exec-journal-" + std::to_string(::getpid()) + ".jsonl"))
                        .string();
  std::remove(path.c_str());
  auto& stack = f.make();
  stack.journal_to(path);
  f.transport.script["primary"] = {error(503, openai_503), ok()};
  auto log = stack.execute({});
  auto entries = read_journal_file(path);
  REQUIRE(entries.size() == log.journal.size());
  CHECK(entries.front().state == JournalState::requested);
  CHECK(entries.back().state == JournalState::acknowledged);
  CHECK(entries.back().detail == "retry_recovery");
  CHECK(unacknowledged(entries).empty());
  std::remove(path.c_str());
}

TEST_CASE("output contract: required fields of a JSON object answer", "[executor]") {
  CHECK(missing_output_fields(R"({"label":"a","x":1})", {"label"}).empty());
  CHECK(missing_output_fields(R"({"label":null})", {"label"}) == std::vector<std::string>{"label"});
  CHECK(missing_output_fields("not json", {"label", "score"}) == std::vector<std::string>{"label", "score"});
  CHECK(missing_output_fields("[1]", {"label"}) == std::vector<std::string>{"label"});
}

// ---------------------------------------------------------------------------------------------------
// Loopback: the same staging cases through HttpTransport against the real mock provider. One TOML
// document per case carries both the policy and the mock's scripts in the shared [route.NAME] tables.

namespace {

struct LiveStack {
  explicit LiveStack(const std::string& case_toml) {
    const auto doc = parse_toml(case_toml, "case.toml");
    policy = policy_from_toml(doc, "case.toml", true,
                              std::vector<std::string_view>(std::begin(mock::route_script_keys),
                                                            std::end(mock::route_script_keys)));
    auto script = mock::script_from_toml(
        doc, "case.toml",
        std::vector<std::string_view>(std::begin(route_policy_keys), std::end(route_policy_keys)), true);
    std::map<std::string, Endpoint> eps;
    for (const auto& [name, route] : script.routes) eps[name] = mock.endpoint(name, route.dialect);
    mock.server.engine().install(mock.ns, std::move(script));
    stack = std::make_unique<ClientStack>(policy, eps, clock, rng, transport);
  }

  // The mock's ledger after `n` attempts, each carrying the operation's Idempotency-Key.
  std::vector<LedgerEntry> ledger(std::size_t n, const std::vector<std::string>& operation_ids) {
    auto l = mock.ledger(n);
    REQUIRE(l.size() == n);
    for (const auto& e : l)
      CHECK(std::find(operation_ids.begin(), operation_ids.end(), e.idempotency_key) != operation_ids.end());
    return l;
  }
  static int on(const std::vector<LedgerEntry>& l, const std::string& route) {
    return static_cast<int>(
        std::count_if(l.begin(), l.end(), [&](const auto& e) { return e.route == route; }));
  }

  test::MockFixture mock;
  HttpTransport transport;
  SteadyClock clock;
  Rng rng{11};
  Policy policy;
  std::unique_ptr<ClientStack> stack;
};

// A fast workflow: tiny backoff and latencies, so every case runs in milliseconds. `workflow` keys
// override the defaults.
struct LiveCase {
  std::map<std::string, std::string> workflow;
  std::string primary_script;
  std::string backup_script = R"({ fault = "ok" })";
  std::string backup_latency_ms = "50";
  std::string extra;  // more tables

  std::string toml() const {
    std::map<std::string, std::string> wf = {{"primary", "\"primary\""},
                                             {"max_total_attempts", "3"},
                                             {"max_elapsed_ms", "6000"},
                                             {"attempt_timeout_ms", "1000"},
                                             {"fallback", "[\"backup\"]"}};
    for (const auto& [k, v] : workflow) wf[k] = v;
    std::string out = "[workflow]\n";
    for (const auto& [k, v] : wf) out += k + " = " + v + "\n";
    out += "[backoff]\nbase_ms = 5\ncap_ms = 20\n";
    out +=
        "[route.primary]\ndialect = \"openai\"\nexpected_latency_ms = 50\ntext = '{\"label\": \"cat\"}'\n"
        "script = [" +
        primary_script + "]\n";
    out += "[route.backup]\ndialect = \"anthropic\"\nexpected_latency_ms = " + backup_latency_ms +
           "\ntext = '{\"label\": \"dog\"}'\nscript = [" + backup_script + "]\n";
    return out + extra;
  }
};

std::string live_case(std::map<std::string, std::string> workflow, std::string primary_script,
                      std::string backup_script = R"({ fault = "ok" })", std::string backup_latency_ms = "50",
                      std::string extra = {}) {
  return LiveCase{std::move(workflow), std::move(primary_script), std::move(backup_script),
                  std::move(backup_latency_ms), std::move(extra)}
      .toml();
}

}  // namespace

TEST_CASE("loopback: rate 429 with a short retry-after retries the primary with the same key",
          "[executor][loopback]") {
  LiveStack live(live_case({}, R"({ fault = "rate_429", retry_after_ms = 30 })"));
  auto log = live.stack->execute({});
  REQUIRE(log.failures.size() == 1);
  CHECK(log.failures[0].action == Action::retry);
  CHECK(log.failures[0].rule == 4);
  CHECK(log.failures[0].wait_ms >= 30);
  CHECK(log.outcome == Outcome::retry_recovery);
  CHECK(log.text == R"({"label": "cat"})");
  auto l = live.ledger(2, {log.operation_id});
  CHECK(LiveStack::on(l, "primary") == 2);
  CHECK(l[0].fault == FaultKind::rate_429);
}

TEST_CASE("loopback: quota 429 falls back", "[executor][loopback]") {
  LiveStack live(live_case({}, R"({ fault = "quota_429" })"));
  auto log = live.stack->execute({});
  REQUIRE(log.failures.size() == 1);
  CHECK(log.failures[0].action == Action::fallback);
  CHECK(log.failures[0].rule == 5);
  CHECK(log.attempts[0].owner == Owner::quota);
  CHECK(log.outcome == Outcome::fallback_recovery);
  CHECK(log.route == "backup");
  CHECK(log.text == R"({"label": "dog"})");
  auto l = live.ledger(2, {log.operation_id});
  CHECK(LiveStack::on(l, "primary") == 1);
  CHECK(LiveStack::on(l, "backup") == 1);
}

TEST_CASE("loopback: a pre-stream 503 retries", "[executor][loopback]") {
  LiveStack live(live_case({}, R"({ fault = "overloaded" })"));
  WorkflowRequest req;
  req.stream = true;
  auto log = live.stack->execute(req);
  REQUIRE(log.failures.size() == 1);
  CHECK(log.failures[0].action == Action::retry);
  CHECK(log.attempts[0].status == 503);
  CHECK(log.attempts[0].owner == Owner::transient);
  CHECK(log.outcome == Outcome::retry_recovery);
  CHECK(LiveStack::on(live.ledger(2, {log.operation_id}), "primary") == 2);
}

TEST_CASE("loopback: a stream cut after visible tokens fails closed", "[executor][loopback]") {
  LiveStack live(live_case({}, R"({ fault = "stream_cut", cut_after_events = 1 })"));
  WorkflowRequest req;
  req.stream = true;
  std::string seen;
  req.on_token = [&](std::string_view t) { seen += t; };
  auto log = live.stack->execute(req);
  REQUIRE(log.failures.size() == 1);
  CHECK(log.failures[0].action == Action::fail_closed);
  CHECK(log.failures[0].rule == 2);
  CHECK(log.attempts[0].event == TransportEvent::stream_closed);
  CHECK(log.attempts[0].visible_tokens == 1);
  CHECK_FALSE(seen.empty());
  CHECK(log.outcome == Outcome::fail_closed);
  auto l = live.ledger(1, {log.operation_id});
  CHECK(l[0].outcome == AttemptOutcome::cut);
}

TEST_CASE("loopback: a stream cut before any visible token retries", "[executor][loopback]") {
  LiveStack live(live_case({}, R"({ fault = "stream_cut", cut_after_events = 0 })"));
  WorkflowRequest req;
  req.stream = true;
  auto log = live.stack->execute(req);
  REQUIRE(log.failures.size() == 1);
  CHECK(log.failures[0].action == Action::retry);
  CHECK(log.attempts[0].commit == CommitState::none);
  CHECK(log.outcome == Outcome::retry_recovery);
  CHECK(log.text == R"({"label": "cat"})");
  CHECK(LiveStack::on(live.ledger(2, {log.operation_id}), "primary") == 2);
}

TEST_CASE("loopback: a timeout after a tool commit fails closed with one side effect",
          "[executor][loopback]") {
  const bool stream = GENERATE(false, true);
  CAPTURE(stream);
  LiveStack live(live_case({{"attempt_timeout_ms", "200"}},
                           R"({ fault = "ok" }, { fault = "post_commit_timeout", hold_ms = 20000 })"));
  WorkflowRequest req;
  req.tool_call = true;
  req.stream = stream;
  auto log = live.stack->execute(req);
  REQUIRE(log.attempts.size() == 2);
  CHECK(log.attempts[0].tool_call);
  CHECK(log.attempts[1].event == TransportEvent::timeout_no_byte);
  REQUIRE(log.failures.size() == 1);
  CHECK(log.failures[0].action == Action::fail_closed);
  CHECK(log.failures[0].rule == 2);
  CHECK(log.outcome == Outcome::fail_closed);
  auto l = live.ledger(2, {log.operation_id});
  CHECK(l[1].committed);
  auto effects = live.mock.side_effects();
  REQUIRE(effects.size() == 1);  // no duplicate side effect
  CHECK(effects[0].operation_id == log.operation_id);
}

TEST_CASE("loopback: a fallback answer missing a required field degrades or fails closed as configured",
          "[executor][loopback]") {
  const bool degrade = GENERATE(true, false);
  CAPTURE(degrade);
  LiveStack live(live_case({{"output_required", R"(["label"])"},
                            {"degrade_text", R"("default answer")"},
                            {"degrade_allowed", degrade ? "true" : "false"}},
                           R"({ fault = "quota_429" })",
                           R"({ fault = "schema_missing", missing_field = "label" })"));
  auto log = live.stack->execute({});
  REQUIRE(log.failures.size() == 2);
  CHECK(log.failures[0].action == Action::fallback);
  CHECK(log.attempts[1].owner == Owner::contract);
  CHECK(log.failures[1].action == (degrade ? Action::degrade : Action::fail_closed));
  CHECK(log.failures[1].rule == 7);
  CHECK(log.outcome == (degrade ? Outcome::degraded : Outcome::fail_closed));
  CHECK(log.answered == degrade);
  auto l = live.ledger(2, {log.operation_id});
  CHECK(l[1].fault == FaultKind::schema_missing);
}

TEST_CASE("loopback: an open breaker sends the next request to the fallback", "[executor][loopback]") {
  LiveStack live(live_case({}, R"({ fault = "overloaded" })", R"({ fault = "ok", times = 2 })", "50",
                           "[route.primary.breaker]\nfailure_threshold = 1\nopen_ms = 60000\n"));
  auto first = live.stack->execute({});
  REQUIRE(first.failures.size() == 1);
  CHECK(first.failures[0].action == Action::fallback);  // the failure opened the breaker: no retry
  auto second = live.stack->execute({});
  REQUIRE(second.failures.size() == 1);
  CHECK(second.failures[0].attempt == -1);
  CHECK(second.failures[0].action == Action::fallback);
  CHECK(second.failures[0].rule == 5);
  CHECK(second.outcome == Outcome::fallback_recovery);
  auto l = live.ledger(3, {first.operation_id, second.operation_id});
  CHECK(LiveStack::on(l, "primary") == 1);  // the open breaker kept the second request off the primary
  CHECK(LiveStack::on(l, "backup") == 2);
}

TEST_CASE("loopback: retry-after 60 s with 8 s of SLO left and a healthy 2 s fallback falls back, not queue",
          "[executor][loopback]") {
  LiveStack live(live_case({{"max_elapsed_ms", "8000"}, {"queue_allowed", "true"}},
                           R"({ fault = "rate_429", retry_after_ms = 60000 })", R"({ fault = "ok" })",
                           "2000"));
  auto log = live.stack->execute({});
  REQUIRE(log.failures.size() == 1);
  CHECK(log.failures[0].action == Action::fallback);
  CHECK(log.failures[0].rule == 5);
  CHECK(log.failures[0].wait_ms == 0);  // the primary's retry-after does not hold the fallback back
  CHECK(log.outcome == Outcome::fallback_recovery);
  CHECK(live.stack->queued() == 0);
  auto l = live.ledger(2, {log.operation_id});
  CHECK(LiveStack::on(l, "primary") == 1);
  CHECK(LiveStack::on(l, "backup") == 1);
}

TEST_CASE("loopback: a bare 500 is queued and its redelivery reuses the key and the budget",
          "[executor][loopback]") {
  LiveStack live(live_case({{"queue_allowed", "true"}}, R"({ fault = "server_500" })"));
  auto log = live.stack->execute({});
  REQUIRE(log.failures.size() == 1);
  CHECK(log.failures[0].action == Action::queue);
  CHECK(log.outcome == Outcome::queued);
  CHECK(live.mock.ledger(1).size() == 1);  // not redelivered within execute()
  auto again = live.stack->drain();
  REQUIRE(again.size() == 1);
  CHECK(again[0].outcome == Outcome::retry_recovery);  // recovered by the redelivery, not a primary success
  CHECK(again[0].delivery == 2);
  auto l = live.ledger(2, {log.operation_id});
  CHECK(LiveStack::on(l, "primary") == 2);
}

TEST_CASE("executor: a quota cooldown keeps the route out across requests, then the route serves again",
          "[executor][cooldown]") {
  Fixture f;
  f.policy.routes["primary"].quota_cooldown_ms = 60'000;
  f.transport.script["primary"] = {error(429, openai_quota)};
  auto& stack = f.make();
  CHECK(stack.execute({}).route == "backup");
  f.clock.sleep_ms(1000);
  const auto during = stack.execute({});  // primary cooling: skipped, nothing sent
  REQUIRE(during.failures.size() == 1);
  CHECK(during.failures[0].attempt == -1);
  CHECK(during.failures[0].action == Action::fallback);
  CHECK_THAT(during.failures[0].inputs, Catch::Contains("backup"));
  CHECK(during.route == "backup");
  CHECK(f.transport.attempts_on("primary") == 1);
  f.clock.sleep_ms(60'000);
  CHECK(stack.execute({}).route == "primary");
  CHECK(f.transport.attempts_on("primary") == 2);
}

TEST_CASE("executor: a timeout cools nothing; every route cooling fails closed with the soonest wait",
          "[executor][cooldown]") {
  Fixture f;
  f.policy.workflow.replay_safe = true;
  for (const char* r : {"primary", "backup"}) f.policy.routes[r].quota_cooldown_ms = 30'000;
  f.transport.script["primary"] = {event(TransportEvent::timeout_no_byte, 0, {}, 5000)};
  auto& stack = f.make();
  CHECK(stack.execute({}).route == "primary");  // the caller's own timeout, then a retry of the same route
  f.transport.script["primary"] = {error(429, openai_quota)};
  f.transport.script["backup"] = {error(429, openai_quota)};
  const auto refused = stack.execute({});
  CHECK(refused.outcome == Outcome::fail_closed);
  REQUIRE(refused.retry_after_ms);
  CHECK(*refused.retry_after_ms == Approx(30'000 - 10).margin(1));  // the primary's cooldown, 10 ms older
  f.clock.sleep_ms(40'000);
  CHECK_FALSE(stack.execute({}).retry_after_ms);  // both free again: served
}

TEST_CASE("executor: with rate_cooldown a Retry-After outlives its request: fall back, or wait the rest",
          "[executor][cooldown]") {
  Fixture f;
  f.policy.workflow.max_elapsed_ms = 2500;
  f.policy.routes["primary"].rate_cooldown = true;
  f.transport.script["primary"] = {error(429, openai_rate, {{"retry-after-ms", "3000"}})};
  auto& stack = f.make();
  CHECK(stack.execute({}).route == "backup");  // 3 s + 0.8 s do not fit in 2.5 s: rule 5
  f.clock.sleep_ms(1000);
  const auto second = stack.execute({});  // 2 s of cooldown left + 0.8 s: still no fit, nothing sent
  REQUIRE(second.failures.size() == 1);
  CHECK(second.failures[0].attempt == -1);
  CHECK(second.failures[0].action == Action::fallback);
  CHECK(second.route == "backup");
  CHECK(f.transport.attempts_on("primary") == 1);
  f.clock.sleep_ms(1000);
  const auto third = stack.execute({});  // 1 s left: rule 4 waits it out, then the primary serves
  REQUIRE(third.failures.size() == 1);
  CHECK(third.failures[0].action == Action::retry);
  CHECK(third.failures[0].wait_ms == Approx(980).margin(1));
  CHECK(third.route == "primary");
  CHECK(f.transport.sent.back().endpoint.route == "primary");
}
