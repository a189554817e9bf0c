// Each fault kind's pure plan, on every dialect, plain and streamed.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <set>

#include "llmchaos/mockprovider/fault.hpp"
#include "wire_client.hpp"

using namespace llmchaos;
using namespace llmchaos::mock;

namespace {
struct Fixture {
  RouteScript route;
  Step step;
  ChatRequest request;
  Rng rng{1};
  double time_scale = 1;
  double unix_now_ms = 0;
  bool forwarded = false;  // FaultInput::body_forwarded: the answer comes from a proxy's upstream
  Answer answer;           // the healthy answer of the last plan
  Plan plan(Dialect d) {
    route.dialect = d;
    route.default_text = "one two three four";
    answer = healthy_answer(route, step, request, 7);
    return fault_spec(step.fault)
        .plan({step, request, dialect_spec(d), answer, "req_7", time_scale, rng, unix_now_ms, forwarded});
  }
};

int content_frames(const Plan& p) {
  int n = 0;
  for (const auto& f : p.frames) n += f.content ? 1 : 0;
  return n;
}

std::string header(const Plan& p, std::string_view name) {
  for (const auto& [k, v] : p.headers)
    if (k == name) return v;
  return {};
}

const Dialect all_dialects[] = {Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses,
                                Dialect::azure};
}  // namespace

TEST_CASE("the fault table lists every fault kind once, in order, with its function", "[faults]") {
  const auto table = all_faults();
  REQUIRE(table.size() == std::size(enum_names<FaultKind>::table));
  for (std::size_t i = 0; i < table.size(); ++i) {
    CHECK(table[i]->kind == enum_names<FaultKind>::table[i].first);
    CHECK(table[i]->plan != nullptr);
    CHECK_FALSE(table[i]->summary.empty());
    for (auto key : table[i]->params)
      CHECK(std::find(std::begin(step_keys), std::end(step_keys), key) != std::end(step_keys));
  }
}

TEST_CASE("fault traits name the faults that fail in band, break a stream or hint a retry by default",
          "[faults]") {
  using K = FaultKind;
  const std::set<K> breaks = {K::stream_cut, K::stream_error, K::stream_stall, K::malformed_event, K::policy};
  const std::set<K> silent = {K::post_commit_timeout, K::no_response, K::connect_reset};
  for (const auto& [kind, name] : enum_names<FaultKind>::table) {
    INFO(name);
    const auto& t = fault_traits(kind);
    CHECK(&t == &fault_spec(kind).traits);
    CHECK(t.breaks_stream == breaks.contains(kind));
    const auto in_band = breaks.contains(kind) || silent.contains(kind) ? InBand::always
                         : kind == K::schema_missing                    ? InBand::under_output_contract
                                                                        : InBand::never;
    CHECK(t.in_band == in_band);
    CHECK(t.explore_latency == !(silent.contains(kind) || kind == K::slow));
    CHECK(t.explore_inter_event == (kind != K::malformed_event));
    CHECK(t.default_retry_after_ms == (kind == K::rate_429 ? std::optional<double>(1000) : std::nullopt));
  }
  CHECK(fault_error_kind(K::rate_429) == ErrorKind::rate_limit);
  CHECK(fault_error_kind(K::quota_429) == ErrorKind::quota);
  CHECK(fault_error_kind(K::payment_402) == ErrorKind::payment);
  CHECK(fault_error_kind(K::overloaded) == ErrorKind::overloaded);
  CHECK(fault_error_kind(K::malformed_event) == ErrorKind::malformed_output);
  CHECK(fault_error_kind(K::connect_reset) == ErrorKind::server);  // the default: no body of its own
}

TEST_CASE("error faults answer each dialect's status with a JSON body and the request id", "[faults]") {
  struct Row {
    FaultKind fault;
    int openai, anthropic, gemini;
  };
  const Row rows[] = {{FaultKind::rate_429, 429, 429, 429},    {FaultKind::quota_429, 429, 429, 429},
                      {FaultKind::payment_402, 402, 402, 402}, {FaultKind::overloaded, 503, 529, 503},
                      {FaultKind::server_500, 500, 500, 500},  {FaultKind::server_500_context, 500, 500, 500},
                      {FaultKind::bad_request, 400, 400, 400}, {FaultKind::auth, 401, 401, 401},
                      {FaultKind::policy, 400, 400, 400}};
  for (const auto& row : rows) {
    for (auto d : all_dialects) {
      Fixture f;
      f.step.fault = row.fault;
      const auto p = f.plan(d);
      INFO(to_string(row.fault) << " on " << to_string(d));
      CHECK(p.status == (d == Dialect::openai || d == Dialect::responses || d == Dialect::azure ? row.openai
                         : d == Dialect::anthropic ? row.anthropic
                                                   : row.gemini));
      CHECK(p.action == WireAction::respond);
      CHECK_FALSE(p.streamed);
      CHECK(header(p, "content-type") == "application/json");
      CHECK(header(p, dialect_spec(d).request_id_header) == "req_7");
      CHECK(boost::json::parse(p.body).is_object());
      CHECK(p.fault == row.fault);
    }
  }
}

