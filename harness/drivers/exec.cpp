// exec: a program per workflow request (the team's own client code: a Node or Python script using the
// official SDKs), started through /bin/sh -c in a process group of its own, with the mock's route URLs
// in its environment. The contract is in README.md beside this file. The program's decisions are not
// visible: the checker derives every action from the ledger; the log carries the program's outcome.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "drivers.hpp"
#include "external.hpp"
#include "target_config.hpp"

namespace llmchaos::harness::driver_units {
namespace {

constexpr std::size_t output_cap = 64 * 1024;

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (pipe2(fd, O_CLOEXEC) != 0)
      throw std::runtime_error(fmt::format("exec driver: pipe: {}", std::strerror(errno)));
  }
  ~Pipe() { close_all(); }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
  void close_all() {
    close_end(0);
    close_end(1);
  }
};

struct ProgramRun {
  bool timed_out = false;
  int status = 0;  // waitpid status (valid when !timed_out)
  CappedText out{output_cap}, err{output_cap};
};

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Runs `command` under /bin/sh -c with `env`, reading stdout and stderr until both close and the
// program has exited, at most `timeout_ms`; then the whole process group is killed either way (a
// program's stray children must not outlive its case).
ProgramRun run_program(const std::string& command, const std::vector<std::string>& env, double timeout_ms) {
  Pipe out, err;
  const pid_t pid = spawn_shell(command, env, out.fd[1], err.fd[1], "exec driver");
  out.close_end(1);
  err.close_end(1);

  ProgramRun run;
  const double deadline = now_ms() + timeout_ms;
  bool exited = false;
  double grace_end = 0;  // after the exit: a short wait for output still in flight
  for (int guard = 0; guard < 10'000'000; ++guard) {
    if (!exited) {
      if (waitpid(pid, &run.status, WNOHANG) == pid) {
        exited = true;
        grace_end = now_ms() + 500;
      }
    }
    const bool open = out.fd[0] >= 0 || err.fd[0] >= 0;
    if (exited && !open) break;
    const double now = now_ms();
    if (now >= deadline) {
      run.timed_out = !exited;
      break;
    }
    if (exited && now >= grace_end) break;  // a grandchild holds the pipes: stop reading
    if (!open) {
      ::usleep(2000);
      continue;
    }
    pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
    const int wait = static_cast<int>(std::min(50.0, std::max(1.0, (exited ? grace_end : deadline) - now)));
    if (::poll(fds, 2, wait) < 0 && errno != EINTR) break;
    Pipe* pipes[2] = {&out, &err};
    CappedText* sinks[2] = {&run.out, &run.err};
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[8192];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0)
        sinks[i]->append(std::string_view(buf, static_cast<std::size_t>(n)));
      else if (n == 0 || errno != EINTR)
        pipes[i]->close_end(0);
    }
  }
  const int killed_status = kill_process_group(pid);
  if (!exited) run.status = killed_status;
  return run;
}

// An empty directory of its own for one case (under TMPDIR, else /tmp).
std::string make_state_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/llmchaos-exec-XXXXXX";
  if (!::mkdtemp(pattern.data()))
    throw std::runtime_error(fmt::format("exec driver: cannot create {}: {}", pattern, std::strerror(errno)));
  return pattern;
}

class ExecSession final : public CaseSession {
 public:
  ExecSession(const CaseEnv& env, const DriverOptions& options)
      : env_(env), command_(options.exec_command), opened_ms_(now_ms()) {
    base_env_ = inherited_environment();
    for (auto& var : exec_environment(case_facts(env))) base_env_.push_back(std::move(var));
    state_dir_ = make_state_dir();
    base_env_.push_back("LLMCHAOS_STATE_DIR=" + state_dir_);
  }
  ~ExecSession() override {
    std::error_code ec;
    std::filesystem::remove_all(state_dir_, ec);  // best effort: a program may still hold a file in it
  }
  ExecSession(const ExecSession&) = delete;
  ExecSession& operator=(const ExecSession&) = delete;

