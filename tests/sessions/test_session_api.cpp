// The session API over real sockets: a MockServer with the API wired in as `serve` wires it, a case
// created over HTTP, a real provider request against its route, finish, verdict.
#include <fmt/format.h>

#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>

#include "cli_run.hpp"
#include "llmchaos/core/atomic_file.hpp"
#include "llmchaos/core/clock.hpp"
#include "llmchaos/core/file_text.hpp"
#include "llmchaos/mockprovider/server.hpp"
#include "llmchaos/net/http_call.hpp"
#include "llmchaos/sessions/session_api.hpp"
#include "test_env.hpp"

using namespace llmchaos;
namespace json = boost::json;

namespace {

const std::string quota_case = R"(name = "session: quota 429 falls back"
expect = "fallback"
expect_outcome = "fallback_recovery"
expect_attempts = { primary = 1, backup = 1 }

[workflow]
primary = "primary"
fallback = ["backup"]
max_total_attempts = 3

[route.primary]
dialect = "openai"
script = [{ fault = "quota_429" }]

[route.backup]
dialect = "openai"
)";

struct Served {
  ManualClock clock;  // the sessions' clock (TTL): the test moves it
  std::unique_ptr<mock::MockServer> server;
  std::shared_ptr<sessions::SessionApi> api;
  explicit Served(double ttl_ms = 60'000, std::string admin_token = {}, sessions::SessionOptions o = {}) {
    mock::ServerOptions so;
    so.admin_token = std::move(admin_token);
    server = std::make_unique<mock::MockServer>(so);
    o.ttl_ms = ttl_ms;
    auto* s = server.get();
    api = std::make_shared<sessions::SessionApi>(
        server->engine(), clock, [s] { return s->base_url(); }, o);
    server->set_admin_extension(api);
    server->start();
  }
  net::HttpReply call(const std::string& method, const std::string& target, const std::string& body = {},
                      std::vector<std::pair<std::string, std::string>> headers = {}) const {
    net::HttpCall c;
    c.port = server->port();
    c.method = method;
    c.target = target;
    c.body = body;
    c.headers = std::move(headers);
    return net::http_call(c);
  }
  // A provider request against an SDK base URL the session gave ("http://127.0.0.1:PORT/NS/ROUTE/v1").
  net::HttpReply chat(const std::string& base_url, const std::string& key) const {
    const auto url = net::parse_url(base_url);
    return call(
        "POST", url.path + "/chat/completions",
        R"({"model":"mock-model","messages":[{"role":"user","content":"classify this"}]})",
        {{"content-type", "application/json"}, {"authorization", "Bearer k"}, {"idempotency-key", key}});
  }
};

json::object body_of(const net::HttpReply& r) {
  return json::parse(r.body).as_object();
}
std::string str(const json::value& v) {
  return std::string(v.as_string());
}

}  // namespace

