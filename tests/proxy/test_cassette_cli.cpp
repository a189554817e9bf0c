// Cassettes through the CLI: `proxy --record`, `serve --cassettes` and `lint` as child processes.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "child_process.hpp"
#include "llmchaos/net/http_call.hpp"
#include "llmchaos/proxy/cassette.hpp"
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

int listening_port(Child& c) {
  const auto line = read_line(c.out);
  REQUIRE(line.rfind("listening on http://127.0.0.1:", 0) == 0);
  return net::parse_url(line.substr(std::string("listening on ").size())).port;
}

// Every regular file under `dir`, each checked not to contain `secret`; returns how many there are.
int files_without(const std::filesystem::path& dir, const std::string& secret) {
  int files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    ++files;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    CAPTURE(e.path().string());
    CHECK(text.str().find(secret) == std::string::npos);
  }
  return files;
}
}  // namespace

TEST_CASE(
    "cassettes end to end through the CLI: proxy --record, serve --cassettes with a cut after 3, a 501 miss, "
    "lint, and no credential in any file",
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
  const auto up_script = write("up.toml",
                               "[route.r]\ndialect = \"openai\"\ntext = \"one two three four five\"\n"
                               "script = [{ fault = \"ok\", inter_event_ms = 10, times = 10 }]\n");
  auto upstream = spawn({bin(), "serve", "--script", up_script});
  const auto up_port = listening_port(upstream);
  const auto px_script = write("px.toml", "[route.r]\ndialect = \"openai\"\nscript = [{ fault = \"ok\" }]\n");
  const auto cassettes = (dir / "cassettes").string();
  auto proxy = spawn({bin(), "proxy", "--upstream", "http://127.0.0.1:" + std::to_string(up_port) + "/r",
                      "--script", px_script, "--record", cassettes});
  const auto px_port = listening_port(proxy);
  const auto call = test::chat_call(Dialect::openai, "/r", true);
  const std::vector<std::pair<std::string, std::string>> creds = {{"authorization", "Bearer " + key},
                                                                  {"x-api-key", key}};
  const auto live = test::wire_exchange(px_port, test::http_request("POST", call.target, call.body, creds));
  REQUIRE(live.status == 200);
  CHECK(live.complete);
  const auto ledger = test::wire_exchange(px_port, test::http_request("GET", "/__llmchaos/ledger"));
  write("proxy-ledger.json", ledger.body);
  CHECK(ledger.body.find("\"finished\":true") != std::string::npos);

  const auto cut_script =
      write("cut.toml",
            "[route.r]\ndialect = \"openai\"\nscript = [{ fault = \"stream_cut\", cut_after_events = 3 }]\n");
  auto replay = spawn({bin(), "serve", "--cassettes", cassettes, "--script", cut_script});
  const auto rp_port = listening_port(replay);
  const auto cut = test::wire_exchange(rp_port, test::http_request("POST", call.target, call.body, creds));
  CHECK(cut.status == 200);
  CHECK_FALSE(cut.complete);
  int content = 0;
  for (const auto& e : test::sse_events(cut.body))
    content += test::event_text(Dialect::openai, e).empty() ? 0 : 1;
  CHECK(content == 3);
  const auto other = test::chat_call(Dialect::openai, "/r", true, R"("user":"x","tools":[])");
  const auto miss = test::wire_exchange(rp_port, test::http_request("POST", other.target, other.body, creds));
  CHECK(miss.status == 501);
  CHECK(miss.body.find(miss.header("x-llmchaos-cassette")) != std::string::npos);
  write("replay-ledger.json",
        test::wire_exchange(rp_port, test::http_request("GET", "/__llmchaos/ledger")).body);

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
  CHECK(files_without(dir, key) == 12);  // 3 scripts, 2 ledgers, 1 cassette, 6 logs
  fs::remove_all(dir);
}

TEST_CASE(
    "lint refuses broken cassettes with file:line:col and exit 2, hostile ones included, and passes a folder "
    "of good ones",
    "[cli][cassette]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("llmchaos-lint-cassettes-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "bad");
  fs::create_directories(dir / "good");
  const auto write = [&](const fs::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
  };
  write(dir / "bad" / "syntax.cassette.json", "{\n  \"format\": 1,\n  \"key\": }\n");
  write(dir / "bad" / "future.cassette.json", "{\"format\": 2}\n");
  write(dir / "bad" / "deep.cassette.json", std::string(100000, '['));
  write(dir / "bad" / "binary.cassette.json", std::string("\xff\xfe\x00{\x01", 5));
  write(dir / "bad" / "empty.cassette.json", "");
  write(dir / "bad" / "fields.cassette.json",
        "{\"format\": 1, \"key\": 7, \"request\": [], \"response\": {\"status\": 200}}");
  // A good one: what the recorder writes for a request, named by its key.
  proxy::Cassette c;
  c.request_body = R"({"model":"m","stream":false})";
  c.path = "/v1/chat/completions";
  c.key = proxy::cassette_key(c.dialect, c.method, c.path, c.request_body);
  c.body = "{}";
  write(dir / "good" / proxy::cassette_file_name(c.key), proxy::cassette_json(c));

  auto bad = spawn({bin(), "lint", (dir / "bad").string()});
  const auto text = read_line(bad.err, true);
  CHECK(wait_exit(bad, 20000) == 2);
  CAPTURE(text);
  CHECK(text.find("syntax.cassette.json:3:10: invalid JSON") != std::string::npos);
  CHECK(
      text.find("future.cassette.json:1:2: format: this llmchaos reads cassette format 1, the file has 2") !=
      std::string::npos);
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
