// The engine: which step an attempt gets (times, until_ms windows, then), the ledger and the metrics,
// on a manual clock.
#include <catch2/catch.hpp>

#include "llmchaos/core/clock.hpp"
#include "llmchaos/mockprovider/engine.hpp"
#include "llmchaos/mockprovider/fault.hpp"

using namespace llmchaos;
using namespace llmchaos::mock;

namespace {
IncomingRequest chat(const std::string& route = "r", const std::string& ns = "", bool stream = false) {
  IncomingRequest r;
  r.ns = ns;
  r.route = route;
  r.path = "/v1/chat/completions";
  r.body = std::string(R"({"model":"gpt-x","messages":[{"role":"user","content":"hi"}],"stream":)") +
           (stream ? "true" : "false") + "}";
  return r;
}

Script script_of(const std::string& toml) {
  return parse_script_text(toml, "t.toml");
}

// Faults of the next n attempts (each finished at once).
std::vector<FaultKind> faults(Engine& e, int n, const std::string& ns = "") {
  std::vector<FaultKind> out;
  for (int i = 0; i < n; ++i) {
    auto a = e.begin(chat("r", ns));
    out.push_back(a.plan.fault);
    e.finish(a.seq, AttemptOutcome::completed, 0, a.plan.status);
  }
  return out;
}
}  // namespace

