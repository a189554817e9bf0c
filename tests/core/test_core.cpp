#include <atomic>
#include <boost/beast/core/string.hpp>
#include <catch2/catch.hpp>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "llmchaos/core/byte_scan.hpp"
#include "llmchaos/core/clock.hpp"
#include "llmchaos/core/inline_text.hpp"
#include "llmchaos/core/ledger.hpp"
#include "llmchaos/core/rng.hpp"
#include "llmchaos/core/toml_reader.hpp"
#include "llmchaos/core/types.hpp"

using namespace llmchaos;

TEST_CASE("every enum name parses back to its value", "[core]") {
  for (const auto& [v, name] : enum_names<FaultKind>::table) CHECK(parse_enum<FaultKind>(name) == v);
  for (const auto& [v, name] : enum_names<Action>::table) CHECK(to_string(v) == name);
  CHECK_FALSE(parse_enum<Dialect>("cohere").has_value());
  CHECK(enum_choices<Dialect>() == "openai, anthropic, gemini, responses, azure, bedrock");
}

TEST_CASE("the same seed gives the same random sequence", "[core]") {
  Rng a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    auto x = a.next();
    CHECK(x == b.next());
    (void)c.next();
  }
  Rng d(7);
  for (int i = 0; i < 1000; ++i) {
    double u = d.uniform();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    auto k = d.between(3, 5);
    REQUIRE(k >= 3);
    REQUIRE(k <= 5);
  }
}

TEST_CASE("manual clock moves only when advanced or slept", "[core]") {
  ManualClock clock(10);
  CHECK(clock.now_ms() == 10);
  clock.sleep_ms(5);
  CHECK(clock.now_ms() == 15);
  clock.advance(-3);  // never backwards
  CHECK(clock.now_ms() == 15);
}

TEST_CASE("manual clock runs overlapping callers in turns by the time each waits for", "[core]") {
  ManualClock clock(100);
  std::mutex mutex;
  std::vector<std::pair<std::size_t, double>> steps;  // (caller, time) as they ran
  auto step = [&](std::size_t i) {
    std::lock_guard lock(mutex);
    steps.emplace_back(i, clock.now_ms());
  };
  // Caller 0 starts at +0 and sleeps 1000; caller 1 starts at +600 and sleeps 100; caller 2 at +600 too
  // (after 1 at the tie) and sleeps 1000.
  clock.run_overlapping({0, 600, 600}, [&](std::size_t i) {
    step(i);
    clock.sleep_ms(i == 1 ? 100 : 1000);
    step(i);
  });
  const std::vector<std::pair<std::size_t, double>> expected{{0, 100}, {1, 700},  {2, 700},
                                                             {1, 800}, {0, 1100}, {2, 1700}};
  CHECK(steps == expected);
  CHECK(clock.now_ms() == 1700);
  clock.sleep_ms(5);  // outside run_overlapping a sleep advances again
  CHECK(clock.now_ms() == 1705);
}

TEST_CASE("overlapping callers: an exception is rethrown once every caller ended", "[core]") {
  ManualClock clock;
  std::atomic<int> finished{0};
  CHECK_THROWS_WITH(clock.run_overlapping({0, 10},
                                          [&](std::size_t i) {
                                            clock.sleep_ms(50);
                                            ++finished;
                                            if (i == 0) throw std::runtime_error("first caller failed");
                                          }),
                    "first caller failed");
  CHECK(finished == 2);
  SteadyClock real;  // the real clock's default: threads sleeping to their start
  std::atomic<int> ran{0};
  real.run_overlapping({0, 1, 2}, [&](std::size_t) { ++ran; });
  CHECK(ran == 3);
}

TEST_CASE("toml reader reports file:line:col for a bad type and an unknown key", "[core]") {
  auto t = parse_toml("a = 1\nb = \"x\"\nc = true\n", "f.toml");
  TomlReader r(t, "f.toml", "workflow");
  CHECK(r.opt_int("a") == 1);
  try {
    r.opt_int("b");
    FAIL("expected an error");
  } catch (const SpecError& e) {
    CHECK(std::string(e.what()) == "f.toml:2:5: workflow.b: expected an integer");
  }
  TomlReader r2(t, "f.toml");
  r2.opt_int("a");
  r2.opt_string("b");
  try {
    r2.reject_unknown_keys();
    FAIL("expected an error");
  } catch (const SpecError& e) {
    CHECK(std::string(e.what()) == "f.toml:3:5: c: unknown key");
  }
}

