#include "table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <ostream>
#include <stdexcept>

namespace llmchaos::experiments::detail {

void write_text_table(const Table& table, std::ostream& out) {
  std::vector<std::size_t> width(table.header.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  };
  measure(table.header);
  for (const auto& r : table.rows) measure(r);
  auto line = [&](const std::vector<std::string>& row) {
    std::string s;
    for (std::size_t i = 0; i < width.size(); ++i) {
      const std::string& cell = i < row.size() ? row[i] : std::string();
      const bool right = i < table.right_aligned.size() && table.right_aligned[i];
      if (i > 0) s += "  ";
      s += right ? fmt::format("{:>{}}", cell, width[i]) : fmt::format("{:<{}}", cell, width[i]);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << '\n';
  };
  line(table.header);
  std::size_t total = 0;
  for (const auto w : width) total += w;
  out << std::string(total + 2 * (width.empty() ? 0 : width.size() - 1), '-') << '\n';
  for (const auto& r : table.rows) line(r);
}

void write_markdown_table(const Table& table, std::ostream& out) {
  auto escape = [](const std::string& cell) {
    std::string s;
    for (const char c : cell) {
      if (c == '|') s += '\\';
      s += c;
    }
    return s;
  };
  out << '|';
  for (const auto& h : table.header) out << ' ' << escape(h) << " |";
  out << "\n|";
  for (std::size_t i = 0; i < table.header.size(); ++i)
    out << (i < table.right_aligned.size() && table.right_aligned[i] ? " ---: |" : " --- |");
  out << '\n';
  for (const auto& r : table.rows) {
    out << '|';
    for (const auto& c : r) out << ' ' << escape(c) << " |";
    out << '\n';
  }
}

std::string fmt_seconds(double sec) {
  return std::isnan(sec) ? "-" : fmt::format("{:.3f}", sec);
}
std::string fmt_ms(double ms) {
  return std::isnan(ms) ? "-" : fmt::format("{:.1f}", ms);
}
std::string fmt_pct(double fraction) {
  return std::isnan(fraction) ? "-" : fmt::format("{:.2f}%", 100.0 * fraction);
}

}  // namespace llmchaos::experiments::detail
