// JUnit XML in the shape of the common junit-10 schema (Jenkins / Ant): one testsuite per case folder,
// one testcase per case; a failed case carries <failure>, an unknown one (hang, crash) <error>.
#include <fmt/format.h>

#include <map>
#include <ostream>
#include <set>

#include "text.hpp"
#include "writers.hpp"

namespace llmchaos::reports::detail {
namespace {

using harness::CaseResult;
using harness::Verdict;

struct Suite {
  std::string name;
  std::vector<const CaseResult*> cases;
  int failures = 0, errors = 0;
  double time_ms = 0;
  int skipped = 0;  // n/a, not run: the target lacks a capability the case needs, or the case is exact_time
                    // (the JUnit schema has `skipped` per testsuite, not on testsuites)
};

// Suites in the order their first case appears, so the file follows the run's own order.
std::vector<Suite> group_by_folder(const harness::RunResult& run) {
  std::vector<Suite> suites;
  std::map<std::string, std::size_t> index;
  for (const auto& c : run.cases) {
    const auto name = suite_name(c);
    auto [it, added] = index.try_emplace(name, suites.size());
    if (added) suites.push_back(Suite{name, {}, 0, 0, 0, 0});
    auto& suite = suites[it->second];
    suite.cases.push_back(&c);
    suite.failures += c.verdict == Verdict::fail;
    suite.errors += c.verdict == Verdict::unknown;
    suite.skipped += c.verdict == Verdict::na;
    suite.time_ms += c.wall_ms;
  }
  return suites;
}

std::string attr(std::string_view s) {
  return markup_escape(s, true);
}

void property(std::ostream& out, std::string_view name, std::string_view value) {
  out << "      <property name=\"" << attr(name) << "\" value=\"" << attr(value) << "\"/>\n";
}

// Run facts every suite repeats, so a consumer that reads one suite alone still sees the seed.
void write_properties(std::ostream& out, const harness::RunResult& run, const Suite& suite) {
  std::set<std::string> policies;
  for (const auto* c : suite.cases)
    if (!c->policy_name.empty()) policies.insert(c->policy_name);
  std::string policy;
  for (const auto& p : policies) policy += (policy.empty() ? "" : ", ") + p;
  out << "    <properties>\n";
  property(out, "seed", std::to_string(run.seed));
  property(out, "driver", run.driver);
  property(out, "time_scale", format_number(run.time_scale));
  property(out, "policy", policy);
  property(out, "tool_version", run.tool_version);
  if (!run.label.empty()) property(out, "label", run.label);
  for (const auto& w : run.warnings) property(out, "warning", w);
  if (!run.started_at.empty()) property(out, "started_at", run.started_at);
  if (run.shard.sharded())
    property(out, "shard", std::to_string(run.shard.index) + "/" + std::to_string(run.shard.count));
  if (run.merged_shards > 0) property(out, "merged_shards", std::to_string(run.merged_shards));
  out << "    </properties>\n";
}

void write_case(std::ostream& out, const CaseResult& c) {
  out << "    <testcase classname=\"" << attr(suite_name(c)) << "\" name=\""
      << attr(c.name.empty() ? c.file : c.name) << "\" time=\"" << format_seconds(c.wall_ms) << "\">\n";
  const std::string details = case_details_text(c);
  if (c.verdict == Verdict::fail) {
    const auto failed = failed_checks(c);
    const std::string type = failed.empty() ? "fail" : failed.front()->name;
    out << "      <failure type=\"" << attr(type) << "\" message=\"" << attr(verdict_summary(c)) << "\">"
        << markup_escape(details) << "</failure>\n";
  } else if (c.verdict == Verdict::unknown) {
    const std::string reason = c.unknown_reason.empty() ? "unknown" : c.unknown_reason;
    const std::string type = reason.substr(0, reason.find_first_of(":; "));
    out << "      <error type=\"" << attr(type) << "\" message=\"" << attr(verdict_summary(c)) << "\">"
        << markup_escape(details) << "</error>\n";
  } else if (c.verdict == Verdict::na) {
    out << "      <skipped message=\"" << attr(verdict_summary(c)) << "\"/>\n";
  } else {
    // A passing case still shows its timeline: a success must not hide the failures before it.
    out << "      <system-out>" << markup_escape(details) << "</system-out>\n";
  }
  out << "    </testcase>\n";
}

}  // namespace

void write_junit(const harness::RunResult& run, const Options& /*options*/, std::ostream& out) {
  const auto suites = group_by_folder(run);
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << fmt::format(
      "<testsuites name=\"llmchaos\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{}\">\n",
      run.cases.size(), run.failed(), run.unknown(), format_seconds(run.duration_ms));
  for (std::size_t i = 0; i < suites.size(); ++i) {
    const auto& suite = suites[i];
    out << "  <testsuite name=\"" << attr(suite.name) << "\" package=\"" << attr(suite.name) << "\" id=\""
        << i << "\" tests=\"" << suite.cases.size() << "\" failures=\"" << suite.failures << "\" errors=\""
        << suite.errors << "\" skipped=\"" << suite.skipped << "\" time=\"" << format_seconds(suite.time_ms)
        << "\"";
    if (!run.started_at.empty()) out << " timestamp=\"" << attr(run.started_at) << "\"";
    out << ">\n";
    write_properties(out, run, suite);
    for (const auto* c : suite.cases) write_case(out, *c);
    out << "  </testsuite>\n";
  }
  out << "</testsuites>\n";
}

}  // namespace llmchaos::reports::detail
