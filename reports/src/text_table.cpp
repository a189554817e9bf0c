#include "text_table.hpp"

namespace llmchaos::reports::detail {

std::size_t TextTable::ref(std::string_view text) {
  auto [it, added] = index_.try_emplace(std::string(text), order_.size());
  if (added) order_.push_back(&it->first);
  return it->second;
}

}  // namespace llmchaos::reports::detail
