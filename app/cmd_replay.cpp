// llmchaos replay: the timeout-policy study (SPEC 8) over a recorded latency trace, offline or live.
#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "llmchaos/experiments/replay.hpp"
#include "llmchaos/experiments/replay_live.hpp"
#include "llmchaos/experiments/replay_report.hpp"
#include "llmchaos/experiments/synth.hpp"
#include "llmchaos/experiments/trace.hpp"
#include "number_checks.hpp"

namespace llmchaos::app {

namespace {

namespace ex = llmchaos::experiments;

constexpr std::size_t max_live_requests = 10000;

struct ReplayOptions {
  std::string trace;
  std::vector<double> timeouts{2.5, 3, 3.5};
  std::string format = "detect";
  bool skip_bad = false;
  std::string json_path, markdown_path, svg_dir;
  bool timing = false;
  unsigned threads = 0;
  // live
  bool live = false;
  double time_scale = 0.05;
  int concurrency = 8;
  // synth
  std::size_t synth_rows = 0;
  std::string out;
  std::uint64_t seed = 1;
  std::vector<std::size_t> outage;
};

void write_to(const ex::ReplayFormat& format, const ex::ReplayReport& report, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
  format.write(report, out);
  if (!out) throw std::runtime_error(path + ": write failed");
}

int run_synth(const ReplayOptions& o) {
  if (o.out.empty()) {
    std::cerr << "llmchaos replay --synth: --out FILE is required\n";
    return 2;
  }
  ex::SynthOptions synth;
  synth.rows = o.synth_rows;
  synth.seed = o.seed;
  if (!o.outage.empty()) {
    if (o.outage.size() != 2 || o.outage[0] >= o.outage[1]) {
      std::cerr << "llmchaos replay --synth: --outage wants START,END request indices with START < END\n";
      return 2;
    }
    synth.outage = std::pair{o.outage[0], o.outage[1]};
  }
  ex::write_trace_file(ex::synth_trace(synth), o.out);
  std::cout << fmt::format("wrote {} synthetic requests to {} (seed {})\n", synth.rows, o.out, synth.seed);
  return 0;
}

// The options run_synth does not check itself: false after saying what is wrong.
bool replay_options_valid(const ReplayOptions& o) {
  if (o.trace.empty()) {
    std::cerr << "llmchaos replay: a TRACE file is required (or --synth N --out FILE)\n";
    return false;
  }
  for (const double t : o.timeouts) {
    if (!(t > 0)) {
      std::cerr << fmt::format("llmchaos replay: --timeout values must be > 0 seconds, got {}\n", t);
      return false;
    }
  }
  return true;
}

// The trace as read: its rows when kept, else the figures of the streaming pass.
struct LoadedTrace {
  ex::TraceParse parsed;
  std::vector<ex::ReplayStats> figures;
  std::size_t requests = 0;
  bool keep_rows = false;
};

LoadedTrace load_trace(const ReplayOptions& o, const std::vector<ex::PolicyConfig>& configs) {
  ex::TraceParseOptions parse_options;
  parse_options.format = o.format == "jsonl" ? ex::TraceFormat::jsonl
                         : o.format == "csv" ? ex::TraceFormat::csv
                                             : ex::TraceFormat::detect;
  parse_options.threads = o.threads;
  LoadedTrace trace;
  // The rows are kept only when something needs them (the live replay, the SVG plots); the figures
  // alone come from one streaming pass over the file, without a row array.
  trace.keep_rows = o.live || !o.svg_dir.empty();
  if (trace.keep_rows) {
    trace.parsed = ex::read_trace_file(o.trace, parse_options);
    trace.requests = trace.parsed.rows.size();
  } else {
    auto replayed = ex::replay_trace_file(o.trace, configs, parse_options);
    trace.parsed = std::move(replayed.parse);
    trace.figures = std::move(replayed.stats);
    trace.requests = replayed.requests;
  }
  return trace;
}

// Reports the bad lines; false (after saying why) when the trace cannot be replayed as asked.
bool trace_replayable(const ReplayOptions& o, const LoadedTrace& trace) {
  const ex::TraceParse& parsed = trace.parsed;
  for (const auto& e : parsed.errors) std::cerr << e.str() << '\n';
  if (parsed.error_count > parsed.errors.size())
    std::cerr << fmt::format("... and {} more bad lines\n", parsed.error_count - parsed.errors.size());
  if (parsed.error_count > 0 && !o.skip_bad) {
    std::cerr << fmt::format("llmchaos replay: {} bad line(s) in {}; fix them or pass --skip-bad\n",
                             parsed.error_count, o.trace);
    return false;
  }
  if (trace.requests == 0) {
    std::cerr << fmt::format("llmchaos replay: {} holds no requests\n", o.trace);
    return false;
  }
  if (o.live && trace.requests > max_live_requests) {
    std::cerr << fmt::format(
        "llmchaos replay --live: {} requests; the live replay plays each in real time (scaled), "
        "use at most {} (e.g. head -n 1000 {})\n",
        trace.requests, max_live_requests, o.trace);
    return false;
  }
  return true;
}

ex::ReplayReport evaluate(const ReplayOptions& o, const std::vector<ex::PolicyConfig>& configs,
                          LoadedTrace& trace) {
  ex::ReplayReport report;
  report.trace = o.trace;
  report.requests = trace.requests;
  const auto& rows = trace.parsed.rows;
  if (o.live) {
    ex::LiveReplayOptions live;
    live.time_scale = o.time_scale;
    live.concurrency = o.concurrency;
    const auto result = ex::replay_live(rows, configs, live);
    report.mode = "live";
    report.time_scale = o.time_scale;
    report.rows = result.stats;
    report.offline = ex::evaluate_all(rows, configs);
    const auto agreement = ex::compare_live(rows, configs, result, live);
    report.tolerance = agreement.tolerance;
    report.disagreements = agreement.disagreements;
  } else {
    report.rows = trace.keep_rows ? ex::evaluate_all(rows, configs) : std::move(trace.figures);
  }
  return report;
}

void write_outputs(const ReplayOptions& o, const std::vector<ex::PolicyConfig>& configs,
                   const LoadedTrace& trace, const ex::ReplayReport& report) {
  ex::find_replay_format("text")->write(report, std::cout);
  if (!o.json_path.empty()) write_to(*ex::find_replay_format("json"), report, o.json_path);
  if (!o.markdown_path.empty()) write_to(*ex::find_replay_format("markdown"), report, o.markdown_path);
  if (!o.svg_dir.empty())
    for (const auto& path : ex::write_replay_svgs(trace.parsed.rows, configs, o.svg_dir))
      std::cout << "wrote " << path << '\n';
}

int run_replay(const ReplayOptions& o) {
  if (!replay_options_valid(o)) return 2;
  const auto started = std::chrono::steady_clock::now();
  const auto configs = ex::policy_configs(o.timeouts);
  LoadedTrace trace = load_trace(o, configs);
  if (!trace_replayable(o, trace)) return 2;
  const ex::ReplayReport report = evaluate(o, configs, trace);
  const auto evaluated = std::chrono::steady_clock::now();
  write_outputs(o, configs, trace, report);
  if (o.timing) {
    const double sec = std::chrono::duration<double>(evaluated - started).count();
    std::cerr << fmt::format("timing: read and evaluated {} rows x {} policies in {:.3f} s ({:.0f} rows/s)\n",
                             trace.requests, configs.size(), sec, static_cast<double>(trace.requests) / sec);
  }
  return report.disagreements.empty() ? 0 : 1;
}

}  // namespace

void add_replay(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ReplayOptions>();
  auto* sub = app.add_subcommand(
      "replay",
      "Timeout-policy replay over a latency trace: wait / retry after T / switch after T (offline, or --live "
      "through the mock); --synth writes a synthetic trace");
  sub->add_option("trace", o->trace, "trace file: JSON lines or CSV (see experiments/README.md)");
  sub->add_option("--timeout", o->timeouts, "timeouts T in seconds, comma separated")
      ->delimiter(',')
      ->check(finite_between(0, 86'400, /*min_open=*/true))
      ->capture_default_str();
  sub->add_option("--format", o->format, "trace format")
      ->check(CLI::IsMember({"detect", "jsonl", "csv"}))
      ->capture_default_str();
  sub->add_flag("--skip-bad", o->skip_bad, "report bad lines but evaluate the good ones (default: exit 2)");
  sub->add_option("--json", o->json_path, "write the JSON report to FILE");
  sub->add_option("--markdown", o->markdown_path, "write the Markdown report to FILE");
  sub->add_option("--svg", o->svg_dir, "write one latency CDF per policy into DIR (replay-<policy>.svg)");
  sub->add_flag("--timing", o->timing, "print rows/s of reading and evaluating on stderr");
  sub->add_option("--threads", o->threads,
                  "threads reading a large JSON-lines trace (0: the cores, at most 8)")
      ->capture_default_str();
  sub->add_flag("--live", o->live,
                "play the trace through real sockets: mock provider + HTTP client per policy");
  sub->add_option("--time-scale", o->time_scale, "live: every recorded latency and T times this")
      ->check(finite_between(0.001, 1.0))
      ->capture_default_str();
  sub->add_option("--concurrency", o->concurrency, "live: requests in flight at once")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  sub->add_option("--synth", o->synth_rows,
                  "write a synthetic trace of N requests (with --out) instead of replaying");
  sub->add_option("--out", o->out, "synthetic trace file (.csv -> CSV, else JSON lines)");
  sub->add_option("--seed", o->seed, "synthetic trace seed")->capture_default_str();
  sub->add_option("--outage", o->outage, "synthetic: primary outage over requests START,END (indices)")
      ->delimiter(',');
  sub->callback([o, &exit_code] {
    try {
      exit_code = o->synth_rows > 0 ? run_synth(*o) : run_replay(*o);
    } catch (const std::exception& e) {
      std::cerr << "llmchaos replay: " << e.what() << '\n';
      exit_code = 2;
    }
  });
}

}  // namespace llmchaos::app
