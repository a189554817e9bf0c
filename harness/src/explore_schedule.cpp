// Schedules for `llmchaos explore`: drawing them (seeded), sweeping failure positions, shrinking them, and
// writing one as a case file (cases/README.md is the format).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "llmchaos/client/dialect_codec.hpp"
#include "llmchaos/client/policy.hpp"
#include "llmchaos/core/toml_text.hpp"
#include "llmchaos/harness/explore.hpp"
#include "llmchaos/mockprovider/dialect.hpp"
#include "llmchaos/mockprovider/fault_traits.hpp"

namespace llmchaos::harness {
namespace {

constexpr const char* route_names[] = {"primary", "backup", "backup2"};
constexpr const char* words[] = {"alpha",   "bravo", "charlie", "delta", "echo",
                                 "foxtrot", "golf",  "hotel",   "india"};

// Every dialect the mock registers (mockprovider/src/dialect.cpp's table) that the reference client speaks
// (client::has_codec): a new one is drawn with no edit here.
const std::vector<Dialect>& dialects() {
  static const std::vector<Dialect> all = [] {
    auto d = mock::registered_dialects();
    std::erase_if(d, [](Dialect x) { return !client::has_codec(x); });
    return d;
  }();
  return all;
}

// Whole numbers as TOML integers (the integer keys need them), others as floats.
std::string number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{}", v);
}

std::string action_name(Action a) {
  return std::string(to_string(a));
}

// A route's canonical text: several words (a cut answer never passes for a whole one), a JSON object
// carrying "label" under an output contract.
std::string route_text(std::size_t route, int n_words, bool contract) {
  std::string w;
  for (int i = 0; i < n_words; ++i)
    w += (i ? " " : "") + std::string(words[(route * 3 + static_cast<std::size_t>(i)) % std::size(words)]);
  if (contract) return fmt::format(R"({{"label": "{}", "note": "{}"}})", route_names[route % 3], w);
  return fmt::format("{} says {}", route_names[route % 3], w);
}

ScheduleStep draw_step(Rng& rng, FaultKind fault, double timeout, int tokens, bool contract) {
  ScheduleStep st;
  st.fault = fault;
  const double u = rng.uniform();
  st.times = u < 0.7 ? 1 : u < 0.9 ? 2 : 3;
  // The fault's own keys are its draw (faults/<name>.cpp); the common ones are drawn here.
  const auto& traits = mock::fault_traits(fault);
  mock::ExploreDraw d{rng, timeout, tokens, contract, st.params, st.missing_field};
  if (traits.explore_latency && d.maybe(0.3)) d.param("latency_ms", d.maybe(0.25) ? d.beyond() : d.within());
  if (traits.explore_draw) traits.explore_draw(d);
  if (traits.explore_inter_event && d.maybe(0.15)) d.param("inter_event_ms", d.between(1, 20));
  return st;
}

}  // namespace

int Schedule::step_count() const {
  int n = 0;
  for (const auto& r : routes) n += static_cast<int>(r.steps.size());
  return n;
}

std::string schedule_to_toml(const Schedule& s, const CaseExpectations& expect,
                             const std::string& policy_ref) {
  std::string out;
  out += fmt::format("name = {}\n", toml_string(s.name));
  if (!expect.description.empty()) out += fmt::format("description = {}\n", toml_string(expect.description));
  out += "tags = [\"explore\"]\n";
  const auto first = expect.actions.empty() ? std::optional<Action>(Action::none) : expect.actions.front();
  out += fmt::format("expect = {}\n", toml_string(action_name(first.value_or(Action::none))));
  if (!s.policy_file.empty())
    out += fmt::format("policy = {}\n", toml_string(policy_ref.empty() ? s.policy_file : policy_ref));
  for (std::size_t i = 1; i < expect.actions.size(); ++i)
    if (expect.actions[i])
      out += fmt::format("\n[[expect_at]]\npoint = {}\naction = {}\n", i + 1,
                         toml_string(action_name(*expect.actions[i])));

  const bool inline_policy = s.policy_file.empty();
  if (inline_policy) {
    out += "\n[workflow]\n";
    out += fmt::format("primary = {}\n", toml_string(s.routes.front().name));
    std::string chain;
    for (std::size_t i = 1; i < s.routes.size(); ++i)
      chain += (i > 1 ? ", " : "") + toml_string(s.routes[i].name);
    out += fmt::format("fallback = [{}]\n", chain);
    out += fmt::format("max_total_attempts = {}\n", s.max_total_attempts);
    out += fmt::format("max_elapsed_ms = {}\n", number(s.max_elapsed_ms));
    if (s.max_extra_cost_usd) out += fmt::format("max_extra_cost_usd = {}\n", number(*s.max_extra_cost_usd));
    out += fmt::format("attempt_timeout_ms = {}\n", number(s.attempt_timeout_ms));
    out += fmt::format("replay_safe = {}\nqueue_allowed = {}\ndegrade_allowed = {}\n", s.replay_safe,
                       s.queue_allowed, s.degrade_allowed);
    if (s.contract) out += "output_required = [\"label\"]\n";
    if (s.background) out += "background = true\n";
    out += fmt::format("\n[backoff]\nbase_ms = {}\ncap_ms = {}\n", number(s.backoff_base_ms),
                       number(s.backoff_cap_ms));
  }
  for (const auto& r : s.routes) {
    out += fmt::format("\n[route.{}]\ndialect = {}\ntext = {}\n", r.name, toml_string(to_string(r.dialect)),
                       toml_string(r.text));
    if (inline_policy) {
      out += fmt::format("expected_latency_ms = {}\ncost_per_attempt_usd = {}\n",
                         number(r.expected_latency_ms), number(r.cost_per_attempt_usd));
      if (!r.approved) out += "approved = false\n";
    }
    out += "script = [";
    for (std::size_t k = 0; k < r.steps.size(); ++k) {
      const auto& st = r.steps[k];
      out += fmt::format("{}\n  {{ fault = {}", k ? "," : "", toml_string(to_string(st.fault)));
      if (st.times != 1) out += fmt::format(", times = {}", st.times);
      for (const auto& [key, v] : st.params) out += fmt::format(", {} = {}", key, number(v));
      if (!st.missing_field.empty())
        out += fmt::format(", missing_field = {}", toml_string(st.missing_field));
      out += " }";
    }
    out += r.steps.empty() ? "]\n" : ",\n]\n";
  }
  out += fmt::format("\n[request]\nstream = {}\n", s.stream);
  if (s.prefill) out += "prefill = true\n";
  out += "\n[checks]\nno_truncated_success = true\n";
  return out;
}

