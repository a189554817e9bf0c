// An answer's head and chunk lines without Beast's serializer (plain_head.hpp).
#include "plain_head.hpp"

#include <fmt/format.h>

#include <boost/beast/http/status.hpp>

#include "llmchaos/core/byte_scan.hpp"
#include "llmchaos/core/sized_text.hpp"

namespace http = boost::beast::http;

namespace llmchaos::mock {
namespace {

// A header Beast sets from the message itself: a plan that names one goes through Beast's serializer.
// Told by length first (a switch, no string built per call): most names match none of the three lengths.
bool managed_by_beast(std::string_view name) {
  using namespace std::string_view_literals;
  switch (name.size()) {
    case 10:
      return byte_scan::iequals_lower(name, "connection"sv);
    case 14:
      return byte_scan::iequals_lower(name, "content-length"sv);
    case 17:
      return byte_scan::iequals_lower(name, "transfer-encoding"sv);
    default:
      return false;
  }
}

}  // namespace

std::string_view fallback_reason(int status_code, std::string_view beast_reason) {
  if (beast_reason != "<unknown-status>") return {};
  return status_code == 529 ? "Overloaded" : "Error";
}

bool render_plain_head(std::string& out, int status_code, const HeaderList& headers,
                       std::optional<std::size_t> body_size, bool keep_alive) {
  const auto status = static_cast<http::status>(status_code);
  if (status_code < 200 || status_code > 999 || status == http::status::no_content ||
      status == http::status::not_modified)
    return false;
  using namespace std::string_view_literals;  // literals as views: no strlen per piece
  bool own_server = true;  // a Server of the answer's (a proxied one) replaces ours, in its place
  for (std::size_t i = 0; i < headers.size(); ++i) {
    const std::string_view name = headers[i].first;
    if (managed_by_beast(name)) return false;
    if (byte_scan::iequals_lower(name, "server"sv)) own_server = false;
    for (std::size_t j = 0; j < i; ++j)
      if (byte_scan::iequals(name, headers[j].first)) return false;
  }
  const auto obsolete = http::obsolete_reason(status);
  const std::string_view beast_reason(obsolete.data(), obsolete.size());
  const std::string_view fallback = fallback_reason(status_code, beast_reason);
  const std::string_view reason = fallback.empty() ? beast_reason : fallback;
  const fmt::format_int status_digits(status_code), length_digits(body_size.value_or(0));
  // Sized first, then written in one pass (sized_text.hpp): appending piece by piece (a capacity check
  // and a call per piece) cost 680 of the head's 1,250 instructions per request.
  render_sized_into(out, [&](auto& put) {
    put("HTTP/1.1 "sv);
    put(status_digits);
    put(" "sv);
    put(reason);
    put("\r\n"sv);
    if (own_server) put("Server: llmchaos\r\n"sv);
    for (const auto& [k, v] : headers) {
      put(std::string_view(k));
      put(": "sv);
      put(std::string_view(v));
      put("\r\n"sv);
    }
    if (!keep_alive) put("Connection: close\r\n"sv);
    if (body_size) {
      put("Content-Length: "sv);
      put(length_digits);
      put("\r\n\r\n"sv);
    } else {
      put("Transfer-Encoding: chunked\r\n\r\n"sv);
    }
  });
  return true;
}

bool render_plain_head(std::string& out, const Plan& plan, bool keep_alive) {
  return render_plain_head(out, plan.status, plan.headers, plan.body.size(), keep_alive);
}

bool answered_at_once(const Plan& plan) {
  return plan.action == WireAction::respond && !plan.streamed && plan.end == StreamEnd::complete &&
         !(plan.latency_ms > 0);
}

std::size_t chunk_size_line(std::size_t size, ChunkSizeLine& line) {
  return static_cast<std::size_t>(fmt::format_to(line.data(), "{:x}\r\n", size) - line.data());
}

}  // namespace llmchaos::mock
