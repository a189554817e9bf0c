#pragma once
// `llmchaos ARGS` as a child process the test talks to while it runs (its stdout and stderr apart, a
// signal, a bounded wait for its exit): the servers (`serve`, `proxy`) of the CLI tests. For a command
// run to its end, cli_run.hpp.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace llmchaos::test {

struct Child {
  pid_t pid = -1;
  int out = -1;  // the child's stdout
  int err = -1;  // the child's stderr
  ~Child() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    if (out >= 0) close(out);
    if (err >= 0) close(err);
  }
};

// `cwd`: the child's working directory ("" = this process's).
inline Child spawn(std::vector<std::string> args, const std::string& cwd = {}) {
  int out[2], err[2];
  REQUIRE(pipe(out) == 0);
  REQUIRE(pipe(err) == 0);
  Child c;
  c.pid = fork();
  REQUIRE(c.pid >= 0);
  if (c.pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    close(out[0]);
    close(err[0]);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  c.out = out[0];
  c.err = err[0];
  return c;
}

// Reads one line (bounded), or everything until EOF.
inline std::string read_line(int fd, bool whole = false) {
  std::string s;
  char ch;
  while (s.size() < 65536 && read(fd, &ch, 1) == 1) {
    if (ch == '\n' && !whole) break;
    s += ch;
  }
  return s;
}

// Waits for the child to exit within `ms`; returns its exit status or -1.
inline int wait_exit(Child& c, int ms) {
  for (int i = 0; i < ms; ++i) {
    int status = 0;
    if (waitpid(c.pid, &status, WNOHANG) == c.pid) {
      c.pid = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    usleep(1000);
  }
  return -1;
}

}  // namespace llmchaos::test
