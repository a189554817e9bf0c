// `llmchaos serve` as a child process: first line, a request, SIGTERM while a connection is held.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "child_process.hpp"
#include "llmchaos/net/http_call.hpp"
#include "test_env.hpp"
#include "wire_client.hpp"

using namespace llmchaos;
using llmchaos::test::Child;
using llmchaos::test::read_line;
using llmchaos::test::spawn;
using llmchaos::test::wait_exit;

namespace {
std::string bin() {
  return llmchaos::test::llmchaos_bin();
}

std::string write_temp(const std::string& content) {
  char path[] = "/tmp/llmchaos-serve-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()));
  close(fd);
  return path;
}
}  // namespace

TEST_CASE("serve prints its URL first, serves the script, and stops within a second of SIGTERM", "[cli]") {
  const auto script = write_temp(R"([route.primary]
dialect = "openai"
script = [{ fault = "ok", text = "hello from primary" }, { fault = "post_commit_timeout", hold_ms = 600000 }]
)");
  auto child = spawn({bin(), "serve", "--port", "0", "--script", script});
  const auto line = read_line(child.out);
  REQUIRE(line.rfind("listening on http://127.0.0.1:", 0) == 0);
  const auto url = net::parse_url(line.substr(std::string("listening on ").size()));
  const auto ok = test::chat_call(Dialect::openai, "/primary", false);
  net::HttpCall c;
  c.port = url.port;
  c.method = "POST";
  c.target = ok.target;
  c.body = ok.body;
  const auto reply = net::http_call(c);
  CHECK(reply.status == 200);
  CHECK(reply.body.find("hello from primary") != std::string::npos);
  // Hold a connection open (post_commit_timeout), then ask the server to stop.
  test::WireReply held;
  std::thread holder(
      [&] { held = test::wire_exchange(url.port, test::http_request("POST", ok.target, ok.body), 10000); });
  c.method = "GET";
  c.target = "/__llmchaos/ledger";
  for (int i = 0; i < 500 && net::http_call(c).body.find("post_commit_timeout") == std::string::npos; ++i)
    usleep(5000);
  kill(child.pid, SIGTERM);
  CHECK(wait_exit(child, 1000) == 0);
  holder.join();
  CHECK_FALSE(held.timed_out);  // the server closed the held connection
  std::remove(script.c_str());
}

TEST_CASE("serve refuses a bad script with file:line:col and a non-zero exit", "[cli]") {
  const auto script = write_temp("[route.a]\nscript = [{ fault = \"rate_430\" }]\n");
  auto child = spawn({bin(), "serve", "--script", script});
  const auto err = read_line(child.err, true);
  CHECK(wait_exit(child, 5000) == 2);
  CHECK(err.find(script + ":2:21: route.a.script[0].fault: unknown fault \"rate_430\"") != std::string::npos);
  std::remove(script.c_str());
}

TEST_CASE("serve refuses a non-loopback bind without --admin-token", "[cli]") {
  auto child = spawn({bin(), "serve", "--bind", "0.0.0.0"});
  const auto err = read_line(child.err, true);
  CHECK(wait_exit(child, 5000) == 2);
  CHECK(err.find("--admin-token") != std::string::npos);
}

namespace {
// `serve --seed SEED` with a slow script; the planned latencies of three attempts, from the ledger.
std::vector<double> serve_draws(const std::string& script, const std::string& seed) {
  auto child = spawn({bin(), "serve", "--port", "0", "--seed", seed, "--script", script});
  const auto line = read_line(child.out);
  REQUIRE(line.rfind("listening on http://127.0.0.1:", 0) == 0);
  const auto url = net::parse_url(line.substr(std::string("listening on ").size()));
  const auto call = test::chat_call(Dialect::openai, "/primary", false);
  net::HttpCall c;
  c.port = url.port;
  c.method = "POST";
  c.target = call.target;
  c.body = call.body;
  for (int i = 0; i < 3; ++i) CHECK(net::http_call(c).status == 200);
  c.method = "GET";
  c.target = "/__llmchaos/ledger";
  c.body.clear();
  const auto ledger = boost::json::parse(net::http_call(c).body);
  std::vector<double> out;
  for (const auto& e : ledger.as_array()) out.push_back(e.at("planned_latency_ms").to_number<double>());
  kill(child.pid, SIGTERM);
  CHECK(wait_exit(child, 1000) == 0);
  return out;
}
}  // namespace

