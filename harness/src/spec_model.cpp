// SPEC section 3 from the spec text, for `llmchaos explore`. Deliberately written apart from
// client/src/classifier.cpp and client/src/decision.cpp: where they and this file disagree, one of them
// misreads the spec, and explore shows the smallest case where it matters.
#include "llmchaos/harness/spec_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "llmchaos/mockprovider/dialect.hpp"
#include "retry_hint.hpp"

namespace llmchaos::harness {
namespace {

// This file reads no trait table (mock::fault_traits, FaultSpec): it is an independent oracle, so its
// reading of each fault (the switch below, the default hint) is written from the spec text on purpose. A
// fault trait misdeclared in faults/*.cpp then shows up as a disagreement instead of being copied here.
// rate_429's retry hint when the script gives none (faults/README.md: 1000 ms).

// Budgets in dollars compare with this slack: 0.012 - 0.004 - 0.004 must still pay for a 0.004 attempt.
constexpr double cost_slack = 1e-9;

// What one failed attempt was, by SPEC section 2.
struct Failure {
  bool failed = false;
  Owner owner = Owner::none;
  CommitState commit = CommitState::none;
  std::string what;  // the row of SPEC 2 that applied, in words
  // SPEC 3 rule 0's first half: the stream of a background response broke off after the frame that
  // named it (so the id and a sequence number are known) while the provider goes on.
  bool background_cut = false;
};

// The fields of a JSON-object answer; nullopt when the text is not a JSON object.
std::optional<std::vector<std::string>> json_fields(const std::string& text) {
  boost::system::error_code ec;
  auto v = boost::json::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& [k, value] : v.get_object())
    if (!value.is_null()) out.emplace_back(k);
  return out;
}

// Does the answer the caller would get meet the workflow's output contract?
bool meets_contract(const Case& c, const LedgerEntry& e, const mock::Step* step) {
  const auto& required = c.policy.workflow.output_required;
  if (required.empty()) return true;
  std::string text = step && step->text ? *step->text : c.script.routes.at(e.route).default_text;
  auto fields = json_fields(text);
  if (!fields) return false;
  // schema_missing leaves one field out: the one it names, else the answer's first.
  if (e.fault == FaultKind::schema_missing && !fields->empty()) {
    const std::string gone = step && step->missing_field ? *step->missing_field : fields->front();
    std::erase(*fields, gone);
  }
  return std::all_of(required.begin(), required.end(), [&](const std::string& f) {
    return std::find(fields->begin(), fields->end(), f) != fields->end();
  });
}

// SPEC 2's row of a fault that failed with an answer (owner, commit, what); nullopt for an answer judged
// by how it ended and what it holds.
struct FaultRow {
  Owner owner;
  CommitState commit;
  std::string what;
};

std::optional<FaultRow> fault_row(const LedgerEntry& e, CommitState before_any, CommitState after_tokens,
                                  int visible) {
  switch (e.fault) {
    case FaultKind::rate_429:
      return FaultRow{Owner::rate, before_any, "rate_429"};
    case FaultKind::quota_429:
    case FaultKind::payment_402:
      return FaultRow{Owner::quota, before_any, std::string(to_string(e.fault))};
    case FaultKind::overloaded:
      return FaultRow{Owner::transient, before_any, "overloaded"};
    case FaultKind::server_500:
      return FaultRow{Owner::unknown, before_any, "server_500"};
    case FaultKind::server_500_context:
    case FaultKind::bad_request:
    case FaultKind::prefill_rejected:
      return FaultRow{Owner::request, before_any, std::string(to_string(e.fault))};
    case FaultKind::auth:
      return FaultRow{Owner::auth, before_any, "auth"};
    case FaultKind::policy:
      return FaultRow{Owner::policy, after_tokens, "policy"};
    case FaultKind::stream_cut:
    case FaultKind::stream_stall:
    case FaultKind::malformed_event:
      return FaultRow{Owner::transient, after_tokens,
                      fmt::format("{} after {} visible token(s)", to_string(e.fault), visible)};
    case FaultKind::stream_error:
      // A plain request gets the interruption as a status: the row of what that status is.
      if (!e.stream && e.status == 500)
        return FaultRow{Owner::unknown, before_any, "stream_error as a bare 500"};
      return FaultRow{Owner::transient, after_tokens,
                      fmt::format("stream_error after {} visible token(s)", visible)};
    case FaultKind::post_commit_timeout:
    case FaultKind::no_response:
    case FaultKind::connect_reset:
      return FaultRow{Owner::unknown, CommitState::unknown, "a silent fault that answered"};
    // Answers (a whole one, or one judge() reads by how it ended and what it holds). Listed, not a
    // default: a new fault kind must be placed in this oracle by hand (-Wswitch), never read as healthy.
    case FaultKind::ok:
    case FaultKind::slow:
    case FaultKind::slow_first_token:
    case FaultKind::no_terminator:
    case FaultKind::schema_missing:
      break;
  }
  return std::nullopt;
}

// SPEC 2's table, read off the mock's record of the attempt. `side_effect_before`: a tool side effect of
// this operation ran before the attempt (every later failure is committed). `shown_before`: content
// events of the same background response the caller saw before this attempt resumed it.
Failure judge(const Case& c, const LedgerEntry& e, const mock::Step* step, bool side_effect_before,
              int shown_before) {
  const auto& wf = c.policy.workflow;
  Failure f;
  f.failed = true;
  const bool tool_leg = c.request.tool_call && !side_effect_before;  // the answer is the tool call itself
  // "committed once a token is visible": what reached the caller before the fault. A plain body is all or
  // nothing; an answer held back for the output contract, or a tool call, shows the caller no token.
  const bool tokens_reach_caller = wf.output_required.empty() && !tool_leg;
  const int visible = (!e.stream || !tokens_reach_caller) ? 0 : e.events_sent;
  // What earlier reads of the same background response showed counts by the same rule: a held-back
  // answer showed nothing, so a failed resume of it commits nothing either.
  const bool shown = side_effect_before || (tokens_reach_caller && shown_before > 0);
  const CommitState after_tokens = shown || visible > 0 ? CommitState::committed : CommitState::none;
  const CommitState before_any = shown ? CommitState::committed : CommitState::none;
  // Background responses exist where a dialect stores responses (the Responses API); the request that created
  // one, or a resume of it, streamed with a 200. A cut or a stall breaks the stream after its first frame
  // (response.created) named it.
  const bool background_stream =
      wf.background && mock::dialect_spec(e.dialect).stores_responses && e.stream && e.status == 200;
  f.background_cut =
      background_stream && (e.fault == FaultKind::stream_cut || e.fault == FaultKind::stream_stall);
  auto set = [&](Owner owner, CommitState commit, std::string what) {
    f.owner = owner;
    f.commit = commit;
    f.what = std::move(what);
    return f;
  };

  if (e.status == 0) {
    // No response byte. A reset before any byte is connect_reset's row; anything else is a timeout with
    // no byte (SPEC 2's post_commit_timeout / no_response rows, and any answer later than the timeout):
    // owner transient, and "no evidence that nothing happened" -> commit unknown, none only for a
    // replay-safe workflow (then rules 4-7 decide).
    if (e.outcome == AttemptOutcome::reset)
      return set(Owner::transient, before_any, "reset before any response byte");
    return set(Owner::transient,
               shown            ? CommitState::committed
               : wf.replay_safe ? CommitState::none
                                : CommitState::unknown,
               "no response byte before the timeout");
  }
  if (auto row = fault_row(e, before_any, after_tokens, visible))
    return set(row->owner, row->commit, std::move(row->what));
  if (e.outcome != AttemptOutcome::completed) {  // the answer broke off (an idle gap past the timeout)
    // A resume needs no frame of its own to be resumable: its id and sequence are the ones it resumed
    // from (a slow_first_token on it breaks off before any frame; the creating stream's first frame
    // would have named the response, and slow_first_token holds exactly that frame back).
    f.background_cut = background_stream && e.resume_of != 0;
    return set(Owner::transient, after_tokens,
               fmt::format("{} broken off after {} visible token(s)", to_string(e.fault), visible));
  }
  if (!tool_leg && !meets_contract(c, e, step))
    return set(Owner::contract, before_any, "answer misses a required field");
  f.failed = false;
  return f;
}

// SPEC 3's budget inputs at one failure point.
struct Budget {
  int attempts_left = 0;
  double time_left_ms = 0;
  double cost_left_usd = 0;
};

struct RouteFacts {
  double latency_ms = 0;
  double cost_usd = 0;
  bool approved = true;
};

class Model {
 public:
  Model(const Case& c, const History& h, double scale) : c_(c), h_(h), scale_(scale) {}

