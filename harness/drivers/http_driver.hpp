#pragma once
// The http driver's pieces, each one concern: http.cpp, the session protocol (a case's requests, their
// settling in order, the drain); http_target.cpp, the service --target-command starts per case;
// http_reply.cpp, the target's reply read in the harness's terms; http_options.cpp, the options checked
// and completed from the template's declarations. Private to the harness library.
#include <sys/types.h>

#include <boost/json/fwd.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "external.hpp"
#include "llmchaos/client/http_transport.hpp"
#include "llmchaos/harness/driver.hpp"

namespace llmchaos::harness::driver_units::http_driver {

constexpr std::size_t output_cap = 64 * 1024;

inline double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string replace_all(std::string s, std::string_view from, std::string_view to);  // http_target.cpp
// The --target-config template's text; a file that cannot be read is an invalid_argument naming it.
std::string read_text(const std::string& path);

// ---- the service started per case (http_target.cpp) ----

// A loopback port free right now (the service binds it a moment later; a clash shows as a crash).
std::uint16_t free_loopback_port();

// The service started for one case: its config and output in a temp folder, its process group
// killed when the case ends.
class TargetProcess {
 public:
  TargetProcess(const CaseEnv& env, const DriverOptions& o, std::uint16_t port);
  ~TargetProcess();
  TargetProcess(const TargetProcess&) = delete;
  TargetProcess& operator=(const TargetProcess&) = delete;

  // Waits until `port` accepts a connection; throws UnknownVerdict when the service exits first or
  // does not listen within `bound_ms`.
  void wait_listening(std::uint16_t port, double bound_ms);
  // The wait status when the process has ended.
  std::optional<int> exited();
  static std::string describe(int status);
  void stop();
  std::string output() const;

 private:
  std::filesystem::path dir_;
  std::string log_;
  std::string command_;
  pid_t pid_ = 0;
  int status_ = 0;
  bool reaped_ = false;
};

// ---- the target's reply (http_reply.cpp) ----

std::optional<std::string> header_if(const client::AttemptResult& r, std::string_view name);
std::string header(const client::AttemptResult& r, std::string_view name);

// A delivery's failure points as the target reported them; nullopt when it reported none at all.
using ReportedPoints = std::optional<std::vector<client::FailurePoint>>;

// The drain answer's "points": [{"action", "route", "attempt" (null: none sent), "rule", "rule_text"}],
// appended to `out`; the error in words, empty when they read.
std::string points_from_json(const boost::json::value& v, std::vector<client::FailurePoint>& out);

// The outcome a reply stands for, from what the target reported and how the reply ended.
std::optional<ReportedOutcome> settled_outcome(std::optional<ReportedOutcome> reported, int status,
                                               bool complete, bool stream);

// The --target-header templates rendered for one case (JSON-escaped strings: a header often carries
// a JSON config, as Portkey's x-portkey-config does).
std::vector<std::pair<std::string, std::string>> case_headers(const CaseEnv& env, const DriverOptions& o);

// ---- the options (http_options.cpp) ----

std::string validate(const DriverOptions& o);
// What the template declares (llmchaos.KEY lines) completes what the command line did not say, and
// the time scale is judged: a target whose timers the harness cannot scale runs at 1, or is warned about.
std::string prepare(DriverOptions& o, double time_scale, std::vector<std::string>& warnings);

}  // namespace llmchaos::harness::driver_units::http_driver
