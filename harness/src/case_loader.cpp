// Case loader: TOML -> validated Case. Sections are read one by one and each section's error is kept,
// so `llmchaos lint` shows every broken section of a file at once.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <ranges>
#include <set>
#include <span>

#include "llmchaos/core/confined_path.hpp"
#include "llmchaos/core/toml_reader.hpp"
#include "llmchaos/harness/case.hpp"

namespace llmchaos::harness {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view case_sections[] = {"workflow", "backoff",  "route", "request",
                                              "checks",   "sequence", "tier",  "groups"};
constexpr double inf = std::numeric_limits<double>::infinity();

std::vector<std::string_view> keys_of(std::span<const std::string_view> keys) {
  return {keys.begin(), keys.end()};
}

// Runs one section; a SpecError is kept and loading goes on.
class Collector {
 public:
  bool run(const std::function<void()>& section) { return collect_errors(errors_, section); }
  std::vector<SpecError>& errors() { return errors_; }

 private:
  std::vector<SpecError> errors_;
};

// Moves every key of `from` that `into` lacks into it; tables present in both are merged the same
// way (the case's own keys win). Moving keeps the policy file's source positions for its errors.
void merge_missing(toml::table& into, toml::table&& from) {
  for (auto&& [key, node] : from) {
    if (auto* existing = into.get(key)) {
      if (existing->is_table() && node.is_table())
        merge_missing(*existing->as_table(), std::move(*node.as_table()));
      continue;
    }
    // Init-captures: clang < 16 cannot capture a structured binding (C++20 P1091), and the fuzz
    // build uses clang 14.
    std::move(node).visit([&into, &key = key](auto&& n) { into.insert(key, std::move(n)); });
  }
}

double read_ms(TomlReader& r, std::string_view key) {
  return *r.opt_number(key, 0, inf);
}

Checks read_checks(const toml::table& t, const std::string& file) {
  TomlReader r(t, file, "checks");
  Checks c;
  if (r.has("no_hang_ms")) c.no_hang_ms = read_ms(r, "no_hang_ms");
  c.no_truncated_success = r.opt_bool("no_truncated_success").value_or(false);
  c.retry_after_honoured = r.opt_bool("retry_after_honoured").value_or(false);
  if (auto* h = r.opt_table("no_hammering")) {
    TomlReader hr(*h, file, "checks.no_hammering");
    NoHammering n;
    n.route = hr.opt_string("route");
    auto max = hr.opt_int("max_attempts", 1, 1'000'000);
    if (!max) hr.fail_here("missing required key \"max_attempts\"");
    n.max_attempts = static_cast<int>(*max);
    auto window = hr.opt_number("window_ms", 0, inf);
    if (!window) hr.fail_here("missing required key \"window_ms\"");
    n.window_ms = *window;
    hr.reject_unknown_keys();
    c.no_hammering = n;
  }
  if (auto* t = r.opt_table("cooldown")) {
    TomlReader cr(*t, file, "checks.cooldown");
    Cooldown cd;
    cd.slack_ms = cr.opt_number("slack_ms", 0, inf).value_or(cd.slack_ms);
    cd.quota_window_ms = cr.opt_number("quota_window_ms", 0, inf);
    cd.caller_timeout_no_cooldown = cr.opt_bool("caller_timeout_no_cooldown").value_or(false);
    cd.fallback_within_ms = cr.opt_number("fallback_within_ms", 0, inf);
    cd.retry_after_forwarded = cr.opt_bool("retry_after_forwarded").value_or(false);
    cr.reject_unknown_keys();
    c.cooldown = cd;
  }
  if (r.has("max_wall_ms")) c.max_wall_ms = read_ms(r, "max_wall_ms");
  c.alive_after = r.opt_bool("alive_after").value_or(false);
  c.names_serving_route = r.opt_bool("names_serving_route").value_or(false);
  r.reject_unknown_keys();
  return c;
}

Sequence read_sequence(const toml::table& t, const std::string& file) {
  TomlReader r(t, file, "sequence");
  Sequence s;
  auto count = r.opt_int("count", 1, 10'000);
  if (!count) r.fail_here("missing required key \"count\"");
  s.count = static_cast<int>(*count);
  s.interval_ms = r.opt_number("interval_ms", 0, inf).value_or(0);
  s.outage_route = r.opt_string("outage_route").value_or("");
  s.served_during_outage = r.opt_bool("served_during_outage").value_or(false);
  if (r.has("recovered_within_ms")) s.recovered_within_ms = read_ms(r, "recovered_within_ms");
  if (auto n = r.opt_int("max_outage_attempts", 0, 1'000'000)) s.max_outage_attempts = static_cast<int>(*n);
  s.overlap = r.opt_bool("overlap").value_or(false);
  if (s.overlap && s.count > Sequence::max_overlapping)
    r.fail_here(fmt::format("overlap = true sends every request on a thread of its own: at most {} requests",
                            Sequence::max_overlapping));
  r.reject_unknown_keys();
  return s;
}

client::RateLimits read_tier(const toml::table& t, const std::string& file) {
  TomlReader r(t, file, "tier");
  auto limits = client::rate_limits_from_toml(r);
  r.reject_unknown_keys();
  if (!limits.requests_per_minute && !limits.requests_per_day && !limits.tokens_per_minute)
    r.fail_here("a tier needs at least one of rpm, rpd, tpm");
  return limits;
}

// [groups]: NAME = ["member", ...]; the members are checked against the routes later.
std::map<std::string, std::vector<std::string>> read_groups(const toml::table& t, const std::string& file) {
  TomlReader r(t, file, "groups");
  std::map<std::string, std::vector<std::string>> out;
  std::set<std::string> seen;
  for (const auto& [key, node] : t) {
    const std::string name(key.str());
    auto members = r.opt_string_array(name);
    if (!members || members->empty())
      r.fail(name, "needs a list of member routes, [\"a\", \"b\", ...] (at least one)");
    for (const auto& m : *members) {
      if (m == name) r.fail(name, fmt::format("a group cannot be its own member (\"{}\")", m));
      if (!seen.insert(m).second)
        r.fail(name, fmt::format("route \"{}\" is a member twice (a route belongs to one group)", m));
    }
    out[name] = *members;
  }
  return out;
}

std::vector<ExpectShare> read_expect_share(const toml::array& arr, const std::string& file) {
  std::vector<ExpectShare> out;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const auto& node = *arr.get(i);
    auto* t = node.as_table();
    if (!t) throw SpecError(pos_of(node, file), fmt::format("expect_share[{}]: expected a table", i));
    TomlReader r(*t, file, fmt::format("expect_share[{}]", i));
    ExpectShare e;
    e.pos = r.pos();
    auto route = r.opt_string("route");
    if (!route) r.fail_here("missing required key \"route\" (a member of a group)");
    e.route = *route;
    e.from_ms = r.opt_number("from_ms", 0, inf);
    e.until_ms = r.opt_number("until_ms", 0, inf);
    e.min = r.opt_number("min", 0, 1);
    e.max = r.opt_number("max", 0, 1);
    if (auto n = r.opt_int("min_attempts", 0, 1'000'000)) e.min_attempts = static_cast<int>(*n);
    if (auto n = r.opt_int("max_attempts", 0, 1'000'000)) e.max_attempts = static_cast<int>(*n);
    r.reject_unknown_keys();
    if (!e.min && !e.max && !e.min_attempts && !e.max_attempts)
      r.fail_here("needs at least one of min, max, min_attempts, max_attempts");
    if (e.from_ms && e.until_ms && *e.until_ms <= *e.from_ms) r.fail("until_ms", "must be after from_ms");
    if (e.min && e.max && *e.max < *e.min) r.fail("max", "is below min");
    if (e.min_attempts && e.max_attempts && *e.max_attempts < *e.min_attempts)
      r.fail("max_attempts", "is below min_attempts");
    out.push_back(std::move(e));
  }
  return out;
}

client::WorkflowRequest read_request(const toml::table& t, const std::string& file) {
  TomlReader r(t, file, "request");
  client::WorkflowRequest q;
  q.stream = r.opt_bool("stream").value_or(q.stream);
  q.prompt = r.opt_string("prompt").value_or(q.prompt);
  q.tool_call = r.opt_bool("tool_call").value_or(q.tool_call);
  q.prefill = r.opt_bool("prefill").value_or(q.prefill);
  q.model = r.opt_string("model").value_or(q.model);
  if (q.model.empty()) r.fail("model", "must not be empty");
  r.reject_unknown_keys();
  return q;
}

// The keys of a map joined by ", " (a loop, not std::views::keys: clang 14 over libstdc++ 12 rejects it).
template <class Map>
std::string key_list(const Map& map) {
  std::string out;
  for (const auto& [name, value] : map) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::string route_list(const mock::Script& script) {
  return key_list(script.routes);
}
std::string group_list(const Case& c) {
  return key_list(c.groups);
}

bool has_window(const mock::RouteScript& route) {
  return std::any_of(route.steps.begin(), route.steps.end(),
                     [](const mock::Step& s) { return s.until_ms.has_value(); });
}

// File order; a key both owners of a route table reject is reported once.
void sort_errors(std::vector<SpecError>& errors) {
  std::stable_sort(errors.begin(), errors.end(), [](const SpecError& a, const SpecError& b) {
    return std::tie(a.pos().file, a.pos().line, a.pos().column) <
           std::tie(b.pos().file, b.pos().line, b.pos().column);
  });
  errors.erase(std::unique(errors.begin(), errors.end(),
                           [](const SpecError& a, const SpecError& b) {
                             return std::string_view(a.what()) == b.what();
                           }),
               errors.end());
}

// One case document being loaded: the phases below read it in order, each keeping its errors so that
// every broken section is reported at once, and each later phase runs only on what the earlier ones
// could read (the *_ok flags).
struct CaseLoad {
  toml::table doc;
  std::string file;
  TomlReader top;
  Collector errors;
  Case c;
  std::optional<std::string> policy_ref;
  SourcePos policy_pos;
  std::map<std::string, SourcePos> attempts_pos;
  bool expect_ok = false, groups_ok = false, policy_ok = true, routes_ok = true, workflow_ok = false;
  std::string read_root;      // "" = any policy file may be read
  bool outside_root = false;  // the policy file named is outside read_root

  CaseLoad(toml::table d, const std::string& f) : doc(std::move(d)), file(f), top(doc, file) {}
};

std::vector<ExpectAt> read_expect_at(const toml::array& arr, const std::string& file) {
  std::vector<ExpectAt> out;
  std::set<int> points;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const auto& node = *arr.get(i);
    auto* t = node.as_table();
    if (!t) throw SpecError(pos_of(node, file), fmt::format("expect_at[{}]: expected a table", i));
    TomlReader r(*t, file, fmt::format("expect_at[{}]", i));
    ExpectAt at;
    at.pos = r.pos();
    auto point = r.opt_int("point", 1, 1'000'000);
    if (!point) r.fail_here("missing required key \"point\"");
    at.point = static_cast<int>(*point);
    auto action = r.opt_enum<Action>("action");
    if (!action) r.fail_here("missing required key \"action\"");
    if (*action == Action::none) r.fail("action", "\"none\" is not an action at a failure point");
    at.action = *action;
    r.reject_unknown_keys();
    if (!points.insert(at.point).second) r.fail("point", fmt::format("point {} is pinned twice", at.point));
    out.push_back(at);
  }
  return out;
}

// Phase 1, the top-level keys: name, expectations, groups, the policy reference.
void read_top_level(CaseLoad& x) {
  auto& top = x.top;
  auto& c = x.c;
  auto& errors = x.errors;
  for (auto key : case_sections) top.allow(key);
  errors.run([&] { c.name = top.req_string("name"); });
  errors.run([&] { c.description = top.opt_string("description").value_or(""); });
  errors.run([&] { c.tags = top.opt_string_array("tags").value_or(std::vector<std::string>{}); });
  x.expect_ok = errors.run([&] {
    auto e = top.opt_enum<Action>("expect");
    if (!e)
      top.fail_here(
          "missing required key \"expect\" (retry, fallback, queue, degrade, fail_closed, resume or none)");
    c.expect = *e;
  });
  errors.run([&] { c.expect_outcome = top.opt_enum<Outcome>("expect_outcome"); });
  errors.run([&] {
    auto* t = top.opt_table("expect_attempts");
    if (!t) return;
    TomlReader r(*t, x.file, "expect_attempts");
    for (const auto& [key, node] : *t) {
      std::string route(key.str());
      c.expect_attempts[route] = static_cast<int>(*r.opt_int(route, 0, 1'000'000));
      x.attempts_pos[route] = pos_of(node, x.file);
    }
  });
  errors.run([&] {
    if (auto* arr = top.opt_array("expect_at")) c.expect_at = read_expect_at(*arr, x.file);
  });
  errors.run([&] {
    if (auto d = top.opt_number("deadline_ms", 1, inf)) c.deadline_ms = *d;
    c.exact_time = top.opt_bool("exact_time").value_or(false);
  });
  errors.run([&] {
    if (auto n = top.opt_int("expect_rate_limited", 0, 1'000'000))
      c.expect_rate_limited = static_cast<int>(*n);
  });
  errors.run([&] {
    if (auto* arr = top.opt_array("expect_share")) c.expect_share = read_expect_share(*arr, x.file);
  });
  x.groups_ok = errors.run([&] {
    if (auto* t = top.opt_table("groups")) c.groups = read_groups(*t, x.file);
    for (const auto& [name, members] : c.groups)
      for (const auto& m : members) c.group_of[m] = name;
  });
  errors.run([&] {
    x.policy_ref = top.opt_string("policy");
    x.policy_pos = top.pos("policy");
  });
  errors.run([&] { top.reject_unknown_keys(); });
}

// Phase 2, the shared policy file: validated on its own (policy keys only), then merged under the case.
void merge_policy_file(CaseLoad& x) {
  if (!x.policy_ref) return;
  x.policy_ok = x.errors.run([&] {
    fs::path base = fs::path(x.file).parent_path();
    if (base.empty() && !x.read_root.empty()) base = x.read_root;
    fs::path p = base / *x.policy_ref;
    if (!x.read_root.empty() && !confined_existing_path(x.read_root, p)) {
      x.outside_root = true;  // not read: nothing about that file is told
      throw SpecError(x.policy_pos,
                      "policy: not inside the folder this server may read (--cases-root): refused");
    }
    const std::string path = p.lexically_normal().string();
    std::error_code ec;
    if (!fs::is_regular_file(p, ec))
      throw SpecError(x.policy_pos, ec && ec != std::errc::no_such_file_or_directory
                                        ? fmt::format("policy: cannot read \"{}\": {}", path, ec.message())
                                        : fmt::format("policy: no such file \"{}\"", path));
    auto policy_doc = parse_toml_file(path);
    if (is_case_document(policy_doc))
      throw SpecError(x.policy_pos, fmt::format("policy: {} is a case, not a policy", *x.policy_ref));
    client::policy_from_toml(policy_doc, path, /*allow_other_keys=*/false);
    x.c.policy_file = path;
    merge_missing(x.doc, std::move(policy_doc));
  });
}

// One [route.NAME] table: a group's (the stack's policy keys only, no script) or a route of the mock.
void read_route(CaseLoad& x, const std::string& name, const toml::node& node,
                const std::vector<std::string_view>& policy_keys,
                const std::vector<std::string_view>& member_keys) {
  auto* t = node.as_table();
  if (!t) throw SpecError(pos_of(node, x.file), fmt::format("route.{}: expected a table", name));
  if (x.c.groups.contains(name)) {
    TomlReader r(*t, x.file, "route." + name);
    for (auto k : policy_keys) r.allow(k);
    r.reject_unknown_keys();
    return;
  }
  x.c.script.routes[name] = mock::route_script_from_toml(*t, name, x.file, member_keys);
  if (t->contains("weight")) {
    TomlReader r(*t, x.file, "route." + name);
    const auto w = r.opt_number("weight", 1e-6, 1e6);
    if (!x.c.group_of.contains(name))
      r.fail("weight", "only a member of a [groups] group has a weight (its share of the group)");
    x.c.weights[name] = *w;
  }
}

// Phase 3, the routes: the mock reads the script keys, the client the policy keys, of the same tables.
// `weight`: a group member's share of its group (the balancer's). Then the policy of the whole case.
void read_routes_and_policy(CaseLoad& x) {
  std::vector<std::string_view> script_keys = keys_of(mock::route_script_keys);
  const std::vector<std::string_view> policy_keys = keys_of(client::route_policy_keys);
  std::vector<std::string_view> member_keys = policy_keys;
  member_keys.push_back("weight");
  script_keys.push_back("weight");
  auto* routes = x.doc.get("route");
  if (!routes) {
    x.routes_ok = false;
    x.errors.run([&] { x.top.fail_here("a case needs a [route.NAME] table for each route it uses"); });
  } else if (!routes->is_table()) {
    x.routes_ok = false;
    x.errors.run([&] { throw SpecError(pos_of(*routes, x.file), "route: expected a table of routes"); });
  } else {
    for (const auto& [key, node] : *routes->as_table()) {
      const std::string name(key.str());
      // init-capture: clang 14 (see merge_missing)
      x.routes_ok &= x.errors.run([&, &node = node] { read_route(x, name, node, policy_keys, member_keys); });
    }
  }
  // A group the stack sees as one route: without a [route.GROUP] of its own it has the default policy.
  if (x.groups_ok && x.routes_ok) {
    for (const auto& [name, members] : x.c.groups)
      if (!routes->as_table()->contains(name)) routes->as_table()->insert(name, toml::table{});
  }
  x.workflow_ok = x.policy_ok && x.errors.run([&] {
    x.c.policy = client::policy_from_toml(x.doc, x.file, true, script_keys);
  });
}

// Phase 4, the optional sections.
void read_sections(CaseLoad& x) {
  auto& top = x.top;
  auto& c = x.c;
  auto& errors = x.errors;
  errors.run([&] {
    if (auto* t = top.opt_table("request")) c.request = read_request(*t, x.file);
  });
  errors.run([&] {
    if (auto* t = top.opt_table("checks")) c.checks = read_checks(*t, x.file);
  });
  errors.run([&] {
    if (auto* t = top.opt_table("sequence")) c.sequence = read_sequence(*t, x.file);
  });
  errors.run([&] {
    if (auto* t = top.opt_table("tier")) c.tier = read_tier(*t, x.file);
    if (c.expect_rate_limited && !c.tier) top.fail("expect_rate_limited", "needs a [tier] with limits");
  });
}

bool named_by_workflow(const Case& c, const std::string& name) {
  const auto& w = c.policy.workflow;
  return name == w.primary || std::find(w.fallback.begin(), w.fallback.end(), name) != w.fallback.end();
}

void check_routes_used(const CaseLoad& x) {
  const auto& c = x.c;
  const auto& w = c.policy.workflow;
  for (const auto& [name, r] : c.script.routes) {
    if (!named_by_workflow(c, c.logical_route(name)))
      throw SpecError(
          r.pos,
          fmt::format("route.{}: the workflow never uses this route{} (primary = \"{}\", fallback = [{}])",
                      name, c.group_of.contains(name) ? " nor its group " + c.group_of.at(name) : "",
                      w.primary, fmt::join(w.fallback, ", ")));
  }
}

void check_groups(const CaseLoad& x) {
  const auto& c = x.c;
  const auto& w = c.policy.workflow;
  const auto* t = x.doc["groups"].as_table();
  for (const auto& [name, members] : c.groups) {
    TomlReader r(*t, x.file, "groups");
    if (!named_by_workflow(c, name))
      r.fail(name, fmt::format("the workflow never uses group \"{}\" (primary = \"{}\", fallback = [{}])",
                               name, w.primary, fmt::join(w.fallback, ", ")));
    for (const auto& m : members) {
      if (c.groups.contains(m))
        r.fail(name, fmt::format("\"{}\" is a group (a group's members are routes)", m));
      if (!c.script.routes.contains(m))
        r.fail(name, fmt::format("\"{}\" is not a route (a [route.{}] with its script; routes: {})", m, m,
                                 route_list(c.script)));
      if (named_by_workflow(c, m))
        r.fail(name, fmt::format(
                         "\"{}\" is also named by the workflow (a member is reached through its group)", m));
      // The stack classifies a group's answers in one dialect (as the gateway's [groups.NAME]).
      if (c.script.routes.at(m).dialect != c.script.routes.at(members.front()).dialect)
        r.fail(name, fmt::format("\"{}\" and \"{}\" speak different dialects (a group's routes speak one)",
                                 members.front(), m));
    }
  }
}

// Every route an expectation or a check names exists.
void check_named_routes(CaseLoad& x) {
  const auto& c = x.c;
  x.errors.run([&] {
    for (const auto& e : c.expect_share)
      if (!c.group_of.contains(e.route))
        throw SpecError(e.pos, fmt::format("expect_share: \"{}\" is not a member of a group (groups: {})",
                                           e.route, group_list(c)));
  });
  x.errors.run([&] {
    for (const auto& [route, n] : c.expect_attempts)
      if (!c.script.routes.contains(route) && !c.groups.contains(route))
        throw SpecError(
            x.attempts_pos.at(route),
            fmt::format("expect_attempts.{}: unknown route (routes: {})", route, route_list(c.script)));
  });
  x.errors.run([&] {
    const auto& h = c.checks.no_hammering;
    if (h && h->route && !c.script.routes.contains(*h->route)) {
      const auto* t = x.doc["checks"]["no_hammering"].as_table();
      TomlReader(*t, x.file, "checks.no_hammering")
          .fail("route", fmt::format("unknown route \"{}\" (routes: {})", *h->route, route_list(c.script)));
    }
  });
}

void check_sequence(CaseLoad& x) {
  auto& c = x.c;
  if (!c.sequence) return;
  auto& s = *c.sequence;
  TomlReader r(*x.doc["sequence"].as_table(), x.file, "sequence");
  if (s.outage_route.empty()) s.outage_route = c.policy.workflow.primary;
  const bool needs_outage = s.recovered_within_ms || s.max_outage_attempts;
  if (c.groups.contains(s.outage_route)) {  // the primary a group: its outage is its members'
    if (needs_outage)
      r.fail_here(
          fmt::format("recovered_within_ms and max_outage_attempts need outage_route = a route of the mock "
                      "(\"{}\" is a group)",
                      s.outage_route));
    return;
  }
  auto it = c.script.routes.find(s.outage_route);
  if (it == c.script.routes.end())
    r.fail("outage_route",
           fmt::format("unknown route \"{}\" (routes: {})", s.outage_route, route_list(c.script)));
  if (needs_outage && !has_window(it->second))
    r.fail_here(fmt::format(
        "recovered_within_ms and max_outage_attempts need an outage: a step with until_ms in route.{}",
        s.outage_route));
}

// Phase 5, the cross-checks: names that must exist, expectations that must agree.
void cross_check(CaseLoad& x) {
  const auto& c = x.c;
  if (x.expect_ok) {
    x.errors.run([&] {
      for (const auto& at : c.expect_at) {
        if (c.expect == Action::none)
          throw SpecError(at.pos, "expect_at: the case expects no failure point (expect = \"none\")");
        if (at.point == 1 && at.action != c.expect)
          throw SpecError(at.pos, fmt::format("expect_at: point 1 is \"{}\" but expect is \"{}\"",
                                              to_string(at.action), to_string(c.expect)));
      }
    });
  }
  if (!x.routes_ok || !x.workflow_ok) return;
  x.errors.run([&] { check_routes_used(x); });
  x.errors.run([&] { check_groups(x); });
  check_named_routes(x);
  x.errors.run([&] { check_sequence(x); });
}

LoadResult load_case_doc(toml::table doc, const std::string& file, const std::string& folder,
                         const std::string& read_root = {}) {
  CaseLoad x(std::move(doc), file);
  x.read_root = read_root;
  x.c.file = file;
  x.c.folder = folder;
  read_top_level(x);
  merge_policy_file(x);
  read_routes_and_policy(x);
  read_sections(x);
  cross_check(x);
  LoadResult out;
  out.errors = std::move(x.errors.errors());
  sort_errors(out.errors);
  out.outside_root = x.outside_root;
  if (out.errors.empty()) out.value = std::move(x.c);
  return out;
}

}  // namespace

