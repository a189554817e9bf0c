// The session API's I/O: the sessions, the engine's namespaces, the clock (phases.cpp decides).
#include "llmchaos/sessions/session_api.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <filesystem>

#include "llmchaos/core/confined_path.hpp"
#include "llmchaos/core/json_text.hpp"
#include "llmchaos/core/ledger_json.hpp"
#include "llmchaos/harness/exec_contract.hpp"
#include "llmchaos/harness/runner.hpp"
#include "llmchaos/mockprovider/router.hpp"
#include "llmchaos/reports/reports.hpp"
#include "llmchaos/sessions/phases.hpp"

namespace json = boost::json;

namespace llmchaos::sessions {

struct SessionApi::Session {
  std::string id, ns;
  harness::Case c;
  harness::CaseFacts facts;
  std::uint64_t seed = 0;
  std::string not_run;  // why a live session cannot judge the case ("" when it can)
  double created_ms = 0;
  double last_call_ms = 0;                       // guarded by SessionApi::mutex_
  std::mutex mutex;                              // one call of this session at a time
  std::optional<harness::History> before_probe;  // after /alive: the requests' history, probe ledger apart
  bool finished = false;
};

namespace {
mock::AdminReply reply(int status, const json::value& body) {
  return {status, compact_json(body, DoubleForm::shortest), "application/json", {}};
}
mock::AdminReply error_reply(const ApiError& e) {
  auto out = reply(e.status, json::object{{"error", e.message}});
  out.headers = e.headers;
  return out;
}

// The requests' records, each with its operation id (what the caller sends as Idempotency-Key).
std::vector<harness::RequestRecord> request_records(const std::string& ns, int count) {
  std::vector<harness::RequestRecord> out(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    out[static_cast<std::size_t>(i)].log.operation_id = harness::request_operation_id(ns, i + 1);
  return out;
}
}  // namespace

SessionApi::SessionApi(mock::Engine& engine, Clock& clock, std::function<std::string()> base_url,
                       SessionOptions options)
    : engine_(engine), clock_(clock), base_url_(std::move(base_url)), options_(options) {}

SessionApi::~SessionApi() = default;

bool SessionApi::handles(std::string_view path) const {
  return path == "sessions" || path.starts_with("sessions/");
}

std::size_t SessionApi::live_sessions() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

void SessionApi::sweep() {
  std::vector<std::shared_ptr<Session>> gone;
  {
    std::lock_guard lock(mutex_);
    std::map<std::string, double> last;
    for (const auto& [id, s] : sessions_) last[id] = s->last_call_ms;
    for (const auto& id : expired(last, clock_.now_ms(), options_.ttl_ms)) {
      gone.push_back(sessions_.at(id));
      sessions_.erase(id);
    }
  }
  for (const auto& s : gone) engine_.remove(s->ns);
}

std::shared_ptr<SessionApi::Session> SessionApi::find(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return nullptr;
  it->second->last_call_ms = clock_.now_ms();
  return it->second;
}

mock::AdminReply SessionApi::handle(const mock::RawRequest& request, std::string_view path) {
  sweep();
  auto routed = route_call(request.method, path);
  if (auto* e = std::get_if<ApiError>(&routed)) return error_reply(*e);
  const auto& call = std::get<Call>(routed);
  if (call.op == Op::create) return create(request);
  if (call.op == Op::list) return list();
  if (call.op == Op::reports) return write_reports(request);
  auto s = find(call.id);
  if (!s)
    return error_reply(
        {404,
         fmt::format("no session \"{}\" (ended, expired after {:.0f} s without a call, or never created)",
                     call.id, options_.ttl_ms / 1000)});
  std::lock_guard lock(s->mutex);
  switch (call.op) {
    case Op::show:
      return show(*s);
    case Op::finish:
      return finish(*s, request);
    case Op::probe:
      return probe(*s);
    case Op::end:
      end(*s);
      return reply(200, json::object{{"ok", true}, {"id", s->id}});
    default:
      return error_reply({404, "no such endpoint"});
  }
}

std::optional<ApiError> SessionApi::at_session_limit() {
  std::lock_guard lock(mutex_);
  const double now = clock_.now_ms();
  double oldest = now;
  for (const auto& [id, s] : sessions_) oldest = std::min(oldest, s->last_call_ms);
  return over_session_limit(sessions_.size(), options_.max_sessions, oldest, now, options_.ttl_ms);
}

// The case a create names, read only from inside the cases root (its policy file too); `refused` set
// (403) for a path outside it, which is then not read at all.
harness::LoadResult SessionApi::load(const CaseSource& source, std::optional<ApiError>& refused) const {
  const auto& root = options_.cases_root;
  harness::LoadResult loaded;
  if (const auto* text = std::get_if<CaseText>(&source)) {
    loaded = harness::load_case_text(text->text, std::string(text_source_name), {}, root);
  } else {
    std::string path = std::get<CasePath>(source).path;
    if (!root.empty()) {
      const auto inside = confined_existing_path(root, path);
      if (!inside) {
        refused = outside_root("case_path", "--cases-root");
        return loaded;
      }
      path = inside->string();
    }
    loaded = harness::load_case_file(path, {}, root);
  }
  if (loaded.outside_root) refused = outside_root("policy", "--cases-root");
  return loaded;
}

mock::AdminReply SessionApi::create(const mock::RawRequest& request) {
  if (auto full = at_session_limit()) return error_reply(*full);
  auto source = read_create_body(request.body);
  if (auto* e = std::get_if<ApiError>(&source)) return error_reply(*e);
  std::optional<ApiError> refused;
  auto loaded = load(std::get<CaseSource>(source), refused);
  if (refused) return error_reply(*refused);
  if (!loaded.value) {
    json::array errors;
    std::string all;
    for (const auto& e : loaded.errors) {
      errors.emplace_back(e.what());
      all += (all.empty() ? "" : "\n") + std::string(e.what());
    }
    return reply(400, json::object{{"error", all}, {"errors", std::move(errors)}});
  }
  auto s = std::make_shared<Session>();
  std::uint64_t n;
  {
    std::lock_guard lock(mutex_);
    n = ++created_;
  }
  s->id = fmt::format("{:06x}{}", (options_.id_salt ^ (n * 0x9E3779B97F4A7C15ULL)) & 0xffffff, n);
  s->ns = "session-" + s->id;
  s->c = std::move(*loaded.value);
  harness::RunOptions run;
  run.time_scale = options_.time_scale;
  run.seed = options_.seed;
  const auto base = caller_base_url(request.header("host"), options_.public_url, base_url_());
  const auto env = harness::case_env(s->c, s->ns, base, run);
  s->facts = harness::case_facts(env);
  s->seed = env.seed;
  if (s->c.exact_time) s->not_run = std::string(harness::exact_time_not_run);
  engine_.install(s->ns, s->c.script, s->seed);
  s->created_ms = s->last_call_ms = clock_.now_ms();
  auto body = session_json(s->id, s->ns, s->c, s->facts, s->not_run);
  {
    std::lock_guard lock(mutex_);
    sessions_[s->id] = s;
  }
  return reply(201, body);
}

mock::AdminReply SessionApi::show(Session& s) {
  auto body = session_json(s.id, s.ns, s.c, s.facts, s.not_run);
  json::array ledger;
  if (s.before_probe)
    for (const auto& e : s.before_probe->ledger) ledger.push_back(to_json_value(e));
  for (const auto& e : engine_.ledger(s.ns)) ledger.push_back(to_json_value(e));
  body["ledger"] = std::move(ledger);
  body["finished"] = s.finished;
  body["probed"] = s.before_probe.has_value();
  return reply(200, body);
}

mock::AdminReply SessionApi::probe(Session& s) {
  if (!s.c.checks.alive_after)
    return error_reply(
        {400, fmt::format("case \"{}\" has no alive_after check: nothing to probe", s.c.name)});
  if (s.before_probe) return error_reply({409, "the alive_after probe was already asked for"});
  const std::atomic<bool> never{false};
  harness::History h;
  h.requests = request_records(s.ns, s.c.request_count());
  harness::collect_ledger(h, engine_, s.ns, clock_, never);
  h.wall_ms = clock_.now_ms() - s.created_ms;
  s.before_probe = std::move(h);
  engine_.install(s.ns, harness::healthy_script(s.c.script), s.seed);  // a fresh ledger: the probe's alone
  const auto probe_id = harness::request_operation_id(s.ns, s.c.request_count() + 1);
  return reply(200, json::object{{"ok", true}, {"operation_id", probe_id}});
}

mock::AdminReply SessionApi::finish(Session& s, const mock::RawRequest& request) {
  const int count = s.c.request_count() + (s.before_probe ? 1 : 0);
  auto seen = read_seen(request.body, count);
  if (auto* e = std::get_if<ApiError>(&seen)) return error_reply(*e);
  const std::atomic<bool> never{false};
  Judging judging;
  judging.time_scale = options_.time_scale;
  harness::History h;
  if (s.before_probe) {
    h = *s.before_probe;
    harness::History probe;
    probe.requests = request_records(s.ns, count);  // the probe's key is the last one
    harness::collect_ledger(probe, engine_, s.ns, clock_, never);
    judging.probe_ledger = probe.ledger;
  } else {
    h.requests = request_records(s.ns, count);
    harness::collect_ledger(h, engine_, s.ns, clock_, never);
    h.wall_ms = clock_.now_ms() - s.created_ms;
  }
  auto result = judge(s.c, std::move(h), std::get<std::vector<std::string>>(seen), judging);
  s.finished = true;
  auto body = verdict_json(result);
  {
    std::lock_guard lock(mutex_);
    auto it = std::find_if(judged_.begin(), judged_.end(), [&](const auto& j) { return j.first == s.id; });
    if (it != judged_.end())
      it->second = std::move(result);
    else
      judged_.emplace_back(s.id, std::move(result));
    if (judged_.size() > max_judged) judged_.erase(judged_.begin());
  }
  body["id"] = s.id;
  return reply(200, body);
}

mock::AdminReply SessionApi::list() {
  json::array out;
  std::lock_guard lock(mutex_);
  for (const auto& [id, s] : sessions_)
    out.push_back(json::object{{"id", id}, {"namespace", s->ns}, {"case", s->c.name}});
  return reply(200, json::object{{"sessions", std::move(out)}, {"ttl_ms", options_.ttl_ms}});
}

mock::AdminReply SessionApi::write_reports(const mock::RawRequest& request) {
  auto dir = read_reports_body(request.body);
  if (auto* e = std::get_if<ApiError>(&dir)) return error_reply(*e);
  if (!options_.reports_root.empty()) {
    const auto inside = confined_existing_path(options_.reports_root, std::get<std::string>(dir));
    if (!inside) return error_reply(outside_root("dir", "--reports-root"));
    std::error_code ec;
    std::filesystem::create_directories(*inside, ec);  // inside the root: the caller's own folder
    dir = inside->string();
  }
  std::vector<harness::CaseResult> cases;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, result] : judged_) cases.push_back(result);
  }
  const auto run = judged_run(std::move(cases), options_.time_scale, options_.seed);
  json::array written;
  try {
    for (const auto& format : reports::formats()) {
      const auto path = (std::filesystem::path(std::get<std::string>(dir)) / format.file_name).string();
      reports::write_report(format, run, path);
      written.emplace_back(path);
    }
  } catch (const std::exception& e) {
    return error_reply({500, fmt::format("reports: {}", e.what())});
  }
  return reply(200, json::object{{"written", std::move(written)},
                                 {"cases", run.cases.size()},
                                 {"passed", run.passed()},
                                 {"failed", run.failed()},
                                 {"unknown", run.unknown()},
                                 {"not_applicable", run.not_applicable()}});
}

void SessionApi::end(Session& s) {
  {
    std::lock_guard lock(mutex_);
    sessions_.erase(s.id);
  }
  engine_.remove(s.ns);
}

}  // namespace llmchaos::sessions