TEST_CASE("rate_429 always sends retry-after and retry-after-ms, scaled with time", "[faults]") {
  Fixture f;
  f.step.fault = FaultKind::rate_429;
  auto p = f.plan(Dialect::openai);
  CHECK(header(p, "retry-after") == "1");
  CHECK(header(p, "retry-after-ms") == "1000");
  f.step.retry_after_ms = 2500;
  f.time_scale = 0.5;
  p = f.plan(Dialect::anthropic);
  CHECK(header(p, "retry-after") == "2");  // 1250 ms rounded up to whole seconds
  CHECK(header(p, "retry-after-ms") == "1250");
  p = f.plan(Dialect::gemini);
  CHECK(boost::json::parse(p.body).at("error").at("details").at(0).at("retryDelay") == "1.25s");
  f.step.fault = FaultKind::quota_429;
  f.step.retry_after_ms.reset();
  CHECK(header(f.plan(Dialect::openai), "retry-after").empty());
}

TEST_CASE("retry_after_form picks the carriers of the retry hint", "[faults][retry_after]") {
  Fixture f;
  f.step.fault = FaultKind::rate_429;
  f.step.retry_after_ms = 61000;
  f.unix_now_ms = 784111777250;  // Sun, 06 Nov 1994 08:49:37.250 GMT
  auto has_retry_info = [](const Plan& p) { return p.body.find("RetryInfo") != std::string::npos; };
  auto headers_of = [](const Plan& p) {
    std::vector<std::string> names;
    for (const auto& [k, v] : p.headers)
      if (k != "content-type" && k.find("request-id") == std::string::npos) names.push_back(k);
    return names;
  };
  using V = std::vector<std::string>;

  f.step.retry_after_form = RetryAfterForm::both;
  auto p = f.plan(Dialect::gemini);
  CHECK(headers_of(p) == V{"retry-after", "retry-after-ms"});
  CHECK(header(p, "retry-after") == "61");
  CHECK(has_retry_info(p));

  f.step.retry_after_form = RetryAfterForm::seconds;
  p = f.plan(Dialect::openai);
  CHECK(headers_of(p) == V{"retry-after"});
  CHECK(header(p, "retry-after") == "61");
  CHECK_FALSE(has_retry_info(f.plan(Dialect::gemini)));
  f.time_scale = 0.1;  // 6.1 s: fractional under a time scale, never rounded to a wrong whole second
  CHECK(header(f.plan(Dialect::openai), "retry-after") == "6.1");
  f.time_scale = 1;

  f.step.retry_after_form = RetryAfterForm::ms;
  p = f.plan(Dialect::anthropic);
  CHECK(headers_of(p) == V{"retry-after-ms"});
  CHECK(header(p, "retry-after-ms") == "61000");

  f.step.retry_after_form = RetryAfterForm::http_date;
  p = f.plan(Dialect::openai);
  CHECK(headers_of(p) == V{"date", "retry-after"});
  CHECK(header(p, "date") == "Sun, 06 Nov 1994 08:49:37 GMT");
  CHECK(header(p, "retry-after") == "Sun, 06 Nov 1994 08:50:38 GMT");

  f.step.retry_after_form = RetryAfterForm::anthropic_ratelimit;
  p = f.plan(Dialect::anthropic);
  CHECK(headers_of(p) == V{"anthropic-ratelimit-requests-reset", "anthropic-ratelimit-tokens-reset"});
  CHECK(header(p, "anthropic-ratelimit-requests-reset") == "1994-11-06T08:50:38Z");

  f.step.retry_after_form = RetryAfterForm::retry_info;
  p = f.plan(Dialect::gemini);
  CHECK(headers_of(p).empty());
  CHECK(p.body.find("\"retryDelay\":\"61s\"") != std::string::npos);

  f.step.retry_after_form = RetryAfterForm::none;
  for (auto d : all_dialects) {
    p = f.plan(d);
    CHECK(headers_of(p).empty());
    CHECK_FALSE(has_retry_info(p));
  }
}

TEST_CASE("the status key overrides a fault's status", "[faults]") {
  Fixture f;
  f.step.fault = FaultKind::auth;
  f.step.status = 403;
  CHECK(f.plan(Dialect::openai).status == 403);
}

