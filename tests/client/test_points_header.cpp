// The x-llmchaos-points codec the gateway writes and the http driver reads.
#include <catch2/catch.hpp>

#include "llmchaos/client/points_header.hpp"

using namespace llmchaos;
using namespace llmchaos::client;

namespace {
FailurePoint point(Action action, std::string route, int attempt, int rule) {
  FailurePoint fp;
  fp.action = action;
  fp.route = std::move(route);
  fp.attempt = attempt;
  fp.rule = rule;
  fp.rule_text = "not in the header";
  return fp;
}
}  // namespace

TEST_CASE("points header lists ACTION ROUTE ATTEMPT RULE, percent-encodes the route and reads back",
          "[points]") {
  const std::vector<FailurePoint> points = {point(Action::retry, "primary", 0, 4),
                                            point(Action::fallback, "eu west,1", -1, 5)};
  const auto value = encode_points_header(points);
  CHECK(value == "retry primary 0 4,fallback eu%20west%2C1 - 5");
  std::vector<FailurePoint> back;
  CHECK(decode_points_header(value, back).empty());
  REQUIRE(back.size() == 2);
  CHECK(back[0].point == 1);
  CHECK(back[1].point == 2);
  CHECK(back[1].route == "eu west,1");
  CHECK(back[1].attempt == -1);
  CHECK(back[1].action == Action::fallback);
  CHECK(back[1].rule == 5);
  CHECK(back[1].rule_text.empty());
}

TEST_CASE("points header with no point is empty and a malformed item is named", "[points]") {
  CHECK(encode_points_header({}).empty());
  std::vector<FailurePoint> out;
  CHECK(decode_points_header("", out).empty());
  CHECK(out.empty());
  CHECK(decode_points_header("retry primary 0", out) ==
        "x-llmchaos-points item \"retry primary 0\" is not \"ACTION ROUTE ATTEMPT RULE\"");
  CHECK(decode_points_header("retry pri%zzmary 0 4", out).find("is not") != std::string::npos);
}
