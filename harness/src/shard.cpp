#include "llmchaos/harness/shard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <numeric>
#include <set>

namespace llmchaos::harness {

std::optional<Shard> parse_shard(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto number = [](std::string_view s) -> std::optional<int> {
    int v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
  };
  const auto k = number(text.substr(0, slash)), n = number(text.substr(slash + 1));
  if (!k || !n || *n < 1 || *k < 1 || *k > *n) return std::nullopt;
  return Shard{*k, *n};
}

std::string shard_label(const Shard& s) {
  return s.sharded() ? fmt::format("{}/{}", s.index, s.count) : std::string();
}

std::vector<std::size_t> shard_cases(const std::vector<std::string>& names, Shard s,
                                     const std::map<std::string, double>& durations) {
  if (!s.sharded()) {
    std::vector<std::size_t> all(names.size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    return all;
  }
  std::vector<std::size_t> order(names.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Ties (equal names: two cases of one name) keep suite order; everything else depends on names only.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return names[a] < names[b]; });
  std::vector<int> shard_of(names.size(), 0);
  std::vector<double> known;
  for (const auto& name : names)
    if (auto it = durations.find(name); it != durations.end()) known.push_back(std::max(0.0, it->second));
  if (known.empty()) {
    for (std::size_t i = 0; i < order.size(); ++i)
      shard_of[order[i]] = static_cast<int>(i % static_cast<std::size_t>(s.count)) + 1;
  } else {
    std::nth_element(known.begin(), known.begin() + static_cast<std::ptrdiff_t>(known.size() / 2),
                     known.end());
    const double median = known[known.size() / 2];
    auto cost = [&](std::size_t i) {
      auto it = durations.find(names[i]);
      return it == durations.end() ? median : std::max(0.0, it->second);
    };
    // Longest first (by name on ties), each to the least loaded shard (the lowest on ties).
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return cost(a) > cost(b); });
    std::vector<double> load(static_cast<std::size_t>(s.count), 0.0);
    std::vector<std::size_t> count(load.size(), 0);
    for (std::size_t i : order) {
      std::size_t best = 0;
      for (std::size_t k = 1; k < load.size(); ++k)
        if (load[k] < load[best] || (load[k] == load[best] && count[k] < count[best])) best = k;
      load[best] += cost(i);
      ++count[best];
      shard_of[i] = static_cast<int>(best) + 1;
    }
  }
  std::vector<std::size_t> picked;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (shard_of[i] == s.index) picked.push_back(i);
  return picked;
}

std::string catalog_digest(const std::vector<std::pair<std::string, std::string>>& folder_and_name) {
  auto sorted = folder_and_name;
  std::sort(sorted.begin(), sorted.end());
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  auto mix = [&](std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xffu) * 1099511628211ull;  // a separator no name contains
  };
  for (const auto& [folder, name] : sorted) {
    mix(folder);
    mix(name);
  }
  return fmt::format("{:016x}:{}", h, sorted.size());
}

