#include "wire_client.hpp"

#include <fmt/format.h>

#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <functional>

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace llmchaos::test {
namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void parse_reply(WireReply& r) {
  const auto head_end = r.raw.find("\r\n\r\n");
  if (head_end == std::string::npos) return;
  const std::string head = r.raw.substr(0, head_end);
  std::size_t line_end = head.find("\r\n");
  const std::string status_line = head.substr(0, line_end);
  if (status_line.size() >= 12) r.status = std::stoi(status_line.substr(9, 3));
  while (line_end != std::string::npos && line_end < head.size()) {
    const auto start = line_end + 2;
    line_end = head.find("\r\n", start);
    const auto line =
        head.substr(start, line_end == std::string::npos ? std::string::npos : line_end - start);
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    r.headers.emplace_back(lower(line.substr(0, colon)), value);
  }
  std::string rest = r.raw.substr(head_end + 4);
  r.chunked = lower(r.header("transfer-encoding")) == "chunked";
  if (!r.chunked) {
    const auto cl = r.header("content-length");
    const std::size_t want = cl.empty() ? rest.size() : std::stoul(cl);
    r.body = rest.substr(0, want);
    r.complete = rest.size() >= want;
    return;
  }
  std::size_t pos = 0;
  for (int guard = 0; guard < 1000000; ++guard) {
    const auto crlf = rest.find("\r\n", pos);
    if (crlf == std::string::npos) return;
    const auto size = std::stoul(rest.substr(pos, crlf - pos), nullptr, 16);
    if (size == 0) {
      r.complete = rest.compare(crlf + 2, 2, "\r\n") == 0;
      return;
    }
    if (rest.size() < crlf + 2 + size + 2) {  // a chunk cut in the middle
      r.body += rest.substr(crlf + 2);
      return;
    }
    r.body += rest.substr(crlf + 2, size);
    pos = crlf + 2 + size + 2;
  }
}

}  // namespace

std::string WireReply::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k == name) return v;
  return {};
}

bool WireReply::has_header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k == name) return true;
  return false;
}

boost::json::value WireReply::json() const {
  return boost::json::parse(body);
}

WireReply wire_exchange(std::uint16_t port, const std::string& request, double timeout_ms) {
  WireReply r;
  net::io_context ioc;
  tcp::socket socket(ioc);
  boost::system::error_code ec;
  socket.connect({net::ip::make_address("127.0.0.1"), port}, ec);
  if (ec) return r;
  r.connected = true;
  net::write(socket, net::buffer(request), ec);
  std::array<char, 16384> buf;
  bool done = false;
  std::function<void()> read = [&] {
    socket.async_read_some(net::buffer(buf), [&](boost::system::error_code e, std::size_t n) {
      r.raw.append(buf.data(), n);
      if (!e) return read();
      done = true;
      r.eof = e == net::error::eof;
      r.reset = e == net::error::connection_reset;
    });
  };
  read();
  ioc.run_for(std::chrono::microseconds(static_cast<long long>(timeout_ms * 1000)));
  if (!done) {
    r.timed_out = true;
    socket.close(ec);
    ioc.restart();
    ioc.run();
  }
  parse_reply(r);
  return r;
}

std::string http_request(const std::string& method, const std::string& target, const std::string& body,
                         const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string out = fmt::format("{} {} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n", method, target);
  for (const auto& [k, v] : headers) out += fmt::format("{}: {}\r\n", k, v);
  if (!body.empty() || method == "POST" || method == "PUT")
    out += fmt::format("content-type: application/json\r\ncontent-length: {}\r\n", body.size());
  out += "\r\n" + body;
  return out;
}

std::vector<SseEvent> sse_events(const std::string& body) {
  std::vector<SseEvent> out;
  std::size_t pos = 0;
  while (pos < body.size()) {
    const auto lf = body.find("\n\n", pos);
    const auto crlf = body.find("\r\n\r\n", pos);
    std::size_t end, sep;
    if (crlf != std::string::npos && (lf == std::string::npos || crlf < lf)) {
      end = crlf;
      sep = 4;
    } else if (lf != std::string::npos) {
      end = lf;
      sep = 2;
    } else {
      break;  // an unterminated tail is not an event
    }
    SseEvent e;
    e.raw = body.substr(pos, end + sep - pos);
    const auto frame = body.substr(pos, end - pos);
    std::size_t line_start = 0;
    while (line_start <= frame.size()) {
      auto line_end = frame.find('\n', line_start);
      auto line =
          frame.substr(line_start, line_end == std::string::npos ? std::string::npos : line_end - line_start);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.rfind("event: ", 0) == 0) e.event = line.substr(7);
      if (line.rfind("data: ", 0) == 0) e.data = line.substr(6);
      if (line_end == std::string::npos) break;
      line_start = line_end + 1;
    }
    out.push_back(std::move(e));
    pos = end + sep;
  }
  return out;
}

