// The upstream's answer read without Beast's parser where it is plain (upstream_response.hpp).
#include "upstream_response.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "llmchaos/core/byte_scan.hpp"

namespace llmchaos::proxy {
namespace {

using byte_scan::ascii_lower;
using byte_scan::iequals_lower;

// "HTTP/1.1 NNN reason\r\n": the status, and where the fields start (nullopt: not a line read here).
std::optional<std::pair<int, const char*>> read_status_line(const char* p, const char* last) {
  if (last - p < 14 || std::memcmp(p, "HTTP/1.1 ", 9) != 0) return std::nullopt;
  int status = 0;
  for (int i = 9; i < 12; ++i) {
    if (p[i] < '0' || p[i] > '9') return std::nullopt;
    status = status * 10 + (p[i] - '0');
  }
  if (p[12] != ' ' && p[12] != '\r') return std::nullopt;
  const char* q = p + 12;
  while (q < last && (*q == ' ' || *q == '\t' || (*q > 0x20 && *q < 0x7f))) ++q;  // the reason phrase
  if (last - q < 2 || q[0] != '\r' || q[1] != '\n') return std::nullopt;
  return std::pair{status, q + 2};
}

// How a field shapes the framing: false when it is one the fast path leaves to Beast.
bool take_framing(std::string_view name, std::string_view value, UpstreamHead& out, bool& chunked) {
  if (name.size() == 14 && iequals_lower(name, "content-length")) {
    if (out.content_length || value.empty() || value.size() > 15) return false;
    std::uint64_t n = 0;
    for (char c : value) {
      if (c < '0' || c > '9') return false;
      n = n * 10 + static_cast<std::uint64_t>(c - '0');
    }
    out.content_length = n;
  } else if (name.size() == 17 && iequals_lower(name, "transfer-encoding")) {
    if (chunked || !iequals_lower(value, "chunked")) return false;
    chunked = true;
  } else if (name.size() == 10 && iequals_lower(name, "connection")) {
    if (iequals_lower(value, "close"))
      out.keep_alive = false;
    else if (!iequals_lower(value, "keep-alive"))
      return false;
  }
  return true;
}

// The fields up to the blank line (where its CRLF starts), or nullptr for a head read by Beast.
const char* read_fields(const char* p, const char* last, UpstreamHead& out, bool& chunked) {
  for (;;) {
    if (last - p < 2) return nullptr;
    if (p[0] == '\r' && p[1] == '\n') return p;
    const char* const name_pos = p;
    p = byte_scan::token_end(p, last);
    if (p == name_pos || p == last || *p != ':') return nullptr;
    const std::string_view name(name_pos, static_cast<std::size_t>(p - name_pos));
    ++p;
    while (p < last && (*p == ' ' || *p == '\t')) ++p;
    const char* const value_pos = p;
    p = byte_scan::run_end<byte_scan::unprintable>(p, last);
    if (last - p < 2 || p[0] != '\r' || p[1] != '\n') return nullptr;
    const char* value_end = p;
    while (value_end > value_pos && value_end[-1] == ' ') --value_end;
    const std::string_view value(value_pos, static_cast<std::size_t>(value_end - value_pos));
    p += 2;
    if (out.fields.size() == upstream_field_limit || !take_framing(name, value, out, chunked)) return nullptr;
    out.fields.emplace_back(name, value);
  }
}

bool head_complete(std::string_view in) {
  return in.find("\r\n\r\n") != std::string_view::npos;
}

}  // namespace

HeadVerdict read_upstream_head(std::string_view in, UpstreamHead& out) {
  const auto refuse = [&in] {
    return head_complete(in) || in.size() > upstream_head_limit ? HeadVerdict::beast : HeadVerdict::need_more;
  };
  out.fields.clear();
  out.content_length.reset();
  out.keep_alive = true;
  const char* const first = in.data();
  const char* const last = first + in.size();
  const auto line = read_status_line(first, last);
  if (!line) return refuse();
  bool chunked = false;
  const char* const blank = read_fields(line->second, last, out, chunked);
  if (!blank) return refuse();
  out.status = line->first;
  out.head_bytes = static_cast<std::size_t>(blank + 2 - first);
  const bool no_body = out.status < 200 || out.status == 204 || out.status == 304;
  if (out.head_bytes > upstream_head_limit || no_body || chunked == out.content_length.has_value())
    return HeadVerdict::beast;  // both framings, or neither (a body until the close)
  return HeadVerdict::ready;
}

ChunkedBody::Step ChunkedBody::size_line(std::string_view in) {
  const auto eol = in.find("\r\n");
  if (eol == std::string_view::npos) return in.size() > 1024 ? fail() : Step{};
  std::size_t i = 0;
  std::uint64_t size = 0;
  for (; i < eol && std::isxdigit(static_cast<unsigned char>(in[i])); ++i) {
    if (size >> 59) return fail();  // over 2^63
    const char c = ascii_lower(in[i]);
    size = size * 16 + static_cast<std::uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
  }
  if (i == 0) return fail();
  while (i < eol && (in[i] == ' ' || in[i] == '\t')) ++i;
  if (i < eol && in[i] != ';') return fail();  // anything but an extension after the size
  for (; i < eol; ++i)
    if (static_cast<unsigned char>(in[i]) < 0x20 && in[i] != '\t') return fail();
  left_ = size;
  state_ = size == 0 ? State::trailers : State::data;
  return {eol + 2, {}};
}

ChunkedBody::Step ChunkedBody::trailer_line(std::string_view in) {
  const auto eol = in.find("\r\n");
  if (eol == std::string_view::npos) return in.size() > 8192 ? fail() : Step{};
  if (eol == 0) state_ = State::done;  // the blank line after the trailers
  return {eol + 2, {}};
}

ChunkedBody::Step ChunkedBody::next(std::string_view in) {
  switch (state_) {
    case State::size_line:
      return size_line(in);
    case State::data: {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left_, in.size()));
      left_ -= n;
      if (left_ == 0) state_ = State::data_end;
      return {n, in.substr(0, n)};
    }
    case State::data_end:
      if (in.size() < 2) return {};
      if (in[0] != '\r' || in[1] != '\n') return fail();
      state_ = State::size_line;
      return {2, {}};
    case State::trailers:
      return trailer_line(in);
    case State::done:
    case State::failed:
      return {};
  }
  return {};
}

}  // namespace llmchaos::proxy
