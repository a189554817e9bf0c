// The session API's pure phases on literal inputs (no server, no clock).
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "../harness/builders.hpp"
#include "llmchaos/sessions/phases.hpp"

using namespace llmchaos;
using namespace llmchaos::sessions;
using harness::test::entry;
using harness::test::find_check;
using harness::test::make_case;

namespace {
harness::History requests_of(std::vector<LedgerEntry> ledger, int count = 1) {
  harness::History h;
  h.ledger = std::move(ledger);
  for (int i = 0; i < count; ++i) {
    harness::RequestRecord r;
    r.log.operation_id = i == 0 ? harness::test::op : "op-" + std::to_string(i + 1);
    h.requests.push_back(r);
  }
  return h;
}
const std::string served_by_backup =
    R"({"outcome":"success","text":"hello from the mock provider","route":"backup","model":"mock-model"})";
}  // namespace

TEST_CASE("session paths name their call; others are 404, other methods 405", "[sessions]") {
  auto call = [](std::string_view m, std::string_view p) { return std::get<Call>(route_call(m, p)); };
  CHECK(call("POST", "sessions").op == Op::create);
  CHECK(call("GET", "sessions").op == Op::list);
  CHECK(call("GET", "sessions/ab1").op == Op::show);
  CHECK(call("GET", "sessions/ab1").id == "ab1");
  CHECK(call("DELETE", "sessions/ab1").op == Op::end);
  CHECK(call("POST", "sessions/ab1/finish").op == Op::finish);
  CHECK(call("POST", "sessions/ab1/alive").op == Op::probe);
  CHECK(call("POST", "sessions/reports").op == Op::reports);
  CHECK(std::get<ApiError>(route_call("GET", "sessions/reports")).status == 405);
  CHECK(std::get<std::string>(read_reports_body(R"({"dir": "out"})")) == "out");
  CHECK(std::get<ApiError>(read_reports_body(R"({"folder": "out"})")).status == 400);
  CHECK(std::get<ApiError>(route_call("GET", "sessions/ab1/finish")).status == 405);
  CHECK(std::get<ApiError>(route_call("PUT", "sessions")).status == 405);
  CHECK(std::get<ApiError>(route_call("POST", "sessions/ab1/verdict")).status == 404);
  CHECK(std::get<ApiError>(route_call("POST", "sessions/a/b/c/d")).status == 404);
}

TEST_CASE("a create body is TOML text, or a JSON object naming case_path", "[sessions]") {
  auto text = read_create_body("name = \"x\"\nexpect = \"none\"\n");
  REQUIRE(std::holds_alternative<CaseSource>(text));
  CHECK(std::get<CaseText>(std::get<CaseSource>(text)).text.starts_with("name"));
  auto path = read_create_body(R"(  {"case_path": "cases/a.toml"})");
  REQUIRE(std::holds_alternative<CaseSource>(path));
  CHECK(std::get<CasePath>(std::get<CaseSource>(path)).path == "cases/a.toml");
  CHECK(std::get<ApiError>(read_create_body(R"({"path": "x"})")).message.find("case_path") !=
        std::string::npos);
  CHECK(std::get<ApiError>(read_create_body("{nope")).status == 400);
  CHECK(std::get<ApiError>(read_create_body("  \n")).status == 400);
}

TEST_CASE("finish takes one contract object per request, each with an outcome", "[sessions]") {
  auto one = read_seen(R"({"outcome": "success", "text": "t"})", 1);
  REQUIRE(std::holds_alternative<std::vector<std::string>>(one));
  CHECK(std::get<std::vector<std::string>>(one).size() == 1);
  auto seq = read_seen(R"([{"outcome": "success"}, {"outcome": "fail_closed"}])", 2);
  REQUIRE(std::holds_alternative<std::vector<std::string>>(seq));
  CHECK(std::get<std::vector<std::string>>(seq)[1].find("fail_closed") != std::string::npos);
  CHECK(std::get<ApiError>(read_seen(R"({"outcome": "success"})", 3))
            .message.find("1 object(s) for 3 request(s)") != std::string::npos);
  CHECK(std::get<ApiError>(read_seen(R"([{"text": "x"}])", 1)).message.find("object 1 has no \"outcome\"") !=
        std::string::npos);
  CHECK(std::get<ApiError>(read_seen("not json", 1)).status == 400);
  CHECK(std::get<ApiError>(read_seen("42", 1)).status == 400);
}

TEST_CASE("judge: a quota 429 retried on the same route fails the action check, by the ledger",
          "[sessions]") {
  auto c = make_case(Action::fallback);
  auto h = requests_of({entry(1, "primary", 0, FaultKind::quota_429, 429),
                        entry(2, "primary", 1, FaultKind::ok, 200, 5, 6),
                        entry(3, "backup", 0, FaultKind::ok, 200, 7, 8)});
  auto r = judge(c, h, {served_by_backup}, {});
  CHECK(r.verdict == harness::Verdict::fail);
  CHECK(r.observed == Action::retry);
  const auto* action = find_check(r, "action");
  REQUIRE(action);
  CHECK_FALSE(action->ok);
  CHECK_THAT(verdict_summary(r), Catch::Contains("case \"literal\"") &&
                                     Catch::Contains("fail: expected fallback, observed retry") &&
                                     Catch::Contains("; action: expected fallback"));
}

