// `llmchaos proxy` to a TLS upstream on loopback: a small HTTPS server of the test with a self-signed
// certificate the test makes (openssl CLI). Trusted through UpstreamOptions::ca_file (`--upstream-ca`),
// the stream goes through with its faults; untrusted, the attempt is a 502 naming the failed handshake.
#include <catch2/catch.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <thread>

#include "llmchaos/mockprovider/proxy.hpp"
#include "server_fixture.hpp"

using namespace llmchaos;
using namespace llmchaos::test;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;

namespace {
// A self-signed certificate for 127.0.0.1 and localhost, in a fresh folder; empty when openssl is missing.
std::filesystem::path make_certificate() {
  const auto dir = std::filesystem::temp_directory_path() /
                   fmt::format("llmchaos-tls-{}-{}", ::getpid(), std::chrono::steady_clock::now().time_since_epoch().count());
  std::filesystem::create_directories(dir);
  const auto cmd = fmt::format(
      "openssl req -x509 -newkey rsa:2048 -nodes -keyout '{0}/key.pem' -out '{0}/cert.pem' -days 1 -subj /CN=localhost "
      "-addext subjectAltName=IP:127.0.0.1,DNS:localhost >/dev/null 2>&1",
      dir.string());
  if (std::system(cmd.c_str()) != 0) return {};
  return dir;
}

// One HTTPS exchange: handshake, read the request, answer a short OpenAI stream.
class TlsUpstream {
 public:
  explicit TlsUpstream(const std::filesystem::path& dir)
      : ctx_(ssl::context::tls_server), acceptor_(ioc_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    ctx_.use_certificate_chain_file((dir / "cert.pem").string());
    ctx_.use_private_key_file((dir / "key.pem").string(), ssl::context::pem);
    thread_ = std::thread([this] {
      boost::system::error_code ec;
      auto socket = acceptor_.accept(ec);
      if (ec) return;
      ssl::stream<tcp::socket> tls(std::move(socket), ctx_);
      tls.handshake(ssl::stream_base::server, ec);
      if (ec) return;
      std::string in;
      boost::asio::read_until(tls, boost::asio::dynamic_buffer(in), "\r\n\r\n", ec);
      request = in;
      std::string body;
      for (const char* word : {"one ", "two ", "three ", "four"})
        body += fmt::format("data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{}\"}},\"finish_reason\":null}}]}}\n\n", word);
      body += "data: [DONE]\n\n";
      const auto answer = fmt::format(
          "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{}",
          body.size(), body);
      boost::asio::write(tls, boost::asio::buffer(answer), ec);
      tls.shutdown(ec);
    });
  }
  ~TlsUpstream() {
    boost::system::error_code ec;
    acceptor_.close(ec);
    if (thread_.joinable()) thread_.join();
  }
  std::string base_url() const { return "https://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()); }
  std::string request;

 private:
  boost::asio::io_context ioc_;
  ssl::context ctx_;
  tcp::acceptor acceptor_;
  std::thread thread_;
};

std::string script(Dialect d, const std::string& steps) {
  return "[route.r]\ndialect = \"" + std::string(to_string(d)) + "\"\nscript = [" + steps + "]\n";
}

mock::ServerOptions options(const std::string& upstream, const std::string& ca_file) {
  mock::UpstreamOptions up;
  up.upstream = upstream;
  up.ca_file = ca_file;
  up.connect_timeout_ms = 3000;
  mock::ServerOptions o;
  o.forwarder = mock::make_upstream_forwarder(up);
  return o;
}
}  // namespace

TEST_CASE("a TLS upstream trusted through the CA file is proxied, with the stream fault on its real frames", "[proxy][tls]") {
  const auto dir = make_certificate();
  if (dir.empty()) {
    WARN("openssl CLI not found: the TLS upstream test is skipped");
    return;
  }
  TlsUpstream upstream(dir);
  TestServer proxy(options(upstream.base_url(), (dir / "cert.pem").string()));
  proxy.engine().install("", mock::parse_proxy_script(script(Dialect::openai, R"({ fault = "stream_cut", cut_after_events = 2 })"),
                                                      "p.toml").script);
  const auto r = proxy.chat(Dialect::openai, "/r", true, {}, {{"authorization", "Bearer sk-tls-test"}});
  CHECK(r.status == 200);
  CHECK_FALSE(r.complete);
  int content = 0;
  for (const auto& e : sse_events(r.body)) content += event_text(Dialect::openai, e).empty() ? 0 : 1;
  CHECK(content == 2);
  CHECK(upstream.request.rfind("POST /v1/chat/completions HTTP/1.1\r\n", 0) == 0);
  CHECK(upstream.request.find("authorization: Bearer sk-tls-test\r\n") != std::string::npos);
  const auto l = proxy.ledger("", 1);
  CHECK(l.at(0).upstream_status == 200);
  CHECK(l.at(0).events_sent == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a TLS upstream whose certificate is not trusted is a 502 naming the failed handshake", "[proxy][tls]") {
  const auto dir = make_certificate();
  if (dir.empty()) {
    WARN("openssl CLI not found: the TLS upstream test is skipped");
    return;
  }
  TlsUpstream upstream(dir);
  TestServer proxy(options(upstream.base_url(), ""));
  proxy.engine().install("", mock::parse_proxy_script(script(Dialect::openai, R"({ fault = "ok" })"), "p.toml").script);
  const auto r = proxy.chat(Dialect::openai, "/r", true);
  CHECK(r.status == 502);
  CHECK(r.body.find("TLS handshake failed") != std::string::npos);
  CHECK(proxy.ledger("", 1).at(0).upstream_status == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a CA file that cannot be read is refused when the proxy is made, naming it", "[proxy][tls]") {
  mock::UpstreamOptions up;
  up.upstream = "https://127.0.0.1:1";
  up.ca_file = "/nonexistent/ca.pem";
  CHECK_THROWS_WITH(mock::make_upstream_forwarder(up), Catch::Contains("/nonexistent/ca.pem"));
}