TEST_CASE("toml reader: integer keys accept whole floats only in range, numbers refuse nan", "[core]") {
  // 1e300 / inf / nan cast to int64 would be undefined behaviour (UBSan); they are type errors instead.
  auto t =
      parse_toml("a = 3.0\nb = 1e300\nc = -inf\nd = nan\ne = 2.5\nf = 9.2233720368547758e18\n", "f.toml");
  TomlReader r(t, "f.toml");
  CHECK(r.opt_int("a") == 3);
  for (const char* key : {"b", "c", "d", "e", "f"}) {
    INFO(key);
    CHECK_THROWS_WITH(r.opt_int(key), Catch::Contains("expected an integer"));
  }
  CHECK_THROWS_WITH(r.opt_number("d"), Catch::Contains("nan"));
  CHECK(r.opt_number("a", 0, 10) == 3.0);
}

TEST_CASE("a TOML syntax error names its line and column", "[core]") {
  try {
    parse_toml("a = \n", "bad.toml");
    FAIL("expected an error");
  } catch (const SpecError& e) {
    CHECK(e.pos().file == "bad.toml");
    CHECK(e.pos().line == 1);
    CHECK(e.pos().column > 0);
  }
}

TEST_CASE("json bodies convert to the same table shape as TOML", "[core]") {
  auto t = json_to_toml(R"({"route":{"p":{"dialect":"openai","script":[{"fault":"ok","latency_ms":5}]}}})",
                        "body");
  CHECK(t["route"]["p"]["dialect"].value<std::string>() == "openai");
  CHECK(t["route"]["p"]["script"][0]["latency_ms"].value<std::int64_t>() == 5);
  CHECK_THROWS_AS(json_to_toml("[1]", "body"), SpecError);
}

TEST_CASE("ledger entries survive a JSON round trip", "[core]") {
  LedgerEntry e;
  e.seq = 3;
  e.ns = "case-1";
  e.route = "primary";
  e.dialect = Dialect::anthropic;
  e.fault = FaultKind::stream_cut;
  e.outcome = AttemptOutcome::cut;
  e.events_sent = 2;
  e.committed = true;
  auto back = ledger_from_json(ledger_to_json({e}));
  REQUIRE(back.size() == 1);
  CHECK(back[0].route == "primary");
  CHECK(back[0].dialect == Dialect::anthropic);
  CHECK(back[0].fault == FaultKind::stream_cut);
  CHECK(back[0].outcome == AttemptOutcome::cut);
  CHECK(back[0].events_sent == 2);
  CHECK(back[0].committed);
  CHECK_FALSE(back[0].retry_after_sent_ms);
  CHECK(ledger_to_json({e}).find("retry_after") ==
        std::string::npos);  // absent: older readers see nothing new
  e.retry_after_sent_ms = 100;
  e.retry_after_form = "retry_info";
  back = ledger_from_json(ledger_to_json({e}));
  REQUIRE(back[0].retry_after_sent_ms);
  CHECK(*back[0].retry_after_sent_ms == 100);
  CHECK(back[0].retry_after_form == "retry_info");
  // The protocol: absent without a wire (virtual time), else http/1.1 or h2, read back.
  CHECK(ledger_to_json({e}).find("protocol") == std::string::npos);
  CHECK(back[0].protocol == WireProtocol::none);
  e.protocol = WireProtocol::h2;
  CHECK(ledger_to_json({e}).find(R"("protocol":"h2")") != std::string::npos);
  CHECK(ledger_from_json(ledger_to_json({e}))[0].protocol == WireProtocol::h2);
  e.protocol = WireProtocol::http1;
  CHECK(ledger_from_json(ledger_to_json({e}))[0].protocol == WireProtocol::http1);
}

