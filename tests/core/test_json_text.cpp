// compact_json: plain decimals, never Boost.JSON's exponent form.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "llmchaos/core/json_text.hpp"

using namespace llmchaos;

TEST_CASE("compact_json writes doubles as plain decimals: ms to 3 decimals, or the shortest exact form",
          "[json]") {
  const boost::json::value v =
      boost::json::object{{"at_ms", 5602.304429000001}, {"cost", 0.0004}, {"n", 3}, {"s", "x"}};
  CHECK(compact_json(v) == R"({"at_ms":5602.304,"cost":0,"n":3,"s":"x"})");
  CHECK(compact_json(v, DoubleForm::shortest) ==
        R"({"at_ms":5602.304429000001,"cost":0.0004,"n":3,"s":"x"})");
  CHECK(compact_json(boost::json::array{1.5, std::nan("")}) == "[1.5,null]");
}
