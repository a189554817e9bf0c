// The http driver's options (--target, --target-config, --target-command, --target-header,
// --target-drain): checked before any case runs, then completed from the template's llmchaos.KEY
// declarations, the time scale judged against what the target can scale.
#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

#include "http_driver.hpp"
#include "llmchaos/harness/capabilities.hpp"
#include "target_config.hpp"

namespace llmchaos::harness::driver_units::http_driver {

std::string validate(const DriverOptions& o) {
  if (o.target_url.empty())
    return "needs --target URL (the service under test, e.g. http://127.0.0.1:{port})";
  if (!o.exec_command.empty()) return "--exec is for --driver exec";
  if (!o.mutation.empty()) return "--mutate is for --driver inproc";
  if (!o.target_config.empty() && o.target_command.empty())
    return "--target-config needs --target-command (the service that reads the config rendered per case)";
  if (o.target_url.find("{port}") != std::string::npos && o.target_command.empty())
    return "{port} in --target needs --target-command (the harness picks the port for the service it starts)";
  if (o.target_url.rfind("http://", 0) != 0) return "--target must be an http:// URL";
  RouteFields declared;
  if (!o.target_config.empty()) {
    if (!std::filesystem::is_regular_file(o.target_config))
      return "--target-config " + o.target_config + ": no such file";
    const auto text = read_text(o.target_config);
    try {
      declared = read_target_declarations(text, o.target_config).route_fields;
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    if (auto problem = check_target_template(text, o.target_config, declared); !problem.empty())
      return problem;
  }
  if (!o.target_drain.empty() && o.target_drain != "none" && o.target_drain.front() != '/')
    return "--target-drain is a path (/v1/llmchaos/drain) or none";
  for (const auto& spec : o.target_headers) {
    try {
      const auto [name, text] = split_header(spec);
      if (auto problem = check_target_template(text, "--target-header " + name, declared); !problem.empty())
        return problem;
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
  }
  return {};
}

std::string prepare(DriverOptions& o, double time_scale, std::vector<std::string>& warnings) {
  const std::string text = o.target_config.empty() ? std::string() : read_text(o.target_config);
  TargetDeclarations d;
  try {
    d = read_target_declarations(text, o.target_config);
    if (!o.capabilities && d.capabilities) o.capabilities = parse_capabilities(*d.capabilities);
  } catch (const std::invalid_argument& e) {
    return o.target_config + ": " + e.what();
  }
  o.target_route_fields = d.route_fields;
  if (o.target_drain.empty() && d.drain) o.target_drain = *d.drain;
  if (!o.target_drain.empty() && o.target_drain != "none" && o.target_drain.front() != '/')
    return o.target_config + ": llmchaos.drain is a path (/v1/llmchaos/drain) or none";
  o.target_headers.insert(o.target_headers.begin(), d.headers.begin(), d.headers.end());
  for (const auto& spec : d.headers) {
    try {
      const auto [name, header_text] = split_header(spec);
      if (auto problem = check_target_template(header_text, o.target_config + " llmchaos.header " + name,
                                               d.route_fields);
          !problem.empty())
        return problem;
    } catch (const std::invalid_argument& e) {
      return o.target_config + ": " + e.what();
    }
  }
  if (d.time_scale == false) o.follows_time_scale = false;
  if (time_scale == 1) return {};
  if (!o.follows_time_scale)
    return fmt::format(
        "the target cannot scale its own timers ({}llmchaos.time_scale = false): run it with --time-scale 1, "
        "not {}",
        o.target_config.empty() ? "" : o.target_config + ": ", time_scale);
  bool scaled = uses_placeholder(text, "time_scale");
  for (const auto& spec : o.target_headers) scaled = scaled || uses_placeholder(spec, "time_scale");
  if (!scaled)
    warnings.push_back(
        fmt::format("--time-scale {}: the target's config {} does not use {{{{time_scale}}}}, so its own "
                    "timers (backoff, "
                    "Retry-After waits, timeouts) run unscaled while the cases' delays and budgets are "
                    "scaled: elapsed-time and "
                    "Retry-After verdicts may be wrong. Run it at --time-scale 1, or declare "
                    "llmchaos.time_scale = false to refuse "
                    "other scales",
                    time_scale, o.target_config.empty() ? "(none: no --target-config)" : o.target_config));
  return {};
}

}  // namespace llmchaos::harness::driver_units::http_driver
