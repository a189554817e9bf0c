#include "llmchaos/core/eventstream.hpp"

#include <array>
#include <stdexcept>

namespace llmchaos::eventstream {
namespace {

constexpr std::array<std::uint32_t, 256> crc_table = [] {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}();

void put_be(std::string& out, std::uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

std::uint64_t get_be(std::string_view in, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(in[at + i]);
  return v;
}

int integer_width(HeaderType t) {
  switch (t) {
    case HeaderType::byte:
      return 1;
    case HeaderType::int16:
      return 2;
    case HeaderType::int32:
      return 4;
    case HeaderType::int64:
    case HeaderType::timestamp:
      return 8;
    default:
      return 0;
  }
}

void encode_header(std::string& out, const Header& h) {
  if (h.name.empty() || h.name.size() > 255)
    throw std::length_error("eventstream: a header name is 1 to 255 bytes: " + h.name);
  out.push_back(static_cast<char>(h.name.size()));
  out += h.name;
  out.push_back(static_cast<char>(h.type));
  if (h.type == HeaderType::bool_true || h.type == HeaderType::bool_false) return;
  if (const int width = integer_width(h.type)) {
    const auto* v = std::get_if<std::int64_t>(&h.value);
    put_be(out, static_cast<std::uint64_t>(v ? *v : 0), width);
    return;
  }
  const auto* s = std::get_if<std::string>(&h.value);
  const std::string_view bytes = s ? std::string_view(*s) : std::string_view();
  if (h.type == HeaderType::uuid) {
    if (bytes.size() != 16) throw std::length_error("eventstream: a uuid header holds 16 bytes: " + h.name);
    out += bytes;
    return;
  }
  if (bytes.size() > 0x7FFF)
    throw std::length_error("eventstream: a header value is at most 32767 bytes: " + h.name);
  put_be(out, bytes.size(), 2);
  out += bytes;
}

// One header at `at` of the headers block [at, end); false when it runs past the end or its type is unknown.
bool decode_header(std::string_view in, std::size_t& at, std::size_t end, Header& h) {
  if (at >= end) return false;
  const std::size_t name_len = static_cast<unsigned char>(in[at++]);
  if (name_len == 0 || at + name_len + 1 > end) return false;
  h.name.assign(in.substr(at, name_len));
  at += name_len;
  const auto type = static_cast<unsigned char>(in[at++]);
  if (type > static_cast<unsigned char>(HeaderType::uuid)) return false;
  h.type = static_cast<HeaderType>(type);
  if (h.type == HeaderType::bool_true || h.type == HeaderType::bool_false) {
    h.value = h.type == HeaderType::bool_true;
    return true;
  }
  if (const int width = integer_width(h.type)) {
    if (at + width > end) return false;
    auto v = get_be(in, at, width);
    if (width < 8 && (v >> (8 * width - 1)) & 1) v |= ~std::uint64_t{0} << (8 * width);  // sign-extend
    h.value = static_cast<std::int64_t>(v);
    at += width;
    return true;
  }
  std::size_t len = 16;
  if (h.type != HeaderType::uuid) {
    if (at + 2 > end) return false;
    len = get_be(in, at, 2);
    at += 2;
    if (len > 0x7FFF) return false;  // the format's limit (the encoder's too)
  }
  if (at + len > end) return false;
  h.value = std::string(in.substr(at, len));
  at += len;
  return true;
}

Message string_headers(std::string_view message_type, std::string_view type_key, std::string_view type,
                       std::string payload, std::string_view content_type) {
  Message m;
  m.headers.push_back({":message-type", HeaderType::string, std::string(message_type)});
  m.headers.push_back({std::string(type_key), HeaderType::string, std::string(type)});
  m.headers.push_back({":content-type", HeaderType::string, std::string(content_type)});
  m.payload = std::move(payload);
  return m;
}

}  // namespace

std::uint32_t crc32(std::string_view bytes, std::uint32_t crc) {
  crc = ~crc;
  for (unsigned char b : bytes) crc = crc_table[(crc ^ b) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

const Header* Message::find(std::string_view name) const {
  for (const auto& h : headers)
    if (h.name == name) return &h;
  return nullptr;
}

std::string_view Message::text(std::string_view name) const {
  const auto* h = find(name);
  const auto* s = h && h->type == HeaderType::string ? std::get_if<std::string>(&h->value) : nullptr;
  return s ? std::string_view(*s) : std::string_view();
}

std::string encode(const Message& m) {
  std::string headers;
  for (const auto& h : m.headers) encode_header(headers, h);
  if (headers.size() > max_header_bytes) throw std::length_error("eventstream: the headers are over 128 KiB");
  const std::size_t total = overhead_bytes + headers.size() + m.payload.size();
  if (total > max_message_bytes) throw std::length_error("eventstream: the message is over 16 MiB");
  std::string out;
  out.reserve(total);
  put_be(out, total, 4);
  put_be(out, headers.size(), 4);
  put_be(out, crc32(out), 4);
  out += headers;
  out += m.payload;
  put_be(out, crc32(out), 4);
  return out;
}

Message event(std::string_view event_type, std::string payload, std::string_view content_type) {
  return string_headers("event", ":event-type", event_type, std::move(payload), content_type);
}

Message exception(std::string_view exception_type, std::string payload, std::string_view content_type) {
  return string_headers("exception", ":exception-type", exception_type, std::move(payload), content_type);
}

std::string_view to_string(DecodeError e) {
  switch (e) {
    case DecodeError::none:
      return "none";
    case DecodeError::incomplete:
      return "incomplete message";
    case DecodeError::bad_length:
      return "bad message length";
    case DecodeError::prelude_crc:
      return "prelude checksum mismatch";
    case DecodeError::message_crc:
      return "message checksum mismatch";
    case DecodeError::bad_header:
      return "malformed header";
  }
  return "unknown";
}

Decoded decode(std::string_view in) {
  Decoded d;
  auto failed = [&d](DecodeError e) {
    d.error = e;
    return d;
  };
  if (in.size() < prelude_bytes) return failed(DecodeError::incomplete);
  const std::size_t total = get_be(in, 0, 4), headers_len = get_be(in, 4, 4);
  if (static_cast<std::uint32_t>(get_be(in, 8, 4)) != crc32(in.substr(0, 8)))
    return failed(DecodeError::prelude_crc);
  if (total < overhead_bytes || total > max_message_bytes || headers_len > total - overhead_bytes ||
      headers_len > max_header_bytes)
    return failed(DecodeError::bad_length);
  if (in.size() < total) return failed(DecodeError::incomplete);
  if (static_cast<std::uint32_t>(get_be(in, total - 4, 4)) != crc32(in.substr(0, total - 4)))
    return failed(DecodeError::message_crc);
  Message m;
  std::size_t at = prelude_bytes;
  const std::size_t headers_end = prelude_bytes + headers_len;
  while (at < headers_end) {
    Header h;
    if (!decode_header(in, at, headers_end, h)) return failed(DecodeError::bad_header);
    m.headers.push_back(std::move(h));
  }
  m.payload.assign(in.substr(headers_end, total - 4 - headers_end));
  d.consumed = total;
  d.message = std::move(m);
  return d;
}

std::optional<Message> Decoder::next() {
  if (error_ != DecodeError::none) return std::nullopt;
  auto d = decode(std::string_view(buffer_).substr(start_));
  if (d.error == DecodeError::incomplete) {
    if (start_ > 0) {  // keep only the unread tail
      buffer_.erase(0, start_);
      start_ = 0;
    }
    return std::nullopt;
  }
  if (d.error != DecodeError::none) {
    error_ = d.error;
    return std::nullopt;
  }
  start_ += d.consumed;
  return std::move(d.message);
}

}  // namespace llmchaos::eventstream
