// llmchaos explore: seeded random fault schedules (or --sweep) under virtual time, checked against an
// independent model of SPEC 3 and the SPEC 5 invariants; violations are shrunk into case files.
// Exit 0 no violation, 1 violations found, 2 usage or file error.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.hpp"
#include "llmchaos/core/spec_error.hpp"
#include "llmchaos/harness/explore.hpp"
#include "llmchaos/harness/mutation.hpp"

namespace llmchaos::app {
namespace {

int explore_command(const harness::ExploreOptions& options) {
  harness::ExploreReport rep;
  try {
    rep = harness::explore(options);
  } catch (const SpecError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::invalid_argument& e) {
    std::cerr << "llmchaos explore: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "llmchaos explore: " << e.what() << "\n";
    return 2;
  }
  const auto what =
      options.sweep ? std::string("sweep of failure positions") : fmt::format("seed {}", rep.seed);
  std::cout << fmt::format(
      "llmchaos explore: {}, {} runs ({}{}), {} failure points judged by the SPEC 3 model, {} not judged (a "
      "breaker may be open), {} violating run(s) in {:.2f} s\n",
      what, rep.runs, options.policy_file.empty() ? "generated policies" : "policy " + options.policy_file,
      options.mutation.empty() ? "" : ", mutation " + options.mutation, rep.points, rep.not_judged,
      rep.violating_runs, rep.elapsed_ms / 1000);
  std::cout << fmt::format("history digest: {:016x}\n", rep.digest);
  for (const auto& v : rep.violations) {
    std::cout << fmt::format("\nviolation ({}) found in run {}{}: {}\n", v.kind, v.run,
                             options.sweep ? std::string() : fmt::format(" of seed {}", rep.seed), v.message);
    std::cout << fmt::format(
        "  shrunk from {} step(s) on {} route(s) to {} step(s) on {} route(s) in {} runs\n", v.steps_before,
        v.routes_before, v.steps_after, v.routes_after, v.shrink_runs);
    const auto mutate = options.mutation.empty() ? std::string() : " --mutate " + options.mutation;
    if (!v.case_file.empty())
      std::cout << fmt::format("  case: {}\n  reproduce: llmchaos run{} {}{}\n", v.case_file, mutate,
                               v.case_file,
                               v.reproduced ? "" : "  (the case did NOT fail when run back: please report)");
    else
      std::cout << "  minimal case (--out DIR writes it):\n" << v.case_text;
  }
  return rep.violating_runs > 0 ? 1 : 0;
}

}  // namespace

void add_explore(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<harness::ExploreOptions>();
  auto* sub = app.add_subcommand(
      "explore",
      "random fault schedules under virtual time, checked against SPEC 3 and 5; failures shrunk to cases");
  sub->add_option("--seed", o->seed, "seed of the schedules: the same seed gives the same runs and digest")
      ->capture_default_str();
  sub->add_option("--runs", o->runs, "schedules to generate and run")
      ->check(CLI::Range(0, 100000000))
      ->capture_default_str();
  sub->add_option("--policy", o->policy_file,
                  "a shared policy file for every schedule (default: a random policy each)");
  sub->add_option("--out", o->out_dir,
                  "write each shrunk violation here as a case file `llmchaos run` reproduces");
  sub->add_flag(
      "--sweep", o->sweep,
      "instead of random schedules, fail the n-th attempt of each route for n = 1, 2, ... with every fault "
      "kind, dialect and request kind");
  sub->add_option("--max-cases", o->max_cases, "violations to shrink and write (the first of each kind)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  sub->add_option("--mutate", o->mutation,
                  "test the tester: run a deliberately broken stack (" + harness::mutation_names() + ")");
  sub->add_flag_callback(
      "--verbose,-v", [o] { o->log = &std::cerr; }, "print every violating run as it is found");
  sub->callback([o, &exit_code] { exit_code = explore_command(*o); });
}

}  // namespace llmchaos::app
