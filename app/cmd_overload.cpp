// llmchaos overload: the admission-gate study (SPEC 8): a model of fixed capacity behind a service with
// one gate, under open-loop load; live through the mock provider, or --virtual in simulated time.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "llmchaos/experiments/overload.hpp"
#include "llmchaos/experiments/overload_live.hpp"
#include "llmchaos/experiments/overload_report.hpp"

namespace llmchaos::app {

namespace {

namespace ex = llmchaos::experiments;

struct OverloadOptions {
  ex::OverloadSettings settings;
  std::vector<std::string> gates{"unbounded:400", "bounded:24", "admission:100"};
  std::vector<double> loads{1, 2, 4};
  std::string arrivals = "poisson";
  double duration_sec = 5;
  bool virtual_time = false;
  std::string json_path, markdown_path;
};

void write_to(const ex::OverloadFormat& format, const ex::OverloadReport& report, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
  format.write(report, out);
  if (!out) throw std::runtime_error(path + ": write failed");
}

int run(OverloadOptions o) {
  std::vector<ex::GateSpec> gates;
  for (const auto& g : o.gates) {
    try {
      gates.push_back(ex::parse_gate(g));
    } catch (const std::invalid_argument& e) {
      std::cerr << "llmchaos overload: " << e.what() << '\n';
      return 2;
    }
  }
  for (const double load : o.loads) {
    if (!(load > 0)) {
      std::cerr << fmt::format("llmchaos overload: --load values must be > 0, got {}\n", load);
      return 2;
    }
  }
  o.settings.duration_ms = o.duration_sec * 1000;
  o.settings.arrivals = o.arrivals == "constant" ? ex::ArrivalProcess::constant : ex::ArrivalProcess::poisson;
  ex::OverloadReport report;
  report.settings = o.settings;
  if (o.virtual_time) {
    report.mode = "virtual";
    report.rows = ex::overload_virtual(gates, o.loads, o.settings);
  } else {
    report.mode = "live";
    report.rows = ex::overload_live(gates, o.loads, o.settings);
    report.simulated = ex::overload_virtual(gates, o.loads, o.settings);
    const auto agreement = ex::compare_overload(report.rows, report.simulated);
    report.tolerance = agreement.tolerance;
    report.disagreements = agreement.disagreements;
  }
  ex::find_overload_format("text")->write(report, std::cout);
  if (!o.json_path.empty()) write_to(*ex::find_overload_format("json"), report, o.json_path);
  if (!o.markdown_path.empty()) write_to(*ex::find_overload_format("markdown"), report, o.markdown_path);
  return report.disagreements.empty() ? 0 : 1;
}

}  // namespace

void add_overload(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<OverloadOptions>();
  auto* sub = app.add_subcommand("overload",
                                 "Overload admission gates: a model of fixed capacity behind unbounded / "
                                 "bounded / admission gates under "
                                 "open-loop load (live through the mock provider, or --virtual)");
  sub->add_option("--capacity", o->settings.capacity_per_sec, "model capacity, requests per second")
      ->check(CLI::Range(0.1, 100000.0))
      ->capture_default_str();
  sub->add_option("--service-ms", o->settings.service_ms, "model time per request (ms)")
      ->check(CLI::Range(0.1, 600000.0))
      ->capture_default_str();
  sub->add_option("--workers", o->settings.workers, "request handlers of the service in front of the model")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  sub->add_option("--gate", o->gates,
                  "unbounded:WAITCAP_MS, bounded:N or admission:BUDGET_MS (repeat or comma list)")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--load", o->loads, "offered load, times capacity (comma list)")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--arrivals", o->arrivals, "arrival process")
      ->check(CLI::IsMember({"constant", "poisson"}))
      ->capture_default_str();
  sub->add_option("--duration", o->duration_sec, "seconds of arrivals per gate and load")
      ->check(CLI::Range(0.01, 3600.0))
      ->capture_default_str();
  sub->add_option("--seed", o->settings.seed, "arrival seed")->capture_default_str();
  sub->add_flag("--virtual", o->virtual_time,
                "simulate in virtual time (discrete events) instead of live sockets");
  sub->add_option("--json", o->json_path, "write the JSON report to FILE");
  sub->add_option("--markdown", o->markdown_path, "write the Markdown report to FILE");
  sub->callback([o, &exit_code] {
    try {
      exit_code = run(*o);
    } catch (const std::exception& e) {
      std::cerr << "llmchaos overload: " << e.what() << '\n';
      exit_code = 2;
    }
  });
}

}  // namespace llmchaos::app
