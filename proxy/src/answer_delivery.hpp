#pragma once
// Private to the proxy: a provider's answer (a real upstream's, or a cassette's) delivered to the
// client under a plan. The plan decides; this only follows it:
//   - a committed hold (post_commit_timeout): the answer is read whole and dropped, the client gets nothing;
//   - a streamed plan on an SSE answer: the frames go through the plan's stream edit (stream_edit.hpp) one
//     by one as they arrive, paced by first_event_ms / inter_event_ms, then the plan's end (complete,
//     abort, stall then abort);
//   - a plain plan that cuts its body: the body, announced whole, cut half way;
//   - everything else (errors, plain answers, non-SSE streams): passed through as it comes.
// The answer comes from a Source: `template <class Take> net::awaitable<bool> read(Take take)` hands each
// piece of the body to `take` (an awaitable<bool>; false stops reading) and says whether the body was
// read to its end.
#include <boost/asio/awaitable.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "answer_head.hpp"
#include "llmchaos/mockprovider/dialect.hpp"
#include "llmchaos/mockprovider/forward_hook.hpp"
#include "llmchaos/mockprovider/stream_pacing.hpp"
#include "llmchaos/proxy/stream_edit.hpp"

namespace llmchaos::proxy::detail {

// The mock's vocabulary (the forward hook, plans, dialects) this delivery is written in.
using mock::ClientWire;
using mock::dialect_spec;
using mock::Executed;
using mock::HeaderList;
using mock::Plan;
using mock::StreamEnd;
using mock::WaitEnd;
using mock::WireAction;

using DeliveryClock = std::chrono::steady_clock;

// Plain bodies up to this size are read whole before they are passed on (head and body in one write);
// larger ones, and bodies without a Content-Length, pass through piece by piece as they arrive.
inline constexpr std::uint64_t whole_body_limit = 256 * 1024;

inline double ms_since(DeliveryClock::time_point t0) {
  return std::chrono::duration<double, std::milli>(DeliveryClock::now() - t0).count();
}

// What one exchange has read and sent so far.
struct Exchange {
  ClientWire& client;
  const Plan& plan;
  bool keep_alive;
  Executed out{};
  DeliveryClock::time_point t0 = DeliveryClock::now();
  int upstream_status = 0;
  double head_ms = 0;
  std::optional<double> upstream_ms{};  // when reading the answer ended (default: when the exchange did)
  std::string response_id{};            // the stored response the answer names (DialectSpec::response_id)
};

// Reads the id of the stored response an answer names (DialectSpec::response_id) as its bytes pass: from
// the first frames of a stream, or from the whole plain body (up to whole_body_limit).
class ResponseIdReader {
 public:
  ResponseIdReader(std::string (*read)(std::string_view), bool sse) : read_(read), sse_(sse) {}
  void feed(std::string_view bytes) {
    if (done_) return;
    if (!sse_) {
      body_ += bytes;
      done_ = body_.size() > whole_body_limit;
      return;
    }
    splitter_.feed(bytes);
    while (!done_) {
      auto frame = splitter_.next();
      if (!frame) return;
      id_ = read_(*frame);
      done_ = !id_.empty() || ++frames_ >= max_frames;
    }
  }
  std::string id() {
    if (!done_ && !sse_) id_ = read_(body_);
    done_ = true;
    return id_;
  }

