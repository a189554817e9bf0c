#include "llmchaos/experiments/trace.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#if defined(__unix__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace llmchaos::experiments {

std::string TraceError::str() const { return pos.str() + ": " + message; }

namespace {

// The three attempts of a row, in the order the formats name them.
constexpr std::array<std::string_view, 3> route_keys = {"primary_1", "primary_2", "alternate"};

TraceAttempt& attempt_of(TraceRow& row, std::size_t route) {
  return route == 0 ? row.primary_1 : route == 1 ? row.primary_2 : row.alternate;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Collects errors for one parse; keeps the first max_errors, counts all.
struct ErrorSink {
  TraceParse& out;
  const std::string& source;
  std::size_t max_errors;
  void add(std::size_t line, std::size_t column, std::string message) {
    ++out.error_count;
    if (out.errors.size() < max_errors)
      out.errors.push_back({{source, static_cast<int>(line), static_cast<int>(column)}, std::move(message)});
  }
};

// The common case, fast: [-]digits[.digits] with at most 15 significant digits and no exponent. The
// digits form an integer m < 10^15 (exact in a double) and the result m / 10^k is one correctly rounded
// division (Clinger's fast path), so it equals from_chars. nullptr: not this shape, use from_chars.
const char* parse_plain_decimal(const char* p, const char* end, double& value) {
  static constexpr double pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  std::uint64_t m = 0;
  int digits = 0, fraction = 0;
  const char* start = p;
  for (; p < end && static_cast<unsigned>(*p - '0') < 10; ++p, ++digits) m = m * 10 + static_cast<unsigned>(*p - '0');
  if (p == start) return nullptr;
  if (p < end && *p == '.') {
    const char* fraction_start = ++p;
    for (; p < end && static_cast<unsigned>(*p - '0') < 10; ++p, ++digits) m = m * 10 + static_cast<unsigned>(*p - '0');
    fraction = static_cast<int>(p - fraction_start);
    if (fraction == 0) return nullptr;
  }
  if (digits > 15 || (p < end && (*p == 'e' || *p == 'E'))) return nullptr;
  const double v = static_cast<double>(m) / pow10[fraction];
  value = negative ? -v : v;
  return p;
}

// A strict decimal number (JSON grammar subset that from_chars accepts: no '+', no inf/nan, no hex).
// Returns the end of the number, or nullptr when there is none.
const char* parse_seconds(const char* p, const char* end, double& value) {
  if (p == end || !(*p == '-' || (*p >= '0' && *p <= '9'))) return nullptr;
  if (const char* fast = parse_plain_decimal(p, end, value)) return fast;
  const auto [ptr, ec] = std::from_chars(p, end, value, std::chars_format::general);
  if (ec != std::errc{} || !std::isfinite(value)) return nullptr;
  return ptr;
}

// Scans one JSON line. Each member function returns false after recording the line's (first) error.
class JsonLine {
 public:
  JsonLine(const char* begin, const char* end) : begin_(begin), p_(begin), end_(end) {}

  // Returns std::nullopt with `error` / `column` set when the line is bad.
  std::optional<TraceRow> row() {
    TraceRow row;
    bool seen[3] = {false, false, false};
    ws();
    const char* begin_of_object = p_;
    if (!expect('{')) return std::nullopt;
    ws();
    if (peek() == '}') return bad("empty object: expected \"primary_1\", \"primary_2\" and \"alternate\"");
    for (;;) {
      ws();
      std::string_view key;
      if (!string(key)) return std::nullopt;
      if (!expect(':')) return std::nullopt;
      ws();
      std::size_t route = route_keys.size();
      for (std::size_t i = 0; i < route_keys.size(); ++i)
        if (key == route_keys[i]) route = i;
      if (route < route_keys.size()) {
        if (seen[route]) return bad(fmt::format("duplicate key \"{}\"", key));
        seen[route] = true;
        if (!attempt(attempt_of(row, route), key)) return std::nullopt;
      } else if (!skip_value(0)) {
        return std::nullopt;
      }
      ws();
      if (peek() == ',') {
        ++p_;
        continue;
      }
      if (!expect('}')) return std::nullopt;
      break;
    }
    ws();
    if (p_ != end_) return bad("unexpected characters after the object");
    for (std::size_t i = 0; i < route_keys.size(); ++i)
      if (!seen[i]) {
        p_ = begin_of_object;  // point at the object that lacks the key
        return bad(fmt::format("missing \"{}\"", route_keys[i]));
      }
    return row;
  }

  const std::string& error() const { return error_; }
  std::size_t column() const { return static_cast<std::size_t>(error_at_ - begin_) + 1; }

 private:
  static constexpr int max_depth = 32;

  char peek() const { return p_ < end_ ? *p_ : '\0'; }
  void ws() {
    while (p_ < end_ && is_space(*p_)) ++p_;
  }
  // Records the line's first error; always false, so callers can `return fail(...)`.
  bool fail(std::string message) {
    if (error_.empty()) {
      error_ = std::move(message);
      error_at_ = p_;
    }
    return false;
  }
  std::nullopt_t bad(std::string message) {
    fail(std::move(message));
    return std::nullopt;
  }
  std::string describe_here() const {
    if (p_ >= end_) return "end of line";
    const unsigned char c = static_cast<unsigned char>(*p_);
    if (c >= 0x20 && c < 0x7f) return fmt::format("'{}'", *p_);
    return fmt::format("byte 0x{:02x}", c);
  }
  bool expect(char c) {
    ws();
    if (peek() == c) {
      ++p_;
      return true;
    }
    return fail(fmt::format("expected '{}', found {}", c, describe_here()));
  }
  // A JSON string; `out` is its raw content (escapes not decoded: keys we know have none).
  bool string(std::string_view& out) {
    if (peek() != '"') {
      return fail(fmt::format("expected a string key, found {}", describe_here()));
    }
    const char* start = ++p_;
    while (p_ < end_) {
      const char c = *p_;
      if (c == '"') {
        out = std::string_view(start, static_cast<std::size_t>(p_ - start));
        ++p_;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) {
        return fail("control character inside a string");
      }
      p_ += (c == '\\') ? 2 : 1;
    }
    p_ = end_;
    return fail("unterminated string");
  }
  bool literal(std::string_view word) {
    if (static_cast<std::size_t>(end_ - p_) >= word.size() && std::memcmp(p_, word.data(), word.size()) == 0) {
      p_ += word.size();
      return true;
    }
    return false;
  }
  // {"sec": number, "ok": bool}, other keys skipped.
  bool attempt(TraceAttempt& a, std::string_view route) {
    bool has_sec = false, has_ok = false;
    const char* begin_of_object = p_;
    if (!expect('{')) return false;
    ws();
    if (peek() == '}') {
      return fail(fmt::format("\"{}\": expected \"sec\" and \"ok\"", route));
    }
    for (;;) {
      ws();
      std::string_view key;
      if (!string(key) || !expect(':')) return false;
      ws();
      if (key == "sec") {
        if (has_sec) return fail(fmt::format("\"{}\": duplicate key \"sec\"", route));
        const char* after = parse_seconds(p_, end_, a.sec);
        if (after == nullptr) return fail(fmt::format("\"{}\".sec: expected a finite number", route));
        if (a.sec < 0) return fail(fmt::format("\"{}\".sec: must be >= 0, got {}", route, a.sec));
        p_ = after;
        has_sec = true;
      } else if (key == "ok") {
        if (has_ok) return fail(fmt::format("\"{}\": duplicate key \"ok\"", route));
        if (literal("true")) {
          a.ok = true;
        } else if (literal("false")) {
          a.ok = false;
        } else {
          return fail(fmt::format("\"{}\".ok: expected true or false", route));
        }
        has_ok = true;
      } else if (!skip_value(1)) {
        return false;
      }
      ws();
      if (peek() == ',') {
        ++p_;
        continue;
      }
      if (!expect('}')) return false;
      break;
    }
    if (!has_sec || !has_ok) {
      p_ = begin_of_object;  // point at the object that lacks the key
      return fail(fmt::format("\"{}\": missing \"{}\"", route, has_sec ? "ok" : "sec"));
    }
    return true;
  }
  // Any JSON value we do not read (bounded nesting).
  bool skip_value(int depth) {
    if (depth > max_depth) return fail("nesting too deep");
    ws();
    const char c = peek();
    if (c == '"') {
      std::string_view ignored;
      return string(ignored);
    }
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++p_;
      ws();
      if (peek() == close) {
        ++p_;
        return true;
      }
      for (;;) {
        ws();
        if (c == '{') {
          std::string_view ignored;
          if (!string(ignored) || !expect(':')) return false;
        }
        if (!skip_value(depth + 1)) return false;
        ws();
        if (peek() == ',') {
          ++p_;
          continue;
        }
        return expect(close);
      }
    }
    if (literal("true") || literal("false") || literal("null")) return true;
    double ignored = 0;
    if (const char* after = parse_seconds(p_, end_, ignored)) {
      p_ = after;
      return true;
    }
    return fail(fmt::format("expected a value, found {}", describe_here()));
  }

  const char* begin_;
  const char* p_;
  const char* end_;
  std::string error_;
  const char* error_at_ = nullptr;
};

// CSV: the six columns, found by name in the header row.
constexpr std::array<std::string_view, 6> csv_columns = {"primary_1_sec", "primary_1_ok", "primary_2_sec",
                                                         "primary_2_ok",  "alternate_sec", "alternate_ok"};

std::string_view trim_field(std::string_view f) {
  while (!f.empty() && (f.front() == ' ' || f.front() == '\t')) f.remove_prefix(1);
  while (!f.empty() && (f.back() == ' ' || f.back() == '\t' || f.back() == '\r')) f.remove_suffix(1);
  if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
  return f;
}

std::optional<bool> parse_bool(std::string_view f) {
  auto eq = [&](std::string_view word) {
    if (f.size() != word.size()) return false;
    for (std::size_t i = 0; i < f.size(); ++i)
      if ((f[i] | 0x20) != word[i]) return false;
    return true;
  };
  if (eq("true") || f == "1") return true;
  if (eq("false") || f == "0") return false;
  return std::nullopt;
}

// Splits [begin, end) at commas into `fields`; returns the field count.
std::size_t split_csv(const char* begin, const char* end, std::vector<std::pair<const char*, const char*>>& fields) {
  fields.clear();
  const char* start = begin;
  for (const char* p = begin;; ++p) {
    if (p == end || *p == ',') {
      fields.emplace_back(start, p);
      if (p == end) break;
      start = p + 1;
    }
  }
  return fields.size();
}

// Reserves room for every row at once (`min_row_bytes`: the shortest valid line, newline included, so
// the vector never grows; untouched capacity costs address space only). A million rows is ~50 MB: on
// Linux, ask for transparent huge pages before the memory is first touched, because 4 KiB page faults
// dominate the parse otherwise.
void reserve_rows(std::string_view text, std::size_t min_row_bytes, std::vector<TraceRow>& rows) {
  rows.reserve(text.size() / min_row_bytes + 1);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge = 2u << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(rows.data());
  const auto end = begin + rows.capacity() * sizeof(TraceRow);
  const auto aligned = (begin + huge - 1) & ~(huge - 1);
  if (end > aligned + huge) madvise(reinterpret_cast<void*>(aligned), (end - aligned) & ~(huge - 1), MADV_HUGEPAGE);
#endif
}

bool blank(const char* b, const char* e) {
  for (; b < e; ++b)
    if (!is_space(*b)) return false;
  return true;
}

// Calls fn(line_number, begin, end) for each line (without '\n').
template <class Fn> void for_each_line(std::string_view text, Fn&& fn) {
  const char* p = text.data();
  const char* end = p + text.size();
  std::size_t line = 0;
  while (p < end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    const char* line_end = nl ? nl : end;
    if (!fn(++line, p, line_end)) return;
    p = nl ? nl + 1 : end;
  }
}

// Matches a literal (inlined with constant sizes, the compare is a few loads).
bool literal_at(const char*& p, const char* e, std::string_view t) {
  if (static_cast<std::size_t>(e - p) < t.size() || std::memcmp(p, t.data(), t.size()) != 0) return false;
  p += t.size();
  return true;
}

// The two spellings of the canonical line: compact (what `replay --synth` writes) and with a space
// after ':' and ',' (Python's json.dumps).
struct CompactJson {
  static constexpr std::string_view route[3] = {R"({"primary_1":{"sec":)", R"(,"primary_2":{"sec":)", R"(,"alternate":{"sec":)"};
  static constexpr std::string_view ok = R"(,"ok":)";
};
struct SpacedJson {
  static constexpr std::string_view route[3] = {R"({"primary_1": {"sec": )", R"(, "primary_2": {"sec": )", R"(, "alternate": {"sec": )"};
  static constexpr std::string_view ok = R"(, "ok": )";
};

// The fast path: the canonical line (keys in the documented order, "sec" before "ok") in one of the
// two spellings, matched as fixed strings; no key search, no error text, no separate search for the
// line end. Returns the end of the row (before the newline) or nullptr; anything else goes to
// JsonLine, which accepts every valid line and explains every bad one.
template <class Spelling> const char* canonical_row(const char* p, const char* e, TraceRow& row) {
  for (std::size_t route = 0; route < 3; ++route) {
    if (!literal_at(p, e, Spelling::route[route])) return nullptr;
    TraceAttempt& a = attempt_of(row, route);
    const char* after = parse_plain_decimal(p, e, a.sec);
    if (after == nullptr || a.sec < 0) return nullptr;
    p = after;
    if (!literal_at(p, e, Spelling::ok)) return nullptr;
    if (literal_at(p, e, "true}")) {
      a.ok = true;
    } else if (literal_at(p, e, "false}")) {
      a.ok = false;
    } else {
      return nullptr;
    }
  }
  if (!literal_at(p, e, "}")) return nullptr;
  while (p < e && is_space(*p)) ++p;
  return (p == e || *p == '\n') ? p : nullptr;
}

void parse_jsonl(std::string_view text, TraceParse& out, ErrorSink& errors) {
  reserve_rows(text, 97, out.rows);  // {"primary_1":{"sec":0,"ok":true},...} is 97 bytes
  const char* p = text.data();
  const char* const end = p + text.size();
  while (p < end) {
    ++out.lines;
    TraceRow row;
    const char* row_end = canonical_row<CompactJson>(p, end, row);
    if (row_end == nullptr) row_end = canonical_row<SpacedJson>(p, end, row);
    if (row_end != nullptr) {
      out.rows.push_back(row);
      p = row_end == end ? end : row_end + 1;
      continue;
    }
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    const char* line_end = nl ? nl : end;
    if (!blank(p, line_end)) {
      JsonLine scanner(p, line_end);
      if (auto general = scanner.row()) {
        out.rows.push_back(*general);
      } else {
        errors.add(out.lines, scanner.column(), scanner.error());
      }
    }
    p = nl ? nl + 1 : end;
  }
}

void parse_csv(std::string_view text, TraceParse& out, ErrorSink& errors) {
  std::array<std::size_t, csv_columns.size()> index{};
  bool have_header = false;
  std::size_t needed = 0;
  std::vector<std::pair<const char*, const char*>> fields;
  reserve_rows(text, 12, out.rows);  // 0,0,0,0,0,0
  for_each_line(text, [&](std::size_t line, const char* b, const char* e) {
    ++out.lines;
    if (blank(b, e)) return true;
    split_csv(b, e, fields);
    auto column_of = [&](std::size_t i) { return static_cast<std::size_t>(fields[i].first - b) + 1; };
    if (!have_header) {
      index.fill(SIZE_MAX);
      for (std::size_t i = 0; i < fields.size(); ++i) {
        const auto name = trim_field({fields[i].first, static_cast<std::size_t>(fields[i].second - fields[i].first)});
        for (std::size_t c = 0; c < csv_columns.size(); ++c) {
          if (name != csv_columns[c]) continue;
          if (index[c] != SIZE_MAX) {
            errors.add(line, column_of(i), fmt::format("duplicate column \"{}\"", name));
            return false;
          }
          index[c] = i;
        }
      }
      for (std::size_t c = 0; c < csv_columns.size(); ++c) {
        if (index[c] == SIZE_MAX) {
          errors.add(line, 1,
                     fmt::format("CSV header lacks column \"{}\" (needs primary_1_sec, primary_1_ok, primary_2_sec, "
                                 "primary_2_ok, alternate_sec, alternate_ok)",
                                 csv_columns[c]));
          return false;  // no row can be read without the header
        }
        needed = std::max(needed, index[c] + 1);
      }
      have_header = true;
      return true;
    }
    if (fields.size() < needed) {
      errors.add(line, static_cast<std::size_t>(e - b) + 1,
                 fmt::format("expected at least {} fields, found {}", needed, fields.size()));
      return true;
    }
    TraceRow row;
    for (std::size_t route = 0; route < 3; ++route) {
      TraceAttempt& a = attempt_of(row, route);
      const std::size_t sec_i = index[route * 2], ok_i = index[route * 2 + 1];
      const auto sec = trim_field({fields[sec_i].first, static_cast<std::size_t>(fields[sec_i].second - fields[sec_i].first)});
      const char* after = parse_seconds(sec.data(), sec.data() + sec.size(), a.sec);
      if (after != sec.data() + sec.size() || after == nullptr) {
        errors.add(line, column_of(sec_i), fmt::format("{}: expected a finite number", csv_columns[route * 2]));
        return true;
      }
      if (a.sec < 0) {
        errors.add(line, column_of(sec_i), fmt::format("{}: must be >= 0, got {}", csv_columns[route * 2], a.sec));
        return true;
      }
      const auto ok = parse_bool(trim_field({fields[ok_i].first, static_cast<std::size_t>(fields[ok_i].second - fields[ok_i].first)}));
      if (!ok) {
        errors.add(line, column_of(ok_i), fmt::format("{}: expected true, false, 1 or 0", csv_columns[route * 2 + 1]));
        return true;
      }
      a.ok = *ok;
    }
    out.rows.push_back(row);
    return true;
  });
  if (!have_header && out.error_count == 0) errors.add(out.lines == 0 ? 1 : out.lines, 1, "empty trace: no header row");
}

}  // namespace

