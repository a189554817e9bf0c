#pragma once
// The x-llmchaos-points header (gateway/README.md): a delivery's failure points as
// "ACTION ROUTE ATTEMPT RULE", comma-separated, in order; ROUTE percent-encoded outside
// A-Z a-z 0-9 - . _ ~ (so it never holds a separator), ATTEMPT the 0-based index of the failed attempt
// in the delivery or "-" when none was sent. One codec: the gateway writes it, the http driver reads it.
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/client/executor.hpp"

namespace llmchaos::client {

inline constexpr std::string_view points_header_name = "x-llmchaos-points";

// The header's value for these points ("" when there are none). The rule's text is not in it.
std::string encode_points_header(const std::vector<FailurePoint>& points);

// Appends the points of `value` to `out` (numbered from out.size() + 1); "" on success, else the
// error naming the first malformed item.
std::string decode_points_header(std::string_view value, std::vector<FailurePoint>& out);

// The items of a `sep`-separated list, blanks around each trimmed ("" is no item).
std::vector<std::string_view> split_header_list(std::string_view list, char sep);

}  // namespace llmchaos::client