  std::vector<SpecPoint> run() {
    const auto views = group_by_request(h_);
    steps_ = resolve_steps(c_.script, h_.ledger, scale_);
    for (std::size_t r = 0; r < views.size(); ++r) request(static_cast<int>(r), views[r]);
    return std::move(points_);
  }

 private:
  RouteFacts facts(const std::string& route) const {
    const auto& rp = c_.policy.route(route);
    return {rp.expected_latency_ms * scale_, rp.cost_per_attempt_usd, rp.approved};
  }
  std::optional<double> retry_after(const LedgerEntry& e, const mock::Step* step) const {
    if (e.status < 400) return std::nullopt;
    if (const auto h = readable_sent_hint(e, step, scale_)) return h->ms;  // the hint the answer carried
    return std::nullopt;
  }
  bool side_effect_before(const std::string& op, const LedgerEntry& e) const {
    return std::any_of(h_.side_effects.begin(), h_.side_effects.end(), [&](const SideEffect& s) {
      return s.operation_id == op && s.received_at_ms <= e.received_at_ms;
    });
  }

  // Content events of e's background response sent before e (e resumes it): the creating attempt's and
  // the earlier resumes'. 0 for an attempt that is no resume.
  static int shown_before(const RequestView& v, const LedgerEntry& e) {
    if (e.resume_of == 0) return 0;
    int n = 0;
    for (const auto* x : v.entries)
      if (x->seq < e.seq && (x->seq == e.resume_of || x->resume_of == e.resume_of)) n += x->events_sent;
    return n;
  }