 private:
  static constexpr int max_frames = 8;  // the id comes with the first event; keep-alives may come before it
  std::string (*read_)(std::string_view);
  bool sse_;
  bool done_ = false;
  int frames_ = 0;
  std::string body_, id_;
  FrameSplitter splitter_;
};

// A Source whose bytes also go through a ResponseIdReader.
template <class Source>
struct ResponseIdWatch {
  Source& source;
  ResponseIdReader& reader;
  bool body_in_hand() const requires requires(const Source& s) { s.body_in_hand(); }
  { return source.body_in_hand(); }
  template <class Take>
  boost::asio::awaitable<bool> read(Take take) {
    co_return co_await source.read([this, &take](std::string_view bytes) {
      reader.feed(bytes);
      return take(bytes);
    });
  }
};

// An answer of llmchaos itself (no upstream, no cassette): the status and a JSON error body. The
// parameters are values: a coroutine keeps them in its frame (a reference to a caller's temporary would
// dangle).
inline boost::asio::awaitable<Executed> answer_error(ClientWire& client, int status, std::string message,
                                                     std::string code, bool keep_alive,
                                                     HeaderList extra = {}) {
  Executed out;
  const std::string body = boost::json::serialize(boost::json::object{
      {"error", boost::json::object{{"message", message}, {"type", "upstream_error"}, {"code", code}}}});
  HeaderList headers = std::move(extra);
  headers.emplace_back("content-type", "application/json");
  if (!co_await client.write_whole(status, headers, body, keep_alive)) {
    out.outcome = AttemptOutcome::client_closed;
    co_return out;
  }
  out.status = status;
  out.keep_open = keep_alive;
  co_return out;
}

// The plan's latency before anything else, and each stream's end (the mock's own: stream_pacing.hpp).
using mock::wait_latency;

// The end a plan gives its stream, once its frames are written.
inline boost::asio::awaitable<void> finish_stream(Exchange& x, StreamEnd end) {
  return mock::end_stream(x.client, end, x.plan.stall_ms, x.keep_alive, x.out);
}

// GCC 12's false -Wmismatched-new-delete on Asio's frame allocator (DEVELOPERS.md), silenced here only
// (not inlined, so the warning cannot move to a caller).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

// Whether a source says that body bytes came with the head (a source that cannot tell: no).
template <class Source>
bool body_came_with_head(const Source& source) {
  if constexpr (requires { source.body_in_hand(); })
    return source.body_in_hand();
  else
    return false;
}

// A forwarded stream's writes to the client: its head, and each frame after its delay (first_event_ms
// before the first, inter_event_ms after). When the first frames came with the upstream's head, the head
// waits for the first of them and goes out in the same write (the client wakes once for both); it never
// waits on the upstream (deliver_stream writes it before any read that may block) nor across a delay.
class StreamWriter {
 public:
  StreamWriter(Exchange& x, const AnswerHead& head, bool frames_came_with_head)
      : x_(x), head_(head), head_pending_(frames_came_with_head) {}
  bool head_pending() const { return head_pending_; }
  bool client_gone() const { return client_gone_; }

  // The head alone, now; false when the client is gone.
  boost::asio::awaitable<bool> head() {
    head_pending_ = false;
    const bool written = co_await x_.client.write_head(head_.status, head_.headers, true, 0, x_.keep_alive);
    note_head(written);
    co_return written;
  }

  // One frame after its delay (with the head when it is still pending); false when the client is gone.
  boost::asio::awaitable<bool> frame(std::string_view bytes) {
    const double delay = mock::frame_delay(x_.plan, first_);
    first_ = false;
    // No co_await inside && or ?: (GCC 12: DEVELOPERS.md).
    if (head_pending_ && delay > 0) {
      const bool written = co_await head();
      if (!written) co_return false;
    }
    if (delay > 0) {
      if (co_await x_.client.wait(delay) != WaitEnd::elapsed) client_gone_ = true;
    }
    if (client_gone_) co_return false;
    bool written = false;
    if (head_pending_) {
      head_pending_ = false;
      written = co_await x_.client.write_head_and_chunk(head_.status, head_.headers, x_.keep_alive, bytes);
      note_head(written);
    } else {
      written = co_await x_.client.write_chunk(bytes);
      client_gone_ = !written;
    }
    co_return written;
  }

