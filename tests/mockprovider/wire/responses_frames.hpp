#pragma once
// A Responses API stream as the background-response tests read it (tests/mockprovider/test_resume.cpp,
// and through the proxy tests/proxy/test_resume_forwarded.cpp): typed SSE frames, their deltas, the resume.
#include <boost/json.hpp>
#include <string>
#include <vector>

namespace llmchaos::test {

inline constexpr const char* create_stream = R"({"model":"m","input":"hi","stream":true,"background":true})";

struct Frame {
  std::string type;
  long long sequence = -1;
  std::string delta;
  boost::json::value data;
};

// The typed SSE frames of a body ("event: T\ndata: {...}\n\n").
inline std::vector<Frame> frames(const std::string& body) {
  std::vector<Frame> out;
  for (std::size_t at = body.find("data: "); at != std::string::npos; at = body.find("data: ", at)) {
    const auto end = body.find('\n', at);
    boost::system::error_code ec;
    auto v = boost::json::parse(body.substr(at + 6, end - at - 6), ec);
    at = end;
    if (ec || !v.is_object()) continue;
    Frame f;
    f.type = std::string(v.at("type").as_string());
    f.sequence = v.at("sequence_number").to_number<long long>();
    if (const auto* d = v.as_object().if_contains("delta"); d && d->is_string())
      f.delta = std::string(d->as_string());
    f.data = std::move(v);
    out.push_back(std::move(f));
  }
  return out;
}

inline std::string deltas(const std::vector<Frame>& fs) {
  std::string out;
  for (const auto& f : fs)
    if (f.type == "response.output_text.delta") out += f.delta;
  return out;
}

inline std::string resume_target(const std::string& id, long long after) {
  return "/r/v1/responses/" + id + "?stream=true&starting_after=" + std::to_string(after);
}

}  // namespace llmchaos::test
