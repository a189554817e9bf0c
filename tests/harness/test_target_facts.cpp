// What the harness knows of a target that is not ours, as pure functions: the traffic that is not the
// case's requests (foreign), and the capabilities a case needs (n/a when the target lacks one).
#include <catch2/catch.hpp>
#include <stdexcept>

#include "builders.hpp"
#include "llmchaos/harness/capabilities.hpp"

namespace llmchaos::harness {
namespace {

LedgerEntry at_path(std::uint64_t seq, Dialect d, const std::string& path, const std::string& key) {
  auto e = test::entry(seq, "primary", static_cast<int>(seq - 1), FaultKind::ok, 200, 0, 1,
                       AttemptOutcome::completed, false, key);
  e.dialect = d;
  e.path = path;
  return e;
}

}  // namespace

TEST_CASE("completion paths per dialect: a drain or a model list is none", "[targets][foreign]") {
  CHECK(is_completion_path(Dialect::openai, "/v1/chat/completions"));
  CHECK(is_completion_path(Dialect::anthropic, "/v1/messages"));
  CHECK(is_completion_path(Dialect::gemini, "/v1beta/models/gemini-x:generateContent"));
  CHECK_FALSE(is_completion_path(Dialect::openai, "/v1/llmchaos/drain"));
  CHECK_FALSE(is_completion_path(Dialect::openai, "/v1/models"));
  CHECK_FALSE(is_completion_path(Dialect::anthropic, "/v1/llmchaos/drain"));
}

TEST_CASE("foreign traffic: another path or another Idempotency-Key, never a keyless attempt",
          "[targets][foreign]") {
  const std::vector<std::string> keys{"case1-r1"};
  CHECK_FALSE(is_foreign(at_path(1, Dialect::openai, "/v1/chat/completions", "case1-r1"), keys));
  CHECK_FALSE(is_foreign(at_path(2, Dialect::openai, "/v1/chat/completions", ""),
                         keys));  // a target that drops the key
  CHECK(is_foreign(at_path(3, Dialect::openai, "/v1/chat/completions", "health-probe"), keys));
  CHECK(is_foreign(at_path(4, Dialect::openai, "/v1/llmchaos/drain", "case1-r1"), keys));

  History h = test::history({at_path(1, Dialect::openai, "/v1/chat/completions", test::op),
                             at_path(2, Dialect::openai, "/v1/llmchaos/drain", ""),
                             at_path(3, Dialect::openai, "/v1/chat/completions", "probe")},
                            test::log({test::attempt(0, "primary")}, {}, Outcome::primary_success));
  h.has_decision_log = false;
  split_foreign(h);
  REQUIRE(h.ledger.size() == 1);
  CHECK(h.ledger[0].seq == 1);
  REQUIRE(h.foreign.size() == 2);
  CHECK(h.foreign[0].seq == 2);
  CHECK(h.foreign[1].seq == 3);
  // The checker counts the case's attempts only, and reports the rest apart.
  const auto r = check_case(test::make_case(Action::none), h, CheckOptions{});
  CHECK(r.attempts_by_route.at("primary") == 1);
  CHECK(r.foreign.size() == 2);
}

TEST_CASE("capabilities a case needs: queue, degrade, an output contract, a redelivery",
          "[targets][capabilities]") {
  auto c = test::make_case(Action::retry);
  CHECK(needed_capabilities(c).empty());
  CHECK(missing_capability(c, std::vector<std::string>{}).empty());

  c.expect = Action::queue;
  CHECK(needed_capabilities(c) == std::vector<std::string>{"queue"});
  c.expect_at.push_back(ExpectAt{2, Action::fail_closed, {}});  // the redelivery's own point
  CHECK(needed_capabilities(c) == std::vector<std::string>{"queue", "redelivery"});
  CHECK(missing_capability(c, std::nullopt).empty());  // nothing declared: every capability
  CHECK(missing_capability(c, std::vector<std::string>{"queue"}) ==
        "needs capability redelivery (the target has: queue)");
  CHECK(missing_capability(c, std::vector<std::string>{}) ==
        "needs capability queue, redelivery (the target has: none)");

  auto d = test::make_case(Action::degrade);
  d.policy.workflow.output_required = {"label"};
  CHECK(needed_capabilities(d) == std::vector<std::string>{"degrade", "output_contract"});
  auto o = test::make_case(Action::fallback);
  o.expect_outcome = Outcome::degraded;
  CHECK(needed_capabilities(o) == std::vector<std::string>{"degrade"});
}

TEST_CASE("capability lists: names checked, none and blanks allowed", "[targets][capabilities]") {
  CHECK(parse_capabilities("queue, degrade") == std::vector<std::string>{"queue", "degrade"});
  CHECK(parse_capabilities("none").empty());
  CHECK(parse_capabilities("").empty());
  CHECK(parse_capabilities(" redelivery ,queue,queue") == std::vector<std::string>{"redelivery", "queue"});
  CHECK_THROWS_WITH(parse_capabilities("queue,teleport"),
                    "unknown capability \"teleport\" (capabilities: queue, degrade, output_contract, "
                    "redelivery, tier_limits, model_groups, or none)");
}

}  // namespace llmchaos::harness
