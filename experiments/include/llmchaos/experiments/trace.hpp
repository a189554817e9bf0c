#pragma once
// A latency trace for the timeout-policy replay (SPEC 8): one request per row, each with the observed
// first attempt on the primary, a second attempt on the primary and an attempt on the alternate.
//
// Two input formats, one row each:
//   JSON lines: {"primary_1": {"sec": 2.41, "ok": true}, "primary_2": {...}, "alternate": {...}}
//               (keys in any order; other keys are skipped; blank lines are skipped)
//   CSV:        a header row naming the six columns primary_1_sec, primary_1_ok, primary_2_sec,
//               primary_2_ok, alternate_sec, alternate_ok (any order; other columns are ignored)
// The reader is a hand-written scanner over one memory buffer: it accepts any bytes (bad lines are
// errors with their line and column, never a crash) and parses a million rows in a fraction of a second.
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/core/spec_error.hpp"

namespace llmchaos::experiments {

struct TraceAttempt {
  double sec = 0;  // seconds until the attempt ended (answer or failure), >= 0
  bool ok = false;
};

struct TraceRow {
  TraceAttempt primary_1, primary_2, alternate;
};

enum class TraceFormat { detect, jsonl, csv };

struct TraceError {
  SourcePos pos;
  std::string message;
  std::string str() const;  // "file:line:col: message"
};

struct TraceParse {
  std::vector<TraceRow> rows;
  std::vector<TraceError> errors;  // the first `max_errors` bad lines
  std::size_t error_count = 0;     // all bad lines
  std::size_t lines = 0;           // lines read (including blank ones)
};

struct TraceParseOptions {
  TraceFormat format = TraceFormat::detect;  // detect: '{' first -> JSON lines, else CSV
  std::size_t max_errors = 20;
  unsigned threads = 0;  // JSON lines over 4 MiB are parsed in chunks on this many threads (0 = the cores)
};

// Never throws for bad content: every bad line is an error and is left out of `rows`.
TraceParse parse_trace(std::string_view text, const std::string& source_name,
                       const TraceParseOptions& options = {});
// Reads the whole file; throws std::runtime_error naming the path when it cannot be read.
TraceParse read_trace_file(const std::string& path, const TraceParseOptions& options = {});

// The reader as a stream, for consumers that need no row array (parse_trace is this with sinks that
// append to `rows`). The text is cut at line ends into at most sinks.size() parts (JSON lines over
// 4 MiB, at most trace_threads(options); CSV and small inputs are one part), each part is parsed on
// its own thread, and the good rows of part k go to sinks[k], in text order, in blocks of at most
// trace_block_rows (small enough to be read from cache right after they were parsed). Errors and
// counts as parse_trace; `rows` stays empty.
using TraceRowSink = std::function<void(std::span<const TraceRow> rows)>;
constexpr std::size_t trace_block_rows = 512;
TraceParse scan_trace(std::string_view text, const std::string& source_name,
                      std::span<const TraceRowSink> sinks, const TraceParseOptions& options = {});
TraceParse scan_trace_file(const std::string& path, std::span<const TraceRowSink> sinks,
                           const TraceParseOptions& options = {});
// The parsing threads `options` asks for: options.threads, or the cores (at most 8) when it is 0.
unsigned trace_threads(const TraceParseOptions& options);

// Writers (synthetic traces, tests). JSON lines with 3 decimals; CSV with the header row.
void write_trace_jsonl(const std::vector<TraceRow>& rows, std::ostream& out);
void write_trace_csv(const std::vector<TraceRow>& rows, std::ostream& out);
// Picks the writer by the extension (".csv" -> CSV, else JSON lines). Throws naming the path.
void write_trace_file(const std::vector<TraceRow>& rows, const std::string& path);

}  // namespace llmchaos::experiments
