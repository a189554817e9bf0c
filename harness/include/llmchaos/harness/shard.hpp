#pragma once
// CI runners as the distributed engine: `run --shard K/N` plays one part of the suite, and
// `report merge` puts the parts' results back together as if one run had produced them. Pure logic
// over plain data (names, durations, results); reading and writing files is the CLI's.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/results/result.hpp"

namespace llmchaos::harness {

// "K/N" with 1 <= K <= N; nullopt for anything else.
std::optional<Shard> parse_shard(std::string_view text);
std::string shard_label(const Shard& s);  // "2/4" ("" when not sharded)

// The cases of shard `s` among `names` (the whole suite, in suite order), as indexes into `names` in
// suite order. The split depends on the names only (never on file order): without durations the
// names are sorted and dealt out in turn (shard sizes differ by at most one); with durations (case
// name -> ms, from an earlier report) the longest case goes to the least loaded shard first, a case
// without a recorded duration counting as the median of those recorded.
std::vector<std::size_t> shard_cases(const std::vector<std::string>& names, Shard s,
                                     const std::map<std::string, double>& durations = {});

// A digest of the whole suite (every case's folder and name, in any order): shards of one catalog
// have the same one.
std::string catalog_digest(const std::vector<std::pair<std::string, std::string>>& folder_and_name);

// The shards' runs merged into one: every case back in suite order, run facts from the shards, no
// baseline (the merged run is gated on its own). `errors` says why not when the shards do not belong
// together (other catalogs, seeds, drivers or time scales; missing or repeated shards; a case twice);
// `sources` names each run in the errors (its file).
struct MergeOutcome {
  RunResult run;
  std::vector<std::string> errors;
};
MergeOutcome merge_shards(std::vector<RunResult> shards, const std::vector<std::string>& sources);

}  // namespace llmchaos::harness