  void request(int r, const RequestView& v) {
    const auto& wf = c_.policy.workflow;
    const std::string op = v.request ? v.request->log.operation_id : std::string();
    int used = 0;
    double extra = 0;
    for (int d = 0; d < static_cast<int>(v.deliveries.size()); ++d) {
      double start = -1;
      std::set<std::string> tried;
      for (std::size_t i = 0; i < v.entries.size(); ++i) {
        if (v.entry_delivery[i] != d) continue;
        const LedgerEntry& e = *v.entries[i];
        if (start < 0) start = e.received_at_ms;  // a delivery sends its first attempt at once
        if (used++ > 0) extra += facts(e.route).cost_usd;
        tried.insert(e.route);
        const auto* step = steps_.count(e.seq) ? steps_.at(e.seq) : nullptr;
        const Failure f = judge(c_, e, step, side_effect_before(op, e), shown_before(v, e));
        if (!f.failed) continue;
        if (++route_failures_[e.route] >= c_.policy.route(e.route).breaker.failure_threshold) tainted_ = true;

        SpecPoint p;
        p.point = static_cast<int>(points_.size()) + 1;
        p.request = r;
        p.delivery = d;
        p.seq = e.seq;
        p.route = e.route;
        p.route_attempt = e.attempt;
        p.fault = e.fault;
        p.owner = f.owner;
        p.commit = f.commit;
        const Budget b{wf.max_total_attempts - used,
                       std::max(0.0, wf.max_elapsed_ms * scale_ - (e.finished_at_ms - start)),
                       std::max(0.0, wf.max_extra_cost_usd - extra)};
        if (!tainted_) {
          decide(p, f, b, e, step, tried);
        } else {
          p.why =
              "not judged: a breaker may be open (its state is the client's, not an input SPEC 3 defines)";
        }
        points_.push_back(std::move(p));
      }
    }
  }

