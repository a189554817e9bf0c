#include "llmchaos/client/executor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <mutex>
#include <set>
#include <stdexcept>

#include "llmchaos/client/backoff.hpp"
#include "llmchaos/client/breaker.hpp"
#include "llmchaos/client/classifier.hpp"
#include "llmchaos/client/cooldown.hpp"
#include "llmchaos/client/dialect_codec.hpp"
#include "llmchaos/client/journal.hpp"
#include "llmchaos/client/queue.hpp"

namespace llmchaos::client {

std::vector<std::string> missing_output_fields(std::string_view answer,
                                               const std::vector<std::string>& required) {
  boost::system::error_code ec;
  auto v = boost::json::parse(answer, ec);
  if (ec || !v.is_object()) return required;
  std::vector<std::string> missing;
  for (const auto& field : required) {
    const auto* value = v.get_object().if_contains(field);
    if (!value || value->is_null()) missing.push_back(field);
  }
  return missing;
}

namespace {

// Everything that persists across the requests of one stack (ClientStack::Impl is this).
struct StackState {
  StackState(Policy p, std::map<std::string, Endpoint> e, Clock& c, Rng& r, Transport& t)
      : policy(std::move(p)),
        endpoints(std::move(e)),
        clock(c),
        rng(r),
        transport(t),
        backoff(policy.backoff),
        breakers(make_breakers(policy)) {}

  CircuitBreaker& breaker(const std::string& route) {
    auto it = breakers.find(route);
    if (it == breakers.end()) it = breakers.emplace(route, CircuitBreaker(policy.route(route).breaker)).first;
    return it->second;
  }
  const Endpoint& endpoint(const std::string& route) const {
    auto it = endpoints.find(route);
    if (it == endpoints.end())
      throw std::runtime_error("workflow " + policy.workflow.name + ": no endpoint for route \"" + route +
                               "\"");
    return it->second;
  }
  std::string new_operation_id() { return fmt::format("op-{:016x}", rng.next()); }

  Policy policy;
  std::map<std::string, Endpoint> endpoints;
  Clock& clock;
  Rng& rng;
  Transport& transport;
  Backoff backoff;
  std::map<std::string, CircuitBreaker> breakers;
  RouteCooldowns cooldowns;
  RequestQueue queue;
  std::unique_ptr<AttemptJournal> journal = std::make_unique<AttemptJournal>();
  // Requests may overlap on one stack (a gateway's callers, a sequence with `overlap`): its state is
  // used under this lock, which a delivery lets go while its attempt is on the wire or its wait runs,
  // so overlapping requests interleave where a real client's do and see each other's cooldowns.
  std::mutex mutex;
};

// One delivery of one workflow request: the attempt loop, its budget and its decision log.
class Delivery {
 public:
  Delivery(StackState& stack, std::unique_lock<std::mutex>& lock, WorkflowRequest request,
           std::vector<std::pair<AttemptKind, double>> spent, int delivery)
      : s_(stack),
        lock_(lock),
        req_(std::move(request)),
        spent_(std::move(spent)),
        budget_(BudgetLimits::from(stack.policy.workflow), stack.clock.now_ms()),
        buffer_output_(!stack.policy.workflow.output_required.empty()) {
    for (const auto& [kind, cost] : spent_) budget_.record_attempt(kind, cost);  // the carried-over ledger
    log_.operation_id = req_.operation_id;
    log_.delivery = delivery;
    route_ = s_.policy.workflow.primary;
    kind_ = delivery > 1 ? AttemptKind::redelivery : AttemptKind::initial;
  }

