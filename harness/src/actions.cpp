// The action at each failure point, derived twice: from the stack's decision log and from the mock's
// ledger alone. Pure functions over plain data.
#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "llmchaos/harness/checker.hpp"
#include "llmchaos/mockprovider/dialect.hpp"
#include "llmchaos/mockprovider/fault_traits.hpp"

namespace llmchaos::harness {

std::map<std::uint64_t, const mock::Step*> resolve_steps(const mock::Script& script,
                                                         const std::vector<LedgerEntry>& ledger,
                                                         double time_scale) {
  std::vector<const LedgerEntry*> sorted;
  for (const auto& e : ledger) sorted.push_back(&e);
  std::stable_sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
  std::map<std::string, mock::StepCursor> cursors;
  std::map<std::uint64_t, const mock::Step*> out;
  for (const auto* e : sorted) {
    auto it = script.routes.find(e->route);
    if (it == script.routes.end()) continue;
    if (!e->path.empty() && !is_completion_path(e->dialect, e->path))
      continue;  // the engine answered it without a step
    // The engine's own step selection (mock::next_step), replayed over the ledger.
    out[e->seq] = mock::next_step(it->second.steps, cursors[e->route], e->received_at_ms, time_scale);
  }
  return out;
}

bool is_completion_path(Dialect dialect, std::string_view path) {
  const auto parsed = mock::dialect_spec(dialect).parse("POST", path, "");
  return !parsed.models_list && parsed.error != mock::RequestError::not_found;
}

bool is_foreign(const LedgerEntry& entry, const std::vector<std::string>& keys) {
  // (A literal history may leave the path out: the mock always records one, "/" at least.)
  if (!entry.path.empty() && !is_completion_path(entry.dialect, entry.path)) return true;
  return !entry.idempotency_key.empty() &&
         std::find(keys.begin(), keys.end(), entry.idempotency_key) == keys.end();
}

void split_foreign(History& history) {
  std::vector<std::string> keys;
  for (const auto& r : history.requests) {
    keys.push_back(r.log.operation_id);
    for (const auto& again : r.redeliveries) keys.push_back(again.operation_id);
  }
  std::vector<LedgerEntry> mine;
  for (auto& e : history.ledger) (is_foreign(e, keys) ? history.foreign : mine).push_back(std::move(e));
  history.ledger = std::move(mine);
}

bool resumes(const LedgerEntry& failed, const LedgerEntry& next) {
  // The failed attempt answered 2xx (a stream that broke off) and the next re-reads a stored response.
  return next.resume_of != 0 && next.route == failed.route && failed.status / 100 == 2;
}

bool attempt_failed(const LedgerEntry& entry, const client::Policy& policy) {
  if (entry.status >= 400 || entry.status == 0) return true;
  if (entry.finished && entry.outcome != AttemptOutcome::completed) return true;
  switch (mock::fault_traits(entry.fault).in_band) {  // a 2xx that still failed (the fault says so)
    case mock::InBand::always:
      return true;
    case mock::InBand::under_output_contract:
      return !policy.workflow.output_required.empty();
    case mock::InBand::never:
      return false;
  }
  return false;
}

namespace {

const std::string& logical(const GroupOf& group_of, const std::string& route) {
  auto it = group_of.find(route);
  return it == group_of.end() ? route : it->second;
}

}  // namespace

std::vector<RequestView> group_by_request(const History& history, std::vector<const LedgerEntry*>* unmatched,
                                          const GroupOf& group_of) {
  std::vector<RequestView> views(history.requests.size());
  std::map<std::string, std::size_t> by_op;
  for (std::size_t i = 0; i < history.requests.size(); ++i) {
    const auto& rec = history.requests[i];
    views[i].request = &rec;
    views[i].deliveries.push_back(&rec.log);
    for (const auto& r : rec.redeliveries) views[i].deliveries.push_back(&r);
    if (!rec.log.operation_id.empty()) by_op.emplace(rec.log.operation_id, i);
  }
  std::vector<const LedgerEntry*> sorted;
  for (const auto& e : history.ledger) sorted.push_back(&e);
  std::stable_sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
  for (const auto* e : sorted) {
    auto it = by_op.find(e->idempotency_key);
    if (views.size() == 1) {
      views[0].entries.push_back(e);  // one request: every attempt is its own, key or not
    } else if (it != by_op.end()) {
      views[it->second].entries.push_back(e);
    } else if (unmatched) {
      unmatched->push_back(e);
    }
  }

  // Match log attempts to entries route by route, in order.
  for (auto& v : views) {
    std::map<std::string, std::vector<std::size_t>> pending;  // route -> entry indices not yet matched
    for (std::size_t i = 0; i < v.entries.size(); ++i)
      pending[logical(group_of, v.entries[i]->route)].push_back(i);
    std::map<std::string, std::size_t> next;
    v.entry_attempt.assign(v.entries.size(), nullptr);
    v.entry_delivery.assign(v.entries.size(), -1);
    for (std::size_t d = 0; d < v.deliveries.size(); ++d) {
      for (const auto& a : v.deliveries[d]->attempts) {
        auto& queue = pending[logical(group_of, a.route)];
        auto& n = next[logical(group_of, a.route)];
        if (n < queue.size()) {
          v.entry_attempt[queue[n]] = &a;
          v.entry_delivery[queue[n]] = static_cast<int>(d);
          ++n;
        }
      }
    }
    // An entry no attempt matched belongs to the delivery of the entry before it.
    int last = 0;
    for (auto& d : v.entry_delivery) {
      if (d < 0) d = last;
      last = d;
    }
  }
  return views;
}

namespace {

// No further attempt in the delivery: the answer decides.
Action terminal_action(const client::DecisionLog& log) {
  switch (log.outcome) {
    case Outcome::degraded:
      return Action::degrade;
    case Outcome::queued:
      return Action::queue;
    case Outcome::fail_closed:
      return Action::fail_closed;
    default:
      return Action::none;  // reported as a success: the failure was accepted as an answer
  }
}

struct Positioned {
  int delivery = 0;
  double anchor = 0;  // entry index the point sits at (x.5: between entries)
  int order = 0;
  PointResult point;
};

}  // namespace

std::vector<PointResult> derive_points(const RequestView& v, const client::Policy& policy,
                                       bool has_decision_log, const GroupOf& group_of) {
  const int n = static_cast<int>(v.entries.size());
  auto route_of = [&](int i) -> const std::string& { return logical(group_of, v.entries[i]->route); };
  // Ledger alone: what followed entry `i` inside its delivery.
  auto from_entry = [&](int i) {
    const int d = v.entry_delivery[i];
    if (i + 1 < n && v.entry_delivery[i + 1] == d) {
      if (resumes(*v.entries[i], *v.entries[i + 1])) return Action::resume;
      return route_of(i + 1) == route_of(i) ? Action::retry : Action::fallback;
    }
    return terminal_action(*v.deliveries[d]);
  };
  // A point no ledger entry shows (no attempt sent, or one the mock never saw): the next entry of the
  // delivery at or after `anchor` decides.
  auto from_position = [&](int d, int anchor, const std::string& route) {
    for (int i = anchor; i < n; ++i) {
      if (v.entry_delivery[i] != d) continue;
      return route_of(i) == logical(group_of, route) ? Action::retry : Action::fallback;
    }
    return terminal_action(*v.deliveries[d]);
  };

  std::vector<Positioned> out;
  std::vector<bool> referenced(n, false);
  int order = 0;
  if (has_decision_log) {
    for (int d = 0; d < static_cast<int>(v.deliveries.size()); ++d) {
      int position = 0;  // first entry index after the previous point of this delivery
      for (int i = 0; i < n; ++i)
        if (v.entry_delivery[i] < d) position = i + 1;
      for (const auto& fp : v.deliveries[d]->failures) {
        Positioned p;
        p.delivery = d;
        p.order = order++;
        p.point.from_log = fp.action;
        p.point.rule = fp.rule_text.empty() ? "rule " + std::to_string(fp.rule) : fp.rule_text;
        int entry = -1;
        if (fp.attempt >= 0) {
          for (int i = 0; i < n; ++i)
            if (v.entry_attempt[i] && v.entry_delivery[i] == d && v.entry_attempt[i]->index == fp.attempt)
              entry = i;
        }
        if (entry >= 0) {
          referenced[entry] = true;
          p.anchor = entry;
          p.point.from_ledger = from_entry(entry);
          position = entry + 1;
        } else {
          p.anchor = position - 0.5;
          p.point.from_ledger = from_position(d, position, fp.route);
        }
        out.push_back(std::move(p));
      }
    }
  }
  // Failed attempts the log never called a failure point (or every failed attempt, without a log).
  for (int i = 0; i < n; ++i) {
    if (referenced[i] || !attempt_failed(*v.entries[i], policy)) continue;
    Positioned p;
    p.delivery = v.entry_delivery[i];
    p.anchor = i;
    p.order = order++;
    p.point.from_log = Action::none;
    p.point.from_ledger = from_entry(i);
    p.point.rule = has_decision_log ? "(no failure point in the decision log)" : "";
    out.push_back(std::move(p));
  }
  std::stable_sort(out.begin(), out.end(), [](const Positioned& a, const Positioned& b) {
    return std::tie(a.delivery, a.anchor, a.order) < std::tie(b.delivery, b.anchor, b.order);
  });
  std::vector<PointResult> points;
  for (auto& p : out) {
    p.point.point = static_cast<int>(points.size()) + 1;
    points.push_back(std::move(p.point));
  }
  return points;
}

}  // namespace llmchaos::harness
