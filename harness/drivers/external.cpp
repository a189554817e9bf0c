// Helpers of the outside drivers (exec, http); see external.hpp.
#include "external.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <boost/json.hpp>
#include <cctype>
#include <cstring>
#include <stdexcept>

#include "llmchaos/harness/checker.hpp"
#include "llmchaos/mockprovider/dialect.hpp"

extern char** environ;

namespace llmchaos::harness::driver_units {

pid_t spawn_shell(const std::string& command, const std::vector<std::string>& env, int stdout_fd,
                  int stderr_fd, std::string_view who) {
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  std::string sh = "/bin/sh", dash_c = "-c", cmd = command;
  char* argv[] = {sh.data(), dash_c.data(), cmd.data(), nullptr};

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, stdout_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, stderr_fd, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);  // its own group: the kill reaches everything it started
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/bin/sh", &fa, &attr, argv, envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    throw std::runtime_error(
        fmt::format("{}: cannot start /bin/sh -c \"{}\": {}", who, command, std::strerror(rc)));
  return pid;
}

int kill_process_group(pid_t pid) {
  ::kill(-pid, SIGKILL);
  int status = 0;
  return waitpid(pid, &status, 0) == pid ? status : -1;  // SIGKILL: bounded
}

std::vector<std::string> inherited_environment() {
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) out.emplace_back(*e);
  return out;
}

std::optional<ReportedOutcome> parse_reported_outcome(std::string_view name) {
  if (auto o = parse_enum<Outcome>(name)) {
    const bool success =
        *o == Outcome::primary_success || *o == Outcome::retry_recovery || *o == Outcome::fallback_recovery;
    return ReportedOutcome{o, success};
  }
  if (name == "success" || name == "ok") return ReportedOutcome{std::nullopt, true};
  if (name == "error" || name == "failed" || name == "fail")
    return ReportedOutcome{Outcome::fail_closed, false};
  if (name == "rate_limited") return ReportedOutcome{std::nullopt, false, true};
  return std::nullopt;
}

Outcome success_outcome_from_ledger(const std::vector<LedgerEntry>& attempts, const Case& c,
                                    std::string* route) {
  const LedgerEntry* served = nullptr;
  bool failed_before = false;
  for (const auto& e : attempts) {
    if (attempt_failed(e, c.policy)) {
      if (!served) failed_before = true;
      continue;
    }
    served = &e;
  }
  if (!served) return Outcome::fail_closed;
  if (route) *route = served->route;
  if (c.logical_route(served->route) != c.policy.workflow.primary)
    return Outcome::fallback_recovery;  // a member: its group
  return failed_before ? Outcome::retry_recovery : Outcome::primary_success;
}

client::DecisionLog outside_log(const std::string& operation_id, std::optional<ReportedOutcome> reported,
                                bool ok, std::string text, const std::vector<LedgerEntry>& attempts,
                                const Case& c) {
  client::DecisionLog log;
  log.operation_id = operation_id;
  if (!reported)
    reported = ReportedOutcome{ok ? std::nullopt : std::optional<Outcome>(Outcome::fail_closed), ok};
  std::string route;
  const Outcome from_ledger = success_outcome_from_ledger(attempts, c, &route);
  if (reported->outcome) {
    log.outcome = *reported->outcome;
  } else {
    // A success with no name: the ledger says which; a "success" no attempt supports is still a success
    // the program claimed (the checker's truncation / contract checks judge the answer).
    log.outcome = from_ledger == Outcome::fail_closed ? Outcome::primary_success : from_ledger;
  }
  log.answered = reported->success || log.outcome == Outcome::degraded;
  if (reported->success) log.route = route;
  log.text = std::move(text);
  return log;
}

void read_answer_facts(const boost::json::object& o, client::DecisionLog& log) {
  auto str = [&](const char* key, std::string& out) {
    if (auto* v = o.if_contains(key); v && v->is_string()) out = std::string(v->as_string());
  };
  auto num = [&](const char* key, int& out) {
    if (auto* v = o.if_contains(key); v && v->is_int64()) out = static_cast<int>(v->as_int64());
  };
  str("route", log.route);
  str("model", log.model);
  num("input_tokens", log.input_tokens);
  num("output_tokens", log.output_tokens);
}

std::string sdk_base_url(const client::Endpoint& e) {
  return mock::sdk_base_url(e.base_url, e.dialect);
}

void CappedText::append(std::string_view s) {
  total_ += s.size();
  if (head_.size() < cap_) head_.append(s.substr(0, cap_ - head_.size()));
  tail_.append(s);
  constexpr std::size_t tail_cap = 16 * 1024;  // the contract's last line is short
  if (tail_.size() > 2 * tail_cap) tail_.erase(0, tail_.size() - tail_cap);
}

std::string CappedText::text() const {
  if (total_ <= head_.size()) return head_;
  return head_ + fmt::format("\n[... {} more bytes not kept]\n", total_ - head_.size());
}

std::string CappedText::last_line() const {
  std::size_t end = tail_.size();
  while (end > 0 && (tail_[end - 1] == '\n' || tail_[end - 1] == '\r' || tail_[end - 1] == ' ')) --end;
  const auto start = tail_.rfind('\n', end == 0 ? 0 : end - 1);
  return tail_.substr(start == std::string::npos ? 0 : start + 1,
                      end - (start == std::string::npos ? 0 : start + 1));
}

}  // namespace llmchaos::harness::driver_units