TEST_CASE("create, a real request on the route, finish: the checker's verdict", "[sessions][socket]") {
  Served s;
  auto created = s.call("POST", "/__llmchaos/sessions", quota_case, {{"content-type", "application/toml"}});
  REQUIRE(created.status == 201);
  auto session = body_of(created);
  const auto id = str(session.at("id"));
  const auto primary = str(session.at("routes").at("primary").at("base_url"));
  const auto backup = str(session.at("routes").at("backup").at("base_url"));
  CHECK(primary == fmt::format("{}/{}/primary/v1", s.server->base_url(), str(session.at("namespace"))));
  CHECK(session.at("routes").at("primary").at("dialect").as_string() == "openai");
  CHECK(session.at("policy").at("workflow").at("max_total_attempts").as_int64() == 3);
  const auto key = str(session.at("request").at("operation_id"));

  SECTION("the fixed client falls back: pass") {
    CHECK(s.chat(primary, key).status == 429);
    auto answer = s.chat(backup, key);
    REQUIRE(answer.status == 200);
    auto text = str(json::parse(answer.body).at("choices").at(0).at("message").at("content"));
    auto finished =
        s.call("POST", "/__llmchaos/sessions/" + id + "/finish",
               json::serialize(json::object{{"outcome", "success"}, {"text", text}, {"route", "backup"}}));
    REQUIRE(finished.status == 200);
    auto v = body_of(finished);
    INFO(finished.body);
    CHECK(v.at("verdict").as_string() == "pass");
    CHECK(v.at("observed_outcome").as_string() == "fallback_recovery");
    CHECK(v.at("timeline").as_array().size() == 2);
    // GET shows the ledger; DELETE ends the session.
    auto shown = s.call("GET", "/__llmchaos/sessions/" + id);
    REQUIRE(shown.status == 200);
    CHECK(body_of(shown).at("ledger").as_array().size() == 2);
    CHECK(s.call("DELETE", "/__llmchaos/sessions/" + id).status == 200);
    CHECK(s.call("GET", "/__llmchaos/sessions/" + id).status == 404);
    CHECK(s.chat(primary, key).status == 404);  // its namespace is gone
  }
  SECTION("the quota retried on the same route: fail, naming the action check") {
    CHECK(s.chat(primary, key).status == 429);
    CHECK(s.chat(primary, key).status == 200);
    auto finished = s.call("POST", "/__llmchaos/sessions/" + id + "/finish",
                           R"([{"outcome": "success", "route": "primary"}])");
    REQUIRE(finished.status == 200);
    auto v = body_of(finished);
    CHECK(v.at("verdict").as_string() == "fail");
    CHECK(v.at("observed").as_string() == "retry");
    bool action_failed = false;
    for (const auto& c : v.at("checks").as_array())
      if (c.at("name").as_string() == "action") action_failed = !c.at("passed").as_bool();
    CHECK(action_failed);
    CHECK_THAT(str(v.at("summary")), Catch::Contains("session: quota 429 falls back") &&
                                         Catch::Contains("action: expected fallback"));
    // The four reports of what this server judged.
    const auto dir =
        std::filesystem::temp_directory_path() / fmt::format("llmchaos-session-reports-{}", s.server->port());
    auto written =
        s.call("POST", "/__llmchaos/sessions/reports", json::serialize(json::object{{"dir", dir.string()}}));
    REQUIRE(written.status == 200);
    auto w = body_of(written);
    CHECK(w.at("cases").as_int64() == 1);
    CHECK(w.at("failed").as_int64() == 1);
    CHECK(w.at("written").as_array().size() == 4);
    CHECK_THAT(read_file_text((dir / "report.json").string()),
               Catch::Contains("session: quota 429 falls back"));
    CHECK_THAT(read_file_text((dir / "junit.xml").string()), Catch::Contains("<failure"));
    std::filesystem::remove_all(dir);
  }
}

TEST_CASE("a bad case is a 400 naming file:line:col; a case path is read as serve sees it",
          "[sessions][socket]") {
  Served s;
  auto bad = s.call("POST", "/__llmchaos/sessions",
                    "name = \"x\"\nexpect = \"fallback\"\n\n[route.primary]\ndialekt = \"openai\"\n");
  REQUIRE(bad.status == 400);
  CHECK_THAT(str(body_of(bad).at("error")), Catch::Contains("<session>:5:1"));
  auto missing = s.call("POST", "/__llmchaos/sessions", R"({"case_path": "/nonexistent/case.toml"})");
  CHECK(missing.status == 400);
  CHECK_THAT(missing.body, Catch::Contains("/nonexistent/case.toml"));
  const auto path = test::source_dir() + "/cases/staging/quota-429-falls-back.toml";
  auto created = s.call("POST", "/__llmchaos/sessions", json::serialize(json::object{{"case_path", path}}));
  REQUIRE(created.status == 201);
  CHECK(body_of(created).at("routes").at("backup").at("dialect").as_string() == "anthropic");
  CHECK(body_of(created).at("file").as_string() == path);
}

TEST_CASE("an unknown session is 404; a wrong finish body is 400", "[sessions][socket]") {
  Served s;
  CHECK(s.call("POST", "/__llmchaos/sessions/nope/finish", R"({"outcome":"success"})").status == 404);
  CHECK(s.call("GET", "/__llmchaos/sessions/nope").status == 404);
  CHECK(s.call("DELETE", "/__llmchaos/sessions/nope").status == 404);
  CHECK(s.call("PUT", "/__llmchaos/sessions").status == 405);
  auto id = str(body_of(s.call("POST", "/__llmchaos/sessions", quota_case)).at("id"));
  auto wrong = s.call("POST", "/__llmchaos/sessions/" + id + "/finish",
                      R"([{"outcome":"success"},{"outcome":"success"}])");
  CHECK(wrong.status == 400);
  CHECK_THAT(wrong.body, Catch::Contains("2 object(s) for 1 request(s)"));
  // The mock's own admin API is untouched by the extension.
  CHECK(s.call("GET", "/__llmchaos/health").status == 200);
}

