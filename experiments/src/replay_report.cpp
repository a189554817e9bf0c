#include "llmchaos/experiments/replay_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <filesystem>
#include <ostream>
#include <sstream>

#include "llmchaos/core/atomic_file.hpp"
#include "llmchaos/experiments/stats.hpp"
#include "table.hpp"

namespace llmchaos::experiments {

namespace {

std::string timeout_cell(const PolicyConfig& c) {
  return c.policy == ReplayPolicy::wait ? "-" : fmt::format("{:g}", c.timeout_sec);
}

detail::Table stats_table(const std::vector<ReplayStats>& rows) {
  detail::Table t;
  t.header = {"policy",  "T (s)",   "requests", "success",    "p50 (s)",
              "p95 (s)", "p99 (s)", "max (s)",  "extra calls"};
  t.right_aligned = {false, true, true, true, true, true, true, true, true};
  for (const auto& s : rows)
    t.rows.push_back({std::string(policy_name(s.config.policy)), timeout_cell(s.config),
                      std::to_string(s.requests), detail::fmt_pct(s.success_rate), detail::fmt_seconds(s.p50),
                      detail::fmt_seconds(s.p95), detail::fmt_seconds(s.p99), detail::fmt_seconds(s.max),
                      fmt::format("{:.2f}%", s.extra_call_pct)});
  return t;
}

constexpr std::string_view method_note =
    "Latency figures count successful requests only. Percentiles: linear interpolation between the closest "
    "ranks (numpy's default method).";

void write_text(const ReplayReport& r, std::ostream& out) {
  out << fmt::format("replay ({}) of {}: {} requests", r.mode, r.trace, r.requests);
  if (r.mode == "live") out << fmt::format(", time scale {:g}", r.time_scale);
  out << "\n\n";
  detail::write_text_table(stats_table(r.rows), out);
  out << '\n' << method_note << '\n';
  if (r.mode == "live") {
    out << "\noffline figures of the same trace:\n";
    detail::write_text_table(stats_table(r.offline), out);
    out << "\nagreement (" << r.tolerance << "): " << (r.disagreements.empty() ? "yes" : "NO") << '\n';
    for (const auto& d : r.disagreements) out << "  " << d << '\n';
  }
}

void write_markdown(const ReplayReport& r, std::ostream& out) {
  out << fmt::format("## Timeout policy replay ({})\n\nTrace `{}`, {} requests", r.mode, r.trace, r.requests);
  if (r.mode == "live") out << fmt::format(", time scale {:g}", r.time_scale);
  out << ".\n\n";
  detail::write_markdown_table(stats_table(r.rows), out);
  out << '\n' << method_note << '\n';
  if (r.mode == "live") {
    out << "\nOffline figures of the same trace:\n\n";
    detail::write_markdown_table(stats_table(r.offline), out);
    out << "\nAgreement (" << r.tolerance << "): **" << (r.disagreements.empty() ? "yes" : "no") << "**\n";
    for (const auto& d : r.disagreements) out << "- " << d << '\n';
  }
}

boost::json::value number_or_null(double v) {
  if (std::isnan(v)) return nullptr;
  return v;
}

boost::json::array stats_json(const std::vector<ReplayStats>& rows) {
  boost::json::array a;
  for (const auto& s : rows) {
    boost::json::object o;
    o["policy"] = policy_name(s.config.policy);
    o["timeout_sec"] = s.config.policy == ReplayPolicy::wait ? boost::json::value(nullptr)
                                                             : boost::json::value(s.config.timeout_sec);
    o["requests"] = s.requests;
    o["successes"] = s.successes;
    o["success_rate"] = s.success_rate;
    o["p50_sec"] = number_or_null(s.p50);
    o["p95_sec"] = number_or_null(s.p95);
    o["p99_sec"] = number_or_null(s.p99);
    o["max_sec"] = number_or_null(s.max);
    o["extra_calls"] = s.extra_calls;
    o["extra_call_pct"] = s.extra_call_pct;
    a.push_back(std::move(o));
  }
  return a;
}

void write_json(const ReplayReport& r, std::ostream& out) {
  boost::json::object o;
  o["experiment"] = "replay";
  o["mode"] = r.mode;
  o["trace"] = r.trace;
  o["requests"] = r.requests;
  o["percentile_method"] = "linear interpolation between closest ranks (numpy default)";
  o["latency_counts"] = "successful requests only";
  o["rows"] = stats_json(r.rows);
  if (r.mode == "live") {
    o["time_scale"] = r.time_scale;
    o["offline_rows"] = stats_json(r.offline);
    o["tolerance"] = r.tolerance;
    o["agrees"] = r.disagreements.empty();
    boost::json::array d;
    for (const auto& s : r.disagreements) d.push_back(boost::json::string(s));
    o["disagreements"] = std::move(d);
  }
  out << boost::json::serialize(o) << '\n';
}

constexpr ReplayFormat formats_table[] = {
    {"text", write_text},
    {"json", write_json},
    {"markdown", write_markdown},
};

// A "nice" axis end: 1, 2 or 5 times a power of ten, at least `v`.
double nice_ceiling(double v) {
  if (!(v > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= v) return m * p;
  return 10 * p;
}

constexpr std::string_view palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                        "#9467bd", "#8c564b", "#17becf"};

}  // namespace

std::span<const ReplayFormat> replay_formats() {
  return formats_table;
}

const ReplayFormat* find_replay_format(std::string_view name) {
  for (const auto& f : formats_table)
    if (f.name == name) return &f;
  return nullptr;
}

std::string replay_cdf_svg(ReplayPolicy policy, std::span<const CdfCurve> curves, std::size_t requests) {
  constexpr double width = 730, height = 440, left = 72, right = 170, top = 40, bottom = 50;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  // x axis: up to the largest p99.5 (and T): a few 30 s hangs must not squash the interesting part.
  double x_end = 0;
  for (const auto& c : curves) {
    x_end = std::max(x_end, percentile_sorted(c.sorted_latencies, 99.5));
    if (c.config.policy != ReplayPolicy::wait) x_end = std::max(x_end, c.config.timeout_sec);
  }
  x_end = nice_ceiling(std::isnan(x_end) ? 1.0 : x_end * 1.1);
  const double denom = requests == 0 ? 1.0 : static_cast<double>(requests);
  auto px = [&](double x) { return left + plot_w * std::clamp(x / x_end, 0.0, 1.0); };
  auto py = [&](double y) { return top + plot_h * (1.0 - std::clamp(y, 0.0, 1.0)); };

  std::ostringstream s;
  s << fmt::format(
           R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}" font-family="sans-serif" font-size="12">)",
           width, height, width, height)
    << '\n';
  s << fmt::format(R"(<rect width="{}" height="{}" fill="white"/>)", width, height) << '\n';
  s << fmt::format(R"(<text x="{}" y="22" font-size="15">{} policy: latency CDF ({} requests)</text>)", left,
                   policy_name(policy), requests)
    << '\n';
  // Grid and axes.
  for (int i = 0; i <= 4; ++i) {
    const double y = i / 4.0;
    s << fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#ddd"/>)", left, py(y),
                     left + plot_w, py(y))
      << fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{:.0f}%</text>)", left - 6, py(y) + 4,
                     y * 100)
      << '\n';
    const double x = x_end * i / 4.0;
    s << fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#ddd"/>)", px(x), top,
                     px(x), top + plot_h)
      << fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{:g}</text>)", px(x),
                     top + plot_h + 16, x)
      << '\n';
  }
  s << fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#333"/>)", left, top,
                   plot_w, plot_h)
    << '\n';
  s << fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">latency (s)</text>)",
                   left + plot_w / 2, height - 12)
    << '\n';
  s << fmt::format(
           R"svg(<text transform="translate(16 {:.1f}) rotate(-90)" text-anchor="middle">answered successfully within x (share of all requests)</text>)svg",
           top + plot_h / 2)
    << '\n';
  // Curves: a step function sampled at a fixed number of x positions.
  constexpr int samples = 400;
  for (std::size_t i = 0; i < curves.size(); ++i) {
    const auto& c = curves[i];
    const auto color = palette[i % std::size(palette)];
    std::string points;
    for (int k = 0; k <= samples; ++k) {
      const double x = x_end * k / samples;
      const auto n = std::upper_bound(c.sorted_latencies.begin(), c.sorted_latencies.end(), x) -
                     c.sorted_latencies.begin();
      points += fmt::format("{:.1f},{:.1f} ", px(x), py(static_cast<double>(n) / denom));
    }
    s << fmt::format(R"(<polyline fill="none" stroke="{}" stroke-width="1.8" points="{}"/>)", color, points)
      << '\n';
    std::string label = c.config.policy == ReplayPolicy::wait
                            ? std::string("wait")
                            : fmt::format("T = {:g} s", c.config.timeout_sec);
    if (c.config.policy != ReplayPolicy::wait)
      s << fmt::format(
               R"(<line x1="{:.1f}" y1="{}" x2="{:.1f}" y2="{}" stroke="{}" stroke-dasharray="4 3"/>)",
               px(c.config.timeout_sec), top, px(c.config.timeout_sec), top + plot_h, color)
        << '\n';
    const double ly = top + 14 + 18.0 * static_cast<double>(i);
    s << fmt::format(
             R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="3"/>)",
             left + plot_w + 12, ly - 4, left + plot_w + 32, ly - 4, color)
      << fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{}</text>)", left + plot_w + 38, ly, label) << '\n';
  }
  s << "</svg>\n";
  return s.str();
}

std::vector<std::string> write_replay_svgs(std::span<const TraceRow> trace,
                                           std::span<const PolicyConfig> configs, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir + ": cannot create the SVG directory: " + ec.message());
  std::vector<std::string> written;
  for (const ReplayPolicy policy : {ReplayPolicy::wait, ReplayPolicy::retry, ReplayPolicy::switch_route}) {
    std::vector<CdfCurve> curves;
    for (const auto& c : configs)
      if (c.policy == policy) curves.push_back({c, successful_latencies(trace, c)});
    if (curves.empty()) continue;
    const std::string path =
        (std::filesystem::path(dir) / fmt::format("replay-{}.svg", policy_name(policy))).string();
    write_file_atomic(path, replay_cdf_svg(policy, curves, trace.size()));
    written.push_back(path);
  }
  return written;
}

}  // namespace llmchaos::experiments