 private:
  void note_head(bool written) {
    client_gone_ = !written;
    if (written) x_.out.status = head_.status;
  }
  Exchange& x_;
  const AnswerHead& head_;
  bool head_pending_;
  bool first_ = true;
  bool client_gone_ = false;
};

// A streamed plan on an SSE answer: the plan's edit, frame by frame, written by a StreamWriter.
template <class Source>
[[gnu::noinline]] boost::asio::awaitable<void> deliver_stream(Exchange& x, const AnswerHead& head,
                                                              Source& source, Dialect dialect) {
  StreamWriter out(x, head, body_came_with_head(source));
  if (!out.head_pending()) {  // no co_await inside && (GCC 12: DEVELOPERS.md)
    const bool written = co_await out.head();
    if (!written) {
      x.out.outcome = AttemptOutcome::client_closed;
      co_return;
    }
  }
  StreamEdit edit = stream_edit(dialect, x.plan);
  const bool as_is = edit.changes_nothing();
  StreamEditor editor(dialect, std::move(edit));
  FrameSplitter splitter(stream_framing(dialect));
  bool stopped = false;
  const auto write_frames = [&](const StreamEditor::Output& o) -> boost::asio::awaitable<bool> {
    for (const auto& f : o.frames) {
      if (!co_await out.frame(f.bytes)) co_return false;
      if (f.content) ++x.out.events;
    }
    if (o.stop) stopped = true;
    co_return !o.stop;
  };
  // An edit that changes nothing passes each frame as it came and reads its role once it is written: only
  // the ledger's count of content events needs it, so no JSON parse stands between upstream and client.
  const auto pass = [&](const std::string& frame) -> boost::asio::awaitable<bool> {
    if (!co_await out.frame(frame)) co_return false;
    if (frame_role(dialect, frame) == mock::FrameRole::content) ++x.out.events;
    co_return true;
  };
  const bool whole = co_await source.read([&](std::string_view bytes) -> boost::asio::awaitable<bool> {
    splitter.feed(bytes);
    while (auto ev = splitter.next()) {
      bool more = false;
      if (as_is)
        more = co_await pass(*ev);
      else
        more = co_await write_frames(editor.on_frame(*ev));
      if (!more) co_return false;
    }
    if (out.head_pending()) co_return co_await out.head();  // the source may wait next
    co_return true;
  });
  if (out.head_pending() && !out.client_gone()) co_await out.head();  // no frame written: the head alone
  if (out.client_gone()) {
    x.out.outcome = AttemptOutcome::client_closed;
    co_return;
  }
  if (!stopped) {
    if (!whole) {  // the answer itself broke off: the client sees the same cut
      x.out.outcome = AttemptOutcome::cut;
      co_return;
    }
    const auto rest = splitter.rest();
    if (!rest.empty()) co_await write_frames(editor.on_frame(rest));
    if (!stopped && !out.client_gone()) co_await write_frames(editor.on_end());
    if (out.client_gone()) {
      x.out.outcome = AttemptOutcome::client_closed;
      co_return;
    }
  }
  co_await finish_stream(x, x.plan.end);
}

// The whole answer read into one string; false when it broke off (body holds the part that came).
template <class Source>
boost::asio::awaitable<bool> read_whole(Source& source, std::string& body) {
  co_return co_await source.read([&](std::string_view b) -> boost::asio::awaitable<bool> {
    body += b;
    co_return true;
  });
}

// post_commit_timeout: the provider answers in full, the client hears nothing.
template <class Source>
[[gnu::noinline]] boost::asio::awaitable<void> deliver_held(Exchange& x, Source& source) {
  co_await source.read([](std::string_view) -> boost::asio::awaitable<bool> { co_return true; });
  x.upstream_ms = ms_since(x.t0);
  x.out.status = 0;
  x.out.outcome = AttemptOutcome::held_then_closed;
  co_await x.client.wait(x.plan.hold_ms);
}

// A plain plan that cuts its body: the body, announced whole, cut half way.
template <class Source>
[[gnu::noinline]] boost::asio::awaitable<void> deliver_cut_body(Exchange& x, const AnswerHead& head,
                                                                Source& source) {
  std::string body;
  if (!co_await read_whole(source, body)) {
    x.out.outcome = AttemptOutcome::cut;
    co_return;
  }
  if (!co_await x.client.write_head(head.status, head.headers, false, body.size(), x.keep_alive) ||
      !co_await x.client.write_body(std::string_view(body).substr(0, body.size() / 2))) {
    x.out.outcome = AttemptOutcome::client_closed;
    co_return;
  }
  x.out.status = head.status;
  co_await finish_stream(x, x.plan.end);
}

// A small Content-Length body: read whole, then head and body in one write (one syscall less per answer).
template <class Source>
[[gnu::noinline]] boost::asio::awaitable<void> deliver_small(Exchange& x, const AnswerHead& head,
                                                             Source& source) {
  std::string read;
  std::string_view body;
  bool held = false;
  if constexpr (requires { source.take_whole_if_held(); }) {  // the body already in hand: no copy
    if (const auto whole = source.take_whole_if_held()) {
      body = *whole;
      held = true;
    }
  }
  if (!held) {
    // Broken off: the client sees the head, the part that came, then the cut.
    if (!co_await read_whole(source, read)) {
      if (!co_await x.client.write_head(head.status, head.headers, false, *head.length, x.keep_alive) ||
          !co_await x.client.write_body(read))
        x.out.outcome = AttemptOutcome::client_closed;
      else
        x.out.outcome = AttemptOutcome::cut;
      x.out.status = head.status;
      co_return;
    }
    body = read;
  }
  if (!co_await x.client.write_whole(head.status, head.headers, body, x.keep_alive)) {
    x.out.outcome = AttemptOutcome::client_closed;
    co_return;
  }
  x.out.status = head.status;
  x.out.keep_open = x.keep_alive;
}

// Everything else passes through as it comes (a Content-Length body keeps its length).
template <class Source>
[[gnu::noinline]] boost::asio::awaitable<void> deliver_passing(Exchange& x, const AnswerHead& head,
                                                               Source& source) {
  const auto length = head.length;
  if (!co_await x.client.write_head(head.status, head.headers, !length, length.value_or(0), x.keep_alive)) {
    x.out.outcome = AttemptOutcome::client_closed;
    co_return;
  }
  x.out.status = head.status;
  bool client_gone = false;
  const bool whole = co_await source.read([&](std::string_view b) -> boost::asio::awaitable<bool> {
    const bool sent = length ? co_await x.client.write_body(b) : co_await x.client.write_chunk(b);
    client_gone = !sent;
    co_return sent;
  });
  if (client_gone) {
    x.out.outcome = AttemptOutcome::client_closed;
  } else if (!whole) {
    x.out.outcome = AttemptOutcome::cut;
  } else if (!length) {
    co_await finish_stream(x, StreamEnd::complete);
  } else {
    x.out.keep_open = x.keep_alive;
  }
}

// The answer under the plan: one of the five ways above. Not a coroutine itself: it hands back the
// chosen way's own (one frame less per answer; every argument outlives it, as the caller co_awaits).
template <class Source>
boost::asio::awaitable<void> deliver_answer(Exchange& x, const AnswerHead& head, Source& source,
                                            Dialect dialect) {
  x.upstream_status = head.status;
  const bool ok = head.status / 100 == 2;
  if (x.plan.action == WireAction::hold) return deliver_held(x, source);
  if (ok && head.sse && x.plan.streamed) return deliver_stream(x, head, source, dialect);
  if (ok && !x.plan.streamed && x.plan.end != StreamEnd::complete) return deliver_cut_body(x, head, source);
  if (head.length && *head.length <= whole_body_limit) return deliver_small(x, head, source);
  return deliver_passing(x, head, source);
}

// The answer of a dialect that stores responses, the id it names read as it passes (x.response_id).
template <class Source>
[[gnu::noinline]] boost::asio::awaitable<void> deliver_watched(Exchange& x, const AnswerHead& head,
                                                               Source& source, Dialect dialect) {
  const auto& spec = dialect_spec(dialect);
  ResponseIdReader reader(spec.response_id, head.sse);
  ResponseIdWatch<Source> watched{source, reader};
  co_await deliver_answer(x, head, watched, dialect);
  x.response_id = reader.id();
}

// The answer under the plan; a dialect that stores responses also has the id the answer names read.
// Not a coroutine either (deliver_answer says why).
template <class Source>
boost::asio::awaitable<void> deliver(Exchange& x, const AnswerHead& head, Source& source, Dialect dialect) {
  if (dialect_spec(dialect).stores_responses && head.status / 100 == 2)
    return deliver_watched(x, head, source, dialect);
  return deliver_answer(x, head, source, dialect);
}
#pragma GCC diagnostic pop

}  // namespace llmchaos::proxy::detail
