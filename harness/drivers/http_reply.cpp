// The target's reply in the harness's terms (http driver): its x-llmchaos-* headers, the failure points
// a drain answer reports, the outcome a reply stands for, and the per-case headers the requests carry.
#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <stdexcept>

#include "http_driver.hpp"
#include "target_config.hpp"

namespace llmchaos::harness::driver_units::http_driver {

std::optional<std::string> header_if(const client::AttemptResult& r, std::string_view name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return std::nullopt;
}
std::string header(const client::AttemptResult& r, std::string_view name) {
  return header_if(r, name).value_or("");
}

std::string points_from_json(const boost::json::value& v, std::vector<client::FailurePoint>& out) {
  if (!v.is_array()) return "\"points\" is not an array";
  for (const auto& item : v.as_array()) {
    const auto* o = item.if_object();
    const auto* action = o ? o->if_contains("action") : nullptr;
    const auto* route = o ? o->if_contains("route") : nullptr;
    const auto* attempt = o ? o->if_contains("attempt") : nullptr;
    const auto* rule = o ? o->if_contains("rule") : nullptr;
    const auto parsed =
        action && action->is_string() ? parse_enum<Action>(action->as_string()) : std::nullopt;
    if (!parsed || !route || !route->is_string() || !attempt ||
        !(attempt->is_null() || attempt->is_int64()) || !rule || !rule->is_int64())
      return "a point is not {\"action\", \"route\", \"attempt\", \"rule\"}: " + boost::json::serialize(item);
    client::FailurePoint fp;
    fp.point = static_cast<int>(out.size()) + 1;
    fp.action = *parsed;
    fp.route = std::string(route->as_string());
    fp.attempt = attempt->is_null() ? -1 : static_cast<int>(attempt->as_int64());
    fp.rule = static_cast<int>(rule->as_int64());
    if (const auto* text = o->if_contains("rule_text"); text && text->is_string())
      fp.rule_text = std::string(text->as_string());
    out.push_back(std::move(fp));
  }
  return {};
}

std::optional<ReportedOutcome> settled_outcome(std::optional<ReportedOutcome> reported, int status,
                                               bool complete, bool stream) {
  // A stream's head (and its provisional action) went out with the first token: a stream that then
  // broke is what the caller saw, a failure.
  if (!complete && status == 200) reported = ReportedOutcome{Outcome::fail_closed, false};
  if (status == 202 && !reported) reported = ReportedOutcome{Outcome::queued, false};
  // The same head named a primary success before the stream could break: one resumed afterwards
  // (SPEC 3 rule 0, a cut background response) is still a success, which the ledger names.
  if (status == 200 && complete && stream && reported && reported->outcome == Outcome::primary_success)
    reported->outcome.reset();
  return reported;
}

std::vector<std::pair<std::string, std::string>> case_headers(const CaseEnv& env, const DriverOptions& o) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& spec : o.target_headers) {
    auto [name, text] = split_header(spec);
    auto value = render_target_config(text, "--target-header " + name, env, o.target_key, Escape::json,
                                      o.target_route_fields);
    std::replace(value.begin(), value.end(), '\n', ' ');  // a header is one line
    std::replace(value.begin(), value.end(), '\r', ' ');
    out.emplace_back(std::move(name), std::move(value));
  }
  return out;
}

}  // namespace llmchaos::harness::driver_units::http_driver