std::string event_text(Dialect d, const SseEvent& e) {
  boost::system::error_code ec;
  auto v = boost::json::parse(e.data, ec);
  if (ec || !v.is_object()) return {};
  const auto& o = v.get_object();
  try {
    switch (d) {
      case Dialect::openai:
      case Dialect::azure: {  // Azure's first chunk (prompt_filter_results) has no choice
        const auto& choices = o.at("choices").as_array();
        if (choices.empty()) return {};
        const auto& delta = choices[0].as_object().at("delta").as_object();
        if (delta.contains("tool_calls")) return "tool_calls";
        const auto* c = delta.if_contains("content");
        return c && c->is_string() ? std::string(c->get_string()) : "";
      }
      case Dialect::anthropic: {
        if (e.event != "content_block_delta") return {};
        const auto& delta = o.at("delta").as_object();
        if (auto* t = delta.if_contains("text")) return std::string(t->as_string());
        if (auto* j = delta.if_contains("partial_json")) return std::string(j->as_string());
        return {};
      }
      case Dialect::responses: {
        const auto type = o.at("type").as_string();
        if (type == "response.output_text.delta") return std::string(o.at("delta").as_string());
        if (type == "response.function_call_arguments.delta") return "function_call";
        return {};
      }
      case Dialect::gemini: {
        const auto& part = o.at("candidates")
                               .as_array()[0]
                               .as_object()
                               .at("content")
                               .as_object()
                               .at("parts")
                               .as_array()[0]
                               .as_object();
        if (auto* t = part.if_contains("text")) return std::string(t->as_string());
        if (part.contains("functionCall")) return "functionCall";
        return {};
      }
      case Dialect::bedrock:  // binary event-stream frames, not SSE: test_bedrock.cpp decodes them
        return {};
    }
  } catch (const std::exception&) {
  }
  return {};
}

ChatCall chat_call(Dialect d, const std::string& base, bool stream, const std::string& extra) {
  const std::string more = extra.empty() ? "" : "," + extra;
  switch (d) {
    case Dialect::openai:
      return {
          base + "/v1/chat/completions",
          fmt::format(
              R"({{"model":"gpt-x","messages":[{{"role":"user","content":"hi there"}}],"stream":{}{}{}}})",
              stream ? "true" : "false", stream ? R"(,"stream_options":{"include_usage":true})" : "", more)};
    case Dialect::azure:
      return {
          base + "/openai/deployments/gpt-x/chat/completions?api-version=2024-10-21",
          fmt::format(
              R"({{"model":"gpt-x","messages":[{{"role":"user","content":"hi there"}}],"stream":{}{}{}}})",
              stream ? "true" : "false", stream ? R"(,"stream_options":{"include_usage":true})" : "", more)};
    case Dialect::anthropic:
      return {
          base + "/v1/messages",
          fmt::format(
              R"({{"model":"claude-x","max_tokens":64,"messages":[{{"role":"user","content":"hi there"}}],"stream":{}{}}})",
              stream ? "true" : "false", more)};
    case Dialect::responses:
      return {
          base + "/v1/responses",
          fmt::format(R"({{"model":"gpt-x","input":[{{"role":"user","content":"hi there"}}],"stream":{}{}}})",
                      stream ? "true" : "false", more)};
    case Dialect::gemini:
      return {base + (stream ? "/v1beta/models/gemini-x:streamGenerateContent?alt=sse"
                             : "/v1beta/models/gemini-x:generateContent"),
              fmt::format(R"({{"contents":[{{"role":"user","parts":[{{"text":"hi there"}}]}}]{}}})", more)};
    case Dialect::bedrock:  // Converse (the model id percent-encoded, as the AWS SDKs send it)
      return {base + (stream ? "/model/anthropic.claude-x-v1%3A0/converse-stream"
                             : "/model/anthropic.claude-x-v1%3A0/converse"),
              fmt::format(R"({{"messages":[{{"role":"user","content":[{{"text":"hi there"}}]}}]{}}})", more)};
  }
  return {};
}

}  // namespace llmchaos::test