PolicyShape policy_shape(const std::string& policy_file) {
  const client::Policy p = client::load_policy_file(policy_file);
  PolicyShape shape;
  shape.file = policy_file;
  shape.routes.push_back(p.workflow.primary);
  for (const auto& fb : p.workflow.fallback) shape.routes.push_back(fb);
  shape.attempt_timeout_ms = p.workflow.attempt_timeout_ms;
  shape.contract = !p.workflow.output_required.empty();
  return shape;
}

Schedule random_schedule(Rng& rng, const std::optional<PolicyShape>& policy, const std::string& name) {
  Schedule s;
  s.name = name;
  auto maybe = [&](double p) { return rng.uniform() < p; };
  std::vector<std::string> names;
  if (policy) {
    s.policy_file = policy->file;
    s.attempt_timeout_ms = policy->attempt_timeout_ms;
    s.contract = policy->contract;
    names = policy->routes;
  } else {
    const auto n = rng.between(1, 3);
    for (std::int64_t i = 0; i < n; ++i) names.emplace_back(route_names[i]);
    s.max_total_attempts = static_cast<int>(rng.between(1, 4));
    constexpr double elapsed[] = {2000, 4000, 8000, 15000};
    s.max_elapsed_ms = elapsed[rng.between(0, 3)];
    constexpr double timeouts[] = {500, 1000, 2000};
    s.attempt_timeout_ms = timeouts[rng.between(0, 2)];
    if (maybe(0.5)) s.max_extra_cost_usd = 0.004 * static_cast<double>(rng.between(0, 3));
    s.replay_safe = maybe(0.25);
    s.queue_allowed = maybe(0.5);
    s.degrade_allowed = maybe(0.5);
    s.contract = maybe(0.2);
    s.backoff_base_ms = static_cast<double>(rng.between(20, 200));
    s.backoff_cap_ms = s.backoff_base_ms * static_cast<double>(rng.between(2, 10));
  }
  const int n_faults = static_cast<int>(std::size(enum_names<FaultKind>::table));
  for (std::size_t i = 0; i < names.size(); ++i) {
    ScheduleRoute r;
    r.name = names[i];
    r.dialect = dialects()[static_cast<std::size_t>(
        rng.between(0, static_cast<std::int64_t>(dialects().size()) - 1))];
    const int tokens = static_cast<int>(rng.between(3, 6));
    r.text = route_text(i, tokens - 2, s.contract);  // "<route> says w1 w2 ...": tokens words in all
    if (!policy) {
      constexpr double latencies[] = {50, 300, 1000, 3000};
      r.expected_latency_ms = latencies[rng.between(0, 3)];
      r.cost_per_attempt_usd = maybe(0.5) ? 0.004 : 0.0;
      r.approved = maybe(0.85);
    }
    const auto n_steps = i == 0 ? rng.between(1, 3) : rng.between(0, 2);
    for (std::int64_t k = 0; k < n_steps; ++k) {
      auto fault = enum_names<FaultKind>::table[rng.between(0, n_faults - 1)].first;
      // SPEC 2: schema_missing lacks a field "the workflow's output schema requires": none without a schema.
      const bool needs_contract = mock::fault_traits(fault).in_band == mock::InBand::under_output_contract;
      if (needs_contract && !s.contract) fault = FaultKind::ok;
      r.steps.push_back(draw_step(rng, fault, s.attempt_timeout_ms, tokens, s.contract));
    }
    s.routes.push_back(std::move(r));
  }
  s.stream = maybe(0.5);
  s.prefill = maybe(0.1);
  // Drawn last, so every earlier draw of a seed is what it was before rule 0 (a shared policy says it
  // itself). Only a Responses route can resume; elsewhere the key changes nothing, which is checked too.
  if (!policy) s.background = maybe(0.3);
  return s;
}

