#pragma once
// The bytes of an HTTP/1.1 answer's head and chunks, rendered without Beast's serializer (which costs more
// than the rest of a plain answer): the session's wire (session.cpp) writes them. Pure functions.
#include <array>
#include <cstddef>
#include <optional>
#include <string>

#include "llmchaos/mockprovider/forward_hook.hpp"
#include "llmchaos/mockprovider/plan.hpp"

namespace llmchaos::mock {

// The head Beast would write for an answer (status line, Server, the headers in order, Connection: close
// when not kept alive, then Content-Length: body_size, or Transfer-Encoding: chunked when nullopt),
// rendered straight into `out`. False when the headers need Beast's own rules (a repeated name, or one
// Beast manages: Connection, Content-Length, Transfer-Encoding), or the status is one without a body.
bool render_plain_head(std::string& out, int status_code, const HeaderList& headers,
                       std::optional<std::size_t> body_size, bool keep_alive);
bool render_plain_head(std::string& out, const Plan& plan, bool keep_alive);

// A plan the session answers itself, at once, with no coroutine of its own: a whole plain answer with no
// latency.
bool answered_at_once(const Plan& plan);

// A chunk's size line ("1a\r\n"): hex digits of a size_t and CRLF.
using ChunkSizeLine = std::array<char, 2 * sizeof(std::size_t) + 2>;
// The size line of a chunk of `size` bytes in `line`; returns its length.
std::size_t chunk_size_line(std::size_t size, ChunkSizeLine& line);

// The reason phrase of a status Beast knows none for (529 is Anthropic's "Overloaded"), else "".
std::string_view fallback_reason(int status_code, std::string_view beast_reason);

}  // namespace llmchaos::mock