TEST_CASE("steps apply in order, each for its times, then the then-fault", "[engine]") {
  ManualClock clock;
  Engine e(clock);
  e.install("", script_of(R"([route.r]
script = [{ fault = "rate_429", times = 2 }, { fault = "ok" }]
then = "server_500")"));
  CHECK(faults(e, 5) == std::vector<FaultKind>{FaultKind::rate_429, FaultKind::rate_429, FaultKind::ok,
                                               FaultKind::server_500, FaultKind::server_500});
}

TEST_CASE("an until_ms step covers every attempt inside its window, then the script moves on", "[engine]") {
  ManualClock clock(1000);  // install time is the window's origin, not the clock's zero
  Engine e(clock);
  e.install("", script_of(R"([route.r]
script = [{ fault = "overloaded", until_ms = 60000 }, { fault = "quota_429" }])"));
  CHECK(faults(e, 3) == std::vector<FaultKind>(3, FaultKind::overloaded));
  clock.advance(59999);
  CHECK(faults(e, 1) == std::vector<FaultKind>{FaultKind::overloaded});
  clock.advance(1);
  CHECK(faults(e, 2) == std::vector<FaultKind>{FaultKind::quota_429, FaultKind::ok});
}

TEST_CASE("a window that passed unused is skipped, times inside a window caps it", "[engine]") {
  ManualClock clock;
  Engine e(clock);
  e.install("", script_of(R"([route.r]
script = [{ fault = "auth", until_ms = 10 }, { fault = "rate_429", until_ms = 100, times = 1 }, { fault = "policy" }])"));
  clock.advance(20);  // the auth window is over before any attempt
  CHECK(faults(e, 3) == std::vector<FaultKind>{FaultKind::rate_429, FaultKind::policy, FaultKind::ok});
}

TEST_CASE("time_scale shrinks windows and delays alike", "[engine]") {
  ManualClock clock;
  Engine e(clock, 0.01);
  e.install("", script_of(R"([route.r]
script = [{ fault = "overloaded", until_ms = 60000, latency_ms = 500 }])"));
  auto a = e.begin(chat());
  CHECK(a.plan.fault == FaultKind::overloaded);
  CHECK(a.plan.latency_ms == Approx(5.0));
  clock.advance(600);  // 60 s scaled by 0.01
  CHECK(e.begin(chat()).plan.fault == FaultKind::ok);
}

TEST_CASE("the ledger records every attempt with its request facts in arrival order", "[engine]") {
  ManualClock clock(50);
  Engine e(clock);
  e.install("ns1", script_of("[route.r]\nscript = [{ fault = \"rate_429\" }]\n"));
  clock.advance(7);
  auto req = chat("r", "ns1");
  req.headers = {{"idempotency-key", "op-1"}, {"x-stainless-retry-count", "0"}, {"x-request-id", "req_abc"}};
  auto a = e.begin(req);
  clock.advance(3);
  e.finish(a.seq, AttemptOutcome::completed, 0, 429);
  req.headers = {{"idempotency-key", "op-1"}, {"x-stainless-retry-count", "1"}};
  auto b = e.begin(req);
  e.finish(b.seq, AttemptOutcome::completed, 0, 200);
  const auto l = e.ledger("ns1");
  REQUIRE(l.size() == 2);
  CHECK(l[0].seq < l[1].seq);
  CHECK(l[0].ns == "ns1");
  CHECK(l[0].route == "r");
  CHECK(l[0].dialect == Dialect::openai);
  CHECK(l[0].attempt == 0);
  CHECK(l[1].attempt == 1);
  CHECK(l[0].received_at_ms == Approx(7));
  CHECK(l[0].finished_at_ms == Approx(10));
  CHECK(l[0].path == "/v1/chat/completions");
  CHECK(l[0].model == "gpt-x");
  CHECK(l[0].idempotency_key == "op-1");
  CHECK(l[0].stainless_retry_count == "0");
  CHECK(l[1].stainless_retry_count == "1");
  CHECK(l[0].request_id == "req_abc");  // echoed
  CHECK(a.plan.request_id == "req_abc");
  CHECK_FALSE(l[1].request_id.empty());
  CHECK(l[0].fault == FaultKind::rate_429);
  CHECK(l[0].status == 429);
  CHECK(l[1].fault == FaultKind::ok);
  CHECK(l[0].finished);
  CHECK_FALSE(l[0].committed);
  CHECK(l[1].committed);  // a whole plain answer was written
  CHECK(e.ledger("other").empty());
  CHECK(e.ledger_all().size() == 2);
}

TEST_CASE(
    "x-request-id wins over request-id, the first of each header counts, and a set idempotency key wins",
    "[engine][ledger]") {
  ManualClock clock;
  Engine e(clock);
  e.install("", script_of("[route.r]\n"));
  auto req = chat();
  req.headers = {{"request-id", "plain-1"},    {"x-request-id", "x-1"},
                 {"x-request-id", "x-2"},      {"idempotency-key", "from-header"},
                 {"idempotency-key", "other"}, {"x-stainless-retry-count", "2"}};
  const auto a = e.begin(req);
  req.headers = {{"x-request-id", ""}, {"request-id", "plain-2"}};
  req.idempotency_key = "set-by-caller";
  const auto b = e.begin(req);
  req.headers.clear();
  req.idempotency_key.clear();
  const auto c = e.begin(req);
  const auto l = e.ledger("");
  REQUIRE(l.size() == 3);
  CHECK(l[0].request_id == "x-1");
  CHECK(a.plan.request_id == "x-1");
  CHECK(l[0].idempotency_key == "from-header");
  CHECK(l[0].stainless_retry_count == "2");
  CHECK(l[1].request_id == "plain-2");  // an empty x-request-id: request-id's
  CHECK(l[1].idempotency_key == "set-by-caller");
  CHECK(l[2].request_id == "req_" + std::to_string(c.seq));  // none: the mock's own
  CHECK(c.plan.request_id == l[2].request_id);
  CHECK(l[2].idempotency_key.empty());
}

TEST_CASE(
    "the ledger reads back each attempt's own model, path, request id and upstream facts among many alike",
    "[engine][ledger]") {
  ManualClock clock;
  Engine e(clock);
  e.install("", script_of("[route.r]\n[route.s]\n"));
  std::vector<std::uint64_t> seqs;
  for (int i = 0; i < 40; ++i) {  // interned names: most attempts share route, path and model
    auto req = chat(i % 2 ? "s" : "r", "");
    if (i == 7) req.body = R"({"model":"other-model","messages":[{"role":"user","content":"hi"}]})";
    if (i == 9) req.path = "/v1/models/x";  // a request error, ledgered with its own path
    if (i == 11) req.headers = {{"request-id", "client-id-11"}};
    auto a = e.begin(req);
    seqs.push_back(a.seq);
    if (i == 13) e.note_upstream(a.seq, 503, 1.5, 2.5);
    if (i != 20) e.finish(a.seq, AttemptOutcome::completed, 0, a.plan.status);  // 20 is still in flight
  }
  const auto l = e.ledger("");
  REQUIRE(l.size() == 40);
  for (std::size_t i = 0; i < l.size(); ++i) {
    INFO("attempt " << i);
    CHECK(l[i].seq == seqs[i]);
    CHECK(l[i].route == (i % 2 ? "s" : "r"));
    CHECK(l[i].attempt == static_cast<int>(i / 2));
    CHECK(l[i].model == (i == 7 ? "other-model" : i == 9 ? "" : "gpt-x"));
    CHECK(l[i].path == (i == 9 ? "/v1/models/x" : "/v1/chat/completions"));
    CHECK(l[i].request_id == (i == 11 ? std::string("client-id-11") : "req_" + std::to_string(seqs[i])));
    CHECK(l[i].forwarded == (i == 13));
    CHECK(l[i].upstream_status == (i == 13 ? 503 : 0));
    CHECK(l[i].upstream_head_ms == (i == 13 ? 1.5 : 0.0));
    CHECK(l[i].upstream_ms == (i == 13 ? 2.5 : 0.0));
    CHECK(l[i].finished == (i != 20));
    CHECK(l[i].idempotency_key.empty());
    CHECK(l[i].resume_of == 0);
    CHECK(l[i].starting_after == -1);
  }
  e.reset("");
  CHECK(e.ledger("").empty());
  e.begin(chat("r", ""));
  REQUIRE(e.ledger("").size() == 1);
  CHECK(e.ledger("")[0].route == "r");
  CHECK(e.ledger("")[0].attempt == 0);
}

TEST_CASE("commit: post_commit_timeout is committed on arrival, streams once a content event left",
          "[engine]") {
  ManualClock clock;
  Engine e(clock);
  e.install("", script_of(R"([route.r]
script = [{ fault = "post_commit_timeout", hold_ms = 1 }, { fault = "stream_cut", cut_after_events = 0 },
          { fault = "stream_cut", cut_after_events = 2 }, { fault = "no_response" }])"));
  auto hold = e.begin(chat());
  CHECK(e.ledger("")[0].committed);  // before the hold starts
  CHECK_FALSE(e.ledger("")[0].finished);
  e.finish(hold.seq, AttemptOutcome::held_then_closed, 0, 0);
  auto cut0 = e.begin(chat("r", "", true));
  e.finish(cut0.seq, AttemptOutcome::cut, 0, 200);
  auto cut2 = e.begin(chat("r", "", true));
  e.finish(cut2.seq, AttemptOutcome::cut, 2, 200);
  auto none = e.begin(chat());
  e.finish(none.seq, AttemptOutcome::held_then_closed, 0, 0);
  const auto l = e.ledger("");
  CHECK(l[0].outcome == AttemptOutcome::held_then_closed);
  CHECK_FALSE(l[1].committed);
  CHECK(l[2].committed);
  CHECK(l[2].events_sent == 2);
  CHECK(l[2].outcome == AttemptOutcome::cut);
  CHECK_FALSE(l[3].committed);
}

TEST_CASE("reset clears the ledger and the script position, install replaces the script", "[engine]") {
  ManualClock clock;
  Engine e(clock);
  e.install("", script_of("[route.r]\nscript = [{ fault = \"auth\" }]\n"));
  CHECK(faults(e, 2) == std::vector<FaultKind>{FaultKind::auth, FaultKind::ok});
  e.reset("");
  CHECK(e.ledger("").empty());
  CHECK(faults(e, 1) == std::vector<FaultKind>{FaultKind::auth});
  e.install("", script_of("[route.r]\nscript = [{ fault = \"policy\" }]\n"));
  CHECK(e.ledger("").empty());
  CHECK(faults(e, 1) == std::vector<FaultKind>{FaultKind::policy});
  CHECK(e.ledger("")[0].attempt == 0);
}

TEST_CASE("namespaces keep their own scripts, positions and ledgers", "[engine]") {
  ManualClock clock;
  Engine e(clock);
  e.install("a", script_of("[route.r]\nscript = [{ fault = \"auth\" }]\n"));
  e.install("b", script_of("[route.r]\nscript = [{ fault = \"policy\" }]\n"));
  CHECK(faults(e, 1, "a") == std::vector<FaultKind>{FaultKind::auth});
  CHECK(faults(e, 1, "b") == std::vector<FaultKind>{FaultKind::policy});
  CHECK(e.ledger("a").size() == 1);
  CHECK(e.has_route("a", "r"));
  CHECK_FALSE(e.has_route("c", "r"));
  e.remove("a");
  CHECK_FALSE(e.has_route("a", "r"));
  CHECK(e.begin(chat("r", "a")).seq == 0);  // unknown: answered 404, not ledgered
}

TEST_CASE("a malformed request is ledgered as bad_request and takes no script step", "[engine]") {
  ManualClock clock;
  Engine e(clock);
  e.install("", script_of("[route.r]\nscript = [{ fault = \"auth\" }]\n"));
  auto bad = chat();
  bad.body = "{oops";
  auto a = e.begin(bad);
  CHECK(a.plan.status == 400);
  CHECK(a.plan.fault == FaultKind::bad_request);
  auto wrong_path = chat();
  wrong_path.path = "/v1/nope";
  CHECK(e.begin(wrong_path).plan.status == 404);
  CHECK(e.ledger("").size() == 2);
  CHECK(faults(e, 1) == std::vector<FaultKind>{FaultKind::auth});
  auto models = chat();
  models.method = "GET";
  models.path = "/v1/models";
  auto m = e.begin(models);
  CHECK(m.seq == 0);
  CHECK(m.plan.status == 200);
  CHECK(e.ledger("").size() == 3);
}

TEST_CASE("side effects are recorded per namespace in order", "[engine]") {
  ManualClock clock;
  Engine e(clock);
  e.record_side_effect("n", "op-1", "create_ticket");
  e.record_side_effect("n", "op-1", "create_ticket");
  e.record_side_effect("m", "op-2", "x");
  const auto s = e.side_effects("n");
  REQUIRE(s.size() == 2);
  CHECK(s[0].operation_id == "op-1");
  CHECK(s[0].seq < s[1].seq);
  CHECK(e.side_effects_all().size() == 3);
}

TEST_CASE("metrics count finished attempts by route, fault and outcome", "[engine]") {
  ManualClock clock;
  Engine e(clock);
  e.install("", script_of("[route.r]\nscript = [{ fault = \"rate_429\", times = 2 }]\n"));
  faults(e, 3);
  e.count_event("idle_timeout");
  const auto text = e.metrics_text();
  CHECK(text.find("llmchaos_attempts_total{route=\"r\",fault=\"rate_429\",outcome=\"completed\"} 2\n") !=
        std::string::npos);
  CHECK(text.find("llmchaos_attempts_total{route=\"r\",fault=\"ok\",outcome=\"completed\"} 1\n") !=
        std::string::npos);
  CHECK(text.find("# TYPE llmchaos_attempts_total counter") != std::string::npos);
  CHECK(text.find("llmchaos_server_events_total{event=\"idle_timeout\"} 1") != std::string::npos);
  CHECK(text.find("llmchaos_attempts_in_flight 0") != std::string::npos);
}

TEST_CASE("the healthy answer: step text over route text, step model over the request's, tool rule",
          "[engine]") {
  RouteScript route;
  route.default_text = "route text";
  Step step;
  ChatRequest req;
  req.model = "asked";
  auto a = healthy_answer(route, step, req, 1);
  CHECK(a.text() == "route text");
  CHECK(a.model == "asked");
  CHECK(a.tool_name.empty());
  step.text = "step text";
  step.model = "answered";
  a = healthy_answer(route, step, req, 1);
  CHECK(a.text() == "step text");
  CHECK(a.model == "answered");
  req.tools = {"create_ticket", "other"};
  a = healthy_answer(route, step, req, 1);
  CHECK(a.tool_name == "create_ticket");
  CHECK(a.finish == Finish::tool_call);
  req.last_is_tool_result = true;
  CHECK(healthy_answer(route, step, req, 1).tool_name.empty());
  req.model.clear();
  step.model.reset();
  CHECK(healthy_answer(route, step, req, 1).model == "mock-model");
}

namespace {
// The planned latencies of n `slow` attempts on namespace ns (each finished at once).
std::vector<double> slow_draws(Engine& e, const std::string& ns, int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    auto a = e.begin(chat("r", ns));
    out.push_back(a.plan.latency_ms);
    e.finish(a.seq, AttemptOutcome::completed, 0, a.plan.status);
  }
  return out;
}
const char* slow_script = R"([route.r]
script = [{ fault = "slow", p50_ms = 50, p95_ms = 500, times = 100 }]
)";
}  // namespace

TEST_CASE("each namespace draws from its own generator, seeded from (engine seed, namespace)",
          "[engine][seed]") {
  ManualClock clock;
  Engine alone(clock, 1.0, 42), busy(clock, 1.0, 42), other(clock, 1.0, 43);
  alone.install("a", script_of(slow_script));
  const auto expected = slow_draws(alone, "a", 5);
  // The same namespace on an engine whose other namespace draws in between: the same draws.
  busy.install("a", script_of(slow_script));
  busy.install("b", script_of(slow_script));
  std::vector<double> interleaved;
  for (int i = 0; i < 5; ++i) {
    slow_draws(busy, "b", 2);
    interleaved.push_back(slow_draws(busy, "a", 1).front());
  }
  CHECK(interleaved == expected);
  // Another namespace, or another engine seed (serve --seed), draws others.
  CHECK(slow_draws(busy, "b", 5) != expected);
  other.install("a", script_of(slow_script));
  CHECK(slow_draws(other, "a", 5) != expected);
  // An explicit seed wins over the derived one; reset restarts the generator.
  Engine explicit_seed(clock, 1.0, 0);
  explicit_seed.install("x", script_of(slow_script), 99);
  const auto first = slow_draws(explicit_seed, "x", 3);
  explicit_seed.reset("x");
  CHECK(slow_draws(explicit_seed, "x", 3) == first);
  Engine same(clock, 1.0, 12345);
  same.install("y", script_of(slow_script), 99);
  CHECK(slow_draws(same, "y", 3) == first);
  // The ledger keeps the planned latency of each attempt.
  CHECK(explicit_seed.ledger("x").back().planned_latency_ms == first.back());
}
