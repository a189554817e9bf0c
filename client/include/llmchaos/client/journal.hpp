#pragma once
// The attempt journal: append-only JSON lines, one per state change of an operation, each written
// BEFORE the step it announces (write-ahead), so after a crash the journal says which operations may
// have reached the provider and which may have committed:
//   requested    the stack accepted the workflow request (or a queue redelivery of it)
//   started      attempt N on route R is about to be sent
//   committed    the commit point is about to be passed: the first visible token goes to the caller, or
//                a tool side effect is about to run
//   acknowledged the request's outcome was handed back to the caller (outcome in `detail`)
#include <fstream>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace llmchaos::client {

enum class JournalState { requested, started, committed, acknowledged };
std::string_view to_string(JournalState state);

struct JournalEntry {
  std::string operation_id;
  JournalState state = JournalState::requested;
  int attempt = -1;  // global attempt index; -1 for operation-level lines
  std::string route;
  double t_ms = 0;     // on the stack's clock
  std::string detail;  // "token" / "tool:<name>" for committed, the outcome for acknowledged
  bool operator==(const JournalEntry&) const = default;
};

std::string journal_line(const JournalEntry& entry);          // one JSON object, no newline
JournalEntry journal_entry_from_line(std::string_view line);  // throws std::runtime_error

class AttemptJournal {
 public:
  AttemptJournal() = default;  // in memory only (the lines still go to the caller's vector)
  // Also appends to `path` (created when missing), flushed line by line. Throws naming the path.
  explicit AttemptJournal(const std::string& path);

  // Writes the line (file first, then `lines`). Thread-safe.
  void append(const JournalEntry& entry, std::vector<std::string>& lines);
  const std::string& path() const { return path_; }

 private:
  std::mutex mutex_;
  std::string path_;
  std::ofstream file_;
};

// Reads a journal file; a bad line throws naming path:line.
std::vector<JournalEntry> read_journal_file(const std::string& path);
// Operations whose last line is not `acknowledged`: in flight when the writer stopped. Each is returned
// with its last line (committed: do not replay; started: the outcome is unknown).
std::vector<JournalEntry> unacknowledged(const std::vector<JournalEntry>& entries);

}  // namespace llmchaos::client