const std::string& Case::logical_route(const std::string& route) const {
  auto it = group_of.find(route);
  return it == group_of.end() ? route : it->second;
}

std::optional<Action> Case::expected_at(int point) const {
  for (const auto& at : expect_at)
    if (at.point == point) return at.action;
  if (point == 1 && expect != Action::none) return expect;
  return std::nullopt;
}

double Case::deadline_real_ms(double time_scale, double floor_ms) const {
  double scripted = 0;
  if (deadline_ms) {
    scripted = *deadline_ms;
  } else {
    // Every request may use its whole budget, the sequence spans its intervals; times 3 for slack.
    const int n = request_count() + (checks.alive_after ? 1 : 0);
    const double span = sequence ? sequence->interval_ms * (sequence->count - 1) : 0;
    scripted = 3 * (n * policy.workflow.max_elapsed_ms + span);
  }
  return std::max(floor_ms, scripted * time_scale);
}

bool is_case_document(const toml::table& doc) {
  return std::any_of(std::begin(case_marker_keys), std::end(case_marker_keys),
                     [&](std::string_view key) { return doc.contains(key); });
}

LoadResult load_case_text(std::string_view text, const std::string& source_name, const std::string& folder,
                          const std::string& read_root) {
  try {
    return load_case_doc(parse_toml(text, source_name), source_name, folder, read_root);
  } catch (const SpecError& e) {
    return LoadResult{std::nullopt, {e}};
  }
}