TEST_CASE("a session without a call for its TTL expires: 404 and its namespace removed",
          "[sessions][socket]") {
  Served s(1000);
  auto session = body_of(s.call("POST", "/__llmchaos/sessions", quota_case));
  const auto id = str(session.at("id"));
  const auto primary = str(session.at("routes").at("primary").at("base_url"));
  s.clock.advance(900);
  CHECK(s.call("GET", "/__llmchaos/sessions/" + id).status == 200);  // a call keeps it alive
  s.clock.advance(900);
  CHECK(s.call("GET", "/__llmchaos/sessions").status == 200);
  CHECK(s.api->live_sessions() == 1);
  s.clock.advance(200);
  auto gone = s.call("GET", "/__llmchaos/sessions/" + id);
  CHECK(gone.status == 404);
  CHECK_THAT(gone.body, Catch::Contains("expired"));
  CHECK(s.api->live_sessions() == 0);
  CHECK(s.chat(primary, "k").status == 404);
}

TEST_CASE("alive_after: /alive turns the routes healthy, the probe is judged with the requests",
          "[sessions][socket]") {
  Served s;
  const std::string probe_case = R"(name = "session: alive after"
expect = "fail_closed"
[workflow]
primary = "primary"
max_total_attempts = 1
[route.primary]
dialect = "openai"
script = [{ fault = "server_500" }]
[checks]
alive_after = true
)";
  auto session = body_of(s.call("POST", "/__llmchaos/sessions", probe_case));
  const auto id = str(session.at("id"));
  CHECK(session.at("alive_after").as_bool());
  const auto primary = str(session.at("routes").at("primary").at("base_url"));
  CHECK(s.chat(primary, str(session.at("request").at("operation_id"))).status == 500);
  auto probe = s.call("POST", "/__llmchaos/sessions/" + id + "/alive");
  REQUIRE(probe.status == 200);
  auto answer = s.chat(primary, str(body_of(probe).at("operation_id")));
  REQUIRE(answer.status == 200);
  auto v = body_of(
      s.call("POST", "/__llmchaos/sessions/" + id + "/finish",
             R"([{"outcome":"fail_closed"},{"outcome":"success","text":"hello from the mock provider"}])"));
  INFO(json::serialize(v));
  CHECK(v.at("verdict").as_string() == "pass");
  bool alive_checked = false;
  for (const auto& c : v.at("checks").as_array())
    if (c.at("name").as_string() == "alive_after") alive_checked = c.at("passed").as_bool();
  CHECK(alive_checked);
}

