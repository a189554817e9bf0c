#pragma once
// Small pieces every dialect unit shares: SSE framing, request JSON reading, path splitting.
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "llmchaos/mockprovider/dialect.hpp"

namespace llmchaos::mock::detail {

namespace json = boost::json;

// "data: <json>\n\n" (OpenAI chat).
SseFrame sse_data(const json::value& v, bool content = false);
// "event: <name>\ndata: <json>\n\n" (Anthropic: every frame names its event).
SseFrame sse_event(std::string_view name, const json::value& v, bool content = false);
// "data: <json>\r\n\r\n" (Gemini frames end in CRLF CRLF).
SseFrame sse_data_crlf(const json::value& v, bool content = false);

// Appends s as a JSON string literal, escaped exactly as boost::json::serialize escapes it.
void append_json_string(std::string& out, std::string_view s);

// The path without its query string, and the query.
std::string_view path_only(std::string_view target);
std::string_view query_of(std::string_view target);

// Parses a request body that must be a JSON object (into the memory resource of `storage`); on failure
// fills `out.error` and returns null.
const json::object* parse_body(std::string_view body, json::value& storage, ParsedRequest& out);

// Helpers over optional JSON members.
std::string str_member(const json::object& o, std::string_view key);
bool bool_member(const json::object& o, std::string_view key);
const json::array* array_member(const json::object& o, std::string_view key);
const json::object* object_member(const json::object& o, std::string_view key);
// Counts words in every string inside v (the rough input token count).
int words_in(const json::value& v);

}  // namespace llmchaos::mock::detail
