// schema_missing: a healthy 200 answer whose JSON text lacks a field: missing_field (default: the
// first key) is removed from the canonical text when it is a JSON object; otherwise the answer is "{}".
#include <boost/json.hpp>

#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
constexpr std::string_view params[] = {"missing_field"};

std::string without_field(const std::string& text, const std::optional<std::string>& field) {
  boost::system::error_code ec;
  auto v = boost::json::parse(text, ec);
  if (ec || !v.is_object() || v.get_object().empty()) return "{}";
  auto& o = v.get_object();
  o.erase(field ? boost::json::string_view(*field) : o.begin()->key());
  return boost::json::serialize(o);
}

Plan plan(const FaultInput& in) {
  Answer lacking = in.answer;
  if (lacking.tool_name.empty())
    lacking.tokens = split_tokens(without_field(in.answer.text(), in.step.missing_field));
  return plan_blocks::answer_plan(in, FaultKind::schema_missing, lacking);
}

void draw(ExploreDraw& d) {
  if (d.contract) d.missing_field = "label";
}
}  // namespace

extern const FaultSpec schema_missing_fault = {
    .kind = FaultKind::schema_missing,
    .params = params,
    .plan = plan,
    .summary = "200, but the JSON answer lacks a required field",
    .traits = {.in_band = InBand::under_output_contract, .explore_draw = draw},
};

}  // namespace llmchaos::mock
