#pragma once
// Renderings of a replay result: text table, JSON, Markdown (one table of writers), and one SVG
// latency CDF per policy.
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/experiments/replay.hpp"

namespace llmchaos::experiments {

struct ReplayReport {
  std::string trace;             // where the trace came from
  std::string mode = "offline";  // "offline" or "live"
  double time_scale = 1.0;       // live only
  std::size_t requests = 0;
  std::vector<ReplayStats> rows;
  // Live only: the offline figures of the same trace and what disagreed beyond the tolerance.
  std::vector<ReplayStats> offline;
  std::string tolerance;  // how live and offline are compared, in words
  std::vector<std::string> disagreements;
};

struct ReplayFormat {
  std::string_view name;  // "text", "json", "markdown"
  void (*write)(const ReplayReport& report, std::ostream& out);
};
std::span<const ReplayFormat> replay_formats();
const ReplayFormat* find_replay_format(std::string_view name);

// The CDF of one policy: for each configuration of that policy, the share of ALL requests answered
// successfully within x seconds (so each curve ends at the success rate), with T marked. Self-contained SVG.
struct CdfCurve {
  PolicyConfig config;
  std::vector<double> sorted_latencies;  // successful requests only
};
std::string replay_cdf_svg(ReplayPolicy policy, std::span<const CdfCurve> curves, std::size_t requests);
// Writes DIR/replay-<policy>.svg for each policy present in `configs`; returns the paths written.
std::vector<std::string> write_replay_svgs(std::span<const TraceRow> trace,
                                           std::span<const PolicyConfig> configs, const std::string& dir);

}  // namespace llmchaos::experiments
