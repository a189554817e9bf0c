// The AWS event stream codec: the vectors AWS's SDKs test their own marshallers with
// (aws-sdk-js-v3 packages/eventstream-marshaller, aws-c-event-stream), a round trip of generated
// messages, and every cut and corruption of a stream answered without a crash.
#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "llmchaos/core/eventstream.hpp"

using namespace llmchaos::eventstream;

namespace {

std::string bytes(std::initializer_list<int> v) {
  std::string out;
  for (int b : v) out.push_back(static_cast<char>(b));
  return out;
}

const std::string foo_bar = "{'foo':'bar'}";

}  // namespace

TEST_CASE("crc32 is the IEEE checksum", "[eventstream]") {
  CHECK(crc32("123456789") == 0xCBF43926u);
  CHECK(crc32("") == 0u);
  CHECK(crc32("6789", crc32("12345")) == crc32("123456789"));  // incremental
}

TEST_CASE("AWS's vectors: encoded and decoded", "[eventstream]") {
  SECTION("empty_message") {
    const auto wire = bytes({0, 0, 0, 16, 0, 0, 0, 0, 5, 194, 72, 235, 125, 152, 200, 255});
    CHECK(encode(Message{}) == wire);
    auto d = decode(wire);
    REQUIRE(d.error == DecodeError::none);
    CHECK(d.consumed == 16);
    CHECK(d.message->headers.empty());
    CHECK(d.message->payload.empty());
  }
  SECTION("payload_no_headers") {
    const auto wire = bytes({0,   0,   0,  29, 0,  0,  0,  0,   253, 82,  140, 90,  123, 39, 102,
                             111, 111, 39, 58, 39, 98, 97, 114, 39,  125, 195, 101, 57,  54});
    CHECK(encode(Message{{}, foo_bar}) == wire);
    CHECK(decode(wire).message->payload == foo_bar);
  }
  SECTION("payload_one_str_header") {
    const auto wire = bytes({0,   0,   0,   61,  0,   0,   0,   32,  7,   253, 131, 150, 12,  99,  111, 110,
                             116, 101, 110, 116, 45,  116, 121, 112, 101, 7,   0,   16,  97,  112, 112, 108,
                             105, 99,  97,  116, 105, 111, 110, 47,  106, 115, 111, 110, 123, 39,  102, 111,
                             111, 39,  58,  39,  98,  97,  114, 39,  125, 141, 156, 8,   177});
    Message m{{{"content-type", HeaderType::string, std::string("application/json")}}, foo_bar};
    CHECK(encode(m) == wire);
    auto d = decode(wire);
    REQUIRE(d.message);
    CHECK(d.message->text("content-type") == "application/json");
    CHECK(d.message->payload == foo_bar);
  }
  SECTION("int32_header") {
    const auto wire = bytes({0,   0,   0,   45, 0,   0,   0,   16,  65,  196, 36,  184, 10,  101, 118,
                             101, 110, 116, 45, 116, 121, 112, 101, 4,   0,   0,   160, 12,  123, 39,
                             102, 111, 111, 39, 58,  39,  98,  97,  114, 39,  125, 54,  244, 128, 160});
    Message m{{{"event-type", HeaderType::int32, std::int64_t{40972}}}, foo_bar};
    CHECK(encode(m) == wire);
    auto d = decode(wire);
    REQUIRE(d.message);
    REQUIRE(d.message->headers.size() == 1);
    CHECK(std::get<std::int64_t>(d.message->headers[0].value) == 40972);
    CHECK(d.message->text("event-type").empty());  // not a string header
  }
}

