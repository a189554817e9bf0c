// Model groups in cases: the loader's [groups] and [[expect_share]], and the checker taking a group's
// members for one route (retry vs fallback) while judging the traffic split, on hand-written ledgers.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "builders.hpp"

using namespace llmchaos;
using namespace llmchaos::harness;
using namespace llmchaos::harness::test;

namespace {

// primary = the group "pool" of members east and west (openai); no fallback.
Case group_case(Action expect) {
  auto c = make_case(expect);
  c.script.routes.erase("primary");
  c.script.routes.erase("backup");
  c.policy.routes.clear();
  c.policy.workflow.primary = "pool";
  c.policy.workflow.fallback.clear();
  c.policy.workflow.max_total_attempts = 6;
  c.policy.routes["pool"].name = "pool";
  for (const char* name : {"east", "west"}) {
    mock::RouteScript r;
    r.name = name;
    r.dialect = Dialect::openai;
    c.script.routes[name] = r;
    c.groups["pool"].push_back(name);
    c.group_of[name] = "pool";
  }
  return c;
}

// east fails twice, then west serves: as the stack logs it, every attempt is on "pool".
History east_twice_then_west(const std::string& logged_route = "pool") {
  std::vector<LedgerEntry> ledger{entry(1, "east", 0, FaultKind::overloaded, 503, 0, 1),
                                  entry(2, "east", 1, FaultKind::overloaded, 503, 50, 51),
                                  entry(3, "west", 0, FaultKind::ok, 200, 100, 200)};
  std::vector<client::AttemptRecord> attempts{attempt(0, logged_route, Owner::transient),
                                              attempt(1, logged_route, Owner::transient),
                                              attempt(2, logged_route)};
  std::vector<client::FailurePoint> points{point(0, logged_route, Action::retry),
                                           point(1, logged_route, Action::retry)};
  return history(std::move(ledger), log(std::move(attempts), std::move(points), Outcome::retry_recovery));
}

std::vector<std::string> errors_of(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& e : load_case_text(text, "c.toml").errors) out.push_back(e.what());
  return out;
}

}  // namespace

TEST_CASE("a move to another member of the same group is a retry, by the log and by the ledger",
          "[checker][groups]") {
  const auto r = check_case(group_case(Action::retry), east_twice_then_west(), {});
  REQUIRE(r.points.size() == 2);
  for (const auto& p : r.points) {
    CHECK(p.from_log == Action::retry);
    CHECK(p.from_ledger == Action::retry);
  }
  CHECK(find_check(r, "action_agreement")->ok);
  CHECK(r.verdict == Verdict::pass);
  // Without the group, the ledger alone would call the move from east to west a fallback.
  auto plain = group_case(Action::retry);
  plain.group_of.clear();
  const auto history = east_twice_then_west();  // the views point into it
  const auto views = group_by_request(history);
  const auto ungrouped = derive_points(views.front(), plain.policy, false);
  REQUIRE(ungrouped.size() == 2);
  CHECK(ungrouped[1].from_ledger == Action::fallback);
}

TEST_CASE("expect_attempts of a group counts its members' attempts together", "[checker][groups]") {
  auto c = group_case(Action::retry);
  c.expect_attempts = {{"pool", 3}, {"east", 2}};
  CHECK(find_check(check_case(c, east_twice_then_west(), {}), "expect_attempts")->ok);
  c.expect_attempts = {{"pool", 2}};
  CHECK_FALSE(find_check(check_case(c, east_twice_then_west(), {}), "expect_attempts")->ok);
}

TEST_CASE("expect_share bounds a member's attempts and its share of the group's, within a window",
          "[checker][groups]") {
  auto c = group_case(Action::retry);
  ExpectShare east;
  east.route = "east";
  east.max_attempts = 2;
  east.max = 0.7;
  c.expect_share = {east};
  const auto ok = check_case(c, east_twice_then_west(), {});
  REQUIRE(find_check(ok, "expect_share"));
  CHECK(find_check(ok, "expect_share")->ok);
  CHECK_THAT(find_check(ok, "expect_share")->message,
             Catch::Contains("east: 2 of pool's 3 attempts (share 0.67)"));

  east.max = 0.5;
  c.expect_share = {east};
  const auto over = check_case(c, east_twice_then_west(), {});
  CHECK_FALSE(find_check(over, "expect_share")->ok);
  CHECK_THAT(find_check(over, "expect_share")->message, Catch::Contains("share above 0.50"));

  // The window [40, 1000) ms holds east's second attempt and west's: one each.
  ExpectShare west;
  west.route = "west";
  west.from_ms = 40;
  west.until_ms = 1000;
  west.min_attempts = 1;
  west.min = 0.5;
  ExpectShare late;
  late.route = "east";
  late.from_ms = 60;
  late.max_attempts = 0;
  c.expect_share = {west, late};
  const auto windowed = check_case(c, east_twice_then_west(), {});
  CHECK(find_check(windowed, "expect_share")->ok);
  CHECK_THAT(find_check(windowed, "expect_share")->message,
             Catch::Contains("west: 1 of pool's 2 attempts in [40, 1000) ms"));
}

