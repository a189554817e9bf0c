// `llmchaos serve` as a child process: first line, a request, SIGTERM while a connection is held.
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "llmchaos/mockprovider/cassette.hpp"
#include "llmchaos/net/http_call.hpp"
#include "test_env.hpp"
#include "wire_client.hpp"

using namespace llmchaos;

namespace {
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

std::string bin() { return llmchaos::test::llmchaos_bin(); }

// `cwd`: the child's working directory ("" = this process's).
Child spawn(std::vector<std::string> args, const std::string& cwd = {}) {
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
std::string read_line(int fd, bool whole = false) {
  std::string s;
  char ch;
  while (s.size() < 65536 && read(fd, &ch, 1) == 1) {
    if (ch == '\n' && !whole) break;
    s += ch;
  }
  return s;
}

// Waits for the child to exit within `ms`; returns its exit status or -1.
int wait_exit(Child& c, int ms) {
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
  std::thread holder([&] { held = test::wire_exchange(url.port, test::http_request("POST", ok.target, ok.body), 10000); });
  c.method = "GET";
  c.target = "/__llmchaos/ledger";
  for (int i = 0; i < 500 && net::http_call(c).body.find("post_commit_timeout") == std::string::npos; ++i) usleep(5000);
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

TEST_CASE("the README's serve example works as written: a case file's routes, one line per route", "[cli][readme]") {
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
        "(cases/staging/rate-429-short-retry-after.toml); its other tables and the client keys of its routes are not "
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
      if (!entry.is_regular_file() || path.extension() != ".toml" || path.parent_path().filename() == "policies") continue;
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

TEST_CASE("cassettes end to end through the CLI: proxy --record, serve --cassettes with a cut after 3, a 501 miss, lint, and no credential in any file",
          "[cli][cassette]") {
  namespace fs = std::filesystem;
  const std::string key = "sk-llmchaos-cli-cassette-9b41e0";
  const fs::path dir = fs::temp_directory_path() / ("llmchaos-cli-cassettes-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  const auto port_of = [](Child& c) {
    const auto line = read_line(c.out);
    REQUIRE(line.rfind("listening on http://127.0.0.1:", 0) == 0);
    return net::parse_url(line.substr(std::string("listening on ").size())).port;
  };
  const auto up_script = write("up.toml", "[route.r]\ndialect = \"openai\"\ntext = \"one two three four five\"\n"
                                          "script = [{ fault = \"ok\", inter_event_ms = 10, times = 10 }]\n");
  auto upstream = spawn({bin(), "serve", "--script", up_script});
  const auto up_port = port_of(upstream);
  const auto px_script = write("px.toml", "[route.r]\ndialect = \"openai\"\nscript = [{ fault = \"ok\" }]\n");
  const auto cassettes = (dir / "cassettes").string();
  auto proxy = spawn({bin(), "proxy", "--upstream", "http://127.0.0.1:" + std::to_string(up_port) + "/r", "--script",
                      px_script, "--record", cassettes});
  const auto px_port = port_of(proxy);
  const auto call = test::chat_call(Dialect::openai, "/r", true);
  const std::vector<std::pair<std::string, std::string>> creds = {{"authorization", "Bearer " + key}, {"x-api-key", key}};
  const auto live = test::wire_exchange(px_port, test::http_request("POST", call.target, call.body, creds));
  REQUIRE(live.status == 200);
  CHECK(live.complete);
  const auto ledger = test::wire_exchange(px_port, test::http_request("GET", "/__llmchaos/ledger"));
  write("proxy-ledger.json", ledger.body);
  CHECK(ledger.body.find("\"finished\":true") != std::string::npos);

  const auto cut_script = write("cut.toml", "[route.r]\ndialect = \"openai\"\nscript = [{ fault = \"stream_cut\", cut_after_events = 3 }]\n");
  auto replay = spawn({bin(), "serve", "--cassettes", cassettes, "--script", cut_script});
  const auto rp_port = port_of(replay);
  const auto cut = test::wire_exchange(rp_port, test::http_request("POST", call.target, call.body, creds));
  CHECK(cut.status == 200);
  CHECK_FALSE(cut.complete);
  int content = 0;
  for (const auto& e : test::sse_events(cut.body)) content += test::event_text(Dialect::openai, e).empty() ? 0 : 1;
  CHECK(content == 3);
  const auto other = test::chat_call(Dialect::openai, "/r", true, R"("user":"x","tools":[])");
  const auto miss = test::wire_exchange(rp_port, test::http_request("POST", other.target, other.body, creds));
  CHECK(miss.status == 501);
  CHECK(miss.body.find(miss.header("x-llmchaos-cassette")) != std::string::npos);
  write("replay-ledger.json", test::wire_exchange(rp_port, test::http_request("GET", "/__llmchaos/ledger")).body);

  auto lint = spawn({bin(), "lint", cassettes});
  const auto lint_text = read_line(lint.err, true);
  CHECK(wait_exit(lint, 10000) == 0);
  CHECK(lint_text.find("1 file(s), 0 error(s)") != std::string::npos);

  for (auto* c : {&upstream, &proxy, &replay}) kill(c->pid, SIGTERM);
  int n = 0;
  for (auto* c : {&upstream, &proxy, &replay}) {
    CHECK(wait_exit(*c, 2000) == 0);
    write("child" + std::to_string(n) + ".out.log", read_line(c->out, true));
    write("child" + std::to_string(n++) + ".err.log", read_line(c->err, true));
  }
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    ++files;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    CAPTURE(e.path().string());
    CHECK(text.str().find(key) == std::string::npos);
  }
  CHECK(files == 12);  // 3 scripts, 2 ledgers, 1 cassette, 6 logs
  fs::remove_all(dir);
}

TEST_CASE("lint refuses broken cassettes with file:line:col and exit 2, hostile ones included, and passes a folder of good ones",
          "[cli][cassette]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("llmchaos-lint-cassettes-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "bad");
  fs::create_directories(dir / "good");
  const auto write = [&](const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; };
  write(dir / "bad" / "syntax.cassette.json", "{\n  \"format\": 1,\n  \"key\": }\n");
  write(dir / "bad" / "future.cassette.json", "{\"format\": 2}\n");
  write(dir / "bad" / "deep.cassette.json", std::string(100000, '['));
  write(dir / "bad" / "binary.cassette.json", std::string("\xff\xfe\x00{\x01", 5));
  write(dir / "bad" / "empty.cassette.json", "");
  write(dir / "bad" / "fields.cassette.json", "{\"format\": 1, \"key\": 7, \"request\": [], \"response\": {\"status\": 200}}");
  // A good one: what the recorder writes for a request, named by its key.
  mock::Cassette c;
  c.request_body = R"({"model":"m","stream":false})";
  c.path = "/v1/chat/completions";
  c.key = mock::cassette_key(c.dialect, c.method, c.path, c.request_body);
  c.body = "{}";
  write(dir / "good" / mock::cassette_file_name(c.key), mock::cassette_json(c));

  auto bad = spawn({bin(), "lint", (dir / "bad").string()});
  const auto text = read_line(bad.err, true);
  CHECK(wait_exit(bad, 20000) == 2);
  CAPTURE(text);
  CHECK(text.find("syntax.cassette.json:3:10: invalid JSON") != std::string::npos);
  CHECK(text.find("future.cassette.json:1:2: format: this llmchaos reads cassette format 1, the file has 2") != std::string::npos);
  CHECK(text.find("deep.cassette.json:1:33: invalid JSON: too deep") != std::string::npos);
  CHECK(text.find("binary.cassette.json:1:1: invalid JSON") != std::string::npos);
  CHECK(text.find("empty.cassette.json:1:1: invalid JSON") != std::string::npos);
  CHECK(text.find("fields.cassette.json:1:15: cassette.key: expected a string") != std::string::npos);
  CHECK(text.find("request: expected an object") != std::string::npos);
  CHECK(text.find("response: missing the member \"headers\"") != std::string::npos);
  CHECK(text.find("llmchaos lint: 6 file(s)") != std::string::npos);

  auto good = spawn({bin(), "lint", (dir / "good").string()});
  const auto ok = read_line(good.err, true);
  CHECK(wait_exit(good, 20000) == 0);
  CHECK(ok.find("1 file(s), 0 error(s)") != std::string::npos);
  fs::remove_all(dir);
}