  DecisionLog run() {
    journal(JournalState::requested, -1, {}, log_.delivery > 1 ? "redelivery" : "");
    const auto& wf = s_.policy.workflow;
    // Each step sends an attempt (bounded by the budget) or skips an open route (bounded by the chain).
    const int max_steps = wf.max_total_attempts + 2 * static_cast<int>(wf.fallback.size()) + 4;
    for (int step = 0; step < max_steps && !done_; ++step) {
      if (budget_.attempts_left() <= 0) {
        stop_before_send("no attempt left in the budget");
        break;
      }
      if (budget_.time_left_ms(s_.clock.now_ms()) <= 0) {
        stop_before_send("no time left in the budget");
        break;
      }
      // Every attempt after the first is extra cost (a redelivery's first one included): it must fit.
      if (budget_.attempts_used() > 0 &&
          budget_.cost_left_usd() < s_.policy.route(route_).cost_per_attempt_usd) {
        stop_before_send("no cost left in the budget for route " + route_);
        break;
      }
      if (const double cool = s_.cooldowns.remaining_ms(route_, s_.clock.now_ms()); cool > 0) {
        skip_cooling_route(cool);
        continue;
      }
      auto& breaker = s_.breaker(route_);
      if (!breaker.allow_request(s_.clock.now_ms())) {
        Classification c;
        c.owner = Owner::transient;
        c.commit = tool_committed_ ? CommitState::committed : CommitState::none;
        c.reason = "breaker of route " + route_ + " is open: attempt not sent";
        decide_and_apply(c, -1, true);
        continue;
      }
      attempt(breaker);
    }
    if (!done_) stop_before_send("step bound reached");
    return std::move(log_);
  }

 private:
  // I/O and waits run without the stack's lock (other requests go on meanwhile); taken back after.
  template <class F>
  auto unlocked(F&& f) {
    struct Relock {
      std::unique_lock<std::mutex>& lock;
      ~Relock() { lock.lock(); }
    } relock{lock_};
    lock_.unlock();
    return f();
  }

  void journal(JournalState state, int attempt, const std::string& route, const std::string& detail) {
    JournalEntry e{req_.operation_id, state, attempt, route, s_.clock.now_ms() - budget_.start_ms(), detail};
    s_.journal->append(e, log_.journal);
  }

  // The route keeps a cooldown from an earlier failure: no attempt is sent, and the decision sees the
  // failure the provider stated: quota (rule 5: the fallback serves meanwhile) or rate, its wait what
  // is left of the Retry-After (rule 4 waits it out when it fits, else rule 5).
  void skip_cooling_route(double remaining_ms) {
    Classification c;
    c.owner = s_.cooldowns.cooled_by(route_);
    c.commit = tool_committed_ ? CommitState::committed : CommitState::none;
    if (c.owner == Owner::rate) c.retry_after_ms = remaining_ms;
    c.reason = fmt::format("route {} keeps a {} cooldown for {:.0f} ms: attempt not sent", route_,
                           to_string(c.owner), remaining_ms);
    decide_and_apply(c, -1, false);
  }

  // The commit point: journaled once, before the first visible byte or side effect.
  void commit(int attempt, const std::string& detail) {
    if (committed_) return;
    committed_ = true;
    journal(JournalState::committed, attempt, route_, detail);
  }

  // What the transport is asked for: this request on the current route, within the time left.
  AttemptRequest attempt_request(const Endpoint& endpoint, double now) {
    const auto& wf = s_.policy.workflow;
    AttemptRequest ar;
    ar.endpoint = endpoint;
    ar.stream = req_.stream;
    ar.model = req_.model;
    ar.prompt = req_.prompt;
    ar.tool_call = req_.tool_call;
    ar.prefill = req_.prefill;
    ar.operation_id = req_.operation_id;
    ar.tool_turn = tool_turn_;
    ar.background = wf.background;
    ar.resume = resume_;
    // The attempt may not outlive the request's time budget.
    ar.timeout_ms = std::min(wf.attempt_timeout_ms, budget_.time_left_ms(now));
    ar.attempt_number = static_cast<int>(spent_.size());  // across deliveries: the workflow's attempt index
    ar.max_attempts = wf.max_total_attempts;
    return ar;
  }

  // The attempt counted in the budget and journaled as started; its record begun.
  AttemptRecord start_attempt(const Endpoint& endpoint, double now) {
    const auto& rp = s_.policy.route(route_);
    AttemptRecord rec;
    rec.index = static_cast<int>(log_.attempts.size());
    rec.route = route_;
    rec.route_attempt = route_attempts_[route_]++;
    rec.kind = kind_;
    budget_.record_attempt(kind_, rp.cost_per_attempt_usd);
    spent_.emplace_back(kind_, rp.cost_per_attempt_usd);
    journal(JournalState::started, rec.index, route_, std::string(to_string(endpoint.dialect)));
    rec.start_ms = now - budget_.start_ms();
    return rec;
  }

