// The append-only attempt journal and the in-process queue.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "llmchaos/client/journal.hpp"
#include "llmchaos/client/queue.hpp"

using namespace llmchaos;
using namespace llmchaos::client;

namespace {
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".jsonl"))
      .string();
}
}  // namespace

TEST_CASE("a journal line round-trips through JSON", "[journal]") {
  JournalEntry e{"op-1", JournalState::committed, 2, "backup", 12.5, "tool:record_label"};
  auto line = journal_line(e);
  CHECK(line.find('\n') == std::string::npos);
  CHECK(journal_entry_from_line(line) == e);
  JournalEntry op{"op-1", JournalState::requested, -1, "", 0, ""};
  CHECK(journal_entry_from_line(journal_line(op)) == op);
}

TEST_CASE("a bad journal line is rejected with its reason", "[journal]") {
  CHECK_THROWS_WITH(journal_entry_from_line("nope"), Catch::Contains("not a JSON object"));
  CHECK_THROWS_WITH(journal_entry_from_line(R"({"op":"x","state":"flying"})"), Catch::Contains("flying"));
  CHECK_THROWS_WITH(journal_entry_from_line(R"({"state":"started"})"), Catch::Contains("op"));
}

TEST_CASE("the journal file is appended to, never truncated, and names path:line on a bad line",
          "[journal]") {
  const auto path = temp_path("llmchaos-journal");
  std::remove(path.c_str());
  std::vector<std::string> lines;
  {
    AttemptJournal j(path);
    j.append({"op-a", JournalState::requested, -1, "", 0, ""}, lines);
    j.append({"op-a", JournalState::started, 0, "primary", 1, ""}, lines);
  }
  {
    AttemptJournal j(path);  // a second writer appends
    j.append({"op-a", JournalState::acknowledged, -1, "primary", 5, "primary_success"}, lines);
    j.append({"op-b", JournalState::requested, -1, "", 6, ""}, lines);
    j.append({"op-b", JournalState::started, 0, "primary", 7, ""}, lines);
    j.append({"op-b", JournalState::committed, 0, "primary", 8, "token"}, lines);
    j.append({"op-c", JournalState::requested, -1, "", 9, ""}, lines);
    j.append({"op-c", JournalState::started, 1, "primary", 9, ""}, lines);
  }
  CHECK(lines.size() == 8);
  auto entries = read_journal_file(path);
  REQUIRE(entries.size() == 8);
  CHECK(entries[2].detail == "primary_success");

  // After a crash: op-b committed (do not replay), op-c started (outcome unknown), op-a is done.
  auto open = unacknowledged(entries);
  REQUIRE(open.size() == 2);
  CHECK(open[0].operation_id == "op-b");
  CHECK(open[0].state == JournalState::committed);
  CHECK(open[1].operation_id == "op-c");
  CHECK(open[1].state == JournalState::started);

  std::ofstream(path, std::ios::app) << "garbage\n";
  CHECK_THROWS_WITH(read_journal_file(path), Catch::Contains(path + ":9:"));
  std::remove(path.c_str());
}

TEST_CASE("a committed operation stays committed when it is redelivered", "[journal]") {
  std::vector<JournalEntry> entries = {
      {"op", JournalState::requested, -1, "", 0, ""},
      {"op", JournalState::started, 0, "primary", 0, ""},
      {"op", JournalState::committed, 0, "primary", 0, "tool:record_label"},
      {"op", JournalState::requested, -1, "", 0, "redelivery"},
      {"op", JournalState::started, 1, "primary", 0, ""},
  };
  auto open = unacknowledged(entries);
  REQUIRE(open.size() == 1);
  CHECK(open[0].state == JournalState::committed);
}

TEST_CASE("the request queue is first in first out and bounded", "[queue]") {
  RequestQueue q(2);
  QueuedRequest a, b, c;
  a.request.operation_id = "a";
  b.request.operation_id = "b";
  c.request.operation_id = "c";
  CHECK(q.push(a));
  CHECK(q.push(b));
  CHECK_FALSE(q.push(c));
  CHECK(q.operation_ids() == std::vector<std::string>{"a", "b"});
  CHECK(q.pop()->request.operation_id == "a");
  CHECK(q.size() == 1);
  CHECK(q.pop()->request.operation_id == "b");
  CHECK_FALSE(q.pop().has_value());
}
