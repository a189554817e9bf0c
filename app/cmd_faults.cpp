// llmchaos faults: the fault catalog as the code has it, from each fault kind's own spec (its name, the
// step keys only it reads, its one-line summary and the traits the other layers read). mockprovider/faults/
// README.md's table is checked against this output (tests/harness/test_faults_cli.cpp), so the two agree.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "llmchaos/mockprovider/fault.hpp"

namespace llmchaos::app {
namespace {

std::string in_band_text(mock::InBand b) {
  switch (b) {
    case mock::InBand::never:
      return "";
    case mock::InBand::always:
      return "a 2xx still fails";
    case mock::InBand::under_output_contract:
      return "a 2xx fails under an output contract";
  }
  return "";
}

// The traits a reader of the table needs: when a 2xx is still a failure, whether the events sent may be
// a commit, and the hint sent when the script gives none.
std::string traits_text(const mock::FaultTraits& t) {
  std::string out = in_band_text(t.in_band);
  const auto add = [&out](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
  if (t.breaks_stream) add("breaks the stream");
  if (t.default_retry_after_ms)
    add(fmt::format("retry hint {} ms unless scripted", *t.default_retry_after_ms));
  return out;
}

std::string keys_text(const mock::FaultSpec& spec) {
  std::string out;
  for (const auto key : spec.params) out += fmt::format("{}`{}`", out.empty() ? "" : ", ", key);
  return out;
}

void print_faults(bool markdown) {
  if (markdown) std::cout << "| fault | own keys | summary | traits |\n| --- | --- | --- | --- |\n";
  for (const mock::FaultSpec* spec : mock::all_faults()) {
    const auto name = to_string(spec->kind);
    if (markdown) {
      std::cout << fmt::format("| `{}` | {} | {} | {} |\n", name, keys_text(*spec), spec->summary,
                               traits_text(spec->traits));
      continue;
    }
    std::cout << fmt::format("{:<20} {}\n", name, spec->summary);
    if (!spec->params.empty()) std::cout << fmt::format("{:<20}   keys: {}\n", "", keys_text(*spec));
    if (const auto traits = traits_text(spec->traits); !traits.empty())
      std::cout << fmt::format("{:<20}   {}\n", "", traits);
  }
}

}  // namespace

void add_faults(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("faults", "List the fault kinds a script step can name, from their own specs");
  auto markdown = std::make_shared<bool>(false);
  cmd->add_flag("--markdown", *markdown, "One Markdown table (fault, own keys, summary, traits)");
  cmd->callback([markdown, &exit_code] {
    print_faults(*markdown);
    exit_code = 0;
  });
}

}  // namespace llmchaos::app
