// The session API's pure phases (phases.hpp).
#include "llmchaos/sessions/phases.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>

#include "llmchaos/core/ledger_json.hpp"
#include "llmchaos/harness/driver.hpp"
#include "llmchaos/harness/runner.hpp"

namespace json = boost::json;

namespace llmchaos::sessions {

namespace {
std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    const auto slash = path.find('/');
    const auto seg = path.substr(0, slash);
    if (!seg.empty()) out.push_back(seg);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

ApiError not_allowed(std::string_view method, std::string_view path, std::string_view allowed) {
  return {405, fmt::format("{} is not allowed on /__llmchaos/{} (allowed: {})", method, path, allowed)};
}
}  // namespace

std::variant<Call, ApiError> route_call(std::string_view method, std::string_view path) {
  const auto segs = segments(path);
  if (segs.empty() || segs[0] != "sessions" || segs.size() > 3)
    return ApiError{404, fmt::format("no admin endpoint /__llmchaos/{}", path)};
  if (segs.size() == 1) {
    if (method == "POST") return Call{Op::create, {}};
    if (method == "GET") return Call{Op::list, {}};
    return not_allowed(method, path, "POST, GET");
  }
  const std::string id(segs[1]);
  if (segs.size() == 2 && id == "reports") {  // ids are hex and digits: never "reports"
    if (method == "POST") return Call{Op::reports, {}};
    return not_allowed(method, path, "POST");
  }
  if (segs.size() == 2) {
    if (method == "GET") return Call{Op::show, id};
    if (method == "DELETE") return Call{Op::end, id};
    return not_allowed(method, path, "GET, DELETE");
  }
  const auto what = segs[2];
  if (what != "finish" && what != "alive")
    return ApiError{404, fmt::format("no admin endpoint /__llmchaos/{}", path)};
  if (method != "POST") return not_allowed(method, path, "POST");
  return Call{what == "finish" ? Op::finish : Op::probe, id};
}

std::variant<CaseSource, ApiError> read_create_body(std::string_view body) {
  const auto start = body.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos)
    return ApiError{400,
                    "empty body: send the case as TOML text (application/toml) or {\"case_path\": \"...\"}"};
  if (body[start] != '{')
    return CaseSource{CaseText{std::string(body)}};  // a TOML document never starts with '{'
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  if (ec || !v.is_object())
    return ApiError{400, fmt::format("the body starts with '{{' but is not a JSON object ({})",
                                     ec ? ec.message() : "not an object")};
  const auto* path = v.as_object().if_contains("case_path");
  if (!path || !path->is_string() || path->as_string().empty())
    return ApiError{
        400,
        R"(a JSON body needs "case_path": "FILE.toml" (or send the case's TOML text as application/toml))"};
  if (path->as_string().find('\0') != json::string::npos)
    return ApiError{400, "case_path: a path with a NUL byte names no file"};
  return CaseSource{CasePath{std::string(path->as_string())}};
}

json::object session_json(std::string_view id, std::string_view ns, const harness::Case& c,
                          const harness::CaseFacts& facts, const std::string& not_run) {
  json::object routes;
  for (const auto& r : facts.routes) {
    json::object route{{"base_url", r.base_url}, {"dialect", r.dialect}};
    if (auto w = facts.weights.find(r.name); w != facts.weights.end()) route["weight"] = w->second;
    routes[r.name] = std::move(route);
  }
  json::array operation_ids, fallback;
  for (int i = 1; i <= c.request_count(); ++i)
    operation_ids.emplace_back(harness::request_operation_id(ns, i));
  for (const auto& f : facts.fallback) fallback.emplace_back(f);
  auto request_for = c.request;
  request_for.operation_id = harness::request_operation_id(ns, 1);
  json::object out{{"id", id},
                   {"namespace", ns},
                   {"case", c.name},
                   {"file", c.file},
                   {"routes", std::move(routes)},
                   {"request", json::parse(harness::request_json(request_for))},
                   {"policy", json::parse(facts.policy_json)},
                   {"primary", facts.primary},
                   {"fallback", std::move(fallback)},
                   {"time_scale", facts.time_scale},
                   {"requests", c.request_count()},
                   {"operation_ids", std::move(operation_ids)},
                   {"interval_ms", c.sequence ? c.sequence->interval_ms * facts.time_scale : 0.0},
                   {"alive_after", c.checks.alive_after}};
  json::object tier;
  if (facts.tier_rpm) tier["rpm"] = *facts.tier_rpm;
  if (facts.tier_rpd) tier["rpd"] = *facts.tier_rpd;
  if (facts.tier_tpm) tier["tpm"] = *facts.tier_tpm;
  if (!tier.empty()) out["tier"] = std::move(tier);
  if (!facts.groups.empty()) {
    json::object groups;
    for (const auto& g : facts.groups) {
      json::array members;
      for (const auto& m : g.members) members.emplace_back(m);
      groups[g.name] = std::move(members);
    }
    out["groups"] = std::move(groups);
  }
  json::array env;
  for (const auto& var : harness::exec_environment(facts)) env.emplace_back(var);
  out["environment"] = std::move(env);  // the exec driver's variables of the case, "KEY=value"
  if (!not_run.empty()) out["not_run"] = not_run;
  return out;
}

