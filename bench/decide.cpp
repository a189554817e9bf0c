// classify + decide per failure point: the policy engine's cost per call, without I/O.
// Each benchmark is one realistic failure as the transport reports it (provider-wire.md bodies).
#include <benchmark/benchmark.h>

#include <string>

#include "llmchaos/client/classifier.hpp"
#include "llmchaos/client/decision.hpp"
#include "llmchaos/client/error_detail.hpp"

using namespace llmchaos;
using namespace llmchaos::client;

namespace {

Observation openai_rate_429() {
  Observation o;
  o.dialect = Dialect::openai;
  o.status = 429;
  o.body =
      R"({"error":{"message":"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 14567, Requested 24754. Please try again in 18.642s.","type":"tokens","param":null,"code":"rate_limit_exceeded"}})";
  o.headers = {{"content-type", "application/json"},
               {"x-request-id", "req_abc"},
               {"retry-after", "1"},
               {"retry-after-ms", "900"}};
  return o;
}

Observation anthropic_overloaded_529() {
  Observation o;
  o.dialect = Dialect::anthropic;
  o.status = 529;
  o.body =
      R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CS"})";
  o.headers = {{"content-type", "application/json"}, {"request-id", "req_011CS"}};
  return o;
}

Observation gemini_quota_429() {
  Observation o;
  o.dialect = Dialect::gemini;
  o.status = 429;
  o.body =
      R"({"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier","quotaDimensions":{"location":"global","model":"gemini-2.0-flash"}}]},{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"26s"}]}})";
  o.headers = {{"content-type", "application/json"}};
  return o;
}

Observation stream_cut_after_tokens() {
  Observation o;
  o.dialect = Dialect::openai;
  o.status = 200;
  o.event = TransportEvent::stream_closed;
  o.visible_tokens = 4;
  return o;
}

DecisionInput budget() {
  DecisionInput in;
  in.attempts_left = 2;
  in.time_left_ms = 8000;
  in.cost_left_usd = 0.012;
  in.current = {"primary", 800, 0.004, true, true};
  in.fallbacks = {{"backup", 2000, 0.004, true, true}};
  in.queue_allowed = true;
  return in;
}

// Each case is timed on the path it names: a case whose action is not the one named is an error, not
// a figure.
bool takes(benchmark::State& state, const Observation& obs, Action expected) {
  DecisionInput in = budget();
  in.failure = classify(obs);
  const Decision d = decide(in);
  if (d.action == expected) return true;
  state.SkipWithError(("decided " + std::string(to_string(d.action)) + " (rule " + std::to_string(d.rule) +
                       "), the case names " + std::string(to_string(expected)))
                          .c_str());
  return false;
}

void classify_and_decide(benchmark::State& state, Observation obs, Action expected) {
  if (!takes(state, obs, expected)) return;
  DecisionInput in = budget();
  for (auto _ : state) {
    in.failure = classify(obs);
    Decision d = decide(in);
    benchmark::DoNotOptimize(d);
  }
}

// The same with a Classification and a Decision reused across calls (classify_into / decide_into), as
// a gateway's hot loop would: no allocation once the strings have grown.
void classify_and_decide_reused(benchmark::State& state, Observation obs, Action expected) {
  if (!takes(state, obs, expected)) return;
  DecisionInput in = budget();
  Decision d;
  for (auto _ : state) {
    classify_into(obs, in.failure);
    decide_into(in, d);
    benchmark::DoNotOptimize(d);
  }
}

void classify_only(benchmark::State& state, Observation obs) {
  for (auto _ : state) benchmark::DoNotOptimize(classify(obs));
}

void decide_only(benchmark::State& state, Observation obs, Action expected) {
  if (!takes(state, obs, expected)) return;
  DecisionInput in = budget();
  in.failure = classify(obs);
  for (auto _ : state) benchmark::DoNotOptimize(decide(in));
}

// Reading the error body alone (ErrorDetail), through each scan path: the largest part of classifying
// a Gemini 429, whose details run to some 900 bytes.
void error_body_scan(benchmark::State& state, Observation obs, ErrorDetail::ScanPath path) {
  for (auto _ : state) {
    const ErrorDetail detail(obs.body, path);
    benchmark::DoNotOptimize(detail.size());
  }
}

}  // namespace

BENCHMARK_CAPTURE(classify_and_decide, openai_rate_429_retry, openai_rate_429(), Action::retry);
BENCHMARK_CAPTURE(classify_and_decide, anthropic_529_retry, anthropic_overloaded_529(), Action::retry);
BENCHMARK_CAPTURE(classify_and_decide, gemini_429_details_fallback, gemini_quota_429(), Action::fallback);
BENCHMARK_CAPTURE(classify_and_decide, stream_cut_fail_closed, stream_cut_after_tokens(),
                  Action::fail_closed);
BENCHMARK_CAPTURE(classify_and_decide_reused, openai_rate_429_retry, openai_rate_429(), Action::retry);
BENCHMARK_CAPTURE(classify_and_decide_reused, anthropic_529_retry, anthropic_overloaded_529(), Action::retry);
BENCHMARK_CAPTURE(classify_and_decide_reused, gemini_429_details_fallback, gemini_quota_429(),
                  Action::fallback);
BENCHMARK_CAPTURE(classify_and_decide_reused, stream_cut_fail_closed, stream_cut_after_tokens(),
                  Action::fail_closed);
BENCHMARK_CAPTURE(classify_only, openai_rate_429, openai_rate_429());
BENCHMARK_CAPTURE(classify_only, gemini_429_details, gemini_quota_429());
BENCHMARK_CAPTURE(decide_only, openai_rate_429_retry, openai_rate_429(), Action::retry);
BENCHMARK_CAPTURE(decide_only, gemini_429_details_fallback, gemini_quota_429(), Action::fallback);
BENCHMARK_CAPTURE(error_body_scan, gemini_429_fastest, gemini_quota_429(), ErrorDetail::ScanPath::fastest);
BENCHMARK_CAPTURE(error_body_scan, gemini_429_portable, gemini_quota_429(), ErrorDetail::ScanPath::portable);
