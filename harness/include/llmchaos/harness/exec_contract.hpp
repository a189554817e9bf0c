#pragma once
// The exec contract (harness/drivers/README.md) as data: what a program learns about its case (the
// environment the exec driver sets) and how what it saw (its last stdout line) becomes the request's
// log. The exec driver and `serve`'s session API (harness/sessions/) both use these, so a session and
// `run --driver exec` give a client the same facts and judge what it saw the same way.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/client/executor.hpp"
#include "llmchaos/core/ledger.hpp"
#include "llmchaos/harness/case.hpp"
#include "llmchaos/harness/driver.hpp"

namespace llmchaos::harness {

struct RouteFact {
  std::string name;
  std::string base_url;  // what an SDK takes: openai .../NS/ROUTE/v1, anthropic and gemini .../NS/ROUTE
  std::string dialect;
};

struct GroupFact {
  std::string name;
  std::vector<std::string> members;  // routes, in order
};

struct CaseFacts {
  std::string case_name;
  std::vector<RouteFact> routes;  // every route of the case, by name
  std::string primary;
  std::vector<std::string> fallback;
  std::string policy_json;  // {"workflow", "backoff", "routes"}, unscaled
  double time_scale = 1;
  std::optional<long long> tier_rpm, tier_rpd;
  std::optional<double> tier_tpm;
  std::vector<GroupFact> groups;
  std::map<std::string, double> weights;  // per group member (1 unless the case sets one)
};

CaseFacts case_facts(const CaseEnv& env);

// The exec contract's variables of a case, "KEY=value" each: LLMCHAOS_CASE, LLMCHAOS_<ROUTE>_BASE_URL /
// _DIALECT / _WEIGHT, LLMCHAOS_PRIMARY, _FALLBACK, _ROUTES, _POLICY_JSON, _TIME_SCALE, _TIER_*, _GROUPS,
// _GROUP_<NAME>. Not the per-request LLMCHAOS_REQUEST / LLMCHAOS_OPERATION_ID, nor LLMCHAOS_STATE_DIR.
std::vector<std::string> exec_environment(const CaseFacts& facts);

// Env-var name of a route: upper-cased, every non-alphanumeric character -> '_'.
std::string env_route_name(std::string_view route);

// {"model", "prompt", "stream", "tool_call", "prefill", "operation_id"}: LLMCHAOS_REQUEST.
std::string request_json(const client::WorkflowRequest& request);

// Request N's (1-based) operation id in namespace `ns`: "NS-rN" (a client sends it as Idempotency-Key).
std::string request_operation_id(std::string_view ns, int n);

// One request's log from what its caller saw: `line` is the contract's last line (a JSON object
// {"outcome", "text", "route", "model", "output_tokens", "limited_by"}; anything else: no line),
// `exit_ok` what decides without an outcome (the exit code was 0), `attempts` the request's ledger
// entries (its outcome when it says only "success", its elapsed time). An unknown outcome name throws
// UnknownVerdict("error: contract", ...) with no output.
client::DecisionLog contract_log(std::string_view line, bool exit_ok, const std::string& operation_id,
                                 const std::vector<LedgerEntry>& attempts, const Case& c);

}  // namespace llmchaos::harness
