// Safe defaults and limits of the mock provider, over loopback: every limit `llmchaos serve` enforces
// has a flag, answers a dialect-true status when exceeded, and slowloris connections are timed out.
#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "server_fixture.hpp"
#include "test_env.hpp"

using namespace llmchaos;
using namespace llmchaos::test;
namespace asio = boost::asio;

namespace {

std::string run_capture(const std::string& command) {
  std::string out;
  if (FILE* p = popen(command.c_str(), "r")) {
    std::array<char, 4096> buf;
    while (auto n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
    pclose(p);
  }
  return out;
}

}  // namespace

TEST_CASE("serve has a flag for every limit and binds loopback by default", "[limits][cli]") {
  const auto help = run_capture("'" + llmchaos_bin() + "' serve --help 2>&1");
  for (const char* flag : {"--bind", "--admin-token", "--header-limit", "--max-header-count", "--body-limit",
                           "--max-connections", "--max-held-connections", "--idle-timeout-ms"})
    CHECK(help.find(flag) != std::string::npos);
  const mock::ServerOptions defaults;
  CHECK(defaults.bind == "127.0.0.1");
  CHECK(defaults.max_header_count > 0);
  CHECK(defaults.max_held_connections > 0);
  CHECK(defaults.max_held_connections < defaults.max_connections);
}

TEST_CASE("more header fields than max_header_count get 431 and no ledger entry", "[limits]") {
  mock::ServerOptions o;
  o.max_header_count = 8;
  TestServer s(o);
  s.install("", route_toml(Dialect::openai, R"({ fault = "ok" })"));
  std::vector<std::pair<std::string, std::string>> few{{"x-a", "1"}};
  CHECK(s.chat(Dialect::openai, "/r", false, {}, few).status == 200);
  std::vector<std::pair<std::string, std::string>> many;
  for (int i = 0; i < 20; ++i) many.emplace_back("x-h" + std::to_string(i), "v");
  const auto r = s.chat(Dialect::openai, "/r", false, {}, many);
  CHECK(r.status == 431);
  CHECK(s.ledger("", 1).size() == 1);
  CHECK(s.engine().metrics_text().find("event=\"too_many_headers\"} 1") != std::string::npos);
}

TEST_CASE("a head over header_limit gets 431", "[limits]") {
  mock::ServerOptions o;
  o.header_limit = 1024;
  TestServer s(o);
  s.install("", route_toml(Dialect::gemini, R"({ fault = "ok" })"));
  const auto r = s.chat(Dialect::gemini, "/r", false, {}, {{"x-pad", std::string(2000, 'p')}});
  CHECK(r.status == 431);
  CHECK(s.engine().ledger("").empty());
}

TEST_CASE("holds beyond max_held_connections get the dialect's overloaded answer, a freed slot holds again",
          "[limits]") {
  mock::ServerOptions o;
  o.max_held_connections = 1;
  TestServer s(o);
  s.install("",
            route_toml(Dialect::openai, R"({ fault = "post_commit_timeout", hold_ms = 600000, times = 3 })"));
  WireReply held;
  std::thread holder([&] { held = s.chat(Dialect::openai, "/r", false, {}, {}, 1500); });
  for (int i = 0; i < 500 && s.engine().ledger("").empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto over = s.chat(Dialect::openai, "/r", false);
  holder.join();
  CHECK(held.timed_out);  // the first one was held until the client gave up
  CHECK(over.status == 503);
  CHECK(over.json().at("error").at("code") == "server_is_overloaded");
  CHECK(s.engine().metrics_text().find("event=\"hold_limit\"} 1") != std::string::npos);
  // The holder's close frees the slot (bounded wait for the server to see it).
  for (int i = 0; i < 500; ++i) {
    const auto l = s.engine().ledger("");
    if (l.size() == 2 && l[0].finished) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto again = s.chat(Dialect::openai, "/r", false, {}, {}, 300);
  CHECK(again.timed_out);
  const auto ledger = s.ledger("", 3);
  REQUIRE(ledger.size() == 3);
  CHECK(ledger[1].status == 503);
}

TEST_CASE("a slowloris client dripping its head byte by byte is closed at the idle timeout", "[limits]") {
  mock::ServerOptions o;
  o.idle_timeout_ms = 150;
  TestServer s(o);
  s.install("", route_toml(Dialect::anthropic, R"({ fault = "ok" })"));
  asio::io_context ioc;
  asio::ip::tcp::socket sock(ioc);
  sock.connect({asio::ip::make_address("127.0.0.1"), s.port()});
  const std::string head =
      "POST /r/v1/messages HTTP/1.1\r\nhost: x\r\nx-slow: " + std::string(400, 'a') + "\r\n\r\n";
  std::size_t sent = 0;
  boost::system::error_code ec;
  // Each byte arrives well inside the idle timeout; the whole head never does (bounded: 400 x 10 ms).
  for (; sent < head.size() && !ec; ++sent) {
    asio::write(sock, asio::buffer(head.data() + sent, 1), ec);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::array<char, 256> buf;
  if (!ec) sock.read_some(asio::buffer(buf), ec);  // the close (or an answer) must come
  CHECK(ec);                                       // EOF / reset: the server closed the connection
  CHECK(sent < head.size());
  CHECK(s.engine().ledger("").empty());
}
