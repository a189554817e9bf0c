#pragma once
// Small pieces every dialect unit shares: SSE framing, request JSON reading, path splitting.
#include <fmt/format.h>

#include <boost/json.hpp>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/core/sized_text.hpp"
#include "llmchaos/mockprovider/dialect.hpp"

namespace llmchaos::mock::detail {

namespace json = boost::json;

// "data: <json>\n\n" (OpenAI chat).
SseFrame sse_data(const json::value& v, bool content = false);
// "event: <name>\ndata: <json>\n\n" (Anthropic: every frame names its event).
SseFrame sse_event(std::string_view name, const json::value& v, bool content = false);
// "data: <json>\r\n\r\n" (Gemini frames end in CRLF CRLF).
SseFrame sse_data_crlf(const json::value& v, bool content = false);

// s needs no escape in a JSON string (printable ASCII, no quote, no backslash).
bool plain_json_text(std::string_view s);

// A JSON string literal of one string, or of parts joined (an answer's tokens), escaped exactly as
// boost::json::serialize escapes it: the bytes between quotes when none needs an escape (checked once,
// here; nothing copied), else the serializer's text. A piece for render_sized (sized_text.hpp).
class JsonString {
 public:
  JsonString() = default;  // a piece the render does not use (nothing checked)
  explicit JsonString(std::string_view s);
  explicit JsonString(const std::vector<std::string>& parts);
  std::size_t size() const { return size_; }
  char* write(char* at) const;  // the literal at `at`, returns its end

 private:
  std::string_view one_;                             // the string (parts_ null)
  const std::vector<std::string>* parts_ = nullptr;  // or the parts joined
  std::string escaped_;                              // the serializer's text, when some byte needs an escape
  std::size_t size_ = 0;
};

// The path without its query string, and the query.
std::string_view path_only(std::string_view target);
std::string_view query_of(std::string_view target);

// The route check every dialect makes first: a path it does not serve is not_found, a method other than
// POST method_not_allowed (each fills `out.error`). True when the request may be read on.
bool accept_post(ParsedRequest& out, std::string_view method, std::string_view path, bool served);

// The model list (GET only): true when `path` is one of `paths` and the request is answered as the list
// (`out.models_list`, or method_not_allowed for another method).
bool models_list(ParsedRequest& out, std::string_view method, std::string_view path,
                 std::initializer_list<std::string_view> paths);

// Parses a request body that must be a JSON object (into the memory resource of `storage`); on failure
// fills `out.error` and returns null.
const json::object* parse_body(std::string_view body, json::value& storage, ParsedRequest& out);

// The body read every dialect's parse makes once accept_post passed: the JSON object (parse_body) and
// the request's top-level `stream` and `model` members into out.chat. A dialect that names both
// elsewhere (Gemini: the model in its path, the stream by its method) passes `members = false`. Null
// (with `out.error` filled) when the body is not a JSON object.
const json::object* read_request(std::string_view body, json::value& storage, ParsedRequest& out,
                                 bool members = true);

// A dialect's named real bodies (a step's `body`): a table of entries with `kind` and `name`.
template <class Named, std::size_t N>
const Named* find_named(const Named (&table)[N], ErrorKind kind, std::string_view name) {
  for (const auto& n : table)
    if (n.kind == kind && n.name == name) return &n;
  return nullptr;
}
template <class Named, std::size_t N>
std::vector<std::string_view> named_for(const Named (&table)[N], ErrorKind kind) {
  std::vector<std::string_view> out;
  for (const auto& n : table)
    if (n.kind == kind) out.push_back(n.name);
  return out;
}

// Helpers over optional JSON members.
std::string str_member(const json::object& o, std::string_view key);
bool bool_member(const json::object& o, std::string_view key);
const json::array* array_member(const json::object& o, std::string_view key);
const json::object* object_member(const json::object& o, std::string_view key);
// The first element of the array member `array_key` when it is an object (null otherwise).
const json::object* first_object(const json::object& o, std::string_view array_key);
// The member is a string and not empty.
bool non_empty_string(const json::object& o, std::string_view key);
// A typed stream frame's type: the data's `type` string, else the SSE event name (Anthropic, Responses).
std::string_view event_type(std::string_view event, const json::object& data);
// Counts words in every string inside v (the rough input token count).
int words_in(const json::value& v);

// What a chat request's fast scan found (scan_chat_request).
struct ChatScan {
  std::string_view model;       // the top-level "model" string ("" when absent or not a string)
  bool stream = false;          // top-level "stream" is true
  bool include_usage = false;   // "stream_options": {"include_usage": true}
  bool has_tools = false;       // a top-level "tools" member
  bool messages_array = false;  // "messages" is an array
  int message_words = 0;        // words_in() of "messages"
  bool last_is_object = false;  // the last message is an object...
  std::string_view last_role;   // ...with this "role" string ("" when none)
};
// Reads a request body that is a JSON object in the plain subset (no escapes, ASCII only, no duplicate
// key in any object, short numbers, shallow) in one pass with no allocation, giving what parse_body +
// the members' helpers would. False: the body is outside that subset (or not valid JSON), so the caller
// must use the full parser, which decides (and words its errors) exactly as before.
bool scan_chat_request(std::string_view body, ChatScan& out);

}  // namespace llmchaos::mock::detail
