#pragma once
// A case: one TOML file (cases/README.md documents every key). Loaded once into this validated,
// immutable value; the checker and the drivers only read it.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/client/executor.hpp"
#include "llmchaos/client/policy.hpp"
#include "llmchaos/core/spec_error.hpp"
#include "llmchaos/core/types.hpp"
#include "llmchaos/mockprovider/script.hpp"

namespace toml {
inline namespace v3 {
class table;
}
}  // namespace toml

namespace llmchaos::harness {

struct ExpectAt {
  int point = 1;  // 1-based failure point, counted across every request of the case
  Action action = Action::none;
  SourcePos pos;
};

struct NoHammering {
  std::optional<std::string> route;  // empty: every route
  int max_attempts = 1;
  double window_ms = 1000;
};

// [checks.cooldown]: a route's cooldown after a 429 / 402, judged over the case's sequence of requests.
struct Cooldown {
  double slack_ms = 250;                  // a rate cooldown may end this much after its Retry-After
  std::optional<double> quota_window_ms;  // after a quota 429 / 402: no attempt on the route this long
  // caller_timeout_no_cooldown: an attempt the caller abandoned on a healthy, slow provider does not
  // send the next request elsewhere.
  bool caller_timeout_no_cooldown = false;
  // fallback_without_waiting: a fallback attempt starts this soon after the failure it follows.
  std::optional<double> fallback_within_ms;
  // retry_after_forwarded: a request refused while every route cools carries a Retry-After no earlier
  // than the soonest cooldown end.
  bool retry_after_forwarded = false;
};

// Conduct checks a case may ask for (all times in scripted ms; the checker scales them).
struct Checks {
  std::optional<double> no_hang_ms;
  bool no_truncated_success = false;
  bool retry_after_honoured = false;
  std::optional<NoHammering> no_hammering;
  std::optional<Cooldown> cooldown;
  std::optional<double> max_wall_ms;
  bool alive_after = false;
  bool names_serving_route = false;
};

// [[expect_share]]: the traffic split inside a model group, judged from the ledger. The attempts the
// mock received on `route` (a member of a group) and on the whole group, counted over the attempts that
// arrived in [from_ms, until_ms) scripted ms after the case started (each bound optional).
struct ExpectShare {
  std::string route;
  std::optional<double> from_ms, until_ms;
  std::optional<double> min, max;                 // the member's share of its group's attempts, 0..1
  std::optional<int> min_attempts, max_attempts;  // the member's attempts
  SourcePos pos;
};

struct Sequence {
  int count = 1;
  double interval_ms = 0;
  std::string outage_route;  // default: the workflow's primary
  bool served_during_outage = false;
  std::optional<double> recovered_within_ms;
  std::optional<int> max_outage_attempts;
  // Each request starts at its time even while earlier ones are still running (one stack, concurrent
  // requests, as a gateway's callers are): a failure can then arrive while its route cools.
  bool overlap = false;
  static constexpr int max_overlapping = 64;
};

struct Case {
  std::string name;
  std::string description;
  std::string file;    // path as given
  std::string folder;  // folder relative to the suite root ("" at the root): the JUnit classname
  std::vector<std::string> tags;

  Action expect = Action::none;
  std::optional<Outcome> expect_outcome;
  std::map<std::string, int> expect_attempts;
  std::vector<ExpectAt> expect_at;

  std::string policy_file;  // the shared policy file as resolved ("" = inline only)
  client::Policy policy;    // unscaled
  mock::Script script;      // unscaled (the engine scales it)
  client::WorkflowRequest request;
  Checks checks;
  std::optional<Sequence> sequence;
  // [tier]: the limits of the key every request of the case is sent with (the gateway's tiers): a request
  // over one is refused before the stack runs it (the caller sees a 429; the mock sees nothing).
  std::optional<client::RateLimits> tier;
  // [groups]: model groups, name -> member routes (each a [route.NAME] of the mock). The stack sees a
  // group as one route (the workflow's primary / fallback may name it); each attempt goes to one member,
  // picked by the balancer. `group_of` is the reverse map (member -> group).
  std::map<std::string, std::vector<std::string>> groups;
  std::map<std::string, std::string> group_of;
  // A member's `weight` in its [route.NAME] (default 1): the balancer shares a group's traffic among
  // near-tied members in proportion to it (client/include/llmchaos/client/balancer.hpp).
  std::map<std::string, double> weights;
  double weight_of(const std::string& member) const {
    auto it = weights.find(member);
    return it == weights.end() ? 1.0 : it->second;
  }
  std::vector<ExpectShare> expect_share;
  std::optional<int> expect_rate_limited;  // requests the tier refused, over the whole case
  std::optional<double> deadline_ms;       // scripted ms
  // The case sits on an exact time boundary (time left == retry-after + expected time, say) that only a
  // virtual clock can hit: a live run does not play it (`llmchaos run` says so), --virtual-time does.
  bool exact_time = false;

  int request_count() const { return sequence ? sequence->count : 1; }
  // The route the stack sees for a route of the mock: its group when it is a member, else itself.
  const std::string& logical_route(const std::string& route) const;
  // The action expected at failure point `point` (1-based), none when the case does not pin it.
  std::optional<Action> expected_at(int point) const;
  // The hard real-time deadline in real ms for a run at `time_scale` (never below `floor_ms`).
  double deadline_real_ms(double time_scale, double floor_ms = 5000) const;
};

// Top-level keys that make a TOML file a case rather than a shared policy file.
inline constexpr std::string_view case_marker_keys[] = {"name", "expect", "tags", "request"};
bool is_case_document(const toml::table& doc);

struct LoadResult {
  std::optional<Case> value;      // set when there was no error
  std::vector<SpecError> errors;  // every error found, "file:line:col: message", in file order
  bool outside_root = false;      // its policy file is outside `read_root` (refused, not read)
};

// `folder` is stored as given. Loading goes on after an error in one section, so lint shows every
// error of a file at once. With `read_root` set (a server reading cases for remote callers) the
// policy file must be inside it (a text case's relative policy resolves against it).
LoadResult load_case_file(const std::string& path, const std::string& folder = {},
                          const std::string& read_root = {});
LoadResult load_case_text(std::string_view text, const std::string& source_name,
                          const std::string& folder = {}, const std::string& read_root = {});

// Lint one file (case or policy): every error of it.
std::vector<SpecError> lint_file(const std::string& path);

// Expands PATHS (files and directories, recursively, *.toml sorted) into files. A path that does not
// exist is a SpecError naming it. `root` of each file (for the folder) is the directory argument.
struct SuiteFile {
  std::string path;
  std::string folder;  // relative to the directory it was found under ("" for a file argument)
};
std::vector<SuiteFile> expand_paths(const std::vector<std::string>& paths);

// `llmchaos lint PATHS`: every error of every file, a case name used twice (which `run` refuses), and a
// warning "no case or policy here" for an empty file or a folder without a .toml file.
struct LintReport {
  std::size_t files = 0;
  std::vector<SpecError> errors;
  std::vector<SpecError> warnings;
};
LintReport lint_paths(const std::vector<std::string>& paths);

}  // namespace llmchaos::harness
