// A cassette built from an exchange as it is read (cassette.hpp). Pure: the forwarder stamps the times.
#include "llmchaos/proxy/cassette.hpp"

namespace llmchaos::proxy {

CassetteRecorder::CassetteRecorder(Cassette request)
    : cassette_(std::move(request)), splitter_(stream_framing(cassette_.dialect)) {}

void CassetteRecorder::on_head(int status, std::vector<std::pair<std::string, std::string>> headers,
                               double head_ms, bool sse) {
  cassette_.status = status;
  cassette_.headers = std::move(headers);
  cassette_.head_ms = head_ms;
  cassette_.streamed = sse;
}

void CassetteRecorder::on_bytes(std::string_view bytes, double at_ms) {
  if (!cassette_.streamed) {
    cassette_.body += bytes;
    return;
  }
  splitter_.feed(bytes);
  while (auto frame = splitter_.next()) cassette_.frames.push_back({at_ms, std::move(*frame)});
}

void CassetteRecorder::on_end(double at_ms) {
  if (auto rest = splitter_.rest(); !rest.empty()) cassette_.frames.push_back({at_ms, std::move(rest)});
  cassette_.end_ms = at_ms;
  complete_ = true;
}

}  // namespace llmchaos::proxy
