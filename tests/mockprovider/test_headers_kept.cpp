// The router's decision of which request headers a reader keeps (Router::headers_kept): every one when
// its requests are forwarded, else those it reads, and Host only for an admin target.
#include <catch2/catch.hpp>

#include "llmchaos/core/clock.hpp"
#include "llmchaos/mockprovider/router.hpp"

using namespace llmchaos;
using namespace llmchaos::mock;

TEST_CASE("headers kept: a mock's router keeps what it reads; a forwarding one keeps every header") {
  ManualClock clock;
  Engine engine(clock);
  const Router mock(engine, {});
  const auto kept = mock.headers_kept();
  CHECK_FALSE(kept.every);
  CHECK(kept.keeps("idempotency-key", "/r/v1/chat/completions"));
  CHECK(kept.keeps("authorization", "/r/v1/chat/completions"));
  CHECK_FALSE(kept.keeps("user-agent", "/r/v1/chat/completions"));
  CHECK_FALSE(kept.keeps("host", "/r/v1/chat/completions"));
  CHECK(kept.keeps("host", "/__llmchaos/sessions"));

  const Router forwarding(engine, {.admin_token = "", .report_targets = true, .keep_every_header = true});
  const auto all = forwarding.headers_kept();
  CHECK(all.every);
  CHECK(all.keeps("user-agent", "/r/v1/chat/completions"));
  CHECK(all.keeps("host", "/r/v1/chat/completions"));
}
