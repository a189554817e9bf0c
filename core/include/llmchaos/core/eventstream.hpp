#pragma once
// The AWS event stream framing (`application/vnd.amazon.eventstream`, Amazon Bedrock's ConverseStream
// and InvokeModelWithResponseStream): one codec for both sides, the mock that writes frames and the
// client that reads them. A message is
//   total length (u32 BE) | headers length (u32 BE) | prelude CRC32 (of the 8 bytes before it)
//   | headers | payload | message CRC32 (of every byte before it)
// and a header is name length (u8) | name | value type (u8) | value (big-endian integers; u16 BE
// length before byte arrays and strings). CRC32 is the IEEE one (zlib's).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace llmchaos::eventstream {

enum class HeaderType : std::uint8_t {
  bool_true = 0,
  bool_false = 1,
  byte = 2,
  int16 = 3,
  int32 = 4,
  int64 = 5,
  bytes = 6,
  string = 7,
  timestamp = 8,
  uuid = 9
};

struct Header {
  std::string name;
  HeaderType type = HeaderType::string;
  // bool: the types bool_true / bool_false; integers and timestamps (ms since the epoch): int64;
  // bytes, string and uuid (16 bytes): std::string.
  std::variant<bool, std::int64_t, std::string> value = std::string();
};

struct Message {
  std::vector<Header> headers;
  std::string payload;

  const Header* find(std::string_view name) const;
  // The value of a string header ("" when there is none, or it is not a string).
  std::string_view text(std::string_view name) const;
};

// The limits the service's decoders apply: a larger message is refused.
inline constexpr std::size_t max_message_bytes = 16 * 1024 * 1024;
inline constexpr std::size_t max_header_bytes = 128 * 1024;
inline constexpr std::size_t prelude_bytes = 12;
inline constexpr std::size_t overhead_bytes = prelude_bytes + 4;  // prelude and the message CRC

std::uint32_t crc32(std::string_view bytes, std::uint32_t crc = 0);

// Throws std::length_error when a name, a value or the message is over the format's limits.
std::string encode(const Message& m);

// The three string headers of an event frame (":message-type" "event"), and of an exception frame
// (":message-type" "exception", ":exception-type"): the shapes every AWS event stream uses.
Message event(std::string_view event_type, std::string payload,
              std::string_view content_type = "application/json");
Message exception(std::string_view exception_type, std::string payload,
                  std::string_view content_type = "application/json");

enum class DecodeError {
  none,
  incomplete,   // not a whole message yet: more bytes are needed
  bad_length,   // total length under 16 or over max_message_bytes, or headers longer than the room
  prelude_crc,  // the prelude's CRC does not match
  message_crc,  // the message's CRC does not match
  bad_header,   // a header runs past the headers' length, or has an unknown value type
};
std::string_view to_string(DecodeError e);

struct Decoded {
  DecodeError error = DecodeError::none;
  std::size_t consumed = 0;  // bytes of the input the message took (0 unless error is none)
  std::optional<Message> message;
};

// The first message at the start of `bytes`. Never throws; any byte string gives an answer.
Decoded decode(std::string_view bytes);

// Reads messages from bytes as they arrive (a stream cut anywhere, a frame split across reads).
class Decoder {
 public:
  void feed(std::string_view bytes) { buffer_.append(bytes); }
  // The next whole message; nullopt when more bytes are needed or the stream is broken (error()).
  std::optional<Message> next();
  DecodeError error() const { return error_; }
  std::size_t buffered() const { return buffer_.size() - start_; }

 private:
  std::string buffer_;
  std::size_t start_ = 0;
  DecodeError error_ = DecodeError::none;
};

}  // namespace llmchaos::eventstream
