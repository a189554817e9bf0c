// The fast path of a request head (fast_head.hpp).
#include "llmchaos/mockprovider/fast_head.hpp"

#include <array>
#include <cstring>
#include <optional>

#include "llmchaos/core/byte_scan.hpp"
#include "llmchaos/core/sized_text.hpp"

namespace llmchaos::mock {
namespace {

using byte_scan::ascii_lower;
using byte_scan::iequals_lower;

// What the fast path does with a request field, by its lower-cased name.
enum class FastField { ignored, content_length, connection, needs_beast_parser, router, host };

// Dispatched on the name's length: a field meets at most one comparison here, not five.
FastField fast_field(std::string_view lname) {
  using namespace std::string_view_literals;
  switch (lname.size()) {
    case 4:
      if (lname == "host"sv) return FastField::host;  // read by the router for admin requests only
      break;
    case 6:
      if (lname == "expect"sv) return FastField::needs_beast_parser;
      break;
    case 7:
      if (lname == "upgrade"sv) return FastField::needs_beast_parser;
      break;
    case 10:
      if (lname == "connection"sv) return FastField::connection;
      break;
    case 14:
      if (lname == "content-length"sv) return FastField::content_length;
      break;
    case 17:
      if (lname == "transfer-encoding"sv) return FastField::needs_beast_parser;
      break;
    default:
      break;
  }
  return Router::reads_header(lname) ? FastField::router : FastField::ignored;
}

// Where the head's blank line starts (its CR), or npos while it is not all there: from CR to CR
// (string_view::find of a 4-byte string tests every byte).
std::size_t head_end(std::string_view in) {
  for (std::size_t cr = in.find('\r'); cr != std::string_view::npos && cr + 4 <= in.size();
       cr = in.find('\r', cr + 1))
    if (in[cr + 1] == '\n' && in[cr + 2] == '\r' && in[cr + 3] == '\n') return cr;
  return std::string_view::npos;
}

constexpr std::size_t fast_head_max = 8 * 1024;  // a longer head goes to Beast (which enforces header_limit)
constexpr std::size_t fast_name_max = 32;  // a longer field name is none the fast path or the router reads

// A field name of n <= fast_name_max bytes lower-cased into out (fast_name_max bytes), 16 at a time
// where the buffer has the bytes (the bytes after the name are lowered too, and ignored): a loop per
// byte cost 13 instructions a byte.
void lower_name(const char* name, std::size_t n, const char* last, char* out) {
  if (last - name < static_cast<std::ptrdiff_t>(fast_name_max)) {
    for (std::size_t k = 0; k < n; ++k) out[k] = ascii_lower(name[k]);
    return;
  }
  byte_scan::ascii_lower16(name, out);
  if (n > 16) byte_scan::ascii_lower16(name + 16, out + 16);
}

// The request line: METHOD SP target SP HTTP/1.1 CRLF (nullopt: not one the fast path reads).
struct RequestLine {
  std::size_t method_len = 0;
  std::string_view target;
  const char* next = nullptr;  // the first field's first byte
};

std::optional<RequestLine> read_request_line(const char* const first, const char* const last) {
  const char* p = first;
  while (p < last && *p >= 'A' && *p <= 'Z') ++p;
  const auto method_len = static_cast<std::size_t>(p - first);
  if (method_len == 0 || method_len > 16 || p == last || *p != ' ') return std::nullopt;
  const char* const target_pos = ++p;
  p = byte_scan::run_end<byte_scan::unprintable | byte_scan::space>(p, last);  // visible ASCII
  if (p == target_pos || *target_pos != '/' || p == last || *p != ' ') return std::nullopt;
  const std::string_view target(target_pos, static_cast<std::size_t>(p - target_pos));
  if (last - p < 11 || std::memcmp(p + 1, "HTTP/1.1\r\n", 10) != 0) return std::nullopt;
  return RequestLine{method_len, target, p + 11};
}

// What the field pass keeps (plain data: the arrays are not zeroed on each request); names[k] holds the
// lower-cased name of wanted[k], names[nreq] that of the field being read. A server keeps only the router's
// few fields, a proxy every field (KeepAll): two instances, so the server's pass keeps its small frame.
template <bool KeepAll>
struct HeadFields {
  static constexpr std::size_t kept = KeepAll ? fast_head_fields_kept : 8;
  struct Wanted {
    std::size_t name_len;
    std::string_view value;
  };
  std::size_t count = 0;
  std::optional<std::size_t> content_length;
  bool close = false, connection_seen = false;
  std::size_t nreq = 0;
  bool wants_host = false;  // Router::reads_host of the request's target
  std::array<Wanted, kept> wanted;
  std::array<std::array<char, fast_name_max>, kept + 1> names;

  bool keep(std::string_view lname, std::string_view value) {
    if (nreq == wanted.size()) return false;
    wanted[nreq++] = {lname.size(), value};
    return true;
  }

