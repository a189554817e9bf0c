// `llmchaos proxy` to a TLS upstream on loopback: a small HTTPS server of the test with a self-signed
// certificate the test makes (openssl CLI). Trusted through UpstreamOptions::ca_file (`--upstream-ca`),
// the stream goes through with its faults; untrusted, the attempt is a 502 naming the failed handshake.
#include <fmt/format.h>

#include <boost/asio/ssl.hpp>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "llmchaos/proxy/proxy.hpp"
#include "one_shot_upstream.hpp"
#include "server_fixture.hpp"

using namespace llmchaos;
using namespace llmchaos::test;
namespace ssl = boost::asio::ssl;

namespace {
// A self-signed certificate for 127.0.0.1 and localhost, in a fresh folder; empty when openssl is missing.
std::filesystem::path make_certificate() {
  const auto dir = std::filesystem::temp_directory_path() /
                   fmt::format("llmchaos-tls-{}-{}", ::getpid(),
                               std::chrono::steady_clock::now().time_since_epoch().count());
  std::filesystem::create_directories(dir);
  const auto cmd = fmt::format(
      "openssl req -x509 -newkey rsa:2048 -nodes -keyout '{0}/key.pem' -out '{0}/cert.pem' -days 1 -subj "
      "/CN=localhost "
      "-addext subjectAltName=IP:127.0.0.1,DNS:localhost >/dev/null 2>&1",
      dir.string());
  if (std::system(cmd.c_str()) != 0) return {};
  return dir;
}

// One HTTPS exchange with a certificate of `dir`: a short OpenAI stream.
struct TlsUpstream {
  explicit TlsUpstream(const std::filesystem::path& dir) : ctx(make_context(dir)), upstream(answer(), &ctx) {}
  static ssl::context make_context(const std::filesystem::path& dir) {
    ssl::context c(ssl::context::tls_server);
    c.use_certificate_chain_file((dir / "cert.pem").string());
    c.use_private_key_file((dir / "key.pem").string(), ssl::context::pem);
    return c;
  }
  static std::string answer() {
    std::string body;
    for (const char* word : {"one ", "two ", "three ", "four"})
      body += fmt::format(
          "data: "
          "{{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{}\"}},\"finish_reason\":null}}]}}\n\n",
          word);
    body += "data: [DONE]\n\n";
    return fmt::format(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: "
        "close\r\n\r\n{}",
        body.size(), body);
  }
  std::string base_url() const { return upstream.base_url(); }
  ssl::context ctx;
  OneShotUpstream upstream;
};

std::string script(Dialect d, const std::string& steps) {
  return "[route.r]\ndialect = \"" + std::string(to_string(d)) + "\"\nscript = [" + steps + "]\n";
}

mock::ServerOptions options(const std::string& upstream, const std::string& ca_file) {
  proxy::UpstreamOptions up;
  up.upstream = upstream;
  up.ca_file = ca_file;
  up.connect_timeout_ms = 3000;
  mock::ServerOptions o;
  o.forwarder = proxy::make_upstream_forwarder(up);
  return o;
}
}  // namespace

TEST_CASE("a TLS upstream trusted through the CA file is proxied, with the stream fault on its real frames",
          "[proxy][tls]") {
  const auto dir = make_certificate();
  if (dir.empty()) {
    WARN("openssl CLI not found: the TLS upstream test is skipped");
    return;
  }
  TlsUpstream upstream(dir);
  TestServer proxy(options(upstream.base_url(), (dir / "cert.pem").string()));
  proxy.engine().install(
      "", proxy::parse_proxy_script(
              script(Dialect::openai, R"({ fault = "stream_cut", cut_after_events = 2 })"), "p.toml")
              .script);
  const auto r = proxy.chat(Dialect::openai, "/r", true, {}, {{"authorization", "Bearer sk-tls-test"}});
  CHECK(r.status == 200);
  CHECK_FALSE(r.complete);
  int content = 0;
  for (const auto& e : sse_events(r.body)) content += event_text(Dialect::openai, e).empty() ? 0 : 1;
  CHECK(content == 2);
  CHECK(upstream.upstream.request().rfind("POST /v1/chat/completions HTTP/1.1\r\n", 0) == 0);
  CHECK(upstream.upstream.request().find("authorization: Bearer sk-tls-test\r\n") != std::string::npos);
  const auto l = proxy.ledger("", 1);
  CHECK(l.at(0).upstream_status == 200);
  CHECK(l.at(0).events_sent == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a TLS upstream whose certificate is not trusted is a 502 naming the failed handshake",
          "[proxy][tls]") {
  const auto dir = make_certificate();
  if (dir.empty()) {
    WARN("openssl CLI not found: the TLS upstream test is skipped");
    return;
  }
  TlsUpstream upstream(dir);
  TestServer proxy(options(upstream.base_url(), ""));
  proxy.engine().install(
      "", proxy::parse_proxy_script(script(Dialect::openai, R"({ fault = "ok" })"), "p.toml").script);
  const auto r = proxy.chat(Dialect::openai, "/r", true);
  CHECK(r.status == 502);
  CHECK(r.body.find("TLS handshake failed") != std::string::npos);
  CHECK(proxy.ledger("", 1).at(0).upstream_status == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a CA file that cannot be read is refused when the proxy is made, naming it", "[proxy][tls]") {
  proxy::UpstreamOptions up;
  up.upstream = "https://127.0.0.1:1";
  up.ca_file = "/nonexistent/ca.pem";
  CHECK_THROWS_WITH(proxy::make_upstream_forwarder(up), Catch::Contains("/nonexistent/ca.pem"));
}