LoadResult load_case_file(const std::string& path, const std::string& folder, const std::string& read_root) {
  try {
    return load_case_doc(parse_toml_file(path), path, folder, read_root);
  } catch (const SpecError& e) {
    return LoadResult{std::nullopt, {e}};
  }
}

std::vector<SpecError> lint_file(const std::string& path) {
  std::vector<SpecError> errors;
  collect_errors(errors, [&] {
    auto doc = parse_toml_file(path);
    if (is_case_document(doc))
      errors = load_case_doc(std::move(doc), path, {}).errors;
    else
      client::policy_from_toml(doc, path, /*allow_other_keys=*/false);
  });
  sort_errors(errors);
  return errors;
}

LintReport lint_paths(const std::vector<std::string>& paths) {
  LintReport out;
  std::map<std::string, std::string> names;  // case name -> the file that has it first
  for (const auto& arg : paths) {
    std::vector<SuiteFile> files;
    if (!collect_errors(out.errors, [&] { files = expand_paths({arg}); })) continue;
    if (files.empty())
      out.warnings.emplace_back(SourcePos{arg, 0, 0}, "no case or policy here (no .toml file)");
    out.files += files.size();
    for (const auto& f : files) {
      auto errors = lint_file(f.path);
      out.errors.insert(out.errors.end(), errors.begin(), errors.end());
      toml::table doc;
      try {
        doc = parse_toml_file(f.path);
      } catch (const SpecError&) {
        continue;  // reported by lint_file
      }
      if (doc.empty()) out.warnings.emplace_back(SourcePos{f.path, 0, 0}, "no case or policy here (no key)");
      const auto* name = doc.get("name");
      if (!name || !name->is_string() || !is_case_document(doc)) continue;
      const auto [it, fresh] = names.emplace(*name->value<std::string>(), f.path);
      if (!fresh)
        out.errors.emplace_back(pos_of(*name, f.path),
                                fmt::format("name: \"{}\" is already the name of {}", it->first, it->second));
    }
  }
  return out;
}

