// The SSE splitter and a frame's role in each dialect (stream_edit.hpp): what `llmchaos proxy` reads
// from a real upstream's stream. Pure functions.
#include <boost/json.hpp>

#include "llmchaos/mockprovider/stream_edit.hpp"

namespace json = boost::json;

namespace llmchaos::mock {
namespace {

struct Event {
  std::string_view name;
  std::string data;
};

// The event's name and its data lines (joined by "\n", as the SSE spec says).
Event read_event(std::string_view frame) {
  Event e;
  bool first_data = true;
  while (!frame.empty()) {
    const auto eol = frame.find('\n');
    auto line = frame.substr(0, eol);
    frame = eol == std::string_view::npos ? std::string_view{} : frame.substr(eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto field = [&](std::string_view name) -> std::optional<std::string_view> {
      if (line.substr(0, name.size()) != name || line.size() <= name.size() || line[name.size()] != ':')
        return std::nullopt;
      auto v = line.substr(name.size() + 1);
      if (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      return v;
    };
    if (auto v = field("event")) e.name = *v;
    if (auto v = field("data")) {
      if (!first_data) e.data += '\n';
      e.data += *v;
      first_data = false;
    }
  }
  return e;
}

const json::object* first_object(const json::object& o, std::string_view array_key) {
  const auto* a = o.if_contains(array_key);
  if (!a || !a->is_array() || a->get_array().empty() || !a->get_array()[0].is_object()) return nullptr;
  return &a->get_array()[0].get_object();
}

bool non_empty_string(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() && !v->get_string().empty();
}

FrameRole openai_role(const Event& e, const json::object& o) {
  (void)e;
  const auto* choice = first_object(o, "choices");
  if (!choice) return o.contains("usage") ? FrameRole::closing : FrameRole::structure;
  if (const auto* d = choice->if_contains("delta"); d && d->is_object()) {
    const auto& delta = d->get_object();
    if (non_empty_string(delta, "content") || non_empty_string(delta, "refusal") || delta.contains("tool_calls"))
      return FrameRole::content;
  }
  const auto* finish = choice->if_contains("finish_reason");
  return finish && !finish->is_null() ? FrameRole::closing : FrameRole::structure;
}

FrameRole anthropic_role(const Event& e, const json::object& o) {
  std::string_view type = e.name;
  if (const auto* t = o.if_contains("type"); t && t->is_string()) type = t->get_string();
  if (type == "message_stop") return FrameRole::terminator;
  if (type == "error") return FrameRole::injected;
  if (type == "content_block_delta") return FrameRole::content;
  if (type == "message_delta") return FrameRole::closing;
  return FrameRole::structure;
}

FrameRole gemini_role(const Event& e, const json::object& o) {
  (void)e;
  const auto* candidate = first_object(o, "candidates");
  if (!candidate) return FrameRole::structure;
  if (candidate->contains("finishReason")) return FrameRole::terminator;
  const auto* content = candidate->if_contains("content");
  const auto* parts = content && content->is_object() ? content->get_object().if_contains("parts") : nullptr;
  if (parts && parts->is_array())
    for (const auto& p : parts->get_array())
      if (p.is_object() && (non_empty_string(p.get_object(), "text") || p.get_object().contains("functionCall")))
        return FrameRole::content;
  return FrameRole::structure;
}

// Responses: every event is typed (`event:` and data.type); deltas are content, the *.done events close
// the output, response.completed / .incomplete end the stream, response.failed is a failure.
FrameRole responses_role(const Event& e, const json::object& o) {
  std::string_view type = e.name;
  if (const auto* t = o.if_contains("type"); t && t->is_string()) type = t->get_string();
  const auto ends_with = [&](std::string_view suffix) {
    return type.size() >= suffix.size() && type.substr(type.size() - suffix.size()) == suffix;
  };
  if (type == "response.completed" || type == "response.incomplete") return FrameRole::terminator;
  if (type == "response.failed" || type == "error") return FrameRole::injected;
  if (ends_with(".delta")) return FrameRole::content;
  if (ends_with(".done")) return FrameRole::closing;
  return FrameRole::structure;
}

}  // namespace

FrameRole frame_role(Dialect dialect, std::string_view frame) {
  const Event e = read_event(frame);
  const bool chat = dialect == Dialect::openai || dialect == Dialect::azure;  // Azure speaks the Chat Completions chunks
  if (chat && e.data == "[DONE]") return FrameRole::terminator;
  if (e.data.empty()) return FrameRole::structure;  // a comment or keep-alive line
  boost::system::error_code ec;
  const auto v = json::parse(e.data, ec);
  if (ec || !v.is_object()) return FrameRole::injected;
  const auto& o = v.get_object();
  if (o.contains("error")) return FrameRole::injected;
  switch (dialect) {
    case Dialect::openai:
    case Dialect::azure: return openai_role(e, o);
    case Dialect::anthropic: return anthropic_role(e, o);
    case Dialect::gemini: return gemini_role(e, o);
    case Dialect::responses: return responses_role(e, o);
  }
  return FrameRole::structure;
}

void SseSplitter::feed(std::string_view bytes) {
  if (start_ > 0 && start_ >= buffer_.size() / 2) {  // drop what was handed out, now and then
    buffer_.erase(0, start_);
    scanned_ -= start_;
    start_ = 0;
  }
  buffer_.append(bytes);
}

std::optional<std::string> SseSplitter::next() {
  // An event ends at an empty line: "\n\n", "\r\n\r\n" (or a mix, "\n\r\n").
  for (std::size_t i = std::max(scanned_, start_); i < buffer_.size(); ++i) {
    if (buffer_[i] != '\n') continue;
    std::size_t j = i + 1;
    if (j < buffer_.size() && buffer_[j] == '\r') ++j;
    if (j < buffer_.size() && buffer_[j] == '\n') {
      std::string event = buffer_.substr(start_, j + 1 - start_);
      start_ = scanned_ = j + 1;
      return event;
    }
    if (j >= buffer_.size()) {  // the separator may be split across reads: look again from here
      scanned_ = i;
      return std::nullopt;
    }
  }
  scanned_ = buffer_.size();
  return std::nullopt;
}

std::string SseSplitter::rest() {
  std::string out = buffer_.substr(start_);
  buffer_.clear();
  start_ = scanned_ = 0;
  return out;
}

}  // namespace llmchaos::mock
