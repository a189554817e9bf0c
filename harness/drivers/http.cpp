// http: a gateway or service under test, reached over HTTP. The harness POSTs each workflow request
// to `--target URL`/v1/chat/completions as an OpenAI chat request (plain or streamed, as the case says)
// and reads the answer and the gateway's `x-llmchaos-*` headers; the actions come from the ledger, and
// from the target's own failure points (x-llmchaos-points) when it reports them for every delivery.
// With --target-command the service is started per case (its config rendered from --target-config
// with the case's routes inside its mock namespace) and its process group is killed at the case's
// end. Contract in README.md beside this file.
#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "drivers.hpp"
#include "external.hpp"
#include "http_driver.hpp"
#include "llmchaos/client/classifier.hpp"
#include "llmchaos/client/points_header.hpp"
#include "llmchaos/core/parse.hpp"
#include "llmchaos/harness/checker.hpp"
#include "llmchaos/net/http_call.hpp"

namespace llmchaos::harness::driver_units {
namespace {

using namespace http_driver;

class HttpSession final : public CaseSession {
 public:
  HttpSession(const CaseEnv& env, const DriverOptions& options)
      : env_(env),
        key_(options.target_key),
        drain_(options.target_drain),
        opened_ms_(now_ms()),
        transport_([&] {
          client::HttpTransportOptions o;
          o.api_key = options.target_key;
          o.user_agent = "llmchaos-harness/http-driver";
          o.extra_headers = case_headers(env, options);
          return o;
        }()) {
    std::string url = options.target_url;
    if (!options.target_command.empty()) {
      const auto port = free_loopback_port();
      url = replace_all(url, "{port}", std::to_string(port));
      target_ = std::make_unique<TargetProcess>(env, options, port);
      // Start-up is bounded by half the case's deadline, 1..30 s (a loaded machine starts an
      // interpreter slowly: --min-deadline-ms raises the bound).
      target_->wait_listening(port, std::clamp(budget_ms() * 0.5, 1000.0, 30'000.0));
    }
    while (!url.empty() && url.back() == '/') url.pop_back();
    base_url_ = url;
    target_url_ = net::parse_url(url);  // throws on anything but http://host:port[/prefix]
  }

  // One request's phases: post it, a tier's own refusal, the reported outcome, the target's own failure,
  // the log from the ledger, the reported failure points, the answer's facts. Overlapping requests
  // (`[sequence] overlap`) are on the wire at once and settled one at a time, in the order they were
  // sent, so notes and failure points keep the case's order.
  client::DecisionLog send(const client::WorkflowRequest& request) override {
    std::unique_lock lock(mutex_);
    const auto ar = attempt_request(request);
    const int number = sent_;
    const std::size_t before = env_.engine->ledger(env_.ns).size();
    lock.unlock();
    const double start = now_ms();
    auto res = transport_.send(ar, *env_.clock, [](std::string_view) {});
    const double wall = now_ms() - start;
    lock.lock();
    settle_cv_.wait(lock, [&] { return settled_ == number - 1; });
    const SettledTurn turn(*this, number);  // the next request's turn when this one ends, even by a throw
    note_reply(res, ar.timeout_ms);
    if (auto refused = tier_refusal(res, ar.operation_id, before)) {
      refused->elapsed_ms = wall;
      return *refused;
    }
    const bool complete =
        res.event == client::TransportEvent::none || res.event == client::TransportEvent::missing_terminator;
    const auto reported = settled_outcome(reported_action(res), res.status, complete, ar.stream);
    const bool ok = res.status == 200 && complete;
    auto attempts = attempts_since(before, ar.operation_id);
    check_target_failure(res, complete, attempts, before, ar.operation_id);
    auto log = outside_log(ar.operation_id, reported, ok, ok ? res.text : std::string(), attempts, *env_.c);
    // The target's own 429 (every route cooling): the wait it told the caller, for retry_after_forwarded.
    if (res.status == 429) log.retry_after_ms = client::retry_after_from_headers(res.headers);
    attribute(log, attempts);
    take_reported_points(log, res);
    if (log.answered) {
      if (auto route = header(res, "x-llmchaos-route"); !route.empty()) log.route = route;
      log.model = res.model;
      log.input_tokens = res.input_tokens;
      log.output_tokens = res.output_tokens;
    }
    log.elapsed_ms = wall;  // the caller's wait: the target reports no elapsed time of its own
    return log;
  }

  // The gateway's queue: POST /v1/llmchaos/drain redelivers what it queued (a service without it
  // answers 404: nothing to redeliver).
  // Only a target that queued (202) or asks for it (--target-drain PATH, llmchaos.drain) is drained: a
  // proxy with a catch-all /v1/* route would forward the drain upstream as traffic.
  std::vector<client::DecisionLog> drain() override {
    if (drain_ == "none" || (drain_.empty() && !queued_)) return {};
    const std::string path = drain_.empty() ? "/v1/llmchaos/drain" : drain_;
    const std::size_t before = env_.engine->ledger(env_.ns).size();
    net::HttpCall call;
    call.host = target_url_.host;
    call.port = target_url_.port;
    call.method = "POST";
    call.target = target_url_.path + (path.front() == '/' ? "" : "/") + path;
    call.headers = {{"authorization", "Bearer " + key_}};
    call.timeout_ms = std::max(100.0, budget_ms());
    net::HttpReply reply;
    try {
      reply = net::http_call(call);
    } catch (const std::exception& e) {
      const bool timed_out = std::string_view(e.what()).find("timeout") !=
                             std::string_view::npos;  // Beast: "...due to a timeout"
      no_answer(fmt::format("drain: {}", e.what()), timed_out);
    }
    if (reply.status != 200) return {};
    boost::system::error_code ec;
    auto v = boost::json::parse(reply.body, ec);
    const auto* items = !ec && v.is_object() ? v.as_object().if_contains("redelivered") : nullptr;
    if (!items || !items->is_array())
      throw UnknownVerdict("error: contract", "drain: the answer has no \"redelivered\" array: " + reply.body,
                           output());
    const auto attempts = attempts_since(before);
    std::vector<client::DecisionLog> out;
    for (const auto& item : items->as_array()) {
      const auto* o = item.if_object();
      if (!o) continue;
      auto str = [&](const char* k) {
        const auto* s = o->if_contains(k);
        return s && s->is_string() ? std::string(s->as_string()) : std::string();
      };
      const std::string op = str("operation_id");
      std::vector<LedgerEntry> mine;
      for (const auto& e : attempts)
        if (e.idempotency_key == op) mine.push_back(e);
      auto reported = parse_reported_outcome(str("outcome"));
      const bool answered =
          o->contains("answered") && o->at("answered").is_bool() && o->at("answered").as_bool();
      auto log = outside_log(op, reported, answered, str("text"), mine, *env_.c);
      log.delivery = 2;
      attribute(log, mine);
      read_answer_facts(*o, log);
      const std::string where = "the redelivery of " + op;
      ReportedPoints points;
      bool any_unsent = false;
      if (const auto* list = o->if_contains("points")) {
        points.emplace();
        if (auto error = points_from_json(*list, *points); !error.empty())
          throw UnknownVerdict("error: contract", "drain: " + where + ": " + error, output());
        any_unsent = std::any_of(points->begin(), points->end(),
                                 [](const client::FailurePoint& fp) { return fp.attempt < 0; });
      } else if (const auto* unsent = o->if_contains("unsent_points"); unsent && unsent->is_array()) {
        any_unsent = !unsent->as_array().empty();
      }
      // A redelivery's points follow every point of the first deliveries: where is not known, so the
      // skip (should it apply) counts from the first point on.
      take_points(log, std::move(points), any_unsent ? std::optional<int>(1) : std::nullopt, where);
      out.push_back(std::move(log));
      note(fmt::format("redelivered {}: {}", op, str("outcome")));
    }
    return out;
  }

  // Once the requests and redeliveries ran (the runner asks then): the target reported its failure
  // points for every delivery, so the checker compares them with the ledger's at every point.
  bool has_decision_log() const override { return sent_ > 0 && every_delivery_reported_; }
  std::string output() const override {
    std::string out = notes_;
    if (target_) out += "--- target output ---\n" + target_->output();
    return out.size() > output_cap ? out.substr(0, output_cap) + "\n[... output cut]\n" : out;
  }

 private:
  // The workflow request as the target's OpenAI chat request, numbered within the case.
  client::AttemptRequest attempt_request(const client::WorkflowRequest& request) {
    client::AttemptRequest ar;
    ar.endpoint = client::Endpoint{"target", Dialect::openai, base_url_};
    ar.stream = request.stream;
    ar.model = request.model;
    ar.prompt = request.prompt;
    ar.tool_call = request.tool_call;
    ar.prefill = request.prefill;
    ar.operation_id = fmt::format("{}-r{}", env_.ns, ++sent_);
    ar.timeout_ms = std::max(100.0, budget_ms());
    return ar;
  }

  // Notes the reply; a reply that never came ends the case (no_answer).
  void note_reply(const client::AttemptResult& res, double timeout_ms) {
    note(fmt::format(
        "request {}: {} {} action={} attempts={} route={}{}", settling_, res.status,
        res.event == client::TransportEvent::none ? "" : std::string(llmchaos::to_string(res.event)),
        header(res, "x-llmchaos-action"), header(res, "x-llmchaos-attempts"), header(res, "x-llmchaos-route"),
        res.error.empty() ? "" : " error: " + res.error));
    if (res.status == 202) queued_ = true;
    if (res.status == 0) {
      if (res.event == client::TransportEvent::timeout_no_byte)
        no_answer(fmt::format("the target did not answer request {} within {:.0f} ms", settling_, timeout_ms),
                  true);
      no_answer(fmt::format("request {} to {}: {}", settling_, base_url_, res.error), false);
    }
  }

  // A 429 the target answered itself, no attempt sent, in a case with a [tier]: its tier refused it.
  std::optional<client::DecisionLog> tier_refusal(const client::AttemptResult& res,
                                                  const std::string& operation_id, std::size_t before) const {
    if (res.status != 429 || !env_.c->tier || !attempts_since(before, operation_id).empty())
      return std::nullopt;
    client::DecisionLog refused;
    refused.operation_id = operation_id;
    refused.limited_by = "rate_limited";
    for (std::string_view limit : {"requests_per_minute", "requests_per_day", "tokens_per_minute"})
      if (res.body.find(limit) != std::string::npos) refused.limited_by = limit;
    return refused;
  }

  // The outcome the target's x-llmchaos-action names (none: it names none); a rejection or an unknown
  // action ends the case as the harness's or the target's error.
  std::optional<ReportedOutcome> reported_action(const client::AttemptResult& res) const {
    const std::string action = header(res, "x-llmchaos-action");
    if (action ==
        "rejected")  // auth, body or a tier limit the case did not ask for: the harness's setup is wrong
      throw UnknownVerdict(
          "error: target",
          fmt::format("the target rejected request {} with {}: {}", settling_, res.status, res.body),
          output());
    if (action.empty()) return std::nullopt;
    auto reported = parse_reported_outcome(action);
    if (!reported)
      throw UnknownVerdict("error: contract", fmt::format("unknown x-llmchaos-action \"{}\"", action),
                           output());
    return reported;
  }

  // The target's own error (a 5xx, a broken stream) after the upstream served it whole: the target
  // failed, not the provider; never a correct fail_closed. `attempts` may be read again meanwhile
  // (healthy_last waits for the mock's last record).
  void check_target_failure(const client::AttemptResult& res, bool complete,
                            std::vector<LedgerEntry>& attempts, std::size_t before,
                            const std::string& operation_id) const {
    if ((res.status >= 500 || (res.status == 200 && !complete)) &&
        healthy_last(attempts, before, operation_id))
      throw TargetFailure(
          "target error after a healthy upstream answer",
          fmt::format(
              "request {}: the target answered {}{} although the mock's last attempt ({} attempt(s) "
              "this request) was a complete 200 on route \"{}\"",
              settling_, res.status,
              complete ? "" : fmt::format(" and the stream broke ({})", llmchaos::to_string(res.event)),
              attempts.size(), attempts.back().route),
          output());
  }

  // The failure points the reply's headers report (x-llmchaos-points, else only where the first unsent
  // one is), placed after every point of the case's earlier requests.
  void take_reported_points(client::DecisionLog& log, const client::AttemptResult& res) {
    const std::string where = fmt::format("request {}", settling_);
    ReportedPoints points;
    std::optional<int> first_unsent;  // within this request
    if (auto list = header_if(res, client::points_header_name)) {
      points.emplace();
      if (auto error = client::decode_points_header(*list, *points); !error.empty())
        throw UnknownVerdict("error: contract", where + ": " + error, output());
      for (const auto& fp : *points)
        if (fp.attempt < 0 && !first_unsent) first_unsent = fp.point;
    } else if (auto unsent = client::split_header_list(header(res, "x-llmchaos-unsent-points"), ',');
               !unsent.empty()) {
      first_unsent = parse_int(unsent.front());
    }
    const auto points_here = static_cast<int>(
        points ? points->size() : client::split_header_list(header(res, "x-llmchaos-actions"), ',').size());
    take_points(log, std::move(points),
                first_unsent ? std::optional<int>(points_before_ + *first_unsent) : std::nullopt, where);
    points_before_ += points_here;
  }

  // Stop before the runner's hard deadline, so a hang is ours to report (with the output).
  double budget_ms() const {
    return env_.deadline_real_ms > 0 ? env_.deadline_real_ms * 0.9 - (now_ms() - opened_ms_) : 60'000;
  }
  // The ledger entries since `before`; with `operation_id`, only that request's (foreign traffic, a
  // forwarded drain or health check, is left out: split_foreign shows it apart).
  std::vector<LedgerEntry> attempts_since(std::size_t before, const std::string& operation_id = {}) const {
    auto ledger = env_.engine->ledger(env_.ns);
    std::vector<LedgerEntry> out;
    for (auto i = std::min(before, ledger.size()); i < ledger.size(); ++i)
      if (operation_id.empty() || !is_foreign(ledger[i], {operation_id})) out.push_back(std::move(ledger[i]));
    return out;
  }
  // Whether the request's last attempt was a complete, healthy 200 (the mock may finish recording an
  // attempt a moment after the target read its last byte: waited for briefly).
  bool healthy_last(std::vector<LedgerEntry>& attempts, std::size_t before,
                    const std::string& operation_id) const {
    for (const double until = now_ms() + 500;
         !attempts.empty() && !attempts.back().finished && now_ms() < until;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      attempts = attempts_since(before, operation_id);
    }
    if (attempts.empty()) return false;
    const auto& last = attempts.back();
    return last.finished && last.status == 200 && last.outcome == AttemptOutcome::completed &&
           !attempt_failed(last, env_.c->policy);
  }
  // The ledger entries of one delivery, as the log's attempts (route and order only): the checker
  // tells a queued request's redelivery from a retry by which delivery an entry belongs to. A model
  // group's member is named as its group, the route the target's stack sees (and names in its points).
  void attribute(client::DecisionLog& log, const std::vector<LedgerEntry>& entries) const {
    for (const auto& e : entries) {
      client::AttemptRecord a;
      a.index = static_cast<int>(log.attempts.size());
      a.route = env_.c->logical_route(e.route);
      a.status = e.status;
      log.attempts.push_back(std::move(a));
    }
  }
  // The delivery's points become its log's failure points when the target reported them; what only
  // the checker can refute (the actions) is left to it, what contradicts the ledger right here (an
  // attempt the mock did not see on that route) is a broken contract. A delivery without points makes
  // the whole case ledger-only, and then an unsent point before a pinned one cannot be checked.
  void take_points(client::DecisionLog& log, ReportedPoints points, std::optional<int> first_unsent,
                   const std::string& where) {
    if (points) {
      for (const auto& fp : *points) {
        if (fp.attempt < 0) continue;
        const auto k = static_cast<std::size_t>(fp.attempt);
        if (k >= log.attempts.size() || log.attempts[k].route != fp.route)
          throw UnknownVerdict(
              "error: contract",
              fmt::format(
                  "{}: the target's failure point {} names attempt {} on route \"{}\", but the mock saw {}",
                  where, fp.point, fp.attempt, fp.route,
                  k < log.attempts.size()
                      ? fmt::format("that attempt on route \"{}\"", log.attempts[k].route)
                      : fmt::format("{} attempt(s) of this delivery", log.attempts.size())),
              output());
      }
      log.failures = std::move(*points);
    } else {
      every_delivery_reported_ = false;
    }
    if (first_unsent && (!first_unsent_ || *first_unsent < first_unsent_->first))
      first_unsent_.emplace(*first_unsent, where);
    if (!every_delivery_reported_ && first_unsent_)
      skip_if_pinned_after(first_unsent_->first, first_unsent_->second);
  }
  // A failure point the service decided without sending an attempt leaves no ledger entry: from its
  // position on, the points the checker derives from the ledger are numbered differently from the
  // service's. A case that pins such a point cannot be checked from outside: say so, never guess.
  void skip_if_pinned_after(int first_unsent, const std::string& where) {
    for (const auto& pinned : env_.c->expect_at)
      if (pinned.point >= first_unsent)
        throw UnknownVerdict(
            "skipped: decision not observable",
            fmt::format(
                "{}: the target decided failure point {} without sending an attempt (a breaker already open "
                "or a budget gate), which the ledger cannot show; the case pins failure point {}, so it "
                "needs "
                "the client's decision log (--driver inproc, or a target "
                "that reports x-llmchaos-points with every answer)",
                where, first_unsent, pinned.point),
            output());
  }
  // No answer at all: the service died (crash: a sanitizer abort, a segfault), stayed silent past the
  // deadline (hang), or dropped the connection (crash). A dying process closes its sockets a moment
  // before it can be reaped, so its exit is awaited briefly before the verdict.
  [[noreturn]] void no_answer(const std::string& what, bool timed_out) {
    if (target_)
      for (const double until = now_ms() + (timed_out ? 0 : 1000);;) {
        if (auto status = target_->exited())
          throw UnknownVerdict(
              "crash", fmt::format("{}; the target exited ({})", what, TargetProcess::describe(*status)),
              output());
        if (now_ms() >= until) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    throw UnknownVerdict(timed_out ? "hang" : "crash", what, output());
  }
  void note(const std::string& line) {
    if (notes_.size() < output_cap) notes_ += line + "\n";
  }

  CaseEnv env_;
  std::string key_;
  std::string drain_;    // --target-drain: "" after a 202 only, "none", or the path
  bool queued_ = false;  // the target answered a request 202 (queued)
  double opened_ms_;
  client::HttpTransport transport_;
  std::unique_ptr<TargetProcess> target_;  // after transport_: the service goes first at the case's end
  std::string base_url_;
  net::Url target_url_;
  int sent_ = 0;
  // Overlapping sends: mutex_ guards the session's state; replies are settled in the order sent.
  std::mutex mutex_;
  std::condition_variable settle_cv_;
  int settled_ = 0;   // requests settled so far
  int settling_ = 0;  // the request whose reply is being settled (named in notes and errors)
  struct SettledTurn {
    SettledTurn(HttpSession& s, int number) : session(s) { session.settling_ = number; }
    ~SettledTurn() {
      session.settled_ = session.settling_;
      session.settle_cv_.notify_all();
    }
    SettledTurn(const SettledTurn&) = delete;
    SettledTurn& operator=(const SettledTurn&) = delete;
    HttpSession& session;
  };
  int points_before_ = 0;  // failure points the service reported for the requests before this one
  bool every_delivery_reported_ =
      true;  // x-llmchaos-points (or the drain's "points") with every delivery so far
  std::optional<std::pair<int, std::string>>
      first_unsent_;  // the first point sent without an attempt, and where
  std::string notes_;
};

std::unique_ptr<CaseSession> open(const CaseEnv& env, const DriverOptions& options) {
  if (!env.engine) throw std::logic_error("http driver: no mock engine");
  return std::make_unique<HttpSession>(env, options);
}

}  // namespace

Driver http() {
  return {"http",
          "a gateway or service over HTTP (OpenAI chat), its upstreams pointed at the mock",
          http_driver::validate,
          open,
          http_driver::prepare,
          /*overlapping_sends=*/true};
}

}  // namespace llmchaos::harness::driver_units
