// overloaded: 503 before any body byte (OpenAI, Gemini UNAVAILABLE) or Anthropic 529 overloaded_error
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
constexpr std::string_view params[] = {"body"};  // a named real body of the dialect (Bedrock's model_timeout)

Plan plan(const FaultInput& in) {
  return plan_blocks::error_plan(in, FaultKind::overloaded, ErrorKind::overloaded);
}

void draw(ExploreDraw& d) {
  if (d.maybe(0.25)) d.param("retry_after_ms", d.maybe(0.5) ? 50 : 500);
}
}  // namespace

extern const FaultSpec overloaded_fault = {
    .kind = FaultKind::overloaded,
    .params = params,
    .plan = plan,
    .summary = "503 before any body byte (OpenAI, Gemini UNAVAILABLE) or Anthropic 529 overloaded_error",
    .traits = {.explore_draw = draw},
    .error_body = ErrorKind::overloaded,
};

}  // namespace llmchaos::mock