// byte_scan::run_end: 16 bytes at a time, then byte by byte; the first stop must be found wherever it
// falls (inside or at the edge of a block, in the byte tail, in texts shorter than a block), and only
// the requested stops count.
TEST_CASE("byte scans stop at the first requested byte wherever it falls", "[core]") {
  using namespace byte_scan;
  for (std::size_t size = 0; size <= 40; ++size)
    for (std::size_t at = 0; at <= size; ++at) {
      std::string text(size, 'a');
      if (at < size) text[at] = '"';
      INFO("size " << size << " quote at " << at);
      const char* b = text.data();
      const char* e = b + text.size();
      CHECK(run_end<quote>(b, e) - b == static_cast<std::ptrdiff_t>(at));
      CHECK(run_end<quote | backslash>(b, e) - b == static_cast<std::ptrdiff_t>(at));
      CHECK(run_end<backslash>(b, e) == e);  // a quote is no backslash
      if (at < size) {
        text[at] = '\\';
        CHECK(run_end<quote | backslash>(b, e) - b == static_cast<std::ptrdiff_t>(at));
        CHECK(run_end<quote>(b, e) == e);
        text[at] = '\x80';  // bytes above 0x7f are negative as signed chars: unprintable, not a quote
        CHECK(run_end<unprintable>(b, e) - b == static_cast<std::ptrdiff_t>(at));
        CHECK(run_end<quote | backslash>(b, e) == e);
        text[at] = '\x1f';
        CHECK(run_end<unprintable>(b, e) - b == static_cast<std::ptrdiff_t>(at));
        text[at] = '\x7f';
        CHECK(run_end<unprintable>(b, e) - b == static_cast<std::ptrdiff_t>(at));
      }
    }
  // The first of several, a block edge, and a start inside the text.
  const std::string edge = std::string(15, 'x') + "\"" + std::string(16, 'y') + "\\";
  CHECK(run_end<quote | backslash>(edge.data(), edge.data() + edge.size()) - edge.data() == 15);
  CHECK(run_end<quote | backslash>(edge.data() + 16, edge.data() + edge.size()) - edge.data() == 32);
  CHECK(run_end<quote | backslash | unprintable>(edge.data(), edge.data() + 10) == edge.data() + 10);
}

// byte_scan::token_end and the non_token and space stops (the mock's request-head fast path): every
// byte value at every position of texts shorter and longer than a block, against RFC 9110's tchar list.
TEST_CASE("field name scans end at the first byte that is not a token character, and only there", "[core]") {
  using namespace byte_scan;
  const std::string_view specials = "!#$%&'*+-.^_`|~";
  for (int c = 0; c < 256; ++c) {
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    CHECK(tchar(static_cast<char>(c)) ==
          (alnum || specials.find(static_cast<char>(c)) != std::string_view::npos));
  }
  for (std::size_t size : {0, 1, 15, 16, 17, 31, 33, 40})
    for (std::size_t at = 0; at < size; ++at)
      for (int c = 0; c < 256; ++c) {
        std::string text(size, 'k');
        text[0] = 'X';  // an upper-case letter and an ordinary tchar the fast test does not cover
        if (size > 20) text[20] = '_';
        text[at] = static_cast<char>(c);
        const char* b = text.data();
        const char* e = b + text.size();
        const auto stops_at = tchar(static_cast<char>(c)) ? e : b + at;
        INFO("size " << size << " byte " << c << " at " << at);
        CHECK(token_end(b, e) == stops_at);
        CHECK(run_end<non_token>(b, e) == stops_at);
        CHECK(run_end<space>(b, e) == (c == ' ' ? b + at : e));
      }
}

TEST_CASE("ascii_lower16 lower-cases exactly A to Z, sixteen bytes at a time", "[core]") {
  using namespace byte_scan;
  for (int base = 0; base < 256; base += 16) {
    char src[16], dst[16];
    for (int k = 0; k < 16; ++k) src[k] = static_cast<char>(base + k);
    ascii_lower16(src, dst);
    for (int k = 0; k < 16; ++k) CHECK(dst[k] == ascii_lower(src[k]));
  }
}

