#pragma once
// One small table type for both experiments: the text table (aligned columns) and the Markdown table
// are two renderings of the same cells.
#include <iosfwd>
#include <string>
#include <vector>

namespace llmchaos::experiments::detail {

struct Table {
  std::vector<std::string> header;
  std::vector<bool> right_aligned;  // per column (numbers)
  std::vector<std::vector<std::string>> rows;
};

void write_text_table(const Table& table, std::ostream& out);
void write_markdown_table(const Table& table, std::ostream& out);

// "12.3%" / "1.234" / "-" (NaN) helpers shared by the report writers.
std::string fmt_seconds(double sec);
std::string fmt_ms(double ms);
std::string fmt_pct(double fraction);  // 0.123 -> "12.30%"

}  // namespace llmchaos::experiments::detail
