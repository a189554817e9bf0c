#include "llmchaos/experiments/overload_report.hpp"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <cmath>
#include <ostream>

#include "table.hpp"

namespace llmchaos::experiments {

namespace {

constexpr std::string_view bias_note =
    "* achieved (accepted) load under 95% of the offered load: the coverage of this row is biased upward "
    "(survivorship) and must be read with the achieved load.";

std::string_view arrivals_name(ArrivalProcess a) {
  return a == ArrivalProcess::constant ? "constant" : "poisson";
}

std::string settings_line(const OverloadReport& r) {
  const auto& s = r.settings;
  return fmt::format(
      "overload ({}): capacity {:g}/s, service {:g} ms ({} model slots), {} workers, {} arrivals, "
      "{:g} s per run, seed {}",
      r.mode, s.capacity_per_sec, s.service_ms, s.model_slots(), s.workers, arrivals_name(s.arrivals),
      s.duration_ms / 1000, s.seed);
}

detail::Table rows_table(const std::vector<OverloadRow>& rows) {
  detail::Table t;
  t.header = {"gate",           "load",     "offered/s", "achieved/s", "coverage", "degraded",
              "never accepted", "p50 (ms)", "p95 (ms)",  "p99 (ms)",   ""};
  t.right_aligned = {false, true, true, true, true, true, true, true, true, true, false};
  for (const auto& r : rows) {
    const double accepted = r.accepted == 0 ? 1.0 : static_cast<double>(r.accepted);
    const double offered = r.offered == 0 ? 1.0 : static_cast<double>(r.offered);
    t.rows.push_back({r.gate, fmt::format("{:g}x", r.load), fmt::format("{:.1f}", r.offered_per_sec),
                      fmt::format("{:.1f}", r.achieved_per_sec), detail::fmt_pct(r.coverage),
                      detail::fmt_pct(static_cast<double>(r.degraded) / accepted),
                      detail::fmt_pct(static_cast<double>(r.never_accepted) / offered),
                      detail::fmt_ms(r.p50_ms), detail::fmt_ms(r.p95_ms), detail::fmt_ms(r.p99_ms),
                      r.biased ? "* biased" : ""});
  }
  return t;
}

bool any_biased(const std::vector<OverloadRow>& rows) {
  for (const auto& r : rows)
    if (r.biased) return true;
  return false;
}

constexpr std::string_view columns_note =
    "coverage = answered by the model / accepted; degraded = default answers / accepted; never accepted = "
    "arrivals that found every worker busy / offered; latencies of model-served requests, from the intended "
    "send time.";

void write_text(const OverloadReport& r, std::ostream& out) {
  out << settings_line(r) << "\n\n";
  detail::write_text_table(rows_table(r.rows), out);
  out << '\n' << columns_note << '\n';
  if (any_biased(r.rows)) out << bias_note << '\n';
  if (r.mode == "live") {
    out << "\nsimulation of the same arrivals (virtual time):\n";
    detail::write_text_table(rows_table(r.simulated), out);
    out << "\nagreement (" << r.tolerance << "): " << (r.disagreements.empty() ? "yes" : "NO") << '\n';
    for (const auto& d : r.disagreements) out << "  " << d << '\n';
  }
}

void write_markdown(const OverloadReport& r, std::ostream& out) {
  out << "## Overload admission gates\n\n" << settings_line(r) << "\n\n";
  detail::write_markdown_table(rows_table(r.rows), out);
  out << '\n' << columns_note << '\n';
  if (any_biased(r.rows)) out << '\n' << bias_note << '\n';
  if (r.mode == "live") {
    out << "\nSimulation of the same arrivals (virtual time):\n\n";
    detail::write_markdown_table(rows_table(r.simulated), out);
    out << "\nAgreement (" << r.tolerance << "): **" << (r.disagreements.empty() ? "yes" : "no") << "**\n";
    for (const auto& d : r.disagreements) out << "- " << d << '\n';
  }
}

boost::json::value number_or_null(double v) {
  if (std::isnan(v)) return nullptr;
  return v;
}

boost::json::array rows_json(const std::vector<OverloadRow>& rows) {
  boost::json::array a;
  for (const auto& r : rows) {
    boost::json::object o;
    o["gate"] = r.gate;
    o["load"] = r.load;
    o["offered_per_sec"] = r.offered_per_sec;
    o["achieved_per_sec"] = r.achieved_per_sec;
    o["offered"] = r.offered;
    o["accepted"] = r.accepted;
    o["served"] = r.served;
    o["degraded"] = r.degraded;
    o["gave_up"] = r.gave_up;
    o["never_accepted"] = r.never_accepted;
    o["model_errors"] = r.model_errors;
    o["coverage"] = r.coverage;
    o["p50_ms"] = number_or_null(r.p50_ms);
    o["p95_ms"] = number_or_null(r.p95_ms);
    o["p99_ms"] = number_or_null(r.p99_ms);
    o["biased"] = r.biased;
    a.push_back(std::move(o));
  }
  return a;
}

void write_json(const OverloadReport& r, std::ostream& out) {
  const auto& s = r.settings;
  boost::json::object o;
  o["experiment"] = "overload";
  o["mode"] = r.mode;
  o["settings"] = {{"capacity_per_sec", s.capacity_per_sec},
                   {"service_ms", s.service_ms},
                   {"model_slots", s.model_slots()},
                   {"workers", s.workers},
                   {"duration_ms", s.duration_ms},
                   {"arrivals", arrivals_name(s.arrivals)},
                   {"seed", s.seed}};
  o["bias_rule"] = "biased when achieved_per_sec < 0.95 * offered_per_sec";
  o["rows"] = rows_json(r.rows);
  if (r.mode == "live") {
    o["simulated_rows"] = rows_json(r.simulated);
    o["tolerance"] = r.tolerance;
    o["agrees"] = r.disagreements.empty();
    boost::json::array d;
    for (const auto& m : r.disagreements) d.push_back(boost::json::string(m));
    o["disagreements"] = std::move(d);
  }
  out << boost::json::serialize(o) << '\n';
}

constexpr OverloadFormat formats_table[] = {
    {"text", write_text},
    {"json", write_json},
    {"markdown", write_markdown},
};

}  // namespace

std::span<const OverloadFormat> overload_formats() {
  return formats_table;
}

const OverloadFormat* find_overload_format(std::string_view name) {
  for (const auto& f : formats_table)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace llmchaos::experiments