namespace {

// A report's name in the errors: its file, else its place in the list.
struct ReportNames {
  const std::vector<std::string>& sources;
  std::string operator()(std::size_t i) const {
    return i < sources.size() ? sources[i] : fmt::format("report {}", i + 1);
  }
};

// Shards of one run: one catalog, seed, driver, time scale and shard count.
void check_one_run(const std::vector<RunResult>& shards, const ReportNames& src,
                   std::vector<std::string>& errors) {
  const RunResult& first = shards[0];
  auto same = [&](std::string_view what, auto get, auto show) {
    for (std::size_t i = 1; i < shards.size(); ++i)
      if (get(shards[i]) != get(first))
        errors.push_back(fmt::format("{} has {} {}, but {} has {} {}: not shards of one run", src(i), what,
                                     show(get(shards[i])), src(0), what, show(get(first))));
  };
  auto quoted = [](const std::string& s) { return "\"" + s + "\""; };
  auto plain = [](const auto& v) { return fmt::format("{}", v); };
  for (std::size_t i = 0; i < shards.size(); ++i)
    if (shards[i].catalog.empty())
      errors.push_back(fmt::format(
          "{} names no catalog (written by an older llmchaos?): cannot tell its shards apart", src(i)));
  same(
      "catalog", [](const RunResult& r) { return r.catalog; }, quoted);
  same(
      "seed", [](const RunResult& r) { return r.seed; }, plain);
  same(
      "driver", [](const RunResult& r) { return r.driver; }, quoted);
  same(
      "time scale", [](const RunResult& r) { return r.time_scale; }, plain);
  same(
      "shard count", [](const RunResult& r) { return r.shard.count; }, plain);
}

// Every shard 1..N exactly once (an unsharded report is the only shard of 1).
void check_every_shard_once(const std::vector<RunResult>& shards, const ReportNames& src,
                            std::vector<std::string>& errors) {
  const int n = std::max(1, shards[0].shard.count);
  std::map<int, std::vector<std::string>> given;
  for (std::size_t i = 0; i < shards.size(); ++i) given[std::max(1, shards[i].shard.index)].push_back(src(i));
  for (const auto& [k, files] : given)
    if (files.size() > 1) {
      std::string list;
      for (const auto& f : files) list += (list.empty() ? "" : ", ") + f;
      errors.push_back(fmt::format("shard {}/{} given {} times: {}", k, n, files.size(), list));
    }
  std::string missing;
  for (int k = 1; k <= n; ++k)
    if (!given.contains(k)) missing += (missing.empty() ? "" : ", ") + fmt::format("{}/{}", k, n);
  if (!missing.empty()) errors.push_back(fmt::format("missing shard(s): {}", missing));
}

// One run of the shards' cases in catalog order, under the first shard's settings.
void join_cases(std::vector<RunResult>& shards, const ReportNames& src, MergeOutcome& out) {
  const RunResult& first = shards[0];
  RunResult& run = out.run;
  run.tool_version = first.tool_version;
  run.seed = first.seed;
  run.driver = first.driver;
  run.time_scale = first.time_scale;
  run.label = first.label;  // one target: the first shard's label, settings and warnings
  run.settings = first.settings;
  run.warnings = first.warnings;
  run.catalog = first.catalog;
  run.catalog_cases = first.catalog_cases;
  run.merged_shards = static_cast<int>(shards.size());
  run.started_at = first.started_at;
  std::set<std::string> names;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    auto& s = shards[i];
    if (!s.started_at.empty() && (run.started_at.empty() || s.started_at < run.started_at))
      run.started_at = s.started_at;
    run.duration_ms += s.duration_ms;  // what one runner would have spent
    for (auto& c : s.cases) {
      if (!names.insert(c.folder + "/" + c.name).second)
        out.errors.push_back(fmt::format("case \"{}\" is in two shards (again in {})", c.name, src(i)));
      run.cases.push_back(std::move(c));
    }
  }
  if (run.catalog_cases > 0 && static_cast<int>(run.cases.size()) != run.catalog_cases && out.errors.empty())
    out.errors.push_back(
        fmt::format("the shards hold {} case(s), the catalog {}", run.cases.size(), run.catalog_cases));
  std::stable_sort(run.cases.begin(), run.cases.end(),
                   [](const CaseResult& a, const CaseResult& b) { return a.index < b.index; });
}

}  // namespace

MergeOutcome merge_shards(std::vector<RunResult> shards, const std::vector<std::string>& sources) {
  MergeOutcome out;
  if (shards.empty()) {
    out.errors.push_back("no report to merge");
    return out;
  }
  const ReportNames src{sources};
  check_one_run(shards, src, out.errors);
  if (out.errors.empty()) check_every_shard_once(shards, src, out.errors);
  if (out.errors.empty()) join_cases(shards, src, out);
  return out;
}

}  // namespace llmchaos::harness