  // What the wire showed, classified (SPEC 2), the output contract checked on a whole answer; the
  // record gets the owner, the commit state and the reason.
  Classification classify_attempt(const AttemptResult& res, int visible, Dialect dialect,
                                  AttemptRecord& rec) {
    const auto& wf = s_.policy.workflow;
    Observation obs;
    obs.dialect = dialect;
    obs.status = res.status;
    obs.body = res.body;
    obs.headers = res.headers;
    obs.event = res.event;
    obs.visible_tokens = visible + resumed_visible_;  // a resume goes on with the tokens already shown
    obs.tool_committed = tool_committed_;
    obs.replay_safe = wf.replay_safe;
    obs.finish_reason = res.finish_reason;
    obs.error_type = res.error_type;
    std::vector<std::string> missing;
    const bool complete_answer = res.status / 100 == 2 && (res.event == TransportEvent::none ||
                                                           res.event == TransportEvent::missing_terminator);
    if (complete_answer && !res.tool_call && buffer_output_) {
      missing = missing_output_fields(res.text, wf.output_required);
      obs.contract_violation = !missing.empty();
    }
    Classification c = classify(obs);
    rec.owner = c.owner;
    rec.commit = c.commit;
    rec.reason = !c.reason.empty() ? std::string(c.reason) : res.error;
    // The whole list in the attempt's record; the classification's reason is a short inline text.
    if (!missing.empty()) {
      const std::string fields = fmt::format(" (missing: {})", fmt::join(missing, ", "));
      rec.reason += fields;
      c.reason += fields;
    }
    if (!res.error.empty() && rec.reason != res.error) rec.reason += "; " + res.error;
    return c;
  }

  void attempt(CircuitBreaker& breaker) {
    const auto& wf = s_.policy.workflow;
    const auto& rp = s_.policy.route(route_);
    const Endpoint& endpoint = s_.endpoint(route_);
    const double now = s_.clock.now_ms();
    AttemptRequest ar = attempt_request(endpoint, now);
    AttemptRecord rec = start_attempt(endpoint, now);
    int visible = 0;
    held_plain_.clear();
    auto on_token = [&](std::string_view token) {
      if (buffer_output_) return;  // held until the answer meets the output contract
      if (!req_.stream) {          // a plain answer is shown whole, once it is judged a success (show_held)
        held_plain_.emplace_back(token);
        return;
      }
      commit(rec.index, "token");
      ++visible;
      if (req_.on_token) req_.on_token(token);
    };
    AttemptResult res = unlocked([&] { return s_.transport.send(ar, s_.clock, on_token); });
    // A resumed stream starts after the frame that named the response: the id is the resume's, and
    // the response's text so far is what the caller saw before the cut plus this attempt's (the output
    // contract, the answer and a further resume all read the whole of it).
    if (resume_) {
      if (res.response_id.empty()) res.response_id = resume_->response_id;
      if (res.last_sequence < 0) res.last_sequence = resume_->last_sequence;
      res.text = resumed_text_ + res.text;
    }
    const double end = s_.clock.now_ms();
    rec.end_ms = end - budget_.start_ms();
    rec.status = res.status;
    rec.event = res.event;
    rec.events = res.events;
    rec.visible_tokens = visible;
    rec.tool_call = res.tool_call;
    const Classification c = classify_attempt(res, visible, endpoint.dialect, rec);
    log_.attempts.push_back(rec);
    const int index = rec.index;

    if (c.owner != Owner::none) {
      breaker.on_failure(c.owner, end);
      s_.cooldowns.on_failure(route_, {c.owner, c.retry_after_ms}, {rp.quota_cooldown_ms, rp.rate_cooldown},
                              end);
      // SPEC 3 rule 0's input: the stream of a stored response broke off where the provider goes on.
      const bool cut =
          res.event == TransportEvent::stream_closed || res.event == TransportEvent::stream_idle_timeout;
      std::optional<ResumePoint> at;
      if (cut && wf.background && !res.response_id.empty() && res.last_sequence >= 0)
        at = ResumePoint{res.response_id, res.last_sequence};
      decide_and_apply(c, index, breaker.state(end) == BreakerState::open, at, res.text, visible);
      return;
    }
    breaker.on_success(end);
    show_held(index);
    if (res.tool_call && req_.tool_call && !tool_turn_) {
      run_tool(res, index);
      return;
    }
    answer(res, index);
  }

