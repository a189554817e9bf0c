#pragma once
// A text rendered from pieces in two passes over the same `emit(put)`, which calls put(piece) for each
// piece in order: the first pass sums their sizes, the second writes them into a string sized once. One
// list of pieces, so size and bytes cannot disagree, and a hot text (a plain answer's head and body)
// costs no capacity check or call per piece. A piece is a string view, an fmt::format_int number, or any
// type with size() and write(char* at) -> its end (dialect_util.hpp's JsonString).
#include <fmt/format.h>

#include <cassert>
#include <cstring>
#include <string>
#include <string_view>

namespace llmchaos {

namespace sized_text_detail {
struct Count {
  std::size_t n = 0;
  void operator()(std::string_view s) { n += s.size(); }
  void operator()(const fmt::format_int& d) { n += d.size(); }
  template <class Piece>
  void operator()(const Piece& p) {
    n += p.size();
  }
};
struct Write {
  char* at;
  void operator()(std::string_view s) {
    if (!s.empty()) std::memcpy(at, s.data(), s.size());
    at += s.size();
  }
  void operator()(const fmt::format_int& d) { (*this)(std::string_view(d.data(), d.size())); }
  template <class Piece>
  void operator()(const Piece& p) {
    at = p.write(at);
  }
};
}  // namespace sized_text_detail

// Into `out` (its capacity reused: a connection's response head is rendered into the same string).
template <class Emit>
void render_sized_into(std::string& out, const Emit& emit) {
  sized_text_detail::Count count;
  emit(count);
  out.resize(count.n);
  sized_text_detail::Write write{out.data()};
  emit(write);
  assert(write.at == out.data() + out.size());
}

template <class Emit>
std::string render_sized(const Emit& emit) {
  std::string out;
  render_sized_into(out, emit);
  return out;
}

}  // namespace llmchaos

namespace llmchaos {

// s = v where v does not overlap s: resized, then copied. A string reused from one request to the next
// mostly keeps its size (the same method, route, header names), and resize is then a comparison, where
// assign's general replace (overlap and all) costs several times more (bench/README.md, mock_throughput).
inline void assign_reusing(std::string& s, std::string_view v) {
  s.resize(v.size());
  if (!v.empty()) std::memcpy(s.data(), v.data(), v.size());
}

}  // namespace llmchaos