TEST_CASE("an outside driver's attempts named by member still match the group's points",
          "[checker][groups]") {
  // The http driver names each ledger attempt by its member's group; a log naming members is matched too.
  const auto r = check_case(group_case(Action::retry), east_twice_then_west("east"), {});
  CHECK(r.points.front().from_ledger == Action::retry);
}

TEST_CASE("[groups] loads a group as one route of the workflow, with its policy keys and no script",
          "[loader][groups]") {
  const std::string text = R"(name = "g"
expect = "none"
[workflow]
primary = "pool"
[groups]
pool = ["a", "b"]
[route.pool]
expected_latency_ms = 300
[route.a]
dialect = "gemini"
[route.b]
dialect = "gemini"
[[expect_share]]
route = "a"
max = 0.5
)";
  auto loaded = load_case_text(text, "c.toml");
  REQUIRE(loaded.errors.empty());
  const auto& c = *loaded.value;
  CHECK(c.groups.at("pool") == std::vector<std::string>{"a", "b"});
  CHECK(c.logical_route("b") == "pool");
  CHECK(c.logical_route("pool") == "pool");
  CHECK_FALSE(c.script.routes.contains("pool"));
  CHECK(c.policy.route("pool").expected_latency_ms == 300);
  CHECK(c.weight_of("a") == 1);  // no weight: 1
  REQUIRE(c.expect_share.size() == 1);
  CHECK(*c.expect_share.front().max == 0.5);
}

TEST_CASE("a member's weight is read from its route table, 1 by default", "[loader][groups]") {
  const std::string text = R"(name = "g"
expect = "none"
[workflow]
primary = "pool"
[groups]
pool = ["a", "b"]
[route.a]
dialect = "openai"
weight = 3
[route.b]
dialect = "openai"
)";
  auto loaded = load_case_text(text, "c.toml");
  REQUIRE(loaded.errors.empty());
  CHECK(loaded.value->weight_of("a") == 3);
  CHECK(loaded.value->weight_of("b") == 1);
}

TEST_CASE("[groups] errors name file:line:col", "[loader][groups]") {
  const std::string base = "name = \"g\"\nexpect = \"none\"\n[workflow]\nprimary = \"pool\"\n";
  auto has = [](const std::vector<std::string>& errors, const std::string& text) {
    for (const auto& e : errors)
      if (e.find(text) != std::string::npos) return true;
    return false;
  };
  CHECK(has(errors_of(base + "[groups]\npool = [\"a\", \"zz\"]\n[route.a]\n"),
            "c.toml:6:8: groups.pool: \"zz\" is not a route"));
  CHECK(has(errors_of(base + "[groups]\npool = [\"a\", \"b\"]\n[route.a]\ndialect = "
                             "\"openai\"\n[route.b]\ndialect = \"gemini\"\n"),
            "speak different dialects"));
  CHECK(has(errors_of(base + "[groups]\npool = [\"a\"]\n[route.a]\n[route.pool]\nscript = []\n"),
            "route.pool.script"));
  CHECK(has(errors_of(base + "[groups]\npool = []\n[route.a]\n"), "needs a list of member routes"));
  CHECK(has(
      errors_of(base + "[groups]\npool = [\"a\"]\n[route.a]\n[[expect_share]]\nroute = \"pool\"\nmax = 1\n"),
      "expect_share: \"pool\" is not a member of a group"));
  CHECK(has(errors_of(base + "[groups]\npool = [\"a\"]\n[route.a]\n[[expect_share]]\nroute = \"a\"\n"),
            "needs at least one of min, max, min_attempts, max_attempts"));
  // A weight belongs to a group's member, within the gateway's bounds.
  CHECK(
      has(errors_of("name = \"g\"\nexpect = \"none\"\n[workflow]\nprimary = \"a\"\n[route.a]\nweight = 2\n"),
          "c.toml:6:10: route.a.weight: only a member of a [groups] group has a weight"));
  CHECK(has(errors_of(base + "[groups]\npool = [\"a\"]\n[route.a]\nweight = 0\n"), "route.a.weight"));
  CHECK(
      has(errors_of(base + "[groups]\npool = [\"a\"]\n[route.a]\n[route.pool]\nweight = 2\n"), "route.pool"));
}