  // A plain answer judged a success reaches the caller: its tokens as they came, the commit point.
  void show_held(int index) {
    if (req_.stream) return;  // a stream's tokens were shown as they came
    for (const auto& token : held_plain_) {
      commit(index, "token");
      if (req_.on_token) req_.on_token(token);
    }
    log_.attempts.back().visible_tokens = static_cast<int>(held_plain_.size());
    held_plain_.clear();
  }

  // The model asked for the workflow's tool: run the side effect (the commit point), then send the
  // result back on the same route for the final answer.
  void run_tool(const AttemptResult& res, int index) {
    const std::string tool = res.tool_name.empty() ? std::string(workflow_tool_name) : res.tool_name;
    commit(index, "tool:" + tool);
    tool_committed_ = true;
    log_.attempts.back().commit = CommitState::committed;
    const Endpoint& endpoint = s_.endpoint(route_);
    if (!unlocked([&] { return s_.transport.side_effect(endpoint, req_.operation_id, tool); })) {
      Classification c;
      c.owner = Owner::unknown;
      c.commit = CommitState::unknown;  // the side effect may or may not have happened
      c.reason = "tool side effect " + tool + " failed";
      decide_and_apply(c, index, false);
      return;
    }
    tool_turn_ =
        ToolTurn{res.tool_call_id, tool, res.tool_arguments.empty() ? "{}" : res.tool_arguments, "ok"};
    kind_ = AttemptKind::initial;  // the second leg of the workflow, not a retry
  }

  void answer(const AttemptResult& res, int index) {
    if (buffer_output_) {
      commit(index, "answer");
      if (req_.on_token && !res.text.empty()) req_.on_token(res.text);
    }
    log_.attempts.back().commit = CommitState::committed;
    log_.answered = true;
    log_.text = res.text;
    log_.route = route_;
    log_.model = res.model;
    log_.input_tokens = res.input_tokens;
    log_.output_tokens = res.output_tokens;
    // A redelivery already failed once (its first delivery was counted as queued): never a primary success.
    Outcome outcome = Outcome::primary_success;
    if (!log_.failures.empty() || log_.delivery > 1)
      outcome = route_ == s_.policy.workflow.primary ? Outcome::retry_recovery : Outcome::fallback_recovery;
    finish(outcome);
  }

  RouteOption option(const std::string& route, double now) {
    const auto& rp = s_.policy.route(route);
    return RouteOption{route, rp.expected_latency_ms, rp.cost_per_attempt_usd, rp.approved,
                       s_.breaker(route).would_allow(now)};
  }
  // A fallback candidate is unhealthy while it cools too (the current route's cooldown is the retry's
  // wait, rule 4, not a reason to leave it).
  RouteOption fallback_option(const std::string& route, double now) {
    RouteOption o = option(route, now);
    o.healthy = o.healthy && s_.cooldowns.remaining_ms(route, now) <= 0;
    return o;
  }

  DecisionInput decision_input(const Classification& c, bool breaker_open, bool resumable_cut, double now) {
    const auto& wf = s_.policy.workflow;
    const BudgetView view = budget_.view(now);
    DecisionInput in;
    in.failure = c;
    in.attempts_left = view.attempts_left;
    in.time_left_ms = view.time_left_ms;
    in.cost_left_usd = view.cost_left_usd;
    in.current = option(route_, now);
    in.current_breaker_open = breaker_open;
    for (const auto& fb : wf.fallback)
      if (fb != route_ && !tried_.count(fb)) in.fallbacks.push_back(fallback_option(fb, now));
    in.queue_allowed = wf.queue_allowed;
    in.queue_full = s_.queue.full();
    in.degrade_allowed = wf.degrade_allowed;
    in.resumable_cut = resumable_cut;
    return in;
  }

  // The request into the queue, with the budget it spent; false when the queue is full.
  bool enqueue(const Classification& c, double now) {
    QueuedRequest item{req_, spent_, now, log_.delivery, std::string(c.reason)};
    // The caller's token callback refers to the caller's state (a gateway's connection, its
    // answer id) and returns with this call: a redelivery later has no caller to stream to.
    item.request.on_token = nullptr;
    return s_.queue.push(std::move(item));
  }