  // The rules 0-7, first match wins.
  void decide(SpecPoint& p, const Failure& f, const Budget& b, const LedgerEntry& e, const mock::Step* step,
              const std::set<std::string>& tried) const {
    const auto& wf = c_.policy.workflow;
    const auto ra = retry_after(e, step);
    const std::string inputs = fmt::format(
        "{}: owner {}, commit {}, attempts left {}, time left {:.0f} ms, cost left {:.4f}", f.what,
        to_string(f.owner), to_string(f.commit), b.attempts_left, b.time_left_ms, b.cost_left_usd);
    auto done = [&](Action a, int rule, std::string_view text) {
      p.action = a;
      p.rule = rule;
      p.why = fmt::format("rule {}: {} ({})", rule, text, inputs);
    };
    const Owner o = f.owner;
    // 0. A cut background response is resumed when an attempt, the time and the cost for it are left (a
    // resume is an attempt of the budget like any other, its price included).
    if (f.background_cut && b.attempts_left > 0 && b.time_left_ms >= facts(e.route).latency_ms &&
        b.cost_left_usd + cost_slack >= facts(e.route).cost_usd)
      return done(Action::resume, 0, "a cut background response with a known id and sequence: resume");
    if (o == Owner::request || o == Owner::auth || o == Owner::policy)
      return done(Action::fail_closed, 1, "the request or the credentials are wrong");
    if (f.commit != CommitState::none) return done(Action::fail_closed, 2, "committed or unknown: reconcile");
    if (o == Owner::unknown)
      return done(wf.queue_allowed ? Action::queue : Action::fail_closed, 3,
                  wf.queue_allowed ? "owner unknown, queueing allowed" : "owner unknown, no queue");

    const RouteFacts here = facts(e.route);
    if ((o == Owner::transient || o == Owner::rate) && b.attempts_left > 0 &&
        b.time_left_ms >= ra.value_or(0) + here.latency_ms && b.cost_left_usd + cost_slack >= here.cost_usd)
      return done(Action::retry, 4,
                  fmt::format("retry fits: retry-after {:.0f} ms + expected {:.0f} ms", ra.value_or(0),
                              here.latency_ms));

    if (o == Owner::transient || o == Owner::rate || o == Owner::quota) {
      // "another approved route": the chain in order, never one this delivery already went to.
      for (const auto& name : wf.fallback) {
        if (name == e.route || tried.count(name)) continue;
        const RouteFacts fb = facts(name);
        if (fb.approved && b.attempts_left > 0 && b.time_left_ms >= fb.latency_ms &&
            b.cost_left_usd + cost_slack >= fb.cost_usd) {
          p.target = name;
          return done(Action::fallback, 5,
                      fmt::format("fallback to {} fits (expected {:.0f} ms)", name, fb.latency_ms));
        }
      }
    }
    if (wf.queue_allowed) return done(Action::queue, 6, "queueing allowed");
    if (wf.degrade_allowed) return done(Action::degrade, 7, "degrade approved");
    return done(Action::fail_closed, 7, "nothing else applies");
  }

  const Case& c_;
  const History& h_;
  const double scale_;
  std::map<std::uint64_t, const mock::Step*> steps_;
  // The breaker is the client's own design (SPEC 3 only names its state): once failures on a route reach
  // its threshold, a breaker may be open from then on, and the model judges no further point of the case.
  std::map<std::string, int> route_failures_;
  bool tainted_ = false;
  std::vector<SpecPoint> points_;
};

std::string point_str(const SpecPoint& p) {
  return fmt::format("point {}: {} attempt {} ({}, owner {}, commit {})", p.point, p.route, p.route_attempt,
                     to_string(p.fault), to_string(p.owner), to_string(p.commit));
}

}  // namespace

std::vector<SpecPoint> spec_points(const Case& c, const History& h, double time_scale) {
  return Model(c, h, time_scale).run();
}

std::vector<SpecDisagreement> compare_with_spec(const History& h, const std::vector<SpecPoint>& model) {
  std::vector<SpecDisagreement> out;
  int seen = 0;  // model points met so far
  const auto views = group_by_request(h);
  std::map<std::uint64_t, const SpecPoint*> by_seq;
  for (const auto& p : model) by_seq[p.seq] = &p;

  for (int r = 0; r < static_cast<int>(views.size()); ++r) {
    const auto& v = views[r];
    for (std::size_t i = 0; i < v.entries.size(); ++i) {
      const LedgerEntry& e = *v.entries[i];
      const int d = v.entry_delivery[i];
      const client::FailurePoint* fp = nullptr;
      if (const auto* a = v.entry_attempt[i])
        for (const auto& f : v.deliveries[d]->failures)
          if (f.attempt == a->index) fp = &f;
      auto it = by_seq.find(e.seq);
      if (it == by_seq.end()) {
        if (fp)
          out.push_back(
              {seen + 1,
               fmt::format("{} attempt {} ({}): SPEC 2 sees no failure; the stack did {} ({})", e.route,
                           e.attempt, to_string(e.fault), to_string(fp->action), fp->rule_text)});
        continue;
      }
      const SpecPoint& p = *it->second;
      seen = p.point;
      if (!p.action) break;  // the rest of this request is outside the model
      const Action did = fp ? fp->action : Action::none;
      const bool same = did == *p.action && (did != Action::fallback || fp->next_route == p.target);
      if (!same)
        out.push_back(
            {p.point,
             fmt::format(
                 "{}: SPEC 3 says {}{} ({}); the stack did {}{} ({})", point_str(p), to_string(*p.action),
                 p.target.empty() ? "" : " to " + p.target, p.why, to_string(did),
                 fp && !fp->next_route.empty() && did == Action::fallback ? " to " + fp->next_route : "",
                 fp ? fp->rule_text : "no failure point in the decision log")});
    }
  }
  return out;
}

}  // namespace llmchaos::harness
