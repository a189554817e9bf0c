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
  CHECK(metrics.find(R"(llmchaos_attempts_total{route="r",fault="ok",outcome="completed"} 3)") !=
        std::string::npos);
  CHECK(metrics.find(R"(llmchaos_attempts_total{route="r",fault="ok",outcome="client_closed"} 1)") !=
        std::string::npos);
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

// The records live in blocks that double up to 2 MiB (record_blocks.hpp): a late finish must reach the
// right record across block boundaries, and a limit must drop whole blocks without losing the rest.
TEST_CASE("a ledger of 70000 attempts finishes each one in its own entry, with and without a limit",
          "[engine][ledger]") {
  const std::size_t limit = GENERATE(std::size_t{0}, std::size_t{1000}, std::size_t{40000});
  ManualClock clock;
  Engine e(clock);
  e.set_ledger_limit(limit);
  e.install("", parse_script_text("[route.r]\ndialect = \"openai\"\n", "t.toml"));
  constexpr int attempts = 70000;
  constexpr int lag = 300;  // finished this many attempts later: the older record is in an earlier block
  std::vector<std::uint64_t> seqs;
  for (int i = 0; i < attempts; ++i) {
    seqs.push_back(e.begin(chat()).seq);
    if (i >= lag) e.finish(seqs[i - lag], AttemptOutcome::completed, i % 7, 200 + (i - lag) % 3);
  }
  const auto ledger = e.ledger("");
  const std::size_t kept = limit == 0 ? attempts : limit;
  REQUIRE(ledger.size() == kept);
  const std::size_t first = attempts - kept;
  bool all_right = true;
  for (std::size_t k = 0; k < ledger.size(); ++k) {
    const auto& entry = ledger[k];
    const std::size_t i = first + k;
    const bool finished = i + lag < attempts;
    all_right = all_right && entry.seq == seqs[i] && entry.attempt == static_cast<int>(i) &&
                entry.finished == finished &&
                (!finished || (entry.status == 200 + static_cast<int>(i % 3) &&
                               entry.events_sent == static_cast<int>((i + lag) % 7)));
    if (!all_right) {
      INFO("entry " << k << " (attempt " << i << ")");
      CHECK(all_right);
      break;
    }
  }
  CHECK(all_right);
}