  // One failure point: ask the decision, log it, and carry the action out.
  // `resume_at`: where the failed attempt's background response can be resumed (rule 0's input);
  // `text` / `shown_tokens`: the response's text so far and the tokens this attempt made visible.
  void decide_and_apply(const Classification& c, int attempt, bool breaker_open,
                        std::optional<ResumePoint> resume_at = std::nullopt, const std::string& text = {},
                        int shown_tokens = 0) {
    const double now = s_.clock.now_ms();
    DecisionInput in = decision_input(c, breaker_open, resume_at.has_value(), now);
    Decision d = decide(in);
    if (d.action == Action::queue && !enqueue(c, now)) {  // filled since it was asked (another delivery's)
      in.queue_full = true;
      d = decide(in);
    }
    FailurePoint fp;
    fp.point = static_cast<int>(log_.failures.size()) + 1;
    fp.attempt = attempt;
    fp.route = route_;
    fp.action = d.action;
    fp.rule = d.rule;
    fp.rule_text = d.rule_text;
    fp.inputs = d.inputs;
    switch (d.action) {
      case Action::resume:
        fp.next_route = route_;
        log_.failures.push_back(fp);
        resume_ = std::move(resume_at);
        resumed_text_ = text;
        resumed_visible_ += shown_tokens;
        kind_ = AttemptKind::retry;  // the budget counts a resume as a retry of the same route
        return;
      case Action::retry:
        return retry(d, c, fp, in.time_left_ms);
      case Action::fallback:
        forget_resume();  // another route holds no stored response of this one
        fp.next_route = d.target_route;
        log_.failures.push_back(fp);
        tried_.insert(route_);
        route_ = d.target_route;
        tried_.insert(route_);
        retries_on_route_ = 0;
        kind_ = AttemptKind::fallback;
        return;
      case Action::queue:
        log_.failures.push_back(fp);
        return finish(Outcome::queued);
      default:
        return end_without_answer(fp);
    }
  }

  void retry(const Decision& d, const Classification& c, FailurePoint& fp, double time_left_ms) {
    std::optional<double> retry_after = d.wait_ms > 0 ? std::optional<double>(d.wait_ms) : c.retry_after_ms;
    double wait = s_.backoff.delay(retries_on_route_, s_.rng, retry_after).ms;
    // The jitter may not push the retry past the time the decision checked; retry-after stays.
    const double room = time_left_ms - s_.policy.route(route_).expected_latency_ms;
    if (wait > room) wait = std::max(retry_after.value_or(0.0), room);
    wait = std::max(wait, 0.0);
    // A retry asks for the answer anew (a POST), even after a resume: the stored response is not
    // read again, and its text so far is not the new answer's.
    forget_resume();
    fp.next_route = route_;
    fp.wait_ms = wait;
    log_.failures.push_back(fp);
    unlocked([&] { s_.clock.sleep_ms(wait); });
    ++retries_on_route_;
    kind_ = AttemptKind::retry;
  }

  // degrade or fail_closed: the request ends here.
  void end_without_answer(const FailurePoint& fp) {
    log_.failures.push_back(fp);
    if (fp.action == Action::degrade) {
      const auto& wf = s_.policy.workflow;
      log_.answered = true;
      log_.text = wf.degrade_text;
      if (req_.on_token) req_.on_token(wf.degrade_text);
      finish(Outcome::degraded);
    } else {
      finish(Outcome::fail_closed);
    }
  }

  // The budget (or the loop bound) stops the request before another attempt could be sent.
  void stop_before_send(const std::string& why) {
    const BudgetView view = budget_.view(s_.clock.now_ms());
    FailurePoint fp;
    fp.point = static_cast<int>(log_.failures.size()) + 1;
    fp.attempt = -1;
    fp.route = route_;
    fp.action = Action::fail_closed;
    fp.rule = 0;
    fp.rule_text = "0: budget gate: " + why;
    fp.inputs = fmt::format("attempts_left={} time_left_ms={:.0f} cost_left_usd={:.4f}", view.attempts_left,
                            view.time_left_ms, view.cost_left_usd);
    log_.failures.push_back(fp);
    finish(Outcome::fail_closed);
  }