TEST_CASE("stream faults keep the head and the first N content events, then end their way", "[faults]") {
  for (auto d : all_dialects) {
    INFO(to_string(d));
    Fixture f;
    f.request.stream = true;
    f.step.cut_after_events = 2;
    f.step.fault = FaultKind::stream_cut;
    auto p = f.plan(d);
    CHECK(p.streamed);
    CHECK(content_frames(p) == 2);
    CHECK(p.end == StreamEnd::abort);
    f.step.fault = FaultKind::stream_error;
    p = f.plan(d);
    CHECK(content_frames(p) == 2);
    CHECK(p.end == StreamEnd::complete);
    CHECK(p.frames.back().bytes == dialect_spec(d).stream_error_frame(f.answer, p.frames.size() - 1).bytes);
    f.step.fault = FaultKind::stream_stall;
    f.step.stall_ms = 40;
    f.time_scale = 0.5;
    p = f.plan(d);
    CHECK(content_frames(p) == 2);
    CHECK(p.end == StreamEnd::stall_then_abort);
    CHECK(p.stall_ms == Approx(20));
  }
}

TEST_CASE("cut_after_events defaults to 1 and never exceeds the answer", "[faults]") {
  Fixture f;
  f.request.stream = true;
  f.step.fault = FaultKind::stream_cut;
  CHECK(content_frames(f.plan(Dialect::openai)) == 1);
  f.step.cut_after_events = 99;
  CHECK(content_frames(f.plan(Dialect::openai)) == 4);
}

TEST_CASE("malformed_event replaces content event N+1 and leaves the stream otherwise complete", "[faults]") {
  for (auto d : all_dialects) {
    Fixture f;
    f.request.stream = true;
    f.step.fault = FaultKind::malformed_event;
    f.step.cut_after_events = 1;
    const auto p = f.plan(d);
    const auto healthy = [&] {
      Fixture g;
      g.request.stream = true;
      return g.plan(d);
    }();
    CHECK(p.frames.size() == healthy.frames.size());
    CHECK(content_frames(p) == 3);
    CHECK(p.end == StreamEnd::complete);
    CHECK(p.frames.back().bytes == healthy.frames.back().bytes);
    bool found = false;
    for (const auto& fr : p.frames) found = found || fr.bytes == dialect_spec(d).malformed_frame().bytes;
    CHECK(found);
  }
}

TEST_CASE("no_terminator drops only the end sentinel", "[faults]") {
  for (auto d : all_dialects) {
    Fixture f;
    f.request.stream = true;
    f.step.fault = FaultKind::no_terminator;
    const auto p = f.plan(d);
    const auto parts = dialect_spec(d).render_stream(healthy_answer(f.route, f.step, f.request, 7));
    CHECK(p.frames.size() == parts.head.size() + parts.content.size() + parts.tail.size());
    CHECK(p.end == StreamEnd::complete);
    CHECK(p.frames.back().bytes != parts.terminator.back().bytes);
  }
}

TEST_CASE("holds: post_commit_timeout commits on arrival, no_response does not, both send nothing",
          "[faults]") {
  Fixture f;
  f.step.fault = FaultKind::post_commit_timeout;
  auto p = f.plan(Dialect::anthropic);
  CHECK(p.action == WireAction::hold);
  CHECK(p.committed_on_arrival);
  CHECK(p.hold_ms == 30000);  // the default hold
  f.step.fault = FaultKind::no_response;
  f.step.hold_ms = 10;
  p = f.plan(Dialect::anthropic);
  CHECK(p.action == WireAction::hold);
  CHECK_FALSE(p.committed_on_arrival);
  CHECK(p.hold_ms == 10);
  f.step.fault = FaultKind::connect_reset;
  CHECK(f.plan(Dialect::gemini).action == WireAction::reset_after_head);
}

TEST_CASE("slow_first_token delays the first event of a stream, the whole answer of a plain request",
          "[faults]") {
  Fixture f;
  f.step.fault = FaultKind::slow_first_token;
  f.step.first_token_ms = 30;
  f.step.latency_ms = 5;
  auto plain = f.plan(Dialect::openai);
  CHECK(plain.latency_ms == 35);
  f.request.stream = true;
  auto streamed = f.plan(Dialect::openai);
  CHECK(streamed.latency_ms == 5);
  CHECK(streamed.first_event_ms == 30);
}

TEST_CASE("slow draws a seeded lognormal latency around p50", "[faults]") {
  std::vector<double> draws;
  Fixture f;
  f.step.fault = FaultKind::slow;
  f.step.p50_ms = 100;
  f.step.p95_ms = 400;
  for (int i = 0; i < 2000; ++i) draws.push_back(f.plan(Dialect::openai).latency_ms);
  std::sort(draws.begin(), draws.end());
  CHECK(draws[1000] == Approx(100).epsilon(0.15));
  CHECK(draws[1900] == Approx(400).epsilon(0.2));
  Fixture same;
  same.step = f.step;
  Fixture again;
  again.step = f.step;
  CHECK(same.plan(Dialect::openai).latency_ms ==
        again.plan(Dialect::openai).latency_ms);  // same seed, same draw
}

