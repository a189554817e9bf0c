// A streamed plan read as an edit of the healthy stream, and that edit applied to a real upstream's
// frames (stream_edit.hpp). Pure functions.
#include "llmchaos/proxy/stream_edit.hpp"

namespace llmchaos::proxy {

// The mock's vocabulary (plans, the forward hook, dialects, scripts) the proxy is written in.
using mock::FrameRole;
using mock::Plan;

StreamEdit stream_edit(Dialect dialect, const Plan& plan) {
  if (plan.passes_upstream_stream)
    return {};  // the stream as it comes: no limit, no injection, nothing dropped
  StreamEdit e;
  e.pass_tail = e.pass_terminator = false;
  int position = 0;
  bool ended = false, replaced = false, after_injection = false;
  for (const auto& f : plan.frames) {
    const FrameRole role = f.content ? FrameRole::content : frame_role(dialect, f.bytes);
    switch (role) {
      case FrameRole::content:
        if (after_injection) {  // the injection took a content frame's place
          e.injections.back().replaces = replaced = true;
          ++position;
        }
        ++position;
        break;
      case FrameRole::closing:
        e.pass_tail = ended = true;
        break;
      case FrameRole::terminator:
        e.pass_terminator = ended = true;
        break;
      case FrameRole::injected:
        e.injections.push_back({position, f.bytes, false});
        break;
      case FrameRole::structure:
        break;
    }
    after_injection = role == FrameRole::injected;
  }
  // The content goes on to its end when the plan keeps what follows it (or resumes after a replacement).
  if (!ended && !replaced) e.content_limit = position;
  return e;
}

StreamEditor::StreamEditor(Dialect dialect, StreamEdit edit) : dialect_(dialect), edit_(std::move(edit)) {}

void StreamEditor::flush_injections(Output& out, bool all) {
  while (next_injection_ < edit_.injections.size() &&
         (all || edit_.injections[next_injection_].at <= position_)) {
    out.frames.push_back({edit_.injections[next_injection_].bytes, false});
    ++next_injection_;
  }
}

StreamEditor::Output StreamEditor::on_frame(std::string_view frame) {
  Output out;
  if (stopped_) {
    out.stop = true;
    return out;
  }
  const FrameRole role = frame_role(dialect_, frame);
  switch (role) {
    case FrameRole::structure:
    case FrameRole::injected:  // the upstream's own error event: passed as it came
      out.frames.push_back({std::string(frame), false});
      break;
    case FrameRole::content: {
      while (next_injection_ < edit_.injections.size() && edit_.injections[next_injection_].at <= position_) {
        const auto& inj = edit_.injections[next_injection_++];
        out.frames.push_back({inj.bytes, false});
        if (inj.replaces) {
          ++position_;  // this real content frame is the one replaced
          return out;
        }
      }
      if (edit_.content_limit && position_ >= *edit_.content_limit) {
        stopped_ = out.stop = true;
        return out;
      }
      out.frames.push_back({std::string(frame), true});
      ++position_;
      break;
    }
    case FrameRole::closing:
    case FrameRole::terminator: {
      flush_injections(out, true);
      if (edit_.content_limit) {  // the real answer ended before the plan's N content frames: the plan ends
                                  // here
        stopped_ = out.stop = true;
        return out;
      }
      if (role == FrameRole::closing ? edit_.pass_tail : edit_.pass_terminator)
        out.frames.push_back({std::string(frame), false});
      break;
    }
  }
  return out;
}

StreamEditor::Output StreamEditor::on_end() {
  Output out;
  if (!stopped_) flush_injections(out, true);
  stopped_ = true;
  return out;
}

}  // namespace llmchaos::proxy