Schedule sweep_base(const std::optional<PolicyShape>& policy) {
  Schedule s;
  std::vector<std::string> names;
  if (policy) {
    s.policy_file = policy->file;
    s.attempt_timeout_ms = policy->attempt_timeout_ms;
    s.contract = policy->contract;
    names = policy->routes;
  } else {
    names = {route_names[0], route_names[1], route_names[2]};
    s.max_total_attempts = 4;
    s.max_elapsed_ms = 15000;
    s.attempt_timeout_ms = 1000;
    s.queue_allowed = true;
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    ScheduleRoute r;
    r.name = names[i];
    r.dialect = dialects()[i % dialects().size()];
    r.text = route_text(i, 3, s.contract);
    r.cost_per_attempt_usd = 0.004;
    s.routes.push_back(std::move(r));
  }
  return s;
}

Schedule sweep_schedule(const Schedule& base, std::size_t route, int n, FaultKind fault, Dialect dialect,
                        bool stream, const std::string& name, bool background) {
  Schedule s = base;
  s.name = name;
  s.stream = stream;
  s.background = background;
  s.prefill = fault == FaultKind::prefill_rejected;
  for (std::size_t j = 0; j < route && j < s.routes.size(); ++j)
    s.routes[j].steps = {ScheduleStep{FaultKind::quota_429, 1, {}, {}}};
  auto& r = s.routes.at(route);
  r.dialect = dialect;
  r.steps.clear();
  if (n > 1) r.steps.push_back(ScheduleStep{FaultKind::overloaded, n - 1, {}, {}});
  ScheduleStep st{fault, 1, {}, {}};
  if (fault == FaultKind::malformed_event) st.params.emplace_back("inter_event_ms", 50);
  if (fault == FaultKind::schema_missing && s.contract) st.missing_field = "label";
  r.steps.push_back(std::move(st));
  return s;
}

std::vector<Schedule> shrink_candidates(const Schedule& s) {
  std::vector<Schedule> out;
  // Fewer routes: the last of the chain first. A shared policy names its routes: empty their scripts.
  for (std::size_t i = s.routes.size(); i-- > 1;) {
    if (s.policy_file.empty()) {
      out.push_back(s);
      out.back().routes.erase(out.back().routes.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (!s.routes[i].steps.empty()) {
      out.push_back(s);
      out.back().routes[i].steps.clear();
    }
  }
  // Fewer steps, then fewer attempts per step.
  for (std::size_t i = 0; i < s.routes.size(); ++i)
    for (std::size_t k = 0; k < s.routes[i].steps.size(); ++k) {
      out.push_back(s);
      auto& steps = out.back().routes[i].steps;
      steps.erase(steps.begin() + static_cast<std::ptrdiff_t>(k));
    }
  for (std::size_t i = 0; i < s.routes.size(); ++i)
    for (std::size_t k = 0; k < s.routes[i].steps.size(); ++k)
      if (s.routes[i].steps[k].times > 1) {
        out.push_back(s);
        out.back().routes[i].steps[k].times = 1;
        if (s.routes[i].steps[k].times > 2) {
          out.push_back(s);
          --out.back().routes[i].steps[k].times;
        }
      }
  // Smaller parameters: drop one, then halve it (count parameters step down by one).
  for (std::size_t i = 0; i < s.routes.size(); ++i)
    for (std::size_t k = 0; k < s.routes[i].steps.size(); ++k) {
      const auto& params = s.routes[i].steps[k].params;
      for (std::size_t p = 0; p < params.size(); ++p) {
        out.push_back(s);
        auto& mine = out.back().routes[i].steps[k].params;
        mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(p));
        const auto& [key, v] = params[p];
        if (v >= 1) {
          out.push_back(s);
          auto& smaller = out.back().routes[i].steps[k].params[p].second;
          smaller = key == "cut_after_events" ? v - 1 : std::floor(v / 2);
        }
      }
    }
  if (s.stream) {
    out.push_back(s);
    out.back().stream = false;
  }
  if (s.prefill) {
    out.push_back(s);
    out.back().prefill = false;
  }
  if (s.background) {
    out.push_back(s);
    out.back().background = false;
  }
  if (s.policy_file.empty() && s.max_total_attempts > 1) {
    out.push_back(s);
    --out.back().max_total_attempts;
  }
  return out;
}

}  // namespace llmchaos::harness