std::variant<std::vector<std::string>, ApiError> read_seen(std::string_view body, int expected_count) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  if (ec)
    return ApiError{400, fmt::format("finish: the body is not JSON ({}): send the exec contract's object "
                                     "{{\"outcome\", \"text\", \"route\", \"model\"}}, or an array of them",
                                     ec.message())};
  json::array items;
  if (v.is_object())
    items.push_back(v);
  else if (v.is_array())
    items = v.as_array();
  else
    return ApiError{400, "finish: send an object {\"outcome\", ...} or an array of them, one per request"};
  if (static_cast<int>(items.size()) != expected_count)
    return ApiError{
        400,
        fmt::format("finish: {} object(s) for {} request(s) of the case{}", items.size(), expected_count,
                    expected_count > 1 ? " (one per request, in order; the alive_after probe's last)" : "")};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto* o = items[i].if_object();
    const auto* outcome = o ? o->if_contains("outcome") : nullptr;
    if (!outcome || !outcome->is_string())
      return ApiError{
          400, fmt::format("finish: object {} has no \"outcome\" string (the exec contract: primary_success, "
                           "retry_recovery, fallback_recovery, degraded, queued, fail_closed, success, "
                           "error, rate_limited)",
                           i + 1)};
    out.push_back(json::serialize(*o));
  }
  return out;
}

namespace {
// Each request's log from its contract line over the ledger entries the checker gives it.
void fill_logs(const harness::Case& c, harness::History& h, const std::vector<std::string>& seen) {
  const auto views = harness::group_by_request(h, nullptr, c.group_of);
  for (std::size_t i = 0; i < h.requests.size(); ++i) {
    std::vector<LedgerEntry> attempts;
    if (i < views.size())
      for (const auto* e : views[i].entries) attempts.push_back(*e);
    auto& rec = h.requests[i];
    rec.log = harness::contract_log(seen.at(i), true, rec.log.operation_id, attempts, c);
    rec.started_ms = attempts.empty() ? 0 : attempts.front().received_at_ms;
    rec.wall_ms = rec.log.elapsed_ms;
  }
}
}  // namespace

harness::CaseResult judge(const harness::Case& c, harness::History history,
                          const std::vector<std::string>& seen, const Judging& judging) {
  if (c.exact_time) return harness::not_applicable_result(c, std::string(harness::exact_time_not_run));
  history.has_decision_log = false;  // as exec: the caller's decisions are not visible
  try {
    fill_logs(c, history, seen);
    if (judging.probe_ledger) {
      harness::RequestRecord probe;
      const auto& attempts = *judging.probe_ledger;
      probe.log = harness::contract_log(seen.at(history.requests.size()), true, "alive", attempts, c);
      probe.wall_ms = probe.log.elapsed_ms;
      history.alive = std::move(probe);
    }
  } catch (const harness::UnknownVerdict& e) {  // an outcome name the contract does not know
    return harness::unknown_result(c, e.reason, e.what(), history.ledger);
  }
  harness::CheckOptions options;
  options.time_scale = judging.time_scale;
  return harness::check_case(c, history, options);
}

namespace {
std::string optional_outcome(const std::optional<Outcome>& o) {
  return o ? std::string(to_string(*o)) : std::string();
}

double to_microsecond(double ms) {
  return std::round(ms * 1000) / 1000;
}

json::array timeline_json(const harness::CaseResult& r) {
  json::array out;
  for (const auto& e : r.ledger)
    out.push_back(json::object{{"route", e.route},
                               {"attempt", e.attempt},
                               {"at_ms", to_microsecond(e.received_at_ms)},
                               {"ended_ms", to_microsecond(e.finished_at_ms)},
                               {"status", e.status},
                               {"fault", to_string(e.fault)},
                               {"ended", to_string(e.outcome)},
                               {"stream", e.stream},
                               {"idempotency_key", e.idempotency_key}});
  return out;
}
}  // namespace

