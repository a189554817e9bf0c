#include "llmchaos/client/journal.hpp"

#include <boost/json.hpp>
#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>

namespace llmchaos::client {

namespace json = boost::json;

namespace {
constexpr std::pair<JournalState, std::string_view> state_names[] = {
    {JournalState::requested, "requested"},
    {JournalState::started, "started"},
    {JournalState::committed, "committed"},
    {JournalState::acknowledged, "acknowledged"}};
}  // namespace

std::string_view to_string(JournalState state) {
  for (const auto& [s, name] : state_names)
    if (s == state) return name;
  return "?";
}

std::string journal_line(const JournalEntry& e) {
  json::object o{{"op", e.operation_id}, {"state", to_string(e.state)}, {"t_ms", e.t_ms}};
  if (e.attempt >= 0) o["attempt"] = e.attempt;
  if (!e.route.empty()) o["route"] = e.route;
  if (!e.detail.empty()) o["detail"] = e.detail;
  return json::serialize(o);
}

JournalEntry journal_entry_from_line(std::string_view line) {
  boost::system::error_code ec;
  auto v = json::parse(line, ec);
  if (ec || !v.is_object()) throw std::runtime_error("journal line is not a JSON object");
  const auto& o = v.get_object();
  auto str = [&](std::string_view key) -> std::string {
    auto it = o.find(key);
    return it != o.end() && it->value().is_string() ? std::string(it->value().get_string()) : std::string();
  };
  JournalEntry e;
  e.operation_id = str("op");
  if (e.operation_id.empty()) throw std::runtime_error("journal line has no \"op\"");
  auto state = str("state");
  bool known = false;
  for (const auto& [s, name] : state_names)
    if (name == state) {
      e.state = s;
      known = true;
    }
  if (!known) throw std::runtime_error("journal line has an unknown state \"" + state + "\"");
  if (auto it = o.find("attempt"); it != o.end() && it->value().is_int64())
    e.attempt = static_cast<int>(it->value().get_int64());
  if (auto it = o.find("t_ms"); it != o.end() && it->value().is_number())
    e.t_ms = it->value().to_number<double>();
  e.route = str("route");
  e.detail = str("detail");
  return e;
}

AttemptJournal::AttemptJournal(const std::string& path) : path_(path) {
  file_.open(path, std::ios::out | std::ios::app);
  if (!file_)
    throw std::runtime_error(path +
                             ": cannot open the attempt journal for appending: " + std::strerror(errno));
}

void AttemptJournal::append(const JournalEntry& entry, std::vector<std::string>& lines) {
  auto line = journal_line(entry);
  std::lock_guard lock(mutex_);
  if (file_.is_open()) {
    file_ << line << '\n';
    file_.flush();  // write-ahead: the line is out before the step it announces
    if (!file_) throw std::runtime_error(path_ + ": writing the attempt journal failed");
  }
  lines.push_back(std::move(line));
}

std::vector<JournalEntry> read_journal_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the attempt journal: " + std::strerror(errno));
  std::vector<JournalEntry> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    try {
      out.push_back(journal_entry_from_line(line));
    } catch (const std::exception& e) {
      throw std::runtime_error(path + ":" + std::to_string(n) + ": " + e.what());
    }
  }
  return out;
}

std::vector<JournalEntry> unacknowledged(const std::vector<JournalEntry>& entries) {
  std::map<std::string, JournalEntry> last;
  std::vector<std::string> order;
  for (const auto& e : entries) {
    if (!last.count(e.operation_id)) order.push_back(e.operation_id);
    auto& slot = last[e.operation_id];
    // A later `requested` (a redelivery) reopens an operation, but never forgets that it committed.
    if (slot.state == JournalState::committed && e.state != JournalState::acknowledged) continue;
    slot = e;
  }
  std::vector<JournalEntry> out;
  for (const auto& op : order)
    if (last[op].state != JournalState::acknowledged) out.push_back(last[op]);
  return out;
}

}  // namespace llmchaos::client
