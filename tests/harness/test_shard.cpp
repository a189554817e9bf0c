// run --shard / report merge, the pure part: the split, the catalog digest, the merge's refusals.
#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <set>

#include "llmchaos/harness/shard.hpp"

using namespace llmchaos;
using namespace llmchaos::harness;

namespace {

std::vector<std::string> names_of(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back("case-" + std::to_string(i * 7919 % 1000));
  return names;
}

std::set<std::string> shard_names(const std::vector<std::string>& names, Shard s,
                                  const std::map<std::string, double>& durations = {}) {
  std::set<std::string> out;
  for (auto i : shard_cases(names, s, durations)) out.insert(names[i]);
  return out;
}

RunResult shard_run(int k, int n, std::vector<std::pair<std::string, int>> cases, std::uint64_t seed = 1) {
  RunResult r;
  r.seed = seed;
  r.shard = {k, n};
  r.catalog = "abc:10";
  r.catalog_cases = 0;
  r.duration_ms = 10;
  for (auto& [name, index] : cases) {
    CaseResult c;
    c.name = name;
    c.index = index;
    c.verdict = Verdict::pass;
    r.cases.push_back(c);
  }
  return r;
}

}  // namespace

TEST_CASE("a shard K/N parses 1 <= K <= N and nothing else", "[shard]") {
  CHECK(parse_shard("2/4")->index == 2);
  CHECK(parse_shard("2/4")->count == 4);
  CHECK(parse_shard("1/1"));
  for (const char* bad : {"0/4", "5/4", "2", "2/", "/4", "a/b", "2/4x", "-1/4", "2/0", ""})
    CHECK_FALSE(parse_shard(bad));
  CHECK(shard_label({3, 8}) == "3/8");
  CHECK(shard_label({}).empty());
}

TEST_CASE("the shards cover the suite once, balanced by count, whatever the file order", "[shard]") {
  const auto names = names_of(103);
  std::set<std::string> all;
  std::vector<std::set<std::string>> parts;
  for (int k = 1; k <= 4; ++k) {
    parts.push_back(shard_names(names, {k, 4}));
    CHECK(parts.back().size() >= 25);
    CHECK(parts.back().size() <= 26);
    for (const auto& n : parts.back()) CHECK(all.insert(n).second);  // in one shard only
  }
  CHECK(all.size() == names.size());
  // The same case lands in the same shard when the files come in another order.
  auto shuffled = names;
  std::mt19937 rng(42);
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  for (int k = 1; k <= 4; ++k) CHECK(shard_names(shuffled, {k, 4}) == parts[static_cast<std::size_t>(k - 1)]);
  // Indexes come back in suite order.
  const auto idx = shard_cases(names, {2, 4});
  CHECK(std::is_sorted(idx.begin(), idx.end()));
  // Not sharded: everything.
  CHECK(shard_cases(names, {}).size() == names.size());
}

TEST_CASE("with recorded durations the shards are balanced by time", "[shard]") {
  // One long case and many short ones: by count the long one's shard would carry far more time.
  std::vector<std::string> names;
  std::map<std::string, double> durations;
  for (int i = 0; i < 40; ++i) {
    names.push_back("c" + std::to_string(i));
    durations[names.back()] = i == 0 ? 400 : 10;
  }
  names.push_back("new-case");  // no recorded duration: counts as the median (10)
  double max_load = 0, min_load = 1e9;
  std::set<std::string> all;
  for (int k = 1; k <= 4; ++k) {
    double load = 0;
    for (const auto& n : shard_names(names, {k, 4}, durations)) {
      load += durations.count(n) ? durations[n] : 10;
      CHECK(all.insert(n).second);
    }
    max_load = std::max(max_load, load);
    min_load = std::min(min_load, load);
  }
  CHECK(all.size() == names.size());
  CHECK(max_load == Approx(400));  // the long case alone
  CHECK(min_load >= 130);          // the 36 short ones spread over the other three
  // The same split whatever the order.
  auto reversed = names;
  std::reverse(reversed.begin(), reversed.end());
  for (int k = 1; k <= 4; ++k)
    CHECK(shard_names(reversed, {k, 4}, durations) == shard_names(names, {k, 4}, durations));
}

TEST_CASE("the catalog digest depends on the cases, not their order", "[shard]") {
  const auto a = catalog_digest({{"faults", "x"}, {"queue", "y"}});
  CHECK(a == catalog_digest({{"queue", "y"}, {"faults", "x"}}));
  CHECK(a != catalog_digest({{"faults", "x"}, {"queue", "z"}}));
  CHECK(a != catalog_digest({{"faultsq", "ueue"}, {"", "y"}}));
}

TEST_CASE("merge puts the cases back in suite order and refuses shards that do not belong together",
          "[shard]") {
  const std::vector<std::string> files{"s1.json", "s2.json"};
  auto ok =
      merge_shards({shard_run(2, 2, {{"b", 1}, {"d", 3}}), shard_run(1, 2, {{"a", 0}, {"c", 2}})}, files);
  REQUIRE(ok.errors.empty());
  REQUIRE(ok.run.cases.size() == 4);
  CHECK(ok.run.cases[0].name == "a");
  CHECK(ok.run.cases[3].name == "d");
  CHECK(ok.run.merged_shards == 2);
  CHECK(ok.run.duration_ms == Approx(20));
  CHECK_FALSE(ok.run.shard.sharded());

  auto joined = [](const std::vector<std::string>& e) {
    std::string s;
    for (const auto& x : e) s += x + "\n";
    return s;
  };
  auto missing =
      merge_shards({shard_run(1, 3, {{"a", 0}}), shard_run(3, 3, {{"c", 2}})}, {"s1.json", "s3.json"});
  CHECK_THAT(joined(missing.errors), Catch::Contains("missing shard(s): 2/3"));
  auto twice =
      merge_shards({shard_run(1, 2, {{"a", 0}}), shard_run(1, 2, {{"a", 0}}), shard_run(2, 2, {{"b", 1}})},
                   {"x.json", "y.json", "z.json"});
  CHECK_THAT(joined(twice.errors), Catch::Contains("shard 1/2 given 2 times: x.json, y.json"));
  auto seeds = merge_shards({shard_run(1, 2, {{"a", 0}}, 1), shard_run(2, 2, {{"b", 1}}, 2)}, files);
  CHECK_THAT(joined(seeds.errors), Catch::Contains("s2.json has seed 2, but s1.json has seed 1"));
  auto other = shard_run(2, 2, {{"b", 1}});
  other.catalog = "def:10";
  auto catalogs = merge_shards({shard_run(1, 2, {{"a", 0}}), other}, files);
  CHECK_THAT(joined(catalogs.errors), Catch::Contains("s2.json has catalog \"def:10\""));
  auto counts = merge_shards({shard_run(1, 2, {{"a", 0}}), shard_run(2, 3, {{"b", 1}})}, files);
  CHECK_THAT(joined(counts.errors), Catch::Contains("shard count 3"));
  auto short_run = shard_run(1, 1, {{"a", 0}});
  short_run.catalog_cases = 2;
  CHECK_THAT(joined(merge_shards({short_run}, {"s.json"}).errors),
             Catch::Contains("the shards hold 1 case(s), the catalog 2"));
  CHECK_FALSE(merge_shards({}, {}).errors.empty());
}