TEST_CASE("schema_missing removes the field from a JSON answer", "[faults]") {
  Fixture f;
  f.step.fault = FaultKind::schema_missing;
  f.step.text = R"({"label": "spam", "confidence": 0.9})";
  f.step.missing_field = "label";
  const auto p = f.plan(Dialect::openai);
  const auto content = boost::json::parse(p.body).at("choices").at(0).at("message").at("content").as_string();
  const auto answer = boost::json::parse(content);
  CHECK_FALSE(answer.as_object().contains("label"));
  CHECK(answer.as_object().contains("confidence"));
}

TEST_CASE("policy: plain requests get a 400, streams finish with the content filter", "[faults]") {
  Fixture f;
  f.step.fault = FaultKind::policy;
  CHECK(f.plan(Dialect::openai).status == 400);
  f.request.stream = true;
  f.step.cut_after_events = 1;
  const auto p = f.plan(Dialect::openai);
  CHECK(p.status == 200);
  CHECK(content_frames(p) == 1);
  std::string all;
  for (const auto& fr : p.frames) all += fr.bytes;
  CHECK(all.find("\"finish_reason\":\"content_filter\"") != std::string::npos);
  const auto g = f.plan(Dialect::gemini);
  CHECK(g.frames.back().bytes.find("\"finishReason\":\"SAFETY\"") != std::string::npos);
}

TEST_CASE("prefill_rejected refuses a prefill and answers a normal request", "[faults]") {
  Fixture f;
  f.step.fault = FaultKind::prefill_rejected;
  auto p = f.plan(Dialect::anthropic);
  CHECK(p.status == 200);
  CHECK(p.fault == FaultKind::ok);
  f.request.prefill = true;
  p = f.plan(Dialect::anthropic);
  CHECK(p.status == 400);
  CHECK(p.fault == FaultKind::prefill_rejected);
}

TEST_CASE("plain stream faults: a cut body announces its full length, a malformed body is not JSON",
          "[faults]") {
  Fixture f;
  f.step.fault = FaultKind::stream_cut;
  auto p = f.plan(Dialect::openai);
  CHECK_FALSE(p.streamed);
  CHECK(p.end == StreamEnd::abort);
  CHECK(p.body_cut_at < p.body.size());
  CHECK_FALSE(p.commits_when_sent);
  f.step.fault = FaultKind::malformed_event;
  p = f.plan(Dialect::openai);
  boost::system::error_code ec;
  boost::json::parse(p.body, ec);
  CHECK(ec);
  f.step.fault = FaultKind::stream_error;
  CHECK(f.plan(Dialect::anthropic).status == 529);
}

TEST_CASE("a fault that keeps the healthy stream renders it frame for frame, and not at all when forwarded",
          "[faults]") {
  int keeping = 0;
  for (const FaultSpec* spec : all_faults()) {
    CAPTURE(to_string(spec->kind));
    for (const Dialect d : registered_dialects()) {
      CAPTURE(to_string(d));
      Fixture healthy, f;
      healthy.request.stream = f.request.stream = true;
      f.step.fault = spec->kind;
      const Plan rendered = f.plan(d);
      f.forwarded = true;
      const Plan forwarded = f.plan(d);
      CHECK(rendered.dialect == d);  // a forwarder reads the answer by it
      CHECK(forwarded.dialect == d);
      // A fault without the trait renders its frames (they are the edit the proxy applies), unless its plan
      // here is ok's own (prefill_rejected on a request without a prefill).
      if (!forwarded.passes_upstream_stream) {
        CHECK_FALSE(spec->traits.keeps_healthy_stream);
        continue;
      }
      const Plan ok = healthy.plan(d);
      REQUIRE(rendered.frames.size() == ok.frames.size());
      for (std::size_t i = 0; i < ok.frames.size(); ++i) {
        CHECK(rendered.frames[i].bytes == ok.frames[i].bytes);
        CHECK(rendered.frames[i].content == ok.frames[i].content);
      }
      CHECK(rendered.end == StreamEnd::complete);
      CHECK_FALSE(rendered.passes_upstream_stream);
      CHECK(forwarded.passes_upstream_stream);
      CHECK(forwarded.frames.empty());
      CHECK(forwarded.status == rendered.status);
      CHECK(forwarded.first_event_ms == rendered.first_event_ms);
    }
    keeping += spec->traits.keeps_healthy_stream ? 1 : 0;
  }
  CHECK(keeping >= 3);  // ok, slow, slow_first_token
}
