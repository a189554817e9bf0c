// The x-llmchaos-points codec (points_header.hpp).
#include "llmchaos/client/points_header.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include "llmchaos/core/parse.hpp"

namespace llmchaos::client {
namespace {

// A route name as a token: percent-encoded outside A-Z a-z 0-9 - . _ ~.
void append_token(std::string& out, std::string_view route) {
  for (unsigned char ch : route) {
    if (std::isalnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~')
      out += static_cast<char>(ch);
    else
      out += fmt::format("%{:02X}", ch);
  }
}

// A percent-encoded token; nullopt when an escape is malformed.
std::optional<std::string> percent_decoded(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    unsigned value = 0;
    if (i + 2 >= s.size() ||
        std::from_chars(s.data() + i + 1, s.data() + i + 3, value, 16).ptr != s.data() + i + 3)
      return std::nullopt;
    out += static_cast<char>(value);
    i += 2;
  }
  return out;
}

}  // namespace

std::vector<std::string_view> split_header_list(std::string_view list, char sep) {
  std::vector<std::string_view> out;
  if (list.empty()) return out;
  for (std::size_t at = 0;;) {
    const auto end = std::min(list.find(sep, at), list.size());
    auto item = list.substr(at, end - at);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    out.push_back(item);
    if (end == list.size()) return out;
    at = end + 1;
  }
}

std::string encode_points_header(const std::vector<FailurePoint>& points) {
  std::string out;
  for (const auto& f : points) {
    if (!out.empty()) out += ',';
    out += to_string(f.action);
    out += ' ';
    append_token(out, f.route);
    out += ' ';
    out += f.attempt < 0 ? std::string("-") : std::to_string(f.attempt);
    out += ' ';
    out += std::to_string(f.rule);
  }
  return out;
}

std::string decode_points_header(std::string_view value, std::vector<FailurePoint>& out) {
  for (const auto item : split_header_list(value, ',')) {
    const auto fields = split_header_list(item, ' ');
    FailurePoint fp;
    fp.point = static_cast<int>(out.size()) + 1;
    const auto action = fields.size() == 4 ? parse_enum<Action>(fields[0]) : std::nullopt;
    const auto route = fields.size() == 4 ? percent_decoded(fields[1]) : std::nullopt;
    const auto attempt = fields.size() == 4
                             ? (fields[2] == "-" ? std::optional<int>(-1) : parse_int(fields[2]))
                             : std::nullopt;
    const auto rule = fields.size() == 4 ? parse_int(fields[3]) : std::nullopt;
    if (!action || !route || !attempt || *attempt < -1 || !rule)
      return fmt::format("{} item \"{}\" is not \"ACTION ROUTE ATTEMPT RULE\"", points_header_name, item);
    fp.action = *action;
    fp.route = *route;
    fp.attempt = *attempt;
    fp.rule = *rule;  // the rule's text is not in the header (the drain answer has it)
    out.push_back(std::move(fp));
  }
  return {};
}

}  // namespace llmchaos::client
