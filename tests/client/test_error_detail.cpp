// ErrorDetail: the fields of an error body that the classifier reads. Hand-written edge cases first
// (escapes, colons inside strings, spaced keys, window edges), then thousands of generated JSON texts
// against a full JSON reading (error_detail_oracle.hpp), through both scan paths.
#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "client/error_detail_oracle.hpp"
#include "llmchaos/client/error_detail.hpp"

using namespace llmchaos;
using namespace llmchaos::client;

namespace {

using Path = ErrorDetail::ScanPath;
constexpr Path both_paths[] = {Path::fastest, Path::portable};

struct Expected {
  DetailKey key;
  std::string_view value;
  bool scalar = false;
};

void check_fields(std::string_view body, std::vector<Expected> want) {
  for (const auto path : both_paths) {
    INFO("body: " << body << "\npath: " << (path == Path::fastest ? "fastest" : "portable"));
    const ErrorDetail d(body, path);
    REQUIRE(d.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      CHECK(d.field(i).key == want[i].key);
      CHECK(d.field(i).value == want[i].value);
      CHECK(d.field(i).scalar == want[i].scalar);
    }
  }
}

}  // namespace

TEST_CASE("error detail reads the rules' keys at any depth, in document order", "[error_detail]") {
  check_fields(R"({"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED",)"
               R"("details":[{"@type":"x.RetryInfo","retryDelay":"26s"}]},"type":"error"})",
               {{DetailKey::code, "429", true},
                {DetailKey::message, "slow down"},
                {DetailKey::status, "RESOURCE_EXHAUSTED"},
                {DetailKey::retryDelay, "26s"},
                {DetailKey::type, "error"}});
}

TEST_CASE("error detail skips keys it does not read, even one letter off", "[error_detail]") {
  check_fields(R"({"xcode":"a","codes":"b","Code":"c","retry":"d","@type":"e","quotaIds":"f","code":"g"})",
               {{DetailKey::code, "g"}});
}

TEST_CASE("error detail keeps escapes as written and ends a string only at an unescaped quote",
          "[error_detail]") {
  check_fields(R"({"message":"say \"hi\" \\","code":"c\\"})",
               {{DetailKey::message, R"(say \"hi\" \\)"}, {DetailKey::code, R"(c\\)"}});
}

TEST_CASE("error detail takes no key from inside a string, whatever quotes and colons it holds",
          "[error_detail]") {
  check_fields(R"({"message":"the field \"code\": 5 and \"type\":\"x\" are quoted","status":"ok"})",
               {{DetailKey::message, R"(the field \"code\": 5 and \"type\":\"x\" are quoted)"},
                {DetailKey::status, "ok"}});
  check_fields(R"({"other":":code","url":"https://example.com/code:1"})", {});
}

TEST_CASE("error detail does not read a longer key that ends like one of its own", "[error_detail]") {
  // The key is `x"code`, written with an escaped quote.
  check_fields(R"({"x\"code":"no","code":"yes"})", {{DetailKey::code, "yes"}});
}

TEST_CASE("error detail reads spaced and pretty-printed bodies", "[error_detail]") {
  check_fields("{\n  \"error\" : {\n    \"code\" :\t429 ,\n    \"message\"  :  \"x\"\n  }\n}\n",
               {{DetailKey::code, "429", true}, {DetailKey::message, "x"}});
  check_fields("  [ {\"type\" : null} ]", {{DetailKey::type, "null", true}});
}

TEST_CASE("error detail gives no field for a body that is not a JSON object or array", "[error_detail]") {
  check_fields("upstream connect error: \"code\":503", {});
  check_fields("", {});
  check_fields("   ", {});
  check_fields(R"("code":1)", {});
}

TEST_CASE("error detail reads a key wherever it falls against the 64-byte windows", "[error_detail]") {
  for (std::size_t pad = 0; pad < 140; ++pad) {
    const std::string body = R"({"p":")" + std::string(pad, 'x') + R"(","retryDelay":"2s","code":7})";
    check_fields(body, {{DetailKey::retryDelay, "2s"}, {DetailKey::code, "7", true}});
  }
}