  // One field by its lower-cased name; false: a field the fast path leaves to Beast.
  bool take(std::string_view lname, std::string_view value) {
    const FastField kind = fast_field(lname);
    if (KeepAll && kind != FastField::needs_beast_parser && !keep(lname, value)) return false;
    switch (kind) {
      case FastField::content_length: {
        if (content_length || value.empty() || value.size() > 15) return false;
        std::size_t n = 0;
        for (char c : value) {
          if (c < '0' || c > '9') return false;
          n = n * 10 + static_cast<std::size_t>(c - '0');
        }
        content_length = n;
        return true;
      }
      case FastField::connection:
        if (connection_seen) return false;  // Beast reads the first one only: its rules
        connection_seen = true;
        if (iequals_lower(value, "close")) close = true;
        return close || iequals_lower(value, "keep-alive");
      case FastField::needs_beast_parser:
        return false;
      case FastField::router:
        return KeepAll || keep(lname, value);
      case FastField::host:
        return KeepAll || !wants_host || keep(lname, value);
      case FastField::ignored:
        return true;
    }
    return true;
  }
};

// Fields: name ":" OWS value OWS CRLF, visible ASCII only, up to the blank line. Returns where the
// blank line starts, or nullptr for a head the fast path does not read.
template <bool KeepAll>
const char* read_fields(const char* p, const char* const last, const FastHeadLimits& opt,
                        HeadFields<KeepAll>& f) {
  for (;;) {
    if (last - p < 2) return nullptr;
    if (p[0] == '\r' && p[1] == '\n') return p;  // the blank line
    const char* const name_pos = p;
    p = byte_scan::token_end(p, last);
    const auto name_len = static_cast<std::size_t>(p - name_pos);
    if (name_len == 0 || p == last || *p != ':') return nullptr;
    ++p;
    while (p < last && (*p == ' ' || *p == '\t')) ++p;
    const char* const value_pos = p;
    p = byte_scan::run_end<byte_scan::unprintable>(p, last);
    if (last - p < 2 || p[0] != '\r' || p[1] != '\n') return nullptr;  // a tab inside a value: Beast's rules
    const char* value_end = p;
    while (value_end > value_pos && value_end[-1] == ' ') --value_end;
    const std::string_view value(value_pos, static_cast<std::size_t>(value_end - value_pos));
    p += 2;
    if (++f.count > opt.max_header_count) return nullptr;
    if (name_len > fast_name_max) {  // longer than any field read here or by the router
      if (KeepAll) return nullptr;
      continue;
    }
    char* const lower = f.names[f.nreq].data();
    lower_name(name_pos, name_len, last, lower);
    if (!f.take(std::string_view(lower, name_len), value)) return nullptr;
  }
}

// The fields read, the request taken into req's own strings and pairs (kept from one request to the next).
template <bool KeepAll>
FastHeadRead read_head_as(std::string_view in, const FastHeadLimits& opt, RawRequest& req) {
  const auto refuse = [&in]() -> FastHeadRead {
    return {head_end(in) != std::string_view::npos || in.size() > fast_head_max ? FastHead::needs_beast_parser
                                                                                : FastHead::need_more};
  };
  const char* const first = in.data();
  const char* const last = first + in.size();
  const auto line = read_request_line(first, last);
  if (!line) return refuse();
  HeadFields<KeepAll> f;
  f.wants_host = Router::reads_host(line->target);
  const char* const blank = read_fields(line->next, last, opt, f);
  if (!blank) return refuse();

  const auto head_len = static_cast<std::size_t>(blank + 2 - first);
  if (head_len > fast_head_max || head_len > opt.header_limit) return {FastHead::needs_beast_parser};
  const std::size_t body_len = f.content_length.value_or(0);
  if (body_len > opt.body_limit || body_len > 1024 * 1024) return {FastHead::needs_beast_parser};
  if (in.size() - head_len < body_len)
    return {FastHead::needs_beast_parser};  // the body is still coming: Beast reads it

  assign_reusing(req.method, std::string_view(first, line->method_len));
  assign_reusing(req.target, line->target);
  req.headers.resize(f.nreq);
  for (std::size_t k = 0; k < f.nreq; ++k) {
    assign_reusing(req.headers[k].first, std::string_view(f.names[k].data(), f.wanted[k].name_len));
    assign_reusing(req.headers[k].second, f.wanted[k].value);
  }
  assign_reusing(req.body, std::string_view(first + head_len, body_len));
  return {FastHead::ready, head_len + body_len, !f.close};
}

}  // namespace

// One pass from the request line to the blank line, each name's and line's end found 16 bytes at a time
// (bench/README.md: the instructions of the request head). A head this pass cannot read is Beast's once
// it is all there, and until then read on as any incomplete head (refuse()): the same verdict as
// finding the end first.
FastHeadRead read_fast_head(std::string_view in, const FastHeadLimits& opt, RawRequest& req) {
  // The session looks for a pipelined request before each read: mostly there is none.
  if (in.empty()) return {FastHead::need_more};
  return opt.keep_all_headers ? read_head_as<true>(in, opt, req) : read_head_as<false>(in, opt, req);
}

}  // namespace llmchaos::mock