  client::DecisionLog send(const client::WorkflowRequest& request) override {
    client::WorkflowRequest r = request;
    r.operation_id = request_operation_id(env_.ns, ++sent_);
    auto env = base_env_;
    env.push_back("LLMCHAOS_REQUEST=" + request_json(r));
    env.push_back("LLMCHAOS_OPERATION_ID=" + r.operation_id);
    const std::size_t before = env_.engine->ledger(env_.ns).size();

    // Stop before the runner's hard deadline, so the hang is ours to report (with the output).
    const double budget =
        env_.deadline_real_ms > 0 ? env_.deadline_real_ms * 0.9 - (now_ms() - opened_ms_) : 60'000;
    auto run = run_program(command_, env, std::max(100.0, budget));
    output_ += fmt::format("--- request {} ---\n{}", sent_, run.out.text());
    if (auto e = run.err.text(); !e.empty()) output_ += "--- stderr ---\n" + e;
    if (output_.size() > output_cap) output_ = output_.substr(0, output_cap) + "\n[... output cut]\n";

    if (run.timed_out)
      throw UnknownVerdict(
          "hang",
          fmt::format("the program did not exit within {:.0f} ms; its process group was killed", budget),
          output_);
    if (WIFSIGNALED(run.status))
      throw UnknownVerdict("crash",
                           fmt::format("the program was ended by signal {} ({})", WTERMSIG(run.status),
                                       strsignal(WTERMSIG(run.status))),
                           output_);
    const int code = WIFEXITED(run.status) ? WEXITSTATUS(run.status) : -1;
    // The shell's 127 (not found) and 126 (not executable) before any call reached the mock: the
    // program never ran, a harness error to show, not an ordinary failure of the client.
    if ((code == 127 || code == 126) && env_.engine->ledger(env_.ns).size() == before) {
      auto said = run.err.text();
      said = said.substr(0, said.find('\n'));
      throw UnknownVerdict(
          "target did not start",
          fmt::format("the program did not start (shell exit {}, {}){}", code,
                      code == 127 ? "command not found" : "not executable", said.empty() ? "" : ": " + said),
          output_);
    }
    if (code > 128 && code <= 128 + 64)  // the shell reports its child's death by signal N as 128+N
      throw UnknownVerdict("crash",
                           fmt::format("the program was ended by signal {} ({}) (shell exit {})", code - 128,
                                       strsignal(code - 128), code),
                           output_);

    auto ledger = env_.engine->ledger(env_.ns);
    std::vector<LedgerEntry> attempts(
        ledger.begin() + static_cast<std::ptrdiff_t>(std::min(before, ledger.size())), ledger.end());
    try {
      return contract_log(run.out.last_line(), code == 0, r.operation_id, attempts, *env_.c);
    } catch (const UnknownVerdict& e) {  // an unknown outcome name: shown with the program's output
      throw UnknownVerdict(e.reason, e.what(), output_);
    }
  }
  bool has_decision_log() const override { return false; }
  std::string output() const override { return output_; }

 private:
  CaseEnv env_;
  std::string command_;
  double opened_ms_;
  std::vector<std::string> base_env_;
  std::string state_dir_;  // LLMCHAOS_STATE_DIR: the case's, shared by its requests
  int sent_ = 0;
  std::string output_;
};

std::string validate(const DriverOptions& o) {
  if (o.exec_command.empty()) return "needs --exec \"CMD ARGS\" (the program to start per request)";
  if (!o.target_url.empty() || !o.target_config.empty() || !o.target_command.empty())
    return "--target, --target-config and --target-command are for --driver http";
  if (!o.mutation.empty()) return "--mutate is for --driver inproc";
  return {};
}

std::unique_ptr<CaseSession> open(const CaseEnv& env, const DriverOptions& options) {
  if (!env.engine) throw std::logic_error("exec driver: no mock engine");
  return std::make_unique<ExecSession>(env, options);
}

}  // namespace

Driver exec() {
  return {"exec", "a program per request, the mock's route URLs in its environment", validate, open};
}

}  // namespace llmchaos::harness::driver_units
