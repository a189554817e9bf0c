#pragma once
// Shared by the drivers that cannot see the stack's decisions (exec, http): the request as JSON, the
// outcome a program or service reports, and the outcome the ledger implies when it reports none.
#include <sys/types.h>

#include <boost/json/fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/client/executor.hpp"
#include "llmchaos/core/ledger.hpp"
#include "llmchaos/harness/case.hpp"
#include "llmchaos/harness/exec_contract.hpp"  // request_json, env_route_name

namespace llmchaos::harness::driver_units {

// An outcome name (primary_success, retry_recovery, fallback_recovery, degraded, queued, fail_closed)
// or an alias: "success" / "ok" (the ledger says which success), "error" / "failed" (fail_closed).
// nullopt when `name` is neither.
// "rate_limited": the program's tier refused the request before it sent anything (the exec contract).
struct ReportedOutcome {
  std::optional<Outcome> outcome;  // nullopt with `success`: ask the ledger
  bool success = false;
  bool limited = false;  // rate_limited: no outcome, not answered
};
std::optional<ReportedOutcome> parse_reported_outcome(std::string_view name);

// The success outcome the attempts of one request imply: the last attempt that did not fail served
// it (primary: primary_success, or retry_recovery after failures; another route: fallback_recovery).
// fail_closed when every attempt failed or there was none.
Outcome success_outcome_from_ledger(const std::vector<LedgerEntry>& attempts, const Case& c,
                                    std::string* route);

// The log of a request the driver saw from outside: outcome, answer and serving route only.
client::DecisionLog outside_log(const std::string& operation_id, std::optional<ReportedOutcome> reported,
                                bool ok, std::string text, const std::vector<LedgerEntry>& attempts,
                                const Case& c);

// Optional facts of the answer a program or service reports: "route", "model", "input_tokens",
// "output_tokens" (the contract's JSON line, or the gateway's answer).
void read_answer_facts(const boost::json::object& o, client::DecisionLog& log);

// The base URL a client of `dialect` is configured with for an endpoint (openai: .../v1).
std::string sdk_base_url(const client::Endpoint& endpoint);

// Starts `/bin/sh -c command` with `env` ("KEY=value"), stdin /dev/null, stdout and stderr onto the
// given descriptors, in a process group of its own (so a kill reaches everything it started). Throws
// naming the command when it cannot start. `who` names the driver in messages.
pid_t spawn_shell(const std::string& command, const std::vector<std::string>& env, int stdout_fd,
                  int stderr_fd, std::string_view who);
// SIGKILL to the process group of `pid`, then reaps `pid`; its wait status (-1 if already reaped).
int kill_process_group(pid_t pid);
// The harness's own environment, "KEY=value" each.
std::vector<std::string> inherited_environment();

// Keeps the head of a stream (up to `cap` bytes, for reports) and its tail (for the last line).
class CappedText {
 public:
  explicit CappedText(std::size_t cap) : cap_(cap) {}
  void append(std::string_view s);
  std::string text() const;       // the head, with a note of what was cut
  std::string last_line() const;  // the last non-empty line of the whole stream
 private:
  std::size_t cap_;
  std::string head_, tail_;
  std::size_t total_ = 0;
};

}  // namespace llmchaos::harness::driver_units