TEST_CASE("judge: the fallback the case expects passes; a bare success takes its outcome from the ledger",
          "[sessions]") {
  auto c = make_case(Action::fallback);
  c.expect_outcome = Outcome::fallback_recovery;
  auto h = requests_of(
      {entry(1, "primary", 0, FaultKind::quota_429, 429), entry(2, "backup", 0, FaultKind::ok, 200, 3, 4)});
  auto r = judge(c, h, {served_by_backup}, {});
  CHECK(r.verdict == harness::Verdict::pass);
  REQUIRE(r.logs.size() == 1);
  CHECK(r.logs[0].outcome == Outcome::fallback_recovery);
  CHECK(r.logs[0].elapsed_ms == Approx(4));  // first arrival to last answer, as exec
  auto v = verdict_json(r);
  CHECK(v.at("verdict").as_string() == "pass");
  CHECK(v.at("actions").as_array().at(0).as_string() == "fallback");
  CHECK(v.at("timeline").as_array().size() == 2);
  CHECK(v.at("checks").as_array().at(0).as_object().contains("passed"));
}

TEST_CASE("judge: an outcome the contract does not know is unknown (error: contract), as exec",
          "[sessions]") {
  auto c = make_case(Action::none);
  auto r =
      judge(c, requests_of({entry(1, "primary", 0, FaultKind::ok, 200)}), {R"({"outcome": "splendid"})"}, {});
  CHECK(r.verdict == harness::Verdict::unknown);
  CHECK(r.unknown_reason == "error: contract");
  CHECK_THAT(verdict_summary(r), Catch::Contains("unknown (error: contract)") && Catch::Contains("splendid"));
}

TEST_CASE("judge: a sequence's attempts go to their request by Idempotency-Key", "[sessions]") {
  auto c = make_case(Action::none);
  harness::Sequence two;
  two.count = 2;
  c.sequence = two;
  auto h = requests_of(
      {entry(1, "primary", 0, FaultKind::ok, 200, 0, 1),
       entry(2, "primary", 1, FaultKind::server_500, 500, 2, 3, AttemptOutcome::completed, false, "op-2"),
       entry(3, "backup", 0, FaultKind::ok, 200, 4, 5, AttemptOutcome::completed, false, "op-2")},
      2);
  const std::string ok = R"({"outcome":"success","text":"hello from the mock provider"})";
  auto r = judge(c, h, {ok, ok}, {});
  REQUIRE(r.logs.size() == 2);
  CHECK(r.logs[0].outcome == Outcome::primary_success);
  CHECK(r.logs[1].outcome == Outcome::fallback_recovery);
  CHECK(r.logs[1].route == "backup");
}

TEST_CASE("judge: an exact_time case is n/a (only a virtual clock plays it)", "[sessions]") {
  auto c = make_case(Action::retry);
  c.exact_time = true;
  auto r = judge(c, requests_of({}), {R"({"outcome":"success"})"}, {});
  CHECK(r.verdict == harness::Verdict::na);
  CHECK(verdict_json(r).at("verdict").as_string() == "n/a");
}

TEST_CASE("sessions expire after their TTL without a call", "[sessions]") {
  const std::map<std::string, double> last{{"a", 0}, {"b", 900}, {"c", 1000}};
  CHECK(expired(last, 1000, 500) == std::vector<std::string>{"a"});
  CHECK(expired(last, 1600, 500) == std::vector<std::string>{"a", "b", "c"});
  CHECK(expired(last, 1000, 5000).empty());
}

TEST_CASE("caller_base_url: --public-url, else the caller's Host, else the server's own",
          "[sessions][issue42]") {
  CHECK(caller_base_url("127.0.0.1:49153", "", "http://0.0.0.0:8080") == "http://127.0.0.1:49153");
  CHECK(caller_base_url("[::1]:8080", "", "x") == "http://[::1]:8080");
  CHECK(caller_base_url("llmchaos.staging.svc:8080", "", "x") == "http://llmchaos.staging.svc:8080");
  CHECK(caller_base_url("127.0.0.1:1", "https://chaos.example/mock", "x") == "https://chaos.example/mock");
  CHECK(caller_base_url("", "", "http://127.0.0.1:9") == "http://127.0.0.1:9");
  for (std::string_view hostile : {"evil.example/path", "a b", "evil@x", "x\r\ny: z", "h?q", "h#f"})
    CHECK(caller_base_url(hostile, "", "http://127.0.0.1:9") == "http://127.0.0.1:9");
}

TEST_CASE("over_session_limit: 429 with the seconds until the oldest session expires",
          "[sessions][issue42]") {
  CHECK_FALSE(over_session_limit(2, 3, 0, 1000, 60'000));
  const auto full = over_session_limit(3, 3, 1000, 11'000, 60'000);
  REQUIRE(full);
  CHECK(full->status == 429);
  REQUIRE(full->headers.size() == 1);
  CHECK(full->headers[0] == std::pair<std::string, std::string>{"retry-after", "50"});
  CHECK(over_session_limit(3, 3, 0, 60'000, 60'000)->headers[0].second == "1");  // never 0
}

TEST_CASE("a case_path or reports dir with a NUL byte is a 400, not a truncated path",
          "[sessions][issue42]") {
  const auto create = read_create_body(R"({"case_path": "staging/x\u0000.toml"})");
  REQUIRE(std::holds_alternative<ApiError>(create));
  CHECK(std::get<ApiError>(create).status == 400);
  CHECK(std::get<ApiError>(create).message.find("NUL") != std::string::npos);
  const auto reports = read_reports_body(R"({"dir": "a\u0000b"})");
  REQUIRE(std::holds_alternative<ApiError>(reports));
  CHECK(std::get<ApiError>(reports).status == 400);
}
