#pragma once
// The checker's context, shared by checker.cpp (the orchestrator) and the checks, one family per file
// (checks_*.cpp), each check a CheckSpec listed in the one table (checks.cpp). Private to the harness.
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/harness/checker.hpp"

namespace llmchaos::harness::detail {

struct Ctx {
  const Case& c;
  const History& h;
  const CheckOptions& opt;
  std::vector<RequestView> views;
  std::vector<const LedgerEntry*> unmatched;
  std::vector<PointResult> points;
  std::map<std::uint64_t, const mock::Step*> steps;  // seq -> the step that served it

  double scaled(double scripted_ms) const { return scripted_ms * opt.time_scale; }
  // A bound from [checks] / [sequence]: scaled, plus the fixed real tolerance.
  double bound(double scripted_ms) const { return scaled(scripted_ms) + opt.elapsed_tolerance_ms; }
  Action observed(const PointResult& p) const { return h.has_decision_log ? p.from_log : p.from_ledger; }
  const mock::RouteScript* route(const std::string& name) const {
    auto it = c.script.routes.find(name);
    return it == c.script.routes.end() ? nullptr : &it->second;
  }
  const mock::Step* step(const LedgerEntry& e) const {
    auto it = steps.find(e.seq);
    return it == steps.end() ? nullptr : it->second;
  }
  // The healthy answer the mock gives for this attempt (a resume's: the stored response it re-reads,
  // the answer of the attempt that created it).
  std::string canonical_text(const LedgerEntry& e) const {
    if (e.resume_of != 0)
      for (const auto& created : h.ledger)
        if (created.seq == e.resume_of && created.resume_of == 0) return canonical_text(created);
    if (const auto* s = step(e); s && s->text) return *s->text;
    const auto* r = route(e.route);
    return r ? r->default_text : std::string();
  }
  // The entry that served a successful delivery, by the ledger: its last attempt that did not fail,
  // else (the stack took a failed attempt for an answer) its last attempt.
  const LedgerEntry* serving_entry(const RequestView& v, int delivery) const {
    const LedgerEntry *healthy = nullptr, *any = nullptr;
    for (std::size_t i = 0; i < v.entries.size(); ++i) {
      if (v.entry_delivery[i] != delivery) continue;
      any = v.entries[i];
      if (!attempt_failed(*v.entries[i], c.policy)) healthy = v.entries[i];
    }
    return healthy ? healthy : any;
  }
  double outage_end_ms() const {
    double end = 0;
    if (const auto* r = route(c.sequence->outage_route))
      for (const auto& s : r->steps)
        if (s.until_ms) end = std::max(end, scaled(*s.until_ms));
    return end;
  }
};

std::string entry_str(const LedgerEntry& e);
std::string timeline(const Ctx& x);
CheckResult result(std::string name, bool ok, std::string message);

// The retry hint an attempt's answer carried, real (scaled) ms, as the ledger recorded it
// (retry_hint.hpp); nothing when the form is not one a client reads.
std::optional<double> sent_hint_ms(const Ctx& x, const LedgerEntry& e);

inline bool is_success(Outcome o) {
  return o == Outcome::primary_success || o == Outcome::retry_recovery || o == Outcome::fallback_recovery;
}

// One check: a pure function of the case and its history, nothing when the case does not ask for it.
struct CheckSpec {
  std::string_view name;  // the name its CheckResult carries (and an unknown verdict names, if it throws)
  std::optional<CheckResult> (*run)(const Ctx&);
};

// Every check, in report order (checks.cpp).
std::span<const CheckSpec* const> all_checks();

}  // namespace llmchaos::harness::detail