TEST_CASE("serve --seed: the same seed draws the same slow latencies, another seed others", "[cli][seed]") {
  const auto script = write_temp(R"([route.primary]
dialect = "openai"
script = [{ fault = "slow", p50_ms = 2, p95_ms = 20, times = 3 }]
)");
  const auto first = serve_draws(script, "9");
  REQUIRE(first.size() == 3);
  CHECK(first[0] != first[1]);
  CHECK(serve_draws(script, "9") == first);
  CHECK(serve_draws(script, "10") != first);
  std::remove(script.c_str());
}

TEST_CASE("the README's serve example works as written: a case file's routes, one line per route",
          "[cli][readme]") {
  // The command exactly as README.md shows it, but port 0 (a free port) for 8080.
  std::ifstream readme(test::source_dir() + "/README.md");
  std::string line, command;
  while (std::getline(readme, line))
    if (line.rfind("llmchaos serve --script ", 0) == 0) command = line;
  REQUIRE(command == "llmchaos serve --script cases/staging/rate-429-short-retry-after.toml --port 8080");
  std::vector<std::string> args{bin()};
  std::istringstream words(command.substr(std::string("llmchaos ").size()));
  for (std::string w; words >> w;) args.push_back(w == "8080" ? "0" : w);
  auto child = spawn(args, test::source_dir());
  const auto listening = read_line(child.out);
  REQUIRE(listening.rfind("listening on http://127.0.0.1:", 0) == 0);
  const auto base = listening.substr(std::string("listening on ").size());
  CHECK(read_line(child.out) ==
        "serving the routes of case \"rate 429 with a short retry-after is retried on the same route\" "
        "(cases/staging/rate-429-short-retry-after.toml); its other tables and the client keys of its routes "
        "are not "
        "served");
  CHECK(read_line(child.out) == "  route backup (anthropic): SDK base URL " + base + "/backup");
  CHECK(read_line(child.out) == "  route primary (openai): SDK base URL " + base + "/primary/v1");
  // The case's script is what it serves: primary answers rate_429 with its retry-after, then ok.
  const auto url = net::parse_url(base);
  const auto ask = test::chat_call(Dialect::openai, "/primary", false);
  net::HttpCall c;
  c.port = url.port;
  c.method = "POST";
  c.target = ask.target;
  c.body = ask.body;
  const auto limited = net::http_call(c);
  CHECK(limited.status == 429);
  CHECK(limited.header("retry-after-ms") == "500");
  CHECK(net::http_call(c).status == 200);
  c.method = "GET";
  c.target = "/__llmchaos/ledger";  // the README's curl
  const auto ledger = net::http_call(c);
  CHECK(ledger.status == 200);
  CHECK(ledger.body.find("\"fault\":\"rate_429\"") != std::string::npos);
  kill(child.pid, SIGTERM);
  CHECK(wait_exit(child, 2000) == 0);
}

TEST_CASE("serve accepts every bundled case file", "[cli][readme]") {
  namespace fs = std::filesystem;
  int served = 0;
  for (const auto* folder : {"cases", "examples/cases"}) {
    for (const auto& entry : fs::recursive_directory_iterator(test::source_dir() + "/" + folder)) {
      const auto& path = entry.path();
      if (!entry.is_regular_file() || path.extension() != ".toml" ||
          path.parent_path().filename() == "policies")
        continue;
      INFO(path.string());
      auto child = spawn({bin(), "serve", "--port", "0", "--script", path.string()});
      const auto first = read_line(child.out);
      CHECK(first.rfind("listening on http://127.0.0.1:", 0) == 0);
      CHECK(read_line(child.out).rfind("serving the routes of case \"", 0) == 0);
      kill(child.pid, SIGTERM);
      const int code = wait_exit(child, 5000);
      if (code != 0) FAIL_CHECK("exit " << code << ": " << read_line(child.err, true));
      ++served;
    }
  }
  CHECK(served >= 100);
}