TEST_CASE("every header type round-trips, negative integers sign-extended", "[eventstream]") {
  Message m;
  m.headers = {{"t", HeaderType::bool_true, true},
               {"f", HeaderType::bool_false, false},
               {"b", HeaderType::byte, std::int64_t{-5}},
               {"s", HeaderType::int16, std::int64_t{-30000}},
               {"i", HeaderType::int32, std::int64_t{-2000000000}},
               {"l", HeaderType::int64, std::int64_t{-9000000000000}},
               {"bytes", HeaderType::bytes, std::string("\x00\x01\xff", 3)},
               {"str", HeaderType::string, std::string("text")},
               {"ts", HeaderType::timestamp, std::int64_t{1733400000000}},
               {"id", HeaderType::uuid, std::string(16, '\x7f')}};
  m.payload = "payload";
  auto d = decode(encode(m));
  REQUIRE(d.message);
  REQUIRE(d.message->headers.size() == m.headers.size());
  for (std::size_t i = 0; i < m.headers.size(); ++i) {
    INFO(m.headers[i].name);
    CHECK(d.message->headers[i].type == m.headers[i].type);
    CHECK(d.message->headers[i].value == m.headers[i].value);
  }
}

TEST_CASE("event and exception frames carry the three string headers", "[eventstream]") {
  auto e = decode(encode(event("contentBlockDelta", R"({"delta":{"text":"hi"}})"))).message;
  REQUIRE(e);
  CHECK(e->text(":message-type") == "event");
  CHECK(e->text(":event-type") == "contentBlockDelta");
  CHECK(e->text(":content-type") == "application/json");
  auto x = decode(encode(exception("throttlingException", R"({"message":"slow down"})"))).message;
  REQUIRE(x);
  CHECK(x->text(":message-type") == "exception");
  CHECK(x->text(":exception-type") == "throttlingException");
}

TEST_CASE("a stream read in pieces gives the same messages; cuts and corruptions are errors, never crashes",
          "[eventstream]") {
  std::string stream;
  for (int i = 0; i < 20; ++i)
    stream += encode(event("chunk", std::string(static_cast<std::size_t>(i * 7), 'x')));
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    Decoder dec;
    int got = 0;
    for (std::size_t at = 0; at < stream.size();) {
      const std::size_t n = std::min<std::size_t>(1 + rng() % 40, stream.size() - at);
      dec.feed(std::string_view(stream).substr(at, n));
      at += n;
      while (auto m = dec.next()) CHECK(m->payload.size() == static_cast<std::size_t>(got++ * 7));
    }
    CHECK(got == 20);
    CHECK(dec.error() == DecodeError::none);
    CHECK(dec.buffered() == 0);
  }
  const auto one = encode(event("chunk", "payload"));
  for (std::size_t cut = 0; cut < one.size(); ++cut)
    CHECK(decode(one.substr(0, cut)).error == DecodeError::incomplete);
  for (std::size_t i = 0; i < one.size(); ++i) {
    auto bad = one;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    INFO(i);
    const auto e = decode(bad).error;
    CHECK((i < 12 ? e == DecodeError::prelude_crc
                  : e == DecodeError::message_crc));  // the prelude, its CRC, the rest
  }
  for (int trial = 0; trial < 2000; ++trial) {  // random bytes: an answer, whatever they are
    std::string junk(rng() % 64, '\0');
    for (auto& c : junk) c = static_cast<char>(rng());
    const auto d = decode(junk);
    CHECK((d.error != DecodeError::none || d.consumed <= junk.size()));
  }
}

TEST_CASE("the limits: a length field past them is refused, an encode past them throws", "[eventstream]") {
  std::string prelude = bytes({0x7f, 0, 0, 0, 0, 0, 0, 0});  // 2 GiB
  std::string wire = prelude;
  const auto c = crc32(prelude);
  for (int i = 3; i >= 0; --i) wire.push_back(static_cast<char>((c >> (8 * i)) & 0xFF));
  CHECK(decode(wire).error == DecodeError::bad_length);
  CHECK_THROWS_AS(encode(Message{{}, std::string(max_message_bytes, 'x')}), std::length_error);
  CHECK_THROWS_AS(encode(Message{{{std::string(256, 'n'), HeaderType::string, std::string()}}, {}}),
                  std::length_error);
}
