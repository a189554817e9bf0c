#pragma once
// Texts said once: report.html's data names every string (and every distinct timeline drawing) by its
// index in a table the page carries once, so a title, route or rule that a thousand cases share costs
// a few digits per case. Indexes go in order of first use.
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace llmchaos::reports::detail {

class TextTable {
 public:
  // The index of text, added at the end when new.
  std::size_t ref(std::string_view text);
  // Every text, in index order.
  const std::vector<const std::string*>& texts() const { return order_; }

 private:
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<const std::string*> order_;  // the map's keys (a node's key never moves)
};

}  // namespace llmchaos::reports::detail