std::vector<SuiteFile> expand_paths(const std::vector<std::string>& paths) {
  std::vector<SuiteFile> out;
  for (const auto& arg : paths) {
    const fs::path p(arg);
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<SuiteFile> found;
      for (fs::recursive_directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) {
        // The error_code forms only: a symlink loop (ELOOP) or a dangling link must not throw out of main.
        std::error_code entry_ec;
        const bool regular = it->is_regular_file(entry_ec);
        if (entry_ec)
          throw SpecError({it->path().generic_string(), 0, 0}, "cannot read: " + entry_ec.message());
        if (!regular || it->path().extension() != ".toml") continue;
        auto folder = it->path().parent_path().lexically_relative(p).generic_string();
        if (folder == ".") folder.clear();
        found.push_back({it->path().generic_string(), folder});
      }
      if (ec) throw SpecError({arg, 0, 0}, "cannot read directory: " + ec.message());
      std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(p, ec)) {
      out.push_back({p.generic_string(), p.parent_path().filename().generic_string()});
    } else if (ec && ec != std::errc::no_such_file_or_directory) {
      throw SpecError({arg, 0, 0}, "cannot read: " + ec.message());  // a symlink loop, a denied folder
    } else if (fs::exists(p, ec)) {
      throw SpecError({arg, 0, 0}, "not a file or folder of cases");
    } else {
      throw SpecError({arg, 0, 0}, "no such file or directory");
    }
  }
  return out;
}

}  // namespace llmchaos::harness
