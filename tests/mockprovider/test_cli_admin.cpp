// Issue 42 through the CLI: the admin token's three sources, `llmchaos probe`, --public-url.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "child_process.hpp"
#include "cli_run.hpp"
#include "llmchaos/net/http_call.hpp"
#include "test_env.hpp"

using namespace llmchaos;
using llmchaos::test::read_line;
using llmchaos::test::spawn;
using llmchaos::test::wait_exit;

namespace {
// A serve child and its port, read from the first line.
struct Serving {
  test::Child child;
  std::uint16_t port = 0;
  std::string first_line, rest;
  explicit Serving(std::vector<std::string> args) : child(spawn(std::move(args))) {
    first_line = read_line(child.out);
    REQUIRE(first_line.rfind("listening on http://", 0) == 0);
    port = net::parse_url(first_line.substr(std::string("listening on ").size())).port;
  }
  int status(const std::string& target, const std::string& token = {}) const {
    net::HttpCall c;
    c.port = port;
    c.target = target;
    if (!token.empty()) c.headers = {{"authorization", "Bearer " + token}};
    return net::http_call(c).status;
  }
  ~Serving() {
    kill(child.pid, SIGTERM);
    wait_exit(child, 2000);
  }
};

int probe(const std::vector<std::string>& args) {
  std::vector<std::string> all = {test::llmchaos_bin(), "probe"};
  all.insert(all.end(), args.begin(), args.end());
  auto child = spawn(all);
  return wait_exit(child, 10'000);
}
}  // namespace

TEST_CASE("serve --admin-token-file: the admin API needs that token, ready stays open", "[cli][issue42]") {
  test::TempDir dir("token");
  const auto file = (dir.path / "token").string();
  std::ofstream(file) << "  file-token-1  \nsecond line ignored\n";
  Serving s({test::llmchaos_bin(), "serve", "--port", "0", "--admin-token-file", file});
  CHECK(s.status("/__llmchaos/ready") == 200);
  CHECK(s.status("/__llmchaos/ledger") == 401);
  CHECK(s.status("/__llmchaos/ledger", "file-token-1") == 200);
  CHECK(s.status("/__llmchaos/sessions") == 401);
  CHECK(s.status("/__llmchaos/sessions", "file-token-1") == 200);
}

TEST_CASE("serve reads LLMCHAOS_ADMIN_TOKEN when no flag names a token", "[cli][issue42]") {
  setenv("LLMCHAOS_ADMIN_TOKEN", "env-token-2", 1);
  Serving s({test::llmchaos_bin(), "serve", "--port", "0"});
  unsetenv("LLMCHAOS_ADMIN_TOKEN");
  CHECK(s.status("/__llmchaos/ledger") == 401);
  CHECK(s.status("/__llmchaos/ledger", "env-token-2") == 200);
}

TEST_CASE("serve refuses an empty token file and --host off loopback without a token", "[cli][issue42]") {
  test::TempDir dir("token");
  const auto file = (dir.path / "empty").string();
  std::ofstream(file) << "\n";
  auto empty = spawn({test::llmchaos_bin(), "serve", "--port", "0", "--admin-token-file", file});
  CHECK(read_line(empty.err, true).find("first line is empty") != std::string::npos);
  CHECK(wait_exit(empty, 5000) == 2);
  auto open = spawn({test::llmchaos_bin(), "proxy", "--host", "0.0.0.0", "--port", "0", "--upstream",
                     "http://127.0.0.1:9"});
  const auto err = read_line(open.err, true);
  CHECK(wait_exit(open, 5000) == 2);
  CHECK(err.find("refusing to bind 0.0.0.0") != std::string::npos);
  CHECK(err.find("LLMCHAOS_ADMIN_TOKEN") != std::string::npos);
  CHECK(err.find("--insecure-admin") != std::string::npos);
}

TEST_CASE("serve --public-url: the banner's base URLs are the public ones", "[cli][issue42]") {
  test::TempDir dir("public");
  const auto script = (dir.path / "s.toml").string();
  std::ofstream(script) << "[route.primary]\ndialect = \"openai\"\n";
  Serving s({test::llmchaos_bin(), "serve", "--port", "0", "--script", script, "--public-url",
             "http://localhost:49999/"});
  read_line(s.child.out);  // serving ...
  CHECK(read_line(s.child.out) == "  route primary (openai): SDK base URL http://localhost:49999/primary/v1");
  auto bad = spawn({test::llmchaos_bin(), "serve", "--port", "0", "--public-url", "ftp://x"});
  CHECK(read_line(bad.err, true).find("--public-url") != std::string::npos);
  CHECK(wait_exit(bad, 5000) == 2);
}

TEST_CASE("llmchaos probe: 0 on a 2xx, 1 on another status or no answer, 2 on a bad URL", "[cli][issue42]") {
  Serving s({test::llmchaos_bin(), "serve", "--port", "0", "--admin-token", "t"});
  const auto base = "http://127.0.0.1:" + std::to_string(s.port);
  CHECK(probe({base + "/__llmchaos/ready"}) == 0);
  CHECK(probe({"--quiet", base + "/__llmchaos/ledger"}) == 1);                   // 401
  CHECK(probe({base + "/nothing/here"}) == 1);                                   // 404
  CHECK(probe({"--timeout", "2", "http://127.0.0.1:9/__llmchaos/ready"}) == 1);  // refused
  CHECK(probe({"https://127.0.0.1/"}) == 2);
  CHECK(probe({"http://127.0.0.1:notaport/"}) == 2);
  CHECK(probe({"http://127.0.0.1:70000/"}) == 2);
  CHECK(probe({"--timeout", "0", base + "/__llmchaos/ready"}) == 2);  // a usage error
  CHECK(probe({}) == 2);
}
