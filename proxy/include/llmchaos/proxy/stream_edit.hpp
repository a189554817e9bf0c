#pragma once
// `llmchaos proxy`: the fault plans of the mock edit a real upstream's stream. Pure functions only (the
// Beast side is src/upstream_forwarder.cpp): the SSE splitter, a frame's role in each dialect, and the
// edit a plan describes, applied to the real frames as they arrive (never buffering the stream).
//
// How a plan becomes an edit: the engine builds the plan of an attempt as for `serve`, from a synthetic
// answer. Its frames are the healthy stream's head, content and tail frames, re-combined by the fault
// kind (cut after N content frames, an error frame injected, the terminator dropped, ...). Each synthetic
// frame is read with the same role reader as the real ones, and the same recombination is then applied
// to the real frames: "N content frames then stop" stays N real content frames, an injected frame stays
// injected at the same content position, a dropped tail or terminator stays dropped. No fault kind is
// named here: a new stream fault kind is proxied as soon as its plan is built from the dialect's parts.
// A fault kind that keeps the healthy stream (FaultTraits::keeps_healthy_stream: ok, slow, ...) renders no
// synthetic frame when forwarded (Plan::passes_upstream_stream): its edit is none, known without them.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/core/types.hpp"
#include "llmchaos/mockprovider/dialect.hpp"
#include "llmchaos/mockprovider/plan.hpp"

namespace llmchaos::proxy {

// A frame's role (FrameRole, dialect.hpp): the dialect's own reading of its event name and JSON data.
// An AWS event stream frame (DialectSpec::framing) is decoded first: an exception frame, or one that does
// not decode (a wrong CRC or length), is injected.
mock::FrameRole frame_role(Dialect dialect, std::string_view frame);

// Splits a byte stream into its frames as they arrive, by the dialect's framing (DialectSpec::framing):
// SSE events, each ending with a blank line (LF or CRLF), or AWS event stream messages, each as long as
// its prelude says (a length under the prelude's own, or over the format's limit, ends the splitting:
// the rest is one unfinished frame).
class FrameSplitter {
 public:
  explicit FrameSplitter(mock::StreamFraming framing = mock::StreamFraming::sse) : framing_(framing) {}
  void feed(std::string_view bytes);
  std::optional<std::string> next();  // the next whole frame (an SSE event with its separator)
  std::string rest();                 // bytes of an unfinished frame (at the end of the stream)

 private:
  std::optional<std::string> next_sse();
  std::optional<std::string> next_message();
  mock::StreamFraming framing_;
  std::string buffer_;
  std::size_t start_ = 0;
  std::size_t scanned_ = 0;
};

// The framing of a dialect's streams, and whether a Content-Type names a stream of either framing.
mock::StreamFraming stream_framing(Dialect dialect);
bool streamed_content_type(std::string_view content_type);

// The recombination a streamed plan applies to a healthy stream.
struct StreamEdit {
  std::optional<int> content_limit;  // real content frames passed before the edited stream stops (none: all)
  struct Injection {
    int at = 0;             // after this many real content frames
    std::string bytes;      // the plan's own frame
    bool replaces = false;  // takes the place of the next real content frame (which is dropped)
  };
  std::vector<Injection> injections;
  bool pass_tail = true;        // the closing frames (finish, usage) after the content
  bool pass_terminator = true;  // the end sentinel
  // Every real frame passes as it came (a plan that keeps the healthy stream, Plan::passes_upstream_stream).
  bool changes_nothing() const {
    return !content_limit && injections.empty() && pass_tail && pass_terminator;
  }
};

// The edit `plan` (a streamed plan of dialect `dialect`) makes to the healthy stream.
StreamEdit stream_edit(Dialect dialect, const mock::Plan& plan);

// Applies an edit to the real frames one by one.
class StreamEditor {
 public:
  StreamEditor(Dialect dialect, StreamEdit edit);
  struct Output {
    std::vector<mock::SseFrame> frames;  // to write now, in order (content = a real content frame)
    bool stop = false;  // the edited stream ends here: the plan's end (abort, stall, complete) applies
  };
  Output on_frame(std::string_view frame);
  // The upstream's stream ended: injections still due (the real answer was shorter than the plan's N).
  Output on_end();
  bool stopped() const { return stopped_; }

 private:
  void flush_injections(Output& out, bool all);
  Dialect dialect_;
  StreamEdit edit_;
  std::size_t next_injection_ = 0;
  int position_ = 0;  // real content frames seen (passed or replaced)
  bool stopped_ = false;
};

}  // namespace llmchaos::proxy