  std::vector<std::string> workflow_routes() const {
    std::vector<std::string> routes{s_.policy.workflow.primary};
    routes.insert(routes.end(), s_.policy.workflow.fallback.begin(), s_.policy.workflow.fallback.end());
    return routes;
  }

  void finish(Outcome outcome) {
    const double now = s_.clock.now_ms();
    log_.outcome = outcome;
    log_.elapsed_ms = budget_.elapsed_ms(now);
    log_.extra_cost_usd = budget_.extra_cost_usd();
    if (outcome == Outcome::fail_closed)
      log_.retry_after_ms = s_.cooldowns.all_cooling_for(workflow_routes(), now);
    journal(JournalState::acknowledged, -1, log_.route, std::string(to_string(outcome)));
    done_ = true;
  }

  StackState& s_;
  std::unique_lock<std::mutex>& lock_;  // the stack's, held but while `unlocked` runs
  WorkflowRequest req_;
  std::vector<std::pair<AttemptKind, double>> spent_;
  BudgetLedger budget_;
  const bool buffer_output_;
  // A plain answer's tokens, held until the answer is judged (a whole answer whose stop says its output
  // cannot be used, Bedrock's malformed_model_output, showed the caller nothing: SPEC 2, a plain body is
  // all or nothing).
  std::vector<std::string> held_plain_;
  DecisionLog log_;
  std::string route_;
  AttemptKind kind_;
  std::set<std::string> tried_;
  std::map<std::string, int> route_attempts_;
  int retries_on_route_ = 0;
  std::optional<ToolTurn> tool_turn_;
  void forget_resume() {
    resume_.reset();
    resumed_text_.clear();
  }

  // The next attempt resumes this stored response (rule 0); the text and tokens shown before it.
  std::optional<ResumePoint> resume_;
  std::string resumed_text_;
  int resumed_visible_ = 0;
  bool tool_committed_ = false;
  bool committed_ = false;
  bool done_ = false;
};

DecisionLog deliver(StackState& stack, WorkflowRequest request,
                    std::vector<std::pair<AttemptKind, double>> spent, int delivery) {
  std::unique_lock lock(stack.mutex);
  if (request.operation_id.empty()) request.operation_id = stack.new_operation_id();
  return Delivery(stack, lock, std::move(request), std::move(spent), delivery).run();
}

}  // namespace

struct ClientStack::Impl : StackState {
  using StackState::StackState;
};

ClientStack::ClientStack(Policy policy, std::map<std::string, Endpoint> endpoints, Clock& clock, Rng& rng,
                         Transport& transport)
    : impl_(std::make_unique<Impl>(std::move(policy), std::move(endpoints), clock, rng, transport)) {}

ClientStack::~ClientStack() = default;

DecisionLog ClientStack::execute(const WorkflowRequest& request) {
  return deliver(*impl_, request, {}, 1);
}

const Policy& ClientStack::policy() const {
  return impl_->policy;
}

void ClientStack::journal_to(const std::string& path) {
  impl_->journal = std::make_unique<AttemptJournal>(path);
}

std::size_t ClientStack::queued() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->queue.size();
}

std::optional<DecisionLog> ClientStack::redeliver_next() {
  auto item = [&] {
    std::lock_guard lock(impl_->mutex);
    return impl_->queue.pop();
  }();
  if (!item) return std::nullopt;
  return deliver(*impl_, std::move(item->request), std::move(item->spent), item->deliveries + 1);
}

std::vector<DecisionLog> ClientStack::drain() {
  std::vector<DecisionLog> out;
  for (std::size_t n = impl_->queue.size(); n > 0; --n) {
    auto log = redeliver_next();
    if (!log) break;
    out.push_back(std::move(*log));
  }
  return out;
}

RequestQueue& ClientStack::queue() {
  return impl_->queue;
}

const CircuitBreaker* ClientStack::breaker(const std::string& route) const {
  auto it = impl_->breakers.find(route);
  return it == impl_->breakers.end() ? nullptr : &it->second;
}

std::optional<CircuitBreaker> ClientStack::breaker_state(const std::string& route) const {
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->breakers.find(route);
  return it == impl_->breakers.end() ? std::nullopt : std::optional<CircuitBreaker>(it->second);
}

}  // namespace llmchaos::client
