#pragma once
// The fast path of a request head: a plain HTTP/1.1 request whose head and Content-Length body are all
// in the buffer, read with one strict pass and no allocation beyond the request's own strings. Anything
// this pass does not fully understand (HTTP/1.0, chunked bodies, Expect, Upgrade, odd bytes, limits
// reached, a body still coming) is left to Beast's parser, which then reads the very same bytes: so
// every answer to an unusual request stays what Beast's path gives. A pure function over bytes, used by
// the server's request reader (serving/request_reader.cpp) and checked against Beast's parser
// (tests/mockprovider/test_fast_head.cpp).
#include <cstddef>
#include <string_view>

#include "llmchaos/mockprovider/router.hpp"

namespace llmchaos::mock {

enum class FastHead {
  ready,               // the request is read: see FastHeadRead
  need_more,           // no complete head yet, and it may still fit the fast path: read more
  needs_beast_parser,  // the head is one only Beast's parser reads right: it reads the same bytes
};

struct FastHeadLimits {  // the server's (ServerOptions): past them Beast answers as it does
  std::size_t header_limit = 16 * 1024;
  std::size_t max_header_count = 100;
  std::size_t body_limit = 8 * 1024 * 1024;
  // Every header, not only the router's (a proxy passes them all on): up to fast_head_fields_kept of
  // them, each name up to 32 bytes; a head with more, or a longer name, is Beast's.
  bool keep_all_headers = false;
};
inline constexpr std::size_t fast_head_fields_kept = 48;

struct FastHeadRead {
  FastHead verdict = FastHead::needs_beast_parser;
  std::size_t consumed = 0;  // ready: the request's bytes (head and body) at the start of the input
  bool keep_alive = true;    // ready: no `Connection: close`
};

// Reads the request at the start of `in`. When ready, `req` holds its method, target, body and the
// headers the router reads (Router::reads_header), or every header (keep_all_headers); names lower-cased,
// in their order; its strings keep
// their buffers from one request to the next. Otherwise `req` is left as it was.
FastHeadRead read_fast_head(std::string_view in, const FastHeadLimits& limits, RawRequest& req);

}  // namespace llmchaos::mock