std::string verdict_summary(const harness::CaseResult& r) {
  std::string out = fmt::format("case \"{}\"{}: {}", r.name, r.file.empty() ? "" : " (" + r.file + ")",
                                to_string(r.verdict));
  if (r.verdict == harness::Verdict::unknown && !r.unknown_reason.empty())
    out += " (" + r.unknown_reason + ")";
  out += fmt::format(": expected {}, observed {}", to_string(r.expected), to_string(r.observed));
  if (!r.reason.empty()) out += "; " + r.reason;
  for (const auto& check : r.checks)
    if (!check.ok) out += fmt::format("; {}: {}", check.name, check.message);
  return out;
}

json::object verdict_json(const harness::CaseResult& r) {
  json::array actions, checks;
  for (auto a : r.observed_actions) actions.emplace_back(to_string(a));
  for (const auto& check : r.checks)
    checks.push_back(json::object{{"name", check.name}, {"passed", check.ok}, {"message", check.message}});
  json::object attempts;
  for (const auto& [route, n] : r.attempts_by_route) attempts[route] = n;
  json::object out{{"verdict", to_string(r.verdict)},
                   {"case", r.name},
                   {"file", r.file},
                   {"expected", to_string(r.expected)},
                   {"observed", to_string(r.observed)},
                   {"expected_outcome", optional_outcome(r.expected_outcome)},
                   {"observed_outcome", optional_outcome(r.observed_outcome)},
                   {"actions", std::move(actions)},
                   {"checks", std::move(checks)},
                   {"timeline", timeline_json(r)},
                   {"attempts", std::move(attempts)},
                   {"summary", verdict_summary(r)}};
  if (!r.reason.empty()) out["reason"] = r.reason;
  if (!r.unknown_reason.empty()) out["unknown_reason"] = r.unknown_reason;
  return out;
}

std::variant<std::string, ApiError> read_reports_body(std::string_view body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  const auto* dir = !ec && v.is_object() ? v.as_object().if_contains("dir") : nullptr;
  if (!dir || !dir->is_string() || dir->as_string().empty())
    return ApiError{
        400,
        R"(reports: send {"dir": "PATH"}, the folder to write junit.xml, report.json, report.md and report.html into)"};
  if (dir->as_string().find('\0') != json::string::npos)
    return ApiError{400, "reports: a dir with a NUL byte names no folder"};
  return std::string(dir->as_string());
}

harness::RunResult judged_run(std::vector<harness::CaseResult> cases, double time_scale, std::uint64_t seed) {
  harness::RunResult run;
  run.driver = "session";
  run.time_scale = time_scale;
  run.seed = seed;
  for (std::size_t i = 0; i < cases.size(); ++i) cases[i].index = static_cast<int>(i);
  run.cases = std::move(cases);
  return run;
}

std::string caller_base_url(std::string_view host_header, std::string_view public_url,
                            std::string_view fallback) {
  if (!public_url.empty()) return std::string(public_url);
  // host, host:port, [v6]:port: nothing that could end the URL's authority or start a path.
  const bool plain = !host_header.empty() && host_header.size() <= 255 &&
                     host_header.find_first_not_of(
                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                         "0123456789.-:[]") == std::string_view::npos;
  if (!plain) return std::string(fallback);
  return "http://" + std::string(host_header);
}

ApiError outside_root(std::string_view key, std::string_view root_flag) {
  return ApiError{403, fmt::format("{}: not inside the folder this server may read and write ({}): refused",
                                   key, root_flag)};
}

std::optional<ApiError> over_session_limit(std::size_t open, std::size_t max_sessions,
                                           double oldest_last_call_ms, double now_ms, double ttl_ms) {
  if (open < max_sessions) return std::nullopt;
  const double wait_s = std::max(1.0, std::ceil((oldest_last_call_ms + ttl_ms - now_ms) / 1000));
  const auto seconds = fmt::format("{:.0f}", wait_s);
  return ApiError{
      429,
      fmt::format("{} sessions are open, the most this server keeps (serve --max-sessions): end one "
                  "(DELETE /__llmchaos/sessions/ID) or retry in {} s, when the oldest expires",
                  max_sessions, seconds),
      {{"retry-after", seconds}}};
}

std::vector<std::string> expired(const std::map<std::string, double>& last_call_ms, double now_ms,
                                 double ttl_ms) {
  std::vector<std::string> out;
  for (const auto& [id, at] : last_call_ms)
    if (now_ms - at > ttl_ms) out.push_back(id);
  return out;
}

}  // namespace llmchaos::sessions
