// The http driver's reply reading (harness/drivers/http_reply.cpp), without a target: the failure points
// a drain answer reports, the outcome a reply stands for, the x-llmchaos-* headers.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "http_driver.hpp"

using namespace llmchaos;
using namespace llmchaos::harness::driver_units;
using namespace llmchaos::harness::driver_units::http_driver;

TEST_CASE("a drain answer's points read in order, an unsent one as attempt -1", "[driver_http]") {
  const auto v = boost::json::parse(R"([{"action": "retry", "route": "primary", "attempt": 0, "rule": 4,
      "rule_text": "rate, retry-after fits"}, {"action": "fail_closed", "route": "primary", "attempt": null,
      "rule": 7}])");
  std::vector<client::FailurePoint> points;
  CHECK(points_from_json(v, points).empty());
  REQUIRE(points.size() == 2);
  CHECK(points[0].point == 1);
  CHECK(points[0].action == Action::retry);
  CHECK(points[0].attempt == 0);
  CHECK(points[0].rule == 4);
  CHECK(points[0].rule_text == "rate, retry-after fits");
  CHECK(points[1].point == 2);
  CHECK(points[1].attempt == -1);
  CHECK(points[1].action == Action::fail_closed);
}

TEST_CASE("a drain answer's malformed points are an error naming the point", "[driver_http]") {
  std::vector<client::FailurePoint> points;
  CHECK(points_from_json(boost::json::parse(R"({"action": "retry"})"), points) ==
        "\"points\" is not an array");
  const auto error = points_from_json(boost::json::parse(R"([{"action": "jump", "route": "a", "attempt": 0,
      "rule": 1}])"),
                                      points);
  CHECK(error.rfind("a point is not {\"action\", \"route\", \"attempt\", \"rule\"}: ", 0) == 0);
  CHECK(error.find("jump") != std::string::npos);
  CHECK(points.empty());
}

TEST_CASE("the outcome a reply stands for", "[driver_http]") {
  const ReportedOutcome primary{Outcome::primary_success, true};
  // A stream that broke after its head went out: what the caller saw, a failure.
  auto broke = settled_outcome(primary, 200, false, true);
  REQUIRE(broke);
  CHECK(broke->outcome == Outcome::fail_closed);
  // A 202 with no reported action: queued.
  auto queued = settled_outcome(std::nullopt, 202, true, false);
  REQUIRE(queued);
  CHECK(queued->outcome == Outcome::queued);
  // A whole stream whose head named a primary success: the ledger says which success (a resume).
  auto whole = settled_outcome(primary, 200, true, true);
  REQUIRE(whole);
  CHECK(!whole->outcome);
  CHECK(whole->success);
  // Not streamed: the reported primary success stands.
  CHECK(settled_outcome(primary, 200, true, false)->outcome == Outcome::primary_success);
  CHECK(!settled_outcome(std::nullopt, 500, true, false));
}

TEST_CASE("a reply's header is read by its lower-cased name, empty when absent", "[driver_http]") {
  client::AttemptResult r;
  r.headers = {{"x-llmchaos-route", "backup"}};
  CHECK(header(r, "x-llmchaos-route") == "backup");
  CHECK(header(r, "x-llmchaos-action").empty());
  CHECK(!header_if(r, "x-llmchaos-action"));
}