TEST_CASE("with an admin token the session API needs it, as every admin path", "[sessions][socket]") {
  Served s(60'000, "t0ken");
  CHECK(s.call("POST", "/__llmchaos/sessions", quota_case).status == 401);
  auto created = s.call("POST", "/__llmchaos/sessions", quota_case, {{"authorization", "Bearer t0ken"}});
  CHECK(created.status == 201);
}

// ---- issue 42: nobody in where they don't belong ----

namespace {
// A cases root with one case and a policy file, and a file outside it.
struct Roots {
  test::TempDir dir{"confine"};
  std::filesystem::path cases = dir.path / "cases", reports = dir.path / "reports";
  Roots() {
    std::filesystem::create_directories(cases / "sub");
    std::filesystem::create_directories(reports);
    write_file_atomic((cases / "sub" / "quota.toml").string(), quota_case);
    write_file_atomic((dir.path / "secret.toml").string(), "[workflow]\nmax_total_attempts = 3\n");
  }
  sessions::SessionOptions options() const {
    sessions::SessionOptions o;
    o.cases_root = cases.string();
    o.reports_root = reports.string();
    return o;
  }
};
std::string case_path_body(const std::string& path) {
  return json::serialize(json::object{{"case_path", path}});
}
}  // namespace

TEST_CASE("a case_path outside the cases root is refused with 403 and nothing about the file",
          "[sessions][issue42]") {
  Roots roots;
  Served s(60'000, {}, roots.options());
  CHECK(s.call("POST", "/__llmchaos/sessions", case_path_body("sub/quota.toml")).status == 201);
  CHECK(s.call("POST", "/__llmchaos/sessions", case_path_body((roots.cases / "sub/quota.toml").string()))
            .status == 201);
  for (const std::string outside :
       {"/etc/passwd", "../secret.toml", "sub/../../secret.toml", "/nonexistent/x.toml"}) {
    const auto r = s.call("POST", "/__llmchaos/sessions", case_path_body(outside));
    INFO(outside << ": " << r.body);
    CHECK(r.status == 403);
    CHECK(r.body.find("passwd") == std::string::npos);
    CHECK(r.body.find("secret") == std::string::npos);
    CHECK(r.body.find("root:") == std::string::npos);
  }
  CHECK(s.api->live_sessions() == 2);
}

TEST_CASE("a case whose policy names a file outside the cases root is refused with 403",
          "[sessions][issue42]") {
  Roots roots;
  Served s(60'000, {}, roots.options());
  for (const std::string policy : {"/etc/passwd", "../../secret.toml"}) {
    const auto text = "policy = \"" + policy + "\"\n" + quota_case;
    write_file_atomic((roots.cases / "sub" / "with-policy.toml").string(), text);
    const auto from_file = s.call("POST", "/__llmchaos/sessions", case_path_body("sub/with-policy.toml"));
    INFO(policy << ": " << from_file.body);
    CHECK(from_file.status == 403);
    CHECK(from_file.body.find("root:") == std::string::npos);
    const auto from_text =
        s.call("POST", "/__llmchaos/sessions", text, {{"content-type", "application/toml"}});
    CHECK(from_text.status == 403);
  }
  CHECK(s.api->live_sessions() == 0);
}

TEST_CASE("reports are written only inside the reports root", "[sessions][issue42]") {
  Roots roots;
  Served s(60'000, {}, roots.options());
  const auto outside = (roots.dir.path / "elsewhere").string();
  const auto refused =
      s.call("POST", "/__llmchaos/sessions/reports", json::serialize(json::object{{"dir", outside}}));
  CHECK(refused.status == 403);
  CHECK_FALSE(std::filesystem::exists(outside));
  CHECK(s.call("POST", "/__llmchaos/sessions/reports", R"({"dir": "../elsewhere"})").status == 403);
  const auto written = s.call("POST", "/__llmchaos/sessions/reports", R"({"dir": "run-1"})");
  REQUIRE(written.status == 200);
  CHECK(std::filesystem::is_regular_file(roots.reports / "run-1" / "junit.xml"));
}

TEST_CASE("open sessions are capped: one more create is 429 with a Retry-After", "[sessions][issue42]") {
  Roots roots;
  auto o = roots.options();
  o.max_sessions = 2;
  Served s(30'000, {}, o);
  const auto first = body_of(s.call("POST", "/__llmchaos/sessions", quota_case));
  CHECK(s.call("POST", "/__llmchaos/sessions", quota_case).status == 201);
  const auto full = s.call("POST", "/__llmchaos/sessions", quota_case);
  CHECK(full.status == 429);
  CHECK(full.header("retry-after") == "30");
  CHECK(body_of(full).at("error").as_string().find("--max-sessions") != json::string::npos);
  CHECK(s.call("DELETE", "/__llmchaos/sessions/" + str(first.at("id"))).status == 200);
  CHECK(s.call("POST", "/__llmchaos/sessions", quota_case).status == 201);
}

TEST_CASE("the routes' base URLs are the caller's: its Host, or --public-url", "[sessions][issue42]") {
  Served by_host;
  const auto created =
      body_of(by_host.call("POST", "/__llmchaos/sessions", quota_case, {{"host", "127.0.0.1:49153"}}));
  const auto base = str(created.at("routes").at("primary").at("base_url"));
  CHECK(base.rfind("http://127.0.0.1:49153/session-", 0) == 0);

  sessions::SessionOptions o;
  o.public_url = "https://chaos.staging.example";
  Served behind_proxy(60'000, {}, o);
  const auto routed = body_of(behind_proxy.call("POST", "/__llmchaos/sessions", quota_case));
  CHECK(str(routed.at("routes").at("backup").at("base_url"))
            .rfind("https://chaos.staging.example/session-", 0) == 0);
}
