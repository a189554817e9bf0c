// llmchaos run: play a suite of cases against one in-process mock provider, check every history, write
// reports, and gate on a baseline. Exit 0 all passed, 1 any failed / unknown / changed, 2 usage or file.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "commands.hpp"
#include "llmchaos/core/spec_error.hpp"
#include "llmchaos/harness/capabilities.hpp"
#include "llmchaos/harness/mutation.hpp"
#include "llmchaos/harness/runner.hpp"
#include "llmchaos/harness/shard.hpp"
#include "llmchaos/reports/json.hpp"
#include "number_checks.hpp"
#include "run_outputs.hpp"

namespace llmchaos::app {
namespace {

struct RunArgs {
  std::vector<std::string> paths;
  harness::RunOptions run;
  std::vector<std::string> filters;
  RunOutputs outputs;
  std::string shard;      // --shard K/N
  std::string durations;  // --durations report.json
  bool quiet = false;
  int repeat = 1;
  std::string capabilities;  // --target-capabilities, parsed in run_command
  bool capabilities_given = false;
  std::string label;
};

// The target's settings as the reports and the scorecard show them.
std::vector<harness::Setting> target_settings(const RunArgs& a) {
  const auto& d = a.run.driver_options;
  std::vector<harness::Setting> out{{"driver", a.run.driver},
                                    {"time_scale", fmt::format("{}", a.run.time_scale)}};
  if (!d.exec_command.empty()) out.push_back({"exec", d.exec_command});
  if (!d.target_url.empty()) out.push_back({"target", d.target_url});
  if (!d.target_command.empty()) out.push_back({"target_command", d.target_command});
  if (!d.target_config.empty()) out.push_back({"target_config", d.target_config});
  for (const auto& h : d.target_headers) out.push_back({"target_header", h.substr(0, h.find(':'))});
  if (!d.target_drain.empty()) out.push_back({"target_drain", d.target_drain});
  return out;
}

// --repeat: cases whose verdict or actions differ between two runs of the same suite (flaky cases).
void note_changes(const harness::RunResult& before, const harness::RunResult& after,
                  std::set<std::string>& changed) {
  for (std::size_t i = 0; i < before.cases.size() && i < after.cases.size(); ++i)
    if (before.cases[i].verdict != after.cases[i].verdict ||
        before.cases[i].observed_actions != after.cases[i].observed_actions)
      changed.insert(after.cases[i].name);
}

// Phase 1: the options only this command checks (usage errors, before a file is read).
bool check_options(RunArgs& a) {
  if (a.paths.empty()) a.paths.push_back("cases");
  if (a.capabilities_given) {
    try {
      a.run.driver_options.capabilities = harness::parse_capabilities(a.capabilities);
    } catch (const std::invalid_argument& e) {
      std::cerr << "llmchaos run: --target-capabilities: " << e.what() << "\n";
      return false;
    }
  }
  if (!a.run.driver_options.mutation.empty() && a.run.driver != "inproc") {
    std::cerr << "llmchaos run: --mutate breaks the in-process stack (--driver inproc) only\n";
    return false;
  }
  return true;
}

// Phase 2: the suite, every error of every file shown; the exact_time cases announced.
std::optional<harness::SuiteLoad> load_cases(const RunArgs& a) {
  auto suite = harness::load_suite(a.paths, a.filters);
  for (const auto& e : suite.errors) std::cerr << e.what() << "\n";
  if (!suite.errors.empty()) {
    std::cerr << fmt::format("llmchaos run: {} error(s) in the case files; nothing was run\n",
                             suite.errors.size());
    return std::nullopt;
  }
  if (suite.cases.empty()) {
    std::cerr << "llmchaos run: no case to run" << (a.filters.empty() ? "" : " (none matches --filter)")
              << "\n";
    return std::nullopt;
  }
  // A case on an exact time boundary means something only on a virtual clock (cases/README.md): a live
  // run with the exec or http driver does not play it, and its reports list it as n/a (not run).
  if (!a.run.virtual_time) {
    std::vector<std::string> exact;
    for (const auto& c : suite.cases)
      if (c.exact_time) exact.push_back(c.name);
    // The in-process stack needs no socket: its run plays them on a virtual clock (runner.cpp).
    if (!exact.empty() && a.run.driver == "inproc")
      std::cout << fmt::format("{} exact_time case(s) played under virtual time: {}\n", exact.size(),
                               fmt::join(exact, "; "));
    else if (!exact.empty())
      std::cout << fmt::format("{} exact_time case(s) not run (they need --virtual-time): {}\n", exact.size(),
                               fmt::join(exact, "; "));
  }
  return suite;
}

// The part of the suite this run plays (--shard: each case keeps its place in the whole catalog).
struct Picked {
  std::vector<harness::Case> cases;
  std::vector<std::size_t> index;                            // each picked case's place in the suite
  std::vector<std::pair<std::string, std::string>> catalog;  // the whole suite: (folder, name)
  harness::Shard shard;
};

// Phase 3: the shard's cases.
std::optional<Picked> pick_cases(const RunArgs& a, harness::SuiteLoad& suite) {
  Picked p;
  std::vector<std::string> names;
  for (const auto& c : suite.cases) {
    p.catalog.emplace_back(c.folder, c.name);
    names.push_back(c.name);
  }
  if (!a.shard.empty()) {
    const auto parsed = harness::parse_shard(a.shard);
    if (!parsed) {
      std::cerr << fmt::format("llmchaos run: --shard {}: expected K/N with 1 <= K <= N (e.g. 2/4)\n",
                               a.shard);
      return std::nullopt;
    }
    p.shard = *parsed;
  }
  std::map<std::string, double> durations;
  if (!a.durations.empty()) {
    try {
      for (const auto& c : reports::read_json_report(a.durations).cases) durations[c.name] = c.wall_ms;
    } catch (const std::exception& e) {
      std::cerr << e.what() << "\n";
      return std::nullopt;
    }
  }
  p.index = harness::shard_cases(names, p.shard, durations);
  p.cases.reserve(p.index.size());
  for (std::size_t i : p.index) p.cases.push_back(std::move(suite.cases[i]));
  return p;
}

struct Played {
  harness::RunOutcome outcome;
  double total_ms = 0;
  std::set<std::string> changed;  // --repeat: cases whose verdict or actions differ between runs
};

// Phase 4: the cases, --repeat times.
std::optional<Played> play(RunArgs& a, const std::vector<harness::Case>& cases) {
  if (!a.quiet) {
    a.run.progress = &std::cerr;
    a.run.progress_tty = isatty(STDERR_FILENO) != 0;
  }
  Played p;
  try {
    for (int k = 0; k < a.repeat; ++k) {
      auto previous = std::move(p.outcome.result);
      p.outcome = harness::run_suite(cases, a.run);
      p.total_ms += p.outcome.result.duration_ms;
      if (k > 0) note_changes(previous, p.outcome.result, p.changed);
    }
  } catch (const std::exception& e) {
    std::cerr << "llmchaos run: " << e.what() << "\n";
    return std::nullopt;
  }
  return p;
}

// Phase 5: the run's facts for the reports, the reports, the gate.
int report(RunArgs& a, const Picked& picked, Played& played) {
  auto& run = played.outcome.result;
  run.label = a.label;
  auto settings = target_settings(a);
  settings.insert(settings.end(), run.settings.begin(), run.settings.end());
  run.settings = std::move(settings);
  run.shard = picked.shard;
  run.catalog = harness::catalog_digest(picked.catalog);
  run.catalog_cases = static_cast<int>(picked.catalog.size());
  for (std::size_t i = 0; i < run.cases.size() && i < picked.index.size(); ++i)
    run.cases[i].index = static_cast<int>(picked.index[i]);
  // A shard's report.json is read by `report merge`, not by eye: written without indentation (the same
  // fields; about 40% smaller).
  if (picked.shard.sharded()) {
    a.outputs.json_compact = true;
    std::cout << fmt::format("shard {}: {} of the suite's {} case(s)\n", harness::shard_label(picked.shard),
                             run.cases.size(), picked.catalog.size());
  }
  std::string repeat_text;
  if (a.repeat > 1) {
    const double n = static_cast<double>(a.repeat) * static_cast<double>(run.cases.size());
    repeat_text = fmt::format("repeat: {} runs, {:.0f} cases in {:.3f} s: {:.0f} cases/s{}\n", a.repeat, n,
                              played.total_ms / 1000, played.total_ms > 0 ? n * 1000 / played.total_ms : 0.0,
                              a.run.virtual_time ? " (virtual time)" : "");
    for (const auto& name : played.changed) repeat_text += fmt::format("  changed between runs: {}\n", name);
  }
  return a.outputs.finish(run, "run", repeat_text, !played.changed.empty());
}

int run_command(RunArgs& a) {
  if (!check_options(a)) return 2;
  auto suite = load_cases(a);
  if (!suite) return 2;
  auto picked = pick_cases(a, *suite);
  if (!picked || !a.outputs.load_baseline()) return 2;
  auto played = play(a, picked->cases);
  if (!played) return 2;
  const int code = report(a, *picked, *played);
  if (played->outcome.abandoned > 0) {
    // A hung case thread is still blocked somewhere: do not wait for it (CI never hangs).
    std::cerr << fmt::format("llmchaos run: {} hung case(s) abandoned\n", played->outcome.abandoned);
    std::cout.flush();
    std::cerr.flush();
    std::_Exit(code);
  }
  return code;
}

}  // namespace

void add_run(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<RunArgs>();
  auto* sub =
      app.add_subcommand("run", "run cases against the mock provider, check every action, write reports");
  sub->add_option("paths", a->paths, "case files or folders (default: cases/)");
  sub->add_option("--driver", a->run.driver, "what to drive: " + harness::driver_names())
      ->capture_default_str();
  sub->add_option("--jobs,-j", a->run.jobs, "cases run in parallel (default: the machine's cores)")
      ->check(CLI::Range(1, 256));
  sub->add_option("--seed", a->run.seed, "seed of every random choice (jitter); written in every report")
      ->capture_default_str();
  sub->add_option("--time-scale", a->run.time_scale,
                  "multiply every scripted delay, retry-after and time budget by this factor (e.g. 0.05)")
      ->check(finite_between(0, 1000, /*min_open=*/true))
      ->capture_default_str();
  sub->add_option("--filter", a->filters,
                  "run only cases with this tag, or whose whole name or file path (as found under the paths "
                  "given) matches "
                  "this glob; * also matches /: --filter '*quota*' (repeatable: any match selects)");
  a->outputs.add_options(sub);
  sub->add_option("--shard", a->shard,
                  "play part K of N of the suite (e.g. 2/4): a stable split by case name; merge the shards' "
                  "report.json with `llmchaos report merge`");
  sub->add_option("--durations", a->durations,
                  "with --shard: balance the shards by the case durations recorded in this report.json");
  sub->add_option("--min-deadline-ms", a->run.min_deadline_ms, "shortest hard deadline of a case, real ms")
      ->check(finite_between(0, 86'400'000, /*min_open=*/true))
      ->capture_default_str();
  sub->add_flag("--virtual-time", a->run.virtual_time,
                "play every case under a virtual clock through a simulated transport (no sockets): the same "
                "verdicts, far faster");
  sub->add_option("--repeat", a->repeat,
                  "run the suite this many times and print cases per second; a case whose verdict or actions "
                  "change between runs fails the run; reports are of the last run")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  sub->add_option(
      "--exec", a->run.driver_options.exec_command,
      "--driver exec: the program started per request (via /bin/sh -c; see harness/drivers/README.md)");
  sub->add_option("--target", a->run.driver_options.target_url,
                  "--driver http: the service's base URL; {port} = the port picked for --target-command");
  sub->add_option(
      "--target-config", a->run.driver_options.target_config,
      "--driver http: a config template rendered per case ({{policy}}, {{route.NAME.base_url}}, ...; "
      "see harness/drivers/README.md)");
  sub->add_option(
      "--target-command", a->run.driver_options.target_command,
      "--driver http: the service started per case via /bin/sh -c, {config} and {port} substituted; "
      "killed (process group) at the case's end");
  sub->add_option("--target-key", a->run.driver_options.target_key,
                  "--driver http: the API key sent as Bearer")
      ->capture_default_str();
  sub->add_option(
      "--target-drain", a->run.driver_options.target_drain,
      "--driver http: where queued requests are redelivered: a path to POST after the requests, or none "
      "(default: /v1/llmchaos/drain, and only after the target answered 202)");
  sub->add_option(
      "--target-header", a->run.driver_options.target_headers,
      "--driver http: 'NAME: TEMPLATE' sent with every request, rendered per case ({{policy_json}}, "
      "{{routes_json}}, {{fallback_json}}, {{route.NAME.base_url?}}, ...; JSON-escaped; repeatable)");
  sub->add_option("--target-capabilities", a->capabilities,
                  "what the system under test can do (" + harness::capability_names() +
                      ", or none); a case needing an absent one is n/a (default: every one)")
      ->each([a](const std::string&) { a->capabilities_given = true; });
  sub->add_option("--label", a->label,
                  "the system under test's name and version, shown in reports and the scorecard");
  sub->add_option("--mutate", a->run.driver_options.mutation,
                  "--driver inproc, testing the tester: run a deliberately broken stack (" +
                      harness::mutation_names() +
                      "); a case `llmchaos explore --mutate` wrote must then fail");
  sub->add_flag("--quiet,-q", a->quiet, "no progress output");
  sub->callback([a, &exit_code] { exit_code = run_command(*a); });
}

}  // namespace llmchaos::app
