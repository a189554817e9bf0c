#include <catch2/catch.hpp>

#include "llmchaos/core/clock.hpp"
#include "llmchaos/core/ledger.hpp"
#include "llmchaos/core/rng.hpp"
#include "llmchaos/core/toml_reader.hpp"
#include "llmchaos/core/types.hpp"

using namespace llmchaos;

TEST_CASE("every enum name parses back to its value", "[core]") {
  for (const auto& [v, name] : enum_names<FaultKind>::table) CHECK(parse_enum<FaultKind>(name) == v);
  for (const auto& [v, name] : enum_names<Action>::table) CHECK(to_string(v) == name);
  CHECK_FALSE(parse_enum<Dialect>("cohere").has_value());
  CHECK(enum_choices<Dialect>() == "openai, anthropic, gemini");
}

TEST_CASE("the same seed gives the same random sequence", "[core]") {
  Rng a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    auto x = a.next();
    CHECK(x == b.next());
    (void)c.next();
  }
  Rng d(7);
  for (int i = 0; i < 1000; ++i) {
    double u = d.uniform();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    auto k = d.between(3, 5);
    REQUIRE(k >= 3);
    REQUIRE(k <= 5);
  }
}

TEST_CASE("manual clock moves only when advanced or slept", "[core]") {
  ManualClock clock(10);
  CHECK(clock.now_ms() == 10);
  clock.sleep_ms(5);
  CHECK(clock.now_ms() == 15);
  clock.advance(-3);  // never backwards
  CHECK(clock.now_ms() == 15);
}

TEST_CASE("toml reader reports file:line:col for a bad type and an unknown key", "[core]") {
  auto t = parse_toml("a = 1\nb = \"x\"\nc = true\n", "f.toml");
  TomlReader r(t, "f.toml", "workflow");
  CHECK(r.opt_int("a") == 1);
  try {
    r.opt_int("b");
    FAIL("expected an error");
  } catch (const SpecError& e) {
    CHECK(std::string(e.what()) == "f.toml:2:5: workflow.b: expected an integer");
  }
  TomlReader r2(t, "f.toml");
  r2.opt_int("a");
  r2.opt_string("b");
  try {
    r2.reject_unknown_keys();
    FAIL("expected an error");
  } catch (const SpecError& e) {
    CHECK(std::string(e.what()) == "f.toml:3:5: c: unknown key");
  }
}

TEST_CASE("toml reader: integer keys accept whole floats only in range, numbers refuse nan", "[core]") {
  // 1e300 / inf / nan cast to int64 would be undefined behaviour (UBSan); they are type errors instead.
  auto t = parse_toml("a = 3.0\nb = 1e300\nc = -inf\nd = nan\ne = 2.5\nf = 9.2233720368547758e18\n", "f.toml");
  TomlReader r(t, "f.toml");
  CHECK(r.opt_int("a") == 3);
  for (const char* key : {"b", "c", "d", "e", "f"}) {
    INFO(key);
    CHECK_THROWS_WITH(r.opt_int(key), Catch::Contains("expected an integer"));
  }
  CHECK_THROWS_WITH(r.opt_number("d"), Catch::Contains("nan"));
  CHECK(r.opt_number("a", 0, 10) == 3.0);
}

TEST_CASE("a TOML syntax error names its line and column", "[core]") {
  try {
    parse_toml("a = \n", "bad.toml");
    FAIL("expected an error");
  } catch (const SpecError& e) {
    CHECK(e.pos().file == "bad.toml");
    CHECK(e.pos().line == 1);
    CHECK(e.pos().column > 0);
  }
}

TEST_CASE("json bodies convert to the same table shape as TOML", "[core]") {
  auto t = json_to_toml(R"({"route":{"p":{"dialect":"openai","script":[{"fault":"ok","latency_ms":5}]}}})", "body");
  CHECK(t["route"]["p"]["dialect"].value<std::string>() == "openai");
  CHECK(t["route"]["p"]["script"][0]["latency_ms"].value<std::int64_t>() == 5);
  CHECK_THROWS_AS(json_to_toml("[1]", "body"), SpecError);
}

TEST_CASE("ledger entries survive a JSON round trip", "[core]") {
  LedgerEntry e;
  e.seq = 3;
  e.ns = "case-1";
  e.route = "primary";
  e.dialect = Dialect::anthropic;
  e.fault = FaultKind::stream_cut;
  e.outcome = AttemptOutcome::cut;
  e.events_sent = 2;
  e.committed = true;
  auto back = ledger_from_json(ledger_to_json({e}));
  REQUIRE(back.size() == 1);
  CHECK(back[0].route == "primary");
  CHECK(back[0].dialect == Dialect::anthropic);
  CHECK(back[0].fault == FaultKind::stream_cut);
  CHECK(back[0].outcome == AttemptOutcome::cut);
  CHECK(back[0].events_sent == 2);
  CHECK(back[0].committed);
}
