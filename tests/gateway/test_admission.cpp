// The gateway's admission (gateway/src/admission.hpp) without a socket: plain config, a limiter and a
// time passed in; each refusal path and what it answers, and what an admitted request carries.
#include <catch2/catch.hpp>

#include "admission.hpp"

using namespace llmchaos;
using namespace llmchaos::gateway;

namespace {

// One tier limit, the others unset.
client::RateLimits requests_per_minute(int n) {
  client::RateLimits l;
  l.requests_per_minute = n;
  return l;
}
client::RateLimits requests_per_day(int n) {
  client::RateLimits l;
  l.requests_per_day = n;
  return l;
}
client::RateLimits tokens_per_minute(double n) {
  client::RateLimits l;
  l.tokens_per_minute = n;
  return l;
}

constexpr double minute_ms = 60'000;
constexpr double day_ms = 24 * 60 * minute_ms;
const std::string hello =
    R"({"model":"m","messages":[{"role":"user","content":"hello world!"}],"max_tokens":10})";

// Keys "free-key-1" (tier free) and "gold-key-1" (tier gold, quality "fast"); chains default and fast.
GatewayConfig config_with(client::RateLimits free_limits, double time_scale = 1) {
  GatewayConfig c;
  c.time_scale = time_scale;
  c.tiers["free"] = Tier{"free", free_limits, ""};
  c.tiers["gold"] = Tier{"gold", {}, "fast"};
  c.keys = {{"free-key-1", "free"}, {"gold-key-1", "gold"}};
  c.qualities = {{"default", {"primary"}}, {"fast", {"backup"}}};
  return c;
}

struct World {
  GatewayConfig config;
  client::RateLimiter limiter;
  explicit World(GatewayConfig c) : config(std::move(c)) {
    for (const auto& [key, tier] : config.keys) limiter.configure(key, config.tiers.at(tier).limits, 0);
  }
  Admission at(double now_ms, const std::string& key = "free-key-1", std::string_view body = hello,
               std::string quality = "") {
    return admit(ChatArrival{key, body, std::move(quality)}, config, limiter, now_ms);
  }
};

// By value: the admission they read is a temporary.
Refusal refused(Admission a) {
  REQUIRE(std::holds_alternative<Refusal>(a));
  return std::get<Refusal>(std::move(a));
}

Admitted admitted(Admission a) {
  if (const auto* r = std::get_if<Refusal>(&a)) FAIL("refused: " << r->reason << ": " << r->error.message);
  return std::get<Admitted>(std::move(a));
}

}  // namespace

TEST_CASE("admit: a known key with a good body is admitted with its tier, chain and token estimate") {
  World w(config_with({}));
  const auto& a = admitted(w.at(0));
  CHECK(a.key == "free-key-1");
  CHECK(a.tier->name == "free");
  CHECK(a.quality == "default");
  CHECK(a.request.workflow.model == "m");
  CHECK(a.request.workflow.prompt == "hello world!");
  CHECK(a.estimated_tokens == client::estimate_tokens("hello world!") + 10);
}

TEST_CASE("admit: the chain is the request's header, else the tier's, else the gateway's default") {
  World w(config_with({}));
  CHECK(admitted(w.at(0, "gold-key-1")).quality == "fast");
  CHECK(admitted(w.at(0, "gold-key-1", hello, "default")).quality == "default");
  CHECK(admitted(w.at(0, "free-key-1", hello, "fast")).quality == "fast");
  w.config.default_quality = "fast";
  CHECK(admitted(w.at(0)).quality == "fast");
}

TEST_CASE("admit: a missing or unknown key is unauthorized (401), the unknown one masked") {
  World w(config_with({}));
  const auto& missing = refused(w.at(0, ""));
  CHECK(missing.reason == "unauthorized");
  CHECK(missing.error.status == 401);
  CHECK(missing.error.code == "invalid_api_key");
  CHECK(missing.error.message == "missing API key: send 'Authorization: Bearer KEY'");
  CHECK_FALSE(missing.retry_after_ms);
  const auto& unknown = refused(w.at(0, "secret-key-9"));
  CHECK(unknown.reason == "unauthorized");
  CHECK(unknown.error.status == 401);
  CHECK(unknown.error.message == "incorrect API key provided: secret***");
}

TEST_CASE("admit: a body that is no chat request is a bad request (400) naming the field") {
  World w(config_with({}));
  const auto& not_json = refused(w.at(0, "free-key-1", "{"));
  CHECK(not_json.reason == "bad_request");
  CHECK(not_json.error.status == 400);
  CHECK(not_json.error.type == "invalid_request_error");
  const auto& no_model = refused(w.at(0, "free-key-1", R"({"messages":[{"role":"user","content":"x"}]})"));
  CHECK(no_model.reason == "bad_request");
  CHECK(no_model.error.param == "model");
}

TEST_CASE("admit: an unknown quality is a bad request (400) on the header") {
  World w(config_with({}));
  const auto& r = refused(w.at(0, "free-key-1", hello, "slow"));
  CHECK(r.reason == "bad_request");
  CHECK(r.error.status == 400);
  CHECK(r.error.param == "x-llmchaos-quality");
  CHECK(r.error.code == "unknown_quality");
  CHECK(r.error.message == "unknown quality \"slow\"");
}

TEST_CASE("admit: over requests per minute, a 429 with the wait in real ms (time scale applied)") {
  World w(config_with(requests_per_minute(2), 0.1));
  admitted(w.at(0));
  admitted(w.at(1000));
  const auto& r = refused(w.at(2000));
  CHECK(r.reason == "rate_limited");
  CHECK(r.error.status == 429);
  CHECK(r.error.type == "requests");
  CHECK(r.error.code == "rate_limit_exceeded");
  REQUIRE(r.retry_after_ms);
  CHECK(*r.retry_after_ms == Approx((minute_ms - 2000) * 0.1));
  CHECK(r.error.message == "rate limit reached for requests_per_minute of tier free; retry in 5800 ms");
  admitted(w.at(minute_ms));  // the first one has left the window
  // Another key of another tier is not limited by this one's.
  admitted(w.at(2000, "gold-key-1"));
}

TEST_CASE("admit: over requests per day, a 429 naming the day's limit") {
  World w(config_with(requests_per_day(1)));
  admitted(w.at(0));
  const auto& r = refused(w.at(2 * minute_ms));
  CHECK(r.reason == "rate_limited");
  CHECK(r.error.status == 429);
  CHECK(r.error.message.starts_with("rate limit reached for requests_per_day of tier free"));
  REQUIRE(r.retry_after_ms);
  CHECK(*r.retry_after_ms == Approx(day_ms - 2 * minute_ms));
  admitted(w.at(day_ms));
}

TEST_CASE("admit: a request alone over tokens per minute is refused without a retry-after") {
  World w(config_with(tokens_per_minute(5)));
  const auto& r = refused(w.at(0));
  CHECK(r.reason == "rate_limited");
  CHECK(r.error.status == 429);
  CHECK(r.error.type == "tokens");
  CHECK_FALSE(r.retry_after_ms);
  CHECK(r.error.message ==
        "rate limit reached for tokens_per_minute of tier free; the request alone exceeds the tier's tokens "
        "per minute");
}

TEST_CASE("admit: a request refused before the limits is not counted against them") {
  World w(config_with(requests_per_minute(1)));
  refused(w.at(0, "free-key-1", "not json"));
  refused(w.at(0, "free-key-1", hello, "slow"));
  admitted(w.at(0));
  CHECK(refused(w.at(0)).reason == "rate_limited");
}
