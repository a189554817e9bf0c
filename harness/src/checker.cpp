// The checker: runs every check of the one table (checks.cpp; the checks one family per file, checks_*.cpp)
// over the case and its history. A check that is not asked for returns nothing; one that throws makes the
// case `unknown`.
#include "llmchaos/harness/checker.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checker_ctx.hpp"

namespace llmchaos::harness {
namespace detail {
std::string entry_str(const LedgerEntry& e) {
  return fmt::format("#{} {}[{}] {} status {} {} at {:.0f}-{:.0f} ms", e.seq, e.route, e.attempt,
                     to_string(e.fault), e.status, to_string(e.outcome), e.received_at_ms, e.finished_at_ms);
}

std::string timeline(const Ctx& x) {
  std::vector<std::string> parts;
  for (const auto& e : x.h.ledger) parts.push_back(entry_str(e));
  auto out =
      parts.empty() ? std::string("(the mock saw no attempt)") : fmt::format("{}", fmt::join(parts, "; "));
  if (!x.h.foreign.empty())
    out += fmt::format("; foreign traffic, not counted: {} attempt(s)", x.h.foreign.size());
  return out;
}

CheckResult result(std::string name, bool ok, std::string message) {
  return {std::move(name), ok, std::move(message)};
}

}  // namespace detail

namespace {
using detail::Ctx;
}  // namespace

Verdict combine(const std::vector<CheckResult>& checks, bool any_unknown) {
  if (any_unknown) return Verdict::unknown;
  for (const auto& c : checks)
    if (!c.ok) return Verdict::fail;
  return Verdict::pass;
}

CaseResult check_case(const Case& c, const History& h, const CheckOptions& options) {
  CaseResult r;
  r.name = c.name;
  r.description = c.description;
  r.file = c.file;
  r.folder = c.folder;
  r.tags = c.tags;
  r.expected = c.expect;
  r.expected_outcome = c.expect_outcome;
  r.policy_name = c.policy.workflow.name;
  r.policy_file = c.policy_file;
  r.ledger = h.ledger;
  r.foreign = h.foreign;
  r.side_effects = h.side_effects;
  for (const auto& req : h.requests) {
    r.logs.push_back(req.log);
    r.request_started_ms.push_back(req.started_ms);
  }
  for (const auto& req : h.requests)
    for (const auto& again : req.redeliveries) r.logs.push_back(again);
  if (h.alive) r.alive_log = h.alive->log;
  r.wall_ms = h.wall_ms;
  if (!h.requests.empty()) r.observed_outcome = h.requests.front().log.outcome;
  for (const auto& [name, route] : c.script.routes) r.attempts_by_route[name] = 0;
  for (const auto& e : h.ledger) ++r.attempts_by_route[e.route];

  bool unknown = false;
  auto fail_unknown = [&](const std::string& what, const std::string& why) {
    r.checks.push_back({what, false, "unknown: the checker failed: " + why});
    if (!unknown) r.unknown_reason = fmt::format("error: {}: {}", what, why);
    unknown = true;
  };
  try {
    Ctx x{c, h, options, {}, {}, {}, {}};
    x.views = group_by_request(h, &x.unmatched, c.group_of);
    // Foreign traffic on a completion path took its script step too: the steps are the whole namespace's.
    auto all = h.ledger;
    all.insert(all.end(), h.foreign.begin(), h.foreign.end());
    x.steps = resolve_steps(c.script, all, options.time_scale);
    for (const auto& v : x.views) {
      for (auto& p : derive_points(v, c.policy, h.has_decision_log, c.group_of)) {
        p.point = static_cast<int>(x.points.size()) + 1;
        p.expected = c.expected_at(p.point).value_or(Action::none);
        x.points.push_back(std::move(p));
      }
    }
    r.points = x.points;
    for (const auto& p : x.points) r.observed_actions.push_back(x.observed(p));
    r.observed = r.observed_actions.empty() ? Action::none : r.observed_actions.front();
    for (const auto* check : detail::all_checks()) {
      try {
        if (auto res = check->run(x)) r.checks.push_back(std::move(*res));
      } catch (const std::exception& e) {
        fail_unknown(std::string(check->name), e.what());
      }
    }
  } catch (const std::exception& e) {
    fail_unknown("history", e.what());
  }
  r.verdict = combine(r.checks, unknown);
  return r;
}

}  // namespace llmchaos::harness
