// `llmchaos gateway` as a process: the first stdout line names the bound port, it serves, SIGTERM and
// SIGINT stop it within a second, a non-loopback bind needs the explicit flag.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <thread>

#include "llmchaos/net/http_call.hpp"
#include "test_env.hpp"

namespace {

struct Child {
  pid_t pid = 0;
  int out = -1;  // stdout and stderr
};

Child spawn_gateway(const std::vector<std::string>& args) {
  int fds[2];
  REQUIRE(pipe2(fds, O_CLOEXEC) == 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  std::vector<std::string> all{llmchaos::test::llmchaos_bin(), "gateway"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  Child c;
  REQUIRE(posix_spawn(&c.pid, argv[0], &fa, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&fa);
  ::close(fds[1]);
  c.out = fds[0];
  return c;
}

// Reads until a newline or EOF (bounded).
std::string read_line(int fd, int timeout_ms = 10000) {
  std::string line;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char ch;
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    if (::read(fd, &ch, 1) != 1 || ch == '\n') break;
    line += ch;
  }
  return line;
}

std::string write_config() {
  const std::string path = "/tmp/llmchaos-test-gateway-" + std::to_string(::getpid()) + ".toml";
  std::ofstream(path)
      << "[route.a]\nbase_url = \"http://127.0.0.1:9/a\"\ndialect = \"openai\"\n[workflow]\nprimary = \"a\"\n"
         "[tiers.t]\n[keys]\n\"k\" = \"t\"\n";
  return path;
}

}  // namespace

TEST_CASE("llmchaos gateway prints its URL first and stops within a second of SIGTERM or SIGINT",
          "[gateway][cli]") {
  const auto config = write_config();
  for (int sig : {SIGTERM, SIGINT}) {
    auto c = spawn_gateway({"--config", config, "--port", "0"});
    const auto line = read_line(c.out);
    INFO(line);
    REQUIRE(line.rfind("listening on http://127.0.0.1:", 0) == 0);
    const auto url = llmchaos::net::parse_url(line.substr(std::string("listening on ").size()));
    llmchaos::net::HttpCall health;
    health.port = url.port;
    health.target = "/health";
    CHECK(llmchaos::net::http_call(health).status == 200);

    const auto start = std::chrono::steady_clock::now();
    ::kill(c.pid, sig);
    int status = 0;
    REQUIRE(waitpid(c.pid, &status, 0) == c.pid);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    CHECK(ms < 1000);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    ::close(c.out);
  }
  std::remove(config.c_str());
}

TEST_CASE("llmchaos gateway refuses a non-loopback bind without --allow-non-loopback", "[gateway][cli]") {
  const auto config = write_config();
  auto c = spawn_gateway({"--config", config, "--bind", "0.0.0.0"});
  const auto line = read_line(c.out);
  int status = 0;
  REQUIRE(waitpid(c.pid, &status, 0) == c.pid);
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(line.find("--allow-non-loopback") != std::string::npos);
  ::close(c.out);
  std::remove(config.c_str());
}

TEST_CASE("llmchaos gateway reports a config error with file:line:col and exit 2", "[gateway][cli]") {
  const std::string path = "/tmp/llmchaos-test-gateway-bad-" + std::to_string(::getpid()) + ".toml";
  std::ofstream(path)
      << "[route.a]\nbase_url = \"http://127.0.0.1:9/a\"\ndialect = \"openai\"\n[workflow]\nprimary = \"a\"\n"
         "[keys]\n\"k\" = \"gold\"\n";
  auto c = spawn_gateway({"--config", path});
  const auto line = read_line(c.out);
  int status = 0;
  REQUIRE(waitpid(c.pid, &status, 0) == c.pid);
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(line.find(path + ":7:") != std::string::npos);
  ::close(c.out);
  std::remove(path.c_str());
}