namespace {
// Big JSON-line inputs are cut at line ends into one chunk per thread; the chunks' rows, errors and
// line numbers are joined in order afterwards, so the result equals the single-threaded parse.
void parse_jsonl_parallel(std::string_view text, const TraceParseOptions& options, TraceParse& out, ErrorSink& errors) {
  constexpr std::size_t min_chunk = 4u << 20;
  unsigned threads = options.threads != 0 ? options.threads : std::min(8u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(std::max(1u, threads), text.size() / min_chunk + 1));
  if (threads <= 1) {
    parse_jsonl(text, out, errors);
    return;
  }
  std::vector<std::string_view> chunks;
  std::size_t begin = 0;
  for (unsigned k = 1; k <= threads && begin < text.size(); ++k) {
    std::size_t cut = k == threads ? text.size() : text.size() * k / threads;
    if (cut < begin) cut = begin;
    const auto nl = text.find('\n', cut);
    const std::size_t end = k == threads || nl == std::string_view::npos ? text.size() : nl + 1;
    chunks.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  reserve_rows(text, 97, out.rows);
  std::vector<TraceParse> parts(chunks.size());
  std::vector<std::thread> workers;
  for (std::size_t k = 1; k < chunks.size(); ++k)
    workers.emplace_back([&, k] {
      ErrorSink sink{parts[k], errors.source, errors.max_errors};
      parse_jsonl(chunks[k], parts[k], sink);
    });
  parse_jsonl(chunks[0], out, errors);
  for (auto& w : workers) w.join();
  for (std::size_t k = 1; k < parts.size(); ++k) {
    const std::size_t lines_before = out.lines;
    out.rows.insert(out.rows.end(), parts[k].rows.begin(), parts[k].rows.end());
    for (auto& e : parts[k].errors) {
      if (out.errors.size() >= errors.max_errors) break;
      e.pos.line += static_cast<int>(lines_before);
      out.errors.push_back(std::move(e));
    }
    out.error_count += parts[k].error_count;
    out.lines += parts[k].lines;
  }
}
}  // namespace

TraceParse parse_trace(std::string_view text, const std::string& source_name, const TraceParseOptions& options) {
  TraceParse out;
  ErrorSink errors{out, source_name, options.max_errors};
  if (text.size() >= 3 && std::memcmp(text.data(), "\xEF\xBB\xBF", 3) == 0) text.remove_prefix(3);  // UTF-8 BOM
  TraceFormat format = options.format;
  if (format == TraceFormat::detect) {
    std::size_t i = 0;
    while (i < text.size() && (is_space(text[i]) || text[i] == '\n')) ++i;
    format = (i == text.size() || text[i] == '{') ? TraceFormat::jsonl : TraceFormat::csv;
  }
  if (format == TraceFormat::jsonl) {
    parse_jsonl_parallel(text, options, out, errors);
  } else {
    parse_csv(text, out, errors);
  }
  return out;
}

namespace {
// Any readable file, pipes included.
TraceParse read_trace_stream(const std::string& path, const TraceParseOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open the trace file");
  std::string buffer{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw std::runtime_error(path + ": cannot read the trace file");
  return parse_trace(buffer, path, options);
}
}  // namespace

TraceParse read_trace_file(const std::string& path, const TraceParseOptions& options) {
#if defined(__unix__)
  // Map the file: no copy and no zero-filled buffer (both cost more than the parse itself).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(path + ": cannot open the trace file");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return read_trace_stream(path, options);  // a pipe or a device: read it as a stream
  }
  if (st.st_size == 0) {
    ::close(fd);
    return parse_trace({}, path, options);
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return read_trace_stream(path, options);
  ::madvise(map, size, MADV_SEQUENTIAL);
  TraceParse out = parse_trace({static_cast<const char*>(map), size}, path, options);
  ::munmap(map, size);
  return out;
#else
  return read_trace_stream(path, options);
#endif
}

namespace {
template <class RowFn> void write_rows(const std::vector<TraceRow>& rows, std::ostream& out, RowFn&& row_fn) {
  fmt::memory_buffer buf;
  for (const auto& r : rows) {
    row_fn(buf, r);
    if (buf.size() > (1u << 20)) {
      out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
  }
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}
}  // namespace

void write_trace_jsonl(const std::vector<TraceRow>& rows, std::ostream& out) {
  write_rows(rows, out, [](fmt::memory_buffer& buf, const TraceRow& r) {
    fmt::format_to(std::back_inserter(buf),
                   "{{\"primary_1\":{{\"sec\":{:.3f},\"ok\":{}}},\"primary_2\":{{\"sec\":{:.3f},\"ok\":{}}},"
                   "\"alternate\":{{\"sec\":{:.3f},\"ok\":{}}}}}\n",
                   r.primary_1.sec, r.primary_1.ok, r.primary_2.sec, r.primary_2.ok, r.alternate.sec, r.alternate.ok);
  });
}

void write_trace_csv(const std::vector<TraceRow>& rows, std::ostream& out) {
  out << "primary_1_sec,primary_1_ok,primary_2_sec,primary_2_ok,alternate_sec,alternate_ok\n";
  write_rows(rows, out, [](fmt::memory_buffer& buf, const TraceRow& r) {
    fmt::format_to(std::back_inserter(buf), "{:.3f},{},{:.3f},{},{:.3f},{}\n", r.primary_1.sec, r.primary_1.ok,
                   r.primary_2.sec, r.primary_2.ok, r.alternate.sec, r.alternate.ok);
  });
}

void write_trace_file(const std::vector<TraceRow>& rows, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(path + ": cannot write the trace file");
  const bool csv = path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
  if (csv) {
    write_trace_csv(rows, out);
  } else {
    write_trace_jsonl(rows, out);
  }
  out.flush();
  if (!out) throw std::runtime_error(path + ": write failed");
}

}  // namespace llmchaos::experiments
