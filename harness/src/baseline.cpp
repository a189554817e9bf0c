#include "llmchaos/harness/baseline.hpp"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "llmchaos/core/atomic_file.hpp"
#include "llmchaos/core/file_text.hpp"
#include "llmchaos/core/spec_error.hpp"

namespace llmchaos::harness {
namespace json = boost::json;

std::string actions_str(const std::vector<Action>& actions) {
  if (actions.empty()) return "none";
  std::string out;
  for (auto a : actions) out += (out.empty() ? "" : ",") + std::string(to_string(a));
  return out;
}

Baseline baseline_of(const RunResult& run) {
  Baseline b;
  for (const auto& c : run.cases)
    if (c.verdict != Verdict::na) b[c.name] = BaselineCase{c.observed, c.observed_actions};
  return b;
}

std::string baseline_to_json(const RunResult& run) {
  json::object cases;
  for (const auto& c : run.cases) {
    if (c.verdict == Verdict::na) continue;  // not run (a capability, exact_time): nothing observed to record
    json::array actions;
    for (auto a : c.observed_actions) actions.emplace_back(to_string(a));
    cases[c.name] = json::object{{"action", to_string(c.observed)},
                                 {"actions", std::move(actions)},
                                 {"verdict", to_string(c.verdict)},
                                 {"file", c.file}};
  }
  json::object doc{{"version", 1},
                   {"tool_version", run.tool_version},
                   {"seed", run.seed},
                   {"driver", run.driver},
                   {"cases", std::move(cases)}};
  return json::serialize(doc) + "\n";
}

Baseline baseline_from_json(std::string_view text, const std::string& source_name) {
  auto fail = [&](const std::string& what) -> SpecError { return SpecError({source_name, 0, 0}, what); };
  json::error_code ec;
  auto doc = json::parse(text, ec);
  if (ec) throw fail("not a baseline: invalid JSON: " + ec.message());
  const auto* obj = doc.if_object();
  const auto* cases = obj ? obj->if_contains("cases") : nullptr;
  if (!cases || !cases->is_object()) throw fail("not a baseline: no \"cases\" object");
  auto action = [&](const json::value& v, const std::string& name) {
    const auto* s = v.if_string();
    auto a = s ? parse_enum<Action>(std::string_view(*s)) : std::nullopt;
    if (!a) throw fail(fmt::format("case \"{}\": {} is not an action", name, json::serialize(v)));
    return *a;
  };
  Baseline b;
  for (const auto& [key, value] : cases->get_object()) {
    const std::string name(key);
    const auto* c = value.if_object();
    if (!c || !c->contains("action")) throw fail(fmt::format("case \"{}\": no \"action\"", name));
    BaselineCase bc;
    bc.action = action(c->at("action"), name);
    if (const auto* arr = c->if_contains("actions"); arr && arr->is_array())
      for (const auto& a : arr->get_array()) bc.actions.push_back(action(a, name));
    else if (bc.action != Action::none)
      bc.actions.push_back(bc.action);
    b[name] = std::move(bc);
  }
  return b;
}

Baseline read_baseline(const std::string& path) {
  return baseline_from_json(read_file_text(path), path);  // "PATH: cannot open: REASON"
}

void write_baseline(const RunResult& run, const std::string& path) {
  try {
    write_file_atomic(path, baseline_to_json(run));
  } catch (const std::runtime_error& e) {  // "PATH: WHAT"
    throw std::runtime_error(fmt::format("cannot write baseline {}", e.what()));
  }
}

std::vector<BaselineChange> compare_baseline(const Baseline& before, const RunResult& run,
                                             std::vector<std::string>* added,
                                             std::vector<std::string>* removed) {
  std::vector<BaselineChange> changes;
  std::set<std::string> seen;
  for (const auto& c : run.cases) {
    if (c.verdict == Verdict::na) continue;  // not run: reported as "not run (in the baseline)" when recorded
    seen.insert(c.name);
    auto it = before.find(c.name);
    if (it == before.end()) {
      if (added) added->push_back(c.name);
      continue;
    }
    if (it->second.actions == c.observed_actions && it->second.action == c.observed) continue;
    changes.push_back({c.name, it->second.action, c.observed, it->second.actions, c.observed_actions});
  }
  if (removed)
    for (const auto& [name, bc] : before)
      if (!seen.contains(name)) removed->push_back(name);
  return changes;
}

GateResult gate_on_baseline(const Baseline& before, const std::string& path, bool accept_changes,
                            RunResult& run) {
  GateResult gate;
  run.baseline = path;
  std::vector<std::string> added, removed;
  run.baseline_changes = compare_baseline(before, run, &added, &removed);
  gate.text = fmt::format("\nbaseline {}: {} case(s) changed action\n", path, run.baseline_changes.size());
  for (const auto& ch : run.baseline_changes)
    gate.text += fmt::format("  changed: {}: {} -> {}\n", ch.case_name, actions_str(ch.before_all),
                             actions_str(ch.after_all));
  for (const auto& name : added) gate.text += fmt::format("  new (not in the baseline): {}\n", name);
  for (const auto& name : removed) gate.text += fmt::format("  not run (in the baseline): {}\n", name);
  if (!run.baseline_changes.empty())
    gate.text += accept_changes ? "  changes accepted (--accept-changes)\n"
                                : "  the gate fails: review the changes, then re-run with --accept-changes "
                                  "(and --write-baseline to record them)\n";
  gate.failed = !run.baseline_changes.empty() && !accept_changes;
  return gate;
}

}  // namespace llmchaos::harness
