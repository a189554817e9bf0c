// The exec contract as data (llmchaos/harness/exec_contract.hpp): the facts of a case a client is
// given, their environment form, and the contract line read into a request's log.
#include "llmchaos/harness/exec_contract.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>

#include "external.hpp"
#include "target_config.hpp"

namespace llmchaos::harness {

CaseFacts case_facts(const CaseEnv& env) {
  CaseFacts f;
  f.case_name = env.c->name;
  for (const auto& [name, endpoint] : env.endpoints)
    f.routes.push_back(
        {name, driver_units::sdk_base_url(endpoint), std::string(to_string(endpoint.dialect))});
  const auto& wf = env.c->policy.workflow;
  f.primary = wf.primary;
  f.fallback = wf.fallback;
  f.policy_json = driver_units::case_policy_json(env);
  f.time_scale = env.time_scale;
  if (const auto& t = env.c->tier) {
    if (t->requests_per_minute) f.tier_rpm = *t->requests_per_minute;
    if (t->requests_per_day) f.tier_rpd = *t->requests_per_day;
    if (t->tokens_per_minute) f.tier_tpm = *t->tokens_per_minute;
  }
  for (const auto& [name, members] : env.c->groups) {
    f.groups.push_back({name, members});
    for (const auto& m : members) f.weights[m] = env.c->weight_of(m);
  }
  return f;
}

namespace {
std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}
}  // namespace

std::vector<std::string> exec_environment(const CaseFacts& f) {
  std::vector<std::string> out;
  auto set = [&](const std::string& key, const std::string& value) { out.push_back(key + "=" + value); };
  set("LLMCHAOS_CASE", f.case_name);
  std::vector<std::string> names;
  for (const auto& r : f.routes) {
    set(fmt::format("LLMCHAOS_{}_BASE_URL", env_route_name(r.name)), r.base_url);
    set(fmt::format("LLMCHAOS_{}_DIALECT", env_route_name(r.name)), r.dialect);
    names.push_back(r.name);
  }
  set("LLMCHAOS_PRIMARY", f.primary);
  set("LLMCHAOS_FALLBACK", joined(f.fallback));
  set("LLMCHAOS_ROUTES", joined(names));
  set("LLMCHAOS_POLICY_JSON", f.policy_json);  // the case's own budget, for a client that takes it
  set("LLMCHAOS_TIME_SCALE", fmt::format("{}", f.time_scale));
  // The case's [tier]: the program, started per request, keeps the windows in the state directory.
  if (f.tier_rpm) set("LLMCHAOS_TIER_RPM", std::to_string(*f.tier_rpm));
  if (f.tier_rpd) set("LLMCHAOS_TIER_RPD", std::to_string(*f.tier_rpd));
  if (f.tier_tpm) set("LLMCHAOS_TIER_TPM", fmt::format("{}", *f.tier_tpm));
  // The case's [groups]: a group the workflow names (LLMCHAOS_PRIMARY / _FALLBACK) has no base URL of its
  // own; its members are routes with theirs, and the program balances among them by their weights.
  if (!f.groups.empty()) {
    std::vector<std::string> groups;
    for (const auto& g : f.groups) {
      for (const auto& m : g.members)
        set(fmt::format("LLMCHAOS_{}_WEIGHT", env_route_name(m)), fmt::format("{}", f.weights.at(m)));
      set(fmt::format("LLMCHAOS_GROUP_{}", env_route_name(g.name)), joined(g.members));
      groups.push_back(g.name);
    }
    set("LLMCHAOS_GROUPS", joined(groups));
  }
  return out;
}

std::string env_route_name(std::string_view route) {
  std::string out;
  for (unsigned char ch : route) out += std::isalnum(ch) ? static_cast<char>(std::toupper(ch)) : '_';
  return out;
}

std::string request_json(const client::WorkflowRequest& r) {
  boost::json::object o{{"model", r.model},         {"prompt", r.prompt},   {"stream", r.stream},
                        {"tool_call", r.tool_call}, {"prefill", r.prefill}, {"operation_id", r.operation_id}};
  return boost::json::serialize(o);
}

std::string request_operation_id(std::string_view ns, int n) {
  return fmt::format("{}-r{}", ns, n);
}

client::DecisionLog contract_log(std::string_view line, bool exit_ok, const std::string& operation_id,
                                 const std::vector<LedgerEntry>& attempts, const Case& c) {
  using driver_units::ReportedOutcome;
  // The optional last line {"outcome": "...", "text": "..."}; without it the exit code decides.
  std::optional<ReportedOutcome> reported;
  std::string text;
  boost::json::value contract;
  if (!line.empty() && line.front() == '{') {
    boost::system::error_code ec;
    auto v = boost::json::parse(line, ec);
    if (!ec && v.is_object()) {
      contract = v;
      const auto& o = v.as_object();
      if (auto* t = o.if_contains("text"); t && t->is_string()) text = std::string(t->as_string());
      if (auto* oc = o.if_contains("outcome"); oc && oc->is_string()) {
        reported = driver_units::parse_reported_outcome(oc->as_string());
        if (!reported)
          throw UnknownVerdict("error: contract",
                               fmt::format("unknown outcome \"{}\" in the last stdout line",
                                           std::string_view(oc->as_string())),
                               {});
      }
    }
  }
  if (reported && reported->limited) {  // its tier refused the request: it never ran
    client::DecisionLog refused;
    refused.operation_id = operation_id;
    refused.limited_by = "rate_limited";
    if (const auto* o = contract.if_object())
      if (auto* by = o->if_contains("limited_by"); by && by->is_string() && !by->as_string().empty())
        refused.limited_by = std::string(by->as_string());
    return refused;
  }
  auto log = driver_units::outside_log(operation_id, reported, exit_ok, std::move(text), attempts, c);
  // The request's time as the mock saw it, first arrival to last answer: a runtime's start-up and
  // exit (node takes seconds on a loaded machine) are not the workflow's retry budget.
  if (!attempts.empty())
    log.elapsed_ms = std::max(1.0, attempts.back().finished_at_ms - attempts.front().received_at_ms);
  if (const auto* o = contract.if_object()) driver_units::read_answer_facts(*o, log);
  return log;
}

}  // namespace llmchaos::harness