// byte_scan::iequals against Beast's iequals (the plain way it replaces in the server's head checks), on
// every pair of bytes and on names of each length. Each byte sits in a 2-byte array: Boost 1.81's
// iequals reads one byte past both ends once it has met a case difference (its slow loop loads the next
// pair before it tests the count), which ASan reports on a lone stack char.
TEST_CASE("byte_scan::iequals agrees with Beast's iequals", "[core]") {
  for (int a = 0; a < 256; ++a)
    for (int b = 0; b < 256; ++b) {
      const char x[2] = {static_cast<char>(a), 0}, y[2] = {static_cast<char>(b), 0};
      REQUIRE(byte_scan::iequals({x, 1}, {y, 1}) == boost::beast::iequals({x, 1}, {y, 1}));
    }
  for (std::string_view n : {"Content-Type", "content-type", "CONTENT-TYPE", "content-typf", "x", ""})
    for (std::string_view m : {"content-type", "Content-Type", "content-typ", "Content-TypE ", "X", ""})
      CHECK(byte_scan::iequals(n, m) == boost::beast::iequals(n, m));
}

// byte_scan::mask64: one bit per byte of a 64-byte block, for each stop set (the error-body scan reads
// quotes and colons this way); every position must be found, at every 16-byte lane edge.
TEST_CASE("byte scan mask64 marks exactly the stop bytes of a 64-byte block", "[core]") {
  using namespace byte_scan;
  std::string block(64, 'a');
  std::uint64_t quotes = 0, colons = 0;
  for (std::size_t i = 0; i < 64; i += 5) {  // lands on and next to the 16-byte edges
    block[i] = i % 2 == 0 ? '"' : ':';
    (i % 2 == 0 ? quotes : colons) |= std::uint64_t{1} << i;
  }
  block[63] = ':';
  colons |= std::uint64_t{1} << 63;
  CHECK(mask64<quote>(block.data()) == quotes);
  CHECK(mask64<colon>(block.data()) == colons);
  CHECK(mask64<quote | colon>(block.data()) == (quotes | colons));
  CHECK(mask64<backslash>(block.data()) == 0);
  block[7] = '\\';
  CHECK(mask64<backslash>(block.data()) == std::uint64_t{1} << 7);
}

TEST_CASE("contains finds a needle at any offset, in short texts, and only where it all matches", "[core]") {
  using byte_scan::contains;
  for (std::size_t before = 0; before <= 40; ++before)
    for (std::size_t after : {0, 1, 15, 16}) {
      const std::string text = std::string(before, 'l') + "limit: 0" + std::string(after, '0');
      INFO(text);
      CHECK(contains(text, "limit: 0"));
      CHECK_FALSE(contains(text, "limit: 1"));
      CHECK_FALSE(contains(text, "limiT: 0"));
    }
  // First and last bytes matching everywhere, the middle nowhere.
  CHECK_FALSE(contains(std::string(50, 'a'), "abba"));
  CHECK(contains(std::string(50, 'a') + "abba", "abba"));
  CHECK(contains("PerMinute", "PerMinute"));
  CHECK_FALSE(contains("PerMinut", "PerMinute"));
  CHECK(contains("x", "x"));
  CHECK(contains("", ""));
  CHECK(contains("abc", ""));
  CHECK_FALSE(contains("", "a"));
}

TEST_CASE("inline text holds what was written, reads as a string view and converts to a std::string",
          "[core]") {
  InlineText<16> text;
  CHECK(text.empty());
  std::memcpy(text.storage(), "owner=rate", 10);
  text.resize(10);
  CHECK(text.size() == 10);
  CHECK(text == std::string_view("owner=rate"));
  CHECK(text.find("rate") == 6);
  CHECK(text.substr(0, 5) == "owner");
  const std::string copy = std::string(std::string_view(text));
  std::string assigned;
  assigned = text;  // std::string takes anything that reads as a string view
  CHECK(copy == "owner=rate");
  CHECK(assigned == copy);
  InlineText<16> same;
  std::memcpy(same.storage(), "owner=rate", 10);
  same.resize(10);
  CHECK(same == text);
  text.resize(100);  // never past the capacity
  CHECK(text.size() == 16);
  text.clear();
  CHECK(text.empty());

  InlineText<12> reason("429 ");
  reason += "rate_limit";
  CHECK(reason == std::string_view("429 rate_..."));  // cut: 9 bytes kept, then the mark
  CHECK(reason.size() == 12);
  reason += "more";  // nothing more once cut
  CHECK(reason == std::string_view("429 rate_..."));
  InlineText<12> copied = reason;  // a copy is the same text, cut mark and all
  copied += "x";
  CHECK(copied == reason);
  reason = "short";
  CHECK(reason == std::string_view("short"));
  reason += " again";
  CHECK(reason == std::string_view("short again"));
}
