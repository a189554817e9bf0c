// The optional ledger limit (serve --ledger-limit): the oldest entries go, attempts still finish and count.
#include <catch2/catch.hpp>

#include "llmchaos/core/clock.hpp"
#include "llmchaos/mockprovider/engine.hpp"

using namespace llmchaos;
using namespace llmchaos::mock;

namespace {
IncomingRequest chat() {
  IncomingRequest r;
  r.route = "r";
  r.path = "/v1/chat/completions";
  r.body = R"({"model":"gpt-x","messages":[{"role":"user","content":"hi"}]})";
  return r;
}
}  // namespace

TEST_CASE("a ledger limit keeps the newest entries, attempts dropped while in flight still count in metrics",
          "[engine][ledger]") {
  ManualClock clock;
  Engine e(clock);
  e.set_ledger_limit(2);
  e.install("", parse_script_text("[route.r]\ndialect = \"openai\"\n", "t.toml"));
  const auto first = e.begin(chat());  // still in flight when it is dropped
  std::vector<std::uint64_t> seqs;
  for (int i = 0; i < 3; ++i) {
    const auto a = e.begin(chat());
    e.finish(a.seq, AttemptOutcome::completed, 0, a.plan.status);
    seqs.push_back(a.seq);
  }
  e.finish(first.seq, AttemptOutcome::client_closed, 0, 0);

  const auto ledger = e.ledger("");
  REQUIRE(ledger.size() == 2);
  CHECK(ledger[0].seq == seqs[1]);
  CHECK(ledger[1].seq == seqs[2]);
  CHECK(ledger[1].attempt == 3);
  CHECK(ledger[1].finished);
  const auto metrics = e.metrics_text();
  CHECK(metrics.find(R"(llmchaos_attempts_total{route="r",fault="ok",outcome="completed"} 3)") != std::string::npos);
  CHECK(metrics.find(R"(llmchaos_attempts_total{route="r",fault="ok",outcome="client_closed"} 1)") != std::string::npos);
  CHECK(metrics.find("llmchaos_attempts_in_flight 0") != std::string::npos);
}

TEST_CASE("without a ledger limit every attempt stays in the ledger", "[engine][ledger]") {
  ManualClock clock;
  Engine e(clock);
  e.install("", parse_script_text("[route.r]\ndialect = \"openai\"\n", "t.toml"));
  for (int i = 0; i < 5; ++i) {
    const auto a = e.begin(chat());
    e.finish(a.seq, AttemptOutcome::completed, 0, a.plan.status);
  }
  CHECK(e.ledger("").size() == 5);
}
