// Base64 (core/base64.hpp): the RFC 4648 test vectors, a round trip of every length, and refusals.
#include <catch2/catch.hpp>
#include <random>

#include "llmchaos/core/base64.hpp"

using namespace llmchaos;

TEST_CASE("base64 gives RFC 4648's test vectors and reads them back", "[base64]") {
  const std::pair<std::string, std::string> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    CHECK(base64::encode(plain) == encoded);
    CHECK(base64::decode(encoded) == plain);
  }
}

TEST_CASE("base64 round-trips any bytes and refuses text outside the alphabet", "[base64]") {
  std::mt19937 rng(7);
  for (std::size_t n = 0; n < 300; ++n) {
    std::string bytes(n, '\0');
    for (auto& c : bytes) c = static_cast<char>(rng());
    CAPTURE(n);
    CHECK(base64::decode(base64::encode(bytes)) == bytes);
  }
  CHECK_FALSE(base64::decode("Zm9"));       // not a multiple of 4
  CHECK_FALSE(base64::decode("Zm9*"));      // outside the alphabet
  CHECK_FALSE(base64::decode("Z=9v"));      // padding inside
  CHECK_FALSE(base64::decode("Zg==Zg=="));  // padding before the end
}
