// The history's integrity (SPEC section 5): no operation committed twice, and every attempt the mock
// received is in the stack's decision log.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "checker_ctx.hpp"
#include "llmchaos/mockprovider/fault_traits.hpp"

namespace llmchaos::harness::detail {
namespace {

std::optional<CheckResult> check_duplicates(const Ctx& x) {
  if (x.c.policy.workflow.replay_safe)
    return result("no_duplicate_commit", true, "replay-safe workflow: a replay duplicates nothing");
  std::map<std::string, int> committed, effects;
  // Under an output contract the stack holds the answer back until it is whole and passes: an answer
  // the contract rejected, or a stream that broke off after some content events, never reached the
  // caller, so the provider's work on it is not a commit the caller could repeat. A commit on arrival
  // (post_commit_timeout: no event, never completed) still counts: the provider did the work.
  const bool contract = !x.c.policy.workflow.output_required.empty();
  auto broke_off =
      [](const LedgerEntry& e) {  // the stream ended before a whole answer (SPEC 2's stream rows)
        return mock::fault_traits(e.fault).breaks_stream || e.outcome != AttemptOutcome::completed;
      };
  auto held_back =
      [&](const LedgerEntry& e) {  // an answer the contract refuses (schema_missing) is no commit either
        const bool refused = mock::fault_traits(e.fault).in_band == mock::InBand::under_output_contract;
        return contract && (refused || (e.events_sent > 0 && broke_off(e)));
      };
  // A resume re-reads a response the provider already made (SPEC 3 rule 0): no new work, no new commit.
  for (const auto& e : x.h.ledger)
    if (e.committed && !held_back(e) && e.resume_of == 0) ++committed[e.idempotency_key];
  for (const auto& s : x.h.side_effects) ++effects[s.operation_id];
  std::vector<std::string> bad;
  for (const auto& [op, n] : effects)
    if (n > 1) bad.push_back(fmt::format("operation \"{}\": side effect executed {} times", op, n));
  // A tool workflow commits twice legitimately: the tool call, then the answer after its side effect.
  for (const auto& [op, n] : committed) {
    const int allowed = 1 + (effects.contains(op) ? effects.at(op) : 0);
    if (n > allowed)
      bad.push_back(fmt::format("operation \"{}\": {} committed attempts (allowed {})", op, n, allowed));
  }
  return result("no_duplicate_commit", bad.empty(),
                bad.empty() ? "no operation committed twice" : fmt::format("{}", fmt::join(bad, "; ")));
}

std::optional<CheckResult> check_timeline(const Ctx& x) {
  if (!x.h.has_decision_log) return std::nullopt;
  std::vector<std::string> bad;
  for (const auto& v : x.views)
    for (std::size_t k = 0; k < v.entries.size(); ++k)
      if (!v.entry_attempt[k]) bad.push_back(entry_str(*v.entries[k]));
  for (const auto* e : x.unmatched) bad.push_back(entry_str(*e) + " (key names no request)");
  return result("timeline", bad.empty(),
                bad.empty()
                    ? "every attempt the mock received is in the decision log"
                    : fmt::format("attempts missing from the decision log: {}", fmt::join(bad, "; ")));
}

}  // namespace

extern const CheckSpec no_duplicate_commit_check{"no_duplicate_commit", check_duplicates};
extern const CheckSpec timeline_check{"timeline", check_timeline};

}  // namespace llmchaos::harness::detail
