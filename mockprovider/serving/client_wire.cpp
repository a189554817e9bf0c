// The session as the ClientWire answers are written to (session.hpp): heads, chunks and bodies rendered
// by plain_head.hpp and written at once where the socket takes them (Beast's serializer and composed
// writes cost more than the rest of a proxied answer: bench/README.md, proxy); Beast's serializer writes a
// head only where its rules are needed (render_plain_head says which).
#include <boost/beast/http.hpp>

#include "plain_head.hpp"
#include "session.hpp"

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace llmchaos::mock {
namespace {

template <class Message>
void apply_headers(Message& m, const HeaderList& headers, bool keep_alive) {
  // Beast knows no reason phrase for some statuses providers use (529): never send "<unknown-status>".
  const auto obsolete = http::obsolete_reason(m.result());
  if (const auto reason = fallback_reason(m.result_int(), {obsolete.data(), obsolete.size()});
      !reason.empty())
    m.reason(reason);
  m.set(http::field::server, "llmchaos");
  for (const auto& [k, v] : headers) m.set(k, v);
  m.keep_alive(keep_alive);
}

}  // namespace

template <class Message>
net::awaitable<bool> Session::send_by_beast(Message& m, const HeaderList& headers, bool keep_alive) {
  apply_headers(m, headers, keep_alive);
  m.prepare_payload();
  arm();
  auto [ec, n] = co_await http::async_write(stream_, m, net::as_tuple(net::use_awaitable));
  if (ec) fail(ec, true);
  co_return !ec;
}
template net::awaitable<bool> Session::send_by_beast(http::response<http::string_body>&, const HeaderList&,
                                                     bool);

net::awaitable<bool> Session::write_head(int status, const HeaderList& headers, bool chunked,
                                         std::size_t content_length, bool keep_alive) {
  const auto length = chunked ? std::nullopt : std::optional<std::size_t>(content_length);
  if (render_plain_head(head_, status, headers, length, keep_alive))
    co_return co_await send(std::array<ConstBuffer, 1>{net::buffer(head_)});
  http::response<http::empty_body> res{static_cast<http::status>(status), 11};
  apply_headers(res, headers, keep_alive);
  if (chunked)
    res.chunked(true);
  else
    res.content_length(content_length);
  http::response_serializer<http::empty_body> sr{res};
  arm();
  auto [ec, n] = co_await http::async_write_header(stream_, sr, net::as_tuple(net::use_awaitable));
  if (ec) fail(ec, true);
  co_return !ec;
}

net::awaitable<bool> Session::write_chunk(std::string_view bytes) {
  if (bytes.empty()) co_return true;  // an empty chunk would be the last one
  ChunkSizeLine size_line;
  const std::size_t line_len = chunk_size_line(bytes.size(), size_line);
  co_return co_await send(std::array<ConstBuffer, 3>{net::buffer(size_line.data(), line_len),
                                                     net::buffer(bytes), net::buffer("\r\n", 2)});
}

net::awaitable<bool> Session::write_head_and_chunk(int status, const HeaderList& headers, bool keep_alive,
                                                   std::string_view first_chunk) {
  if (first_chunk.empty() || !render_plain_head(head_, status, headers, std::nullopt, keep_alive))
    co_return co_await write_head_then_chunk(*this, status, headers, keep_alive, first_chunk);
  ChunkSizeLine size_line;
  const std::size_t line_len = chunk_size_line(first_chunk.size(), size_line);
  co_return co_await send(std::array<ConstBuffer, 4>{net::buffer(head_),
                                                     net::buffer(size_line.data(), line_len),
                                                     net::buffer(first_chunk), net::buffer("\r\n", 2)});
}

net::awaitable<bool> Session::write_last_chunk() {
  co_return co_await send(std::array<ConstBuffer, 1>{net::buffer("0\r\n\r\n", 5)});
}

net::awaitable<bool> Session::write_body(std::string_view bytes) {
  co_return co_await send(std::array<ConstBuffer, 1>{net::buffer(bytes)});
}

net::awaitable<bool> Session::write_whole(int status, const HeaderList& headers, std::string_view body,
                                          bool keep_alive) {
  if (render_plain_head(head_, status, headers, body.size(), keep_alive))
    co_return co_await send(std::array<ConstBuffer, 2>{net::buffer(head_), net::buffer(body)});
  http::response<http::string_body> res{static_cast<http::status>(status), 11};
  res.body() = std::string(body);
  co_return co_await send_by_beast(res, headers, keep_alive);  // head and body in one gathered write
}

}  // namespace llmchaos::mock
