// net::parse_url: what a CLI flag or a probe's argument may name, and the errors for what it may not.
#include <catch2/catch.hpp>

#include "llmchaos/net/http_call.hpp"

using llmchaos::net::parse_url;

TEST_CASE("parse_url: host, port and path of a plain http URL", "[net]") {
  const auto u = parse_url("http://127.0.0.1:8080/__llmchaos/ready");
  CHECK(u.host == "127.0.0.1");
  CHECK(u.port == 8080);
  CHECK(u.path == "/__llmchaos/ready");
  CHECK(parse_url("http://[::1]:9/x/").host == "::1");
  CHECK(parse_url("http://[::1]:9/x/").path == "/x");
  CHECK(parse_url("http://llmchaos.staging.svc").port == 80);
  CHECK(parse_url("http://h:65535").port == 65535);
}

TEST_CASE("parse_url: a port that is no port and a scheme it cannot speak are errors, not a wrapped number",
          "[net]") {
  for (const char* bad : {"http://h:70000/", "http://h:notaport/", "http://h:/", "http://h:80x/",
                          "http://[::1]:99999/", "https://h/", "ftp://h/", "http://[::1/"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_url(bad), std::runtime_error);
  }
}