TEST_CASE("error detail stops at its field cap and at an unterminated string", "[error_detail]") {
  std::string many = "[";
  for (int i = 0; i < 40; ++i) many += R"({"code":)" + std::to_string(i) + "},";
  many += "{}]";
  const ErrorDetail d(many);
  CHECK(d.size() == ErrorDetail::max_fields);
  CHECK(d.field(ErrorDetail::max_fields - 1).value == "31");
  check_fields(R"({"code":"a","message":"never closed)", {{DetailKey::code, "a"}});
  check_fields(R"({"message":"ends in a backslash\)", {});
}

namespace {

// Random JSON texts shaped like error bodies: nested objects and arrays, the rules' keys among decoys
// (some with escaped quotes), strings full of quotes, backslashes and colons, every kind of scalar,
// and blanks anywhere JSON allows them (before colons too).
class BodyGenerator {
 public:
  explicit BodyGenerator(std::uint32_t seed) : rng_(seed) {}

  std::string body() {
    out_.clear();
    blanks();
    if (pick(2) == 0)
      object(0);
    else
      array(0);
    blanks();
    return out_;
  }

 private:
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }

  void blanks() {
    static constexpr std::string_view kinds[] = {"", "", "", "", " ", "\n  ", "\t", " \r\n"};
    out_ += kinds[pick(std::size(kinds))];
  }
  void string_value() {
    static constexpr std::string_view pieces[] = {
        "slow down", "\\\"code\\\":", "\\\\",     "\\\"", ":",   "https://x.io/a:b", "\\u00e9", "\\n",
        "limit: 0",  "PerMinute",     "\\\\\\\"", " ",    "\\/", "{\\\"type\\\":1}", "x"};
    out_ += '"';
    for (std::size_t n = pick(6); n > 0; --n) out_ += pieces[pick(std::size(pieces))];
    out_ += '"';
  }
  void scalar() {
    static constexpr std::string_view scalars[] = {"429",    "-1",   "0.5",   "1e3",
                                                   "2.5E-2", "true", "false", "null"};
    out_ += scalars[pick(std::size(scalars))];
  }
  void value(int depth) {
    const std::size_t kind = depth >= 4 ? pick(2) : pick(4);
    if (kind == 0) return string_value();
    if (kind == 1) return scalar();
    if (kind == 2) return object(depth + 1);
    array(depth + 1);
  }
  void object(int depth) {
    static constexpr std::string_view keys[] = {
        "code",    "type",       "status", "reason", "message",     "quotaId", "retryDelay", "error",
        "details", "@type",      "xcode",  "codes",  "retryDelays", "Message", "x\\\"code",  "\\\"type",
        "a:b",     "violations", "param",  ""};
    out_ += '{';
    std::vector<std::string_view> used;
    for (std::size_t n = pick(6); n > 0; --n) {
      const auto key = keys[pick(std::size(keys))];
      if (std::find(used.begin(), used.end(), key) != used.end()) continue;  // unique keys per object
      if (!used.empty()) out_ += ',';
      used.push_back(key);
      blanks();
      out_ += '"';
      out_ += key;
      out_ += '"';
      blanks();
      out_ += ':';
      blanks();
      value(depth);
      blanks();
    }
    out_ += '}';
  }
  void array(int depth) {
    out_ += '[';
    for (std::size_t n = pick(4); n > 0; --n) {
      blanks();
      value(depth);
      blanks();
      if (n > 1) out_ += ',';
    }
    out_ += ']';
  }

  std::mt19937 rng_;
  std::string out_;
};

}  // namespace

TEST_CASE("error detail gives the same fields as a full JSON reading, through both scan paths",
          "[error_detail]") {
  BodyGenerator generate(20261203);
  std::size_t with_fields = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string body = generate.body();
    const auto oracle = test::oracle_fields(body);
    INFO("body: " << body);
    REQUIRE(oracle);  // the generator writes valid JSON only
    with_fields += !oracle->empty();
    for (const auto path : both_paths) {
      const ErrorDetail d(body, path);
      const auto difference = test::first_difference(d, *oracle);
      INFO("path: " << (path == Path::fastest ? "fastest" : "portable"));
      REQUIRE(difference == std::string());
    }
  }
  CHECK(with_fields > 5000);  // the comparison was about fields, not only about empty bodies
}
