#include "llmchaos/experiments/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include "llmchaos/core/file_text.hpp"

#if defined(__unix__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace llmchaos::experiments {

std::string TraceError::str() const {
  return pos.str() + ": " + message;
}

namespace {

// The three attempts of a row, in the order the formats name them.
constexpr std::array<std::string_view, 3> route_keys = {"primary_1", "primary_2", "alternate"};

TraceAttempt& attempt_of(TraceRow& row, std::size_t route) {
  return route == 0 ? row.primary_1 : route == 1 ? row.primary_2 : row.alternate;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

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
  static constexpr double pow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  std::uint64_t m = 0;
  int digits = 0, fraction = 0;
  const char* start = p;
  for (; p < end && static_cast<unsigned>(*p - '0') < 10; ++p, ++digits)
    m = m * 10 + static_cast<unsigned>(*p - '0');
  if (p == start) return nullptr;
  if (p < end && *p == '.') {
    const char* fraction_start = ++p;
    for (; p < end && static_cast<unsigned>(*p - '0') < 10; ++p, ++digits)
      m = m * 10 + static_cast<unsigned>(*p - '0');
    fraction = static_cast<int>(p - fraction_start);
    if (fraction == 0) return nullptr;
  }
  if (digits > 15 || (p < end && (*p == 'e' || *p == 'E'))) return nullptr;
  const double v = static_cast<double>(m) / pow10[fraction];
  value = negative ? -v : v;
  return p;
}

bool is_digit(char c) {
  return static_cast<unsigned>(c - '0') < 10;
}

// The writers' shape, nearly every number of a trace: one or two integer digits, '.', exactly three
// decimals (2.410, 30.000), read at fixed offsets without a digit loop. The same m / 10^3 as
// parse_plain_decimal; nullptr: not this shape.
const char* parse_three_decimals(const char* p, const char* end, double& value) {
  if (end - p < 7 || !is_digit(p[0])) return nullptr;  // room for dd.ddd and the byte after it
  unsigned whole = static_cast<unsigned>(p[0] - '0');
  const char* dot = p + 1;
  if (is_digit(*dot)) whole = whole * 10 + static_cast<unsigned>(*dot++ - '0');
  if (*dot != '.' || !is_digit(dot[1]) || !is_digit(dot[2]) || !is_digit(dot[3]) || is_digit(dot[4]) ||
      dot[4] == 'e' || dot[4] == 'E')
    return nullptr;
  const unsigned m = whole * 1000 + static_cast<unsigned>(dot[1] - '0') * 100 +
                     static_cast<unsigned>(dot[2] - '0') * 10 + static_cast<unsigned>(dot[3] - '0');
  value = static_cast<double>(m) / 1e3;
  return dot + 4;
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
    if (static_cast<std::size_t>(end_ - p_) >= word.size() &&
        std::memcmp(p_, word.data(), word.size()) == 0) {
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
constexpr std::array<std::string_view, 6> csv_columns = {"primary_1_sec", "primary_1_ok",  "primary_2_sec",
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
std::size_t split_csv(const char* begin, const char* end,
                      std::vector<std::pair<const char*, const char*>>& fields) {
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
void reserve_rows(std::uint64_t bytes, std::size_t min_row_bytes, std::vector<TraceRow>& rows) {
  rows.reserve(static_cast<std::size_t>(bytes / min_row_bytes + 1));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge = 2u << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(rows.data());
  const auto end = begin + rows.capacity() * sizeof(TraceRow);
  const auto aligned = (begin + huge - 1) & ~(huge - 1);
  if (end > aligned + huge)
    madvise(reinterpret_cast<void*>(aligned), (end - aligned) & ~(huge - 1), MADV_HUGEPAGE);
#endif
}

bool blank(const char* b, const char* e) {
  for (; b < e; ++b)
    if (!is_space(*b)) return false;
  return true;
}

// Matches a literal. The length is a compile-time constant, so the compiler turns the compare into a
// few loads instead of a memcmp call (which took a sixth of the parse when the lengths were not).
template <std::size_t N>
bool literal_at(const char*& p, const char* e, const char (&t)[N]) {
  constexpr std::size_t n = N - 1;  // without the terminating NUL
  if (static_cast<std::size_t>(e - p) < n || std::memcmp(p, t, n) != 0) return false;
  p += n;
  return true;
}

// The two spellings of the canonical line: compact (what `replay --synth` writes) and with a space
// after ':' and ',' (Python's json.dumps).
struct CompactJson {
  static constexpr char primary_1[] = R"({"primary_1":{"sec":)";
  static constexpr char primary_2[] = R"(,"primary_2":{"sec":)";
  static constexpr char alternate[] = R"(,"alternate":{"sec":)";
  static constexpr char ok[] = R"(,"ok":)";
};
struct SpacedJson {
  static constexpr char primary_1[] = R"({"primary_1": {"sec": )";
  static constexpr char primary_2[] = R"(, "primary_2": {"sec": )";
  static constexpr char alternate[] = R"(, "alternate": {"sec": )";
  static constexpr char ok[] = R"(, "ok": )";
};

// `<key>{"sec":<plain decimal>,"ok":<true|false>}` of one attempt, in one spelling.
template <class Spelling, std::size_t N>
bool canonical_attempt(const char*& p, const char* e, const char (&key)[N], TraceAttempt& a) {
  if (!literal_at(p, e, key)) return false;
  const char* after = parse_three_decimals(p, e, a.sec);
  if (after == nullptr) after = parse_plain_decimal(p, e, a.sec);
  if (after == nullptr || a.sec < 0) return false;
  p = after;
  if (!literal_at(p, e, Spelling::ok)) return false;
  if (literal_at(p, e, "true}")) {
    a.ok = true;
  } else if (literal_at(p, e, "false}")) {
    a.ok = false;
  } else {
    return false;
  }
  return true;
}

// The fast path: the canonical line (keys in the documented order, "sec" before "ok") in one of the
// two spellings, matched as fixed strings; no key search, no error text, no separate search for the
// line end. Returns the end of the row (before the newline) or nullptr; anything else goes to
// JsonLine, which accepts every valid line and explains every bad one.
template <class Spelling>
const char* canonical_row(const char* p, const char* e, TraceRow& row) {
  if (!canonical_attempt<Spelling>(p, e, Spelling::primary_1, row.primary_1) ||
      !canonical_attempt<Spelling>(p, e, Spelling::primary_2, row.primary_2) ||
      !canonical_attempt<Spelling>(p, e, Spelling::alternate, row.alternate) || !literal_at(p, e, "}"))
    return nullptr;
  while (p < e && is_space(*p)) ++p;
  return (p == e || *p == '\n') ? p : nullptr;
}

// Good rows on their way to a sink: written in place into a block that is handed on when full, so the
// consumer reads each row from cache right after it was parsed.
class RowBlocks {
 public:
  explicit RowBlocks(const TraceRowSink& sink) : sink_(sink) {}
  TraceRow& slot() { return block_[size_]; }  // the next row, kept by commit()
  void commit() {
    if (++size_ == block_.size()) flush();
  }
  void push(const TraceRow& row) {
    slot() = row;
    commit();
  }
  void flush() {
    if (size_ > 0) sink_(std::span<const TraceRow>(block_.data(), size_));
    size_ = 0;
  }

 private:
  const TraceRowSink& sink_;
  std::array<TraceRow, trace_block_rows> block_;
  std::size_t size_ = 0;
};

// Whole lines of JSON (only the input's last line may lack its newline); the caller flushes `rows`.
void parse_jsonl(std::string_view text, TraceParse& out, ErrorSink& errors, RowBlocks& rows) {
  const char* p = text.data();
  const char* const end = p + text.size();
  while (p < end) {
    ++out.lines;
    TraceRow& row = rows.slot();
    const char* row_end = canonical_row<CompactJson>(p, end, row);
    if (row_end == nullptr) row_end = canonical_row<SpacedJson>(p, end, row);
    if (row_end != nullptr) {
      rows.commit();
      p = row_end == end ? end : row_end + 1;
      continue;
    }
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    const char* line_end = nl ? nl : end;
    if (!blank(p, line_end)) {
      JsonLine scanner(p, line_end);
      if (auto general = scanner.row()) {
        rows.push(*general);
      } else {
        errors.add(out.lines, scanner.column(), scanner.error());
      }
    }
    p = nl ? nl + 1 : end;
  }
}

// CSV, read in blocks of whole lines: the first non-blank line is the header row naming the columns,
// every later non-blank line is a row. A bad header ends the read (no row can be read without it).
class CsvReader {
 public:
  CsvReader(TraceParse& out, ErrorSink& errors, RowBlocks& rows) : out_(out), errors_(errors), rows_(rows) {}

  // Whole lines; only the last block of the input may end without a newline.
  void read(std::string_view lines) {
    const char* p = lines.data();
    const char* const end = p + lines.size();
    while (p < end && !stopped_) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
      stopped_ = !take_line(p, nl ? nl : end);
      p = nl ? nl + 1 : end;
    }
  }
  void finish() {
    rows_.flush();
    if (!have_header_ && out_.error_count == 0)
      errors_.add(out_.lines == 0 ? 1 : out_.lines, 1, "empty trace: no header row");
  }

 private:
  // One line without its newline; false ends the read.
  bool take_line(const char* b, const char* e) {
    const std::size_t line = ++out_.lines;
    if (blank(b, e)) return true;
    split_csv(b, e, fields_);
    auto column_of = [&](std::size_t i) { return static_cast<std::size_t>(fields_[i].first - b) + 1; };
    if (!have_header_) {
      index_.fill(SIZE_MAX);
      for (std::size_t i = 0; i < fields_.size(); ++i) {
        const auto name =
            trim_field({fields_[i].first, static_cast<std::size_t>(fields_[i].second - fields_[i].first)});
        for (std::size_t c = 0; c < csv_columns.size(); ++c) {
          if (name != csv_columns[c]) continue;
          if (index_[c] != SIZE_MAX) {
            errors_.add(line, column_of(i), fmt::format("duplicate column \"{}\"", name));
            return false;
          }
          index_[c] = i;
        }
      }
      for (std::size_t c = 0; c < csv_columns.size(); ++c) {
        if (index_[c] == SIZE_MAX) {
          errors_.add(
              line, 1,
              fmt::format("CSV header lacks column \"{}\" (needs primary_1_sec, primary_1_ok, primary_2_sec, "
                          "primary_2_ok, alternate_sec, alternate_ok)",
                          csv_columns[c]));
          return false;  // no row can be read without the header
        }
        needed_ = std::max(needed_, index_[c] + 1);
      }
      have_header_ = true;
      return true;
    }
    if (fields_.size() < needed_) {
      errors_.add(line, static_cast<std::size_t>(e - b) + 1,
                  fmt::format("expected at least {} fields, found {}", needed_, fields_.size()));
      return true;
    }
    TraceRow row;
    for (std::size_t route = 0; route < 3; ++route) {
      TraceAttempt& a = attempt_of(row, route);
      const std::size_t sec_i = index_[route * 2], ok_i = index_[route * 2 + 1];
      const auto sec = trim_field(
          {fields_[sec_i].first, static_cast<std::size_t>(fields_[sec_i].second - fields_[sec_i].first)});
      const char* after = parse_seconds(sec.data(), sec.data() + sec.size(), a.sec);
      if (after != sec.data() + sec.size() || after == nullptr) {
        errors_.add(line, column_of(sec_i),
                    fmt::format("{}: expected a finite number", csv_columns[route * 2]));
        return true;
      }
      if (a.sec < 0) {
        errors_.add(line, column_of(sec_i),
                    fmt::format("{}: must be >= 0, got {}", csv_columns[route * 2], a.sec));
        return true;
      }
      const auto ok = parse_bool(trim_field(
          {fields_[ok_i].first, static_cast<std::size_t>(fields_[ok_i].second - fields_[ok_i].first)}));
      if (!ok) {
        errors_.add(line, column_of(ok_i),
                    fmt::format("{}: expected true, false, 1 or 0", csv_columns[route * 2 + 1]));
        return true;
      }
      a.ok = *ok;
    }
    rows_.push(row);
    return true;
  }

  TraceParse& out_;
  ErrorSink& errors_;
  RowBlocks& rows_;
  std::array<std::size_t, csv_columns.size()> index_{};
  bool have_header_ = false;
  bool stopped_ = false;
  std::size_t needed_ = 0;
  std::vector<std::pair<const char*, const char*>> fields_;
};

}  // namespace

unsigned trace_threads(const TraceParseOptions& options) {
  return options.threads != 0 ? options.threads : std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
}

namespace {
constexpr std::size_t min_part_bytes = 4u << 20;  // a smaller part costs more in thread start than it saves

bool has_bom(std::string_view text) {
  return text.size() >= 3 && std::memcmp(text.data(), "\xEF\xBB\xBF", 3) == 0;
}

// The format told by the start of the input (after any BOM): '{' first means JSON lines, anything
// else CSV; std::nullopt while it holds only blanks (an empty input is JSON lines).
std::optional<TraceFormat> format_from(std::string_view start) {
  for (const char c : start)
    if (!is_space(c) && c != '\n') return c == '{' ? TraceFormat::jsonl : TraceFormat::csv;
  return std::nullopt;
}

std::size_t part_count(std::uint64_t bytes, std::span<const TraceRowSink> sinks,
                       const TraceParseOptions& options) {
  return static_cast<std::size_t>(
      std::min<std::uint64_t>({sinks.size(), trace_threads(options), bytes / min_part_bytes + 1}));
}

std::span<const TraceRowSink> or_discard(std::span<const TraceRowSink> sinks) {
  static const TraceRowSink discard = [](std::span<const TraceRow>) {};
  return sinks.empty() ? std::span<const TraceRowSink>(&discard, 1) : sinks;
}

// Runs parse_part(k, part_out, part_errors) for each part on a thread of its own (part 0 on the
// calling thread, straight into `out`). Each part counts its own lines and errors; they are joined in
// order afterwards (line numbers shifted), so the result equals a single-threaded parse. An exception
// of any part is rethrown once all have ended.
void in_parts(
    std::size_t parts, TraceParse& out, ErrorSink& errors,
    const std::function<void(std::size_t part, TraceParse& part_out, ErrorSink& part_errors)>& parse_part) {
  std::vector<TraceParse> tails(parts);
  std::vector<std::exception_ptr> failures(parts);
  auto run = [&](std::size_t k, TraceParse& part_out, ErrorSink& part_errors) {
    try {
      parse_part(k, part_out, part_errors);
    } catch (...) {
      failures[k] = std::current_exception();
    }
  };
  std::vector<std::thread> workers;
  for (std::size_t k = 1; k < parts; ++k)
    workers.emplace_back([&, k] {
      ErrorSink sink{tails[k], errors.source, errors.max_errors};
      run(k, tails[k], sink);
    });
  run(0, out, errors);
  for (auto& w : workers) w.join();
  for (const auto& failure : failures)
    if (failure) std::rethrow_exception(failure);
  for (std::size_t k = 1; k < parts; ++k) {
    for (auto& e : tails[k].errors) {
      if (out.errors.size() >= errors.max_errors) break;
      e.pos.line += static_cast<int>(out.lines);
      out.errors.push_back(std::move(e));
    }
    out.error_count += tails[k].error_count;
    out.lines += tails[k].lines;
  }
}

// `parts` pieces of about equal size, each ending at a line end (the last at the end of the text).
std::vector<std::string_view> cut_at_lines(std::string_view text, std::size_t parts) {
  std::vector<std::string_view> out;
  std::size_t begin = 0;
  for (std::size_t k = 1; k <= parts && begin < text.size(); ++k) {
    const std::size_t cut = std::max(begin, text.size() * k / parts);
    const auto nl = text.find('\n', cut);
    const std::size_t end = k == parts || nl == std::string_view::npos ? text.size() : nl + 1;
    out.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  if (out.empty()) out.push_back(text);
  return out;
}

// The body of an in-memory trace (BOM removed) in the given format.
TraceParse scan_text(std::string_view body, TraceFormat format, const std::string& source_name,
                     std::span<const TraceRowSink> sinks, const TraceParseOptions& options) {
  sinks = or_discard(sinks);
  TraceParse out;
  ErrorSink errors{out, source_name, options.max_errors};
  if (format == TraceFormat::jsonl) {
    const auto parts = cut_at_lines(body, part_count(body.size(), sinks, options));
    in_parts(parts.size(), out, errors, [&](std::size_t k, TraceParse& part_out, ErrorSink& part_errors) {
      RowBlocks rows(sinks[k]);
      parse_jsonl(parts[k], part_out, part_errors, rows);
      rows.flush();
    });
  } else {
    RowBlocks rows(sinks[0]);
    CsvReader csv(out, errors, rows);
    csv.read(body);
    csv.finish();
  }
  return out;
}

// parse_trace and read_trace_file: the streaming reader with one sink per part that keeps the rows.
// Part 0 appends straight to the result (reserved for the largest possible row count, so it never
// moves); the other parts' rows are appended once all are parsed.
TraceParse keep_rows(std::uint64_t bytes, TraceFormat format, const TraceParseOptions& options,
                     const std::function<TraceParse(std::span<const TraceRowSink>)>& scan) {
  std::vector<TraceRow> rows;
  reserve_rows(bytes, format == TraceFormat::jsonl ? 97 : 12,
               rows);  // the shortest valid line, newline included
  std::vector<std::vector<TraceRow>> tails(trace_threads(options));
  std::vector<TraceRowSink> sinks;
  for (std::size_t k = 0; k < tails.size(); ++k)
    sinks.emplace_back([to = k == 0 ? &rows : &tails[k]](std::span<const TraceRow> block) {
      to->insert(to->end(), block.begin(), block.end());
    });
  TraceParse out = scan(sinks);
  for (const auto& tail : tails) rows.insert(rows.end(), tail.begin(), tail.end());
  out.rows = std::move(rows);
  return out;
}

TraceFormat text_format(std::string_view body, const TraceParseOptions& options) {
  return options.format != TraceFormat::detect ? options.format
                                               : format_from(body).value_or(TraceFormat::jsonl);
}

std::string_view without_bom(std::string_view text) {
  return has_bom(text) ? text.substr(3) : text;
}
}  // namespace

TraceParse scan_trace(std::string_view text, const std::string& source_name,
                      std::span<const TraceRowSink> sinks, const TraceParseOptions& options) {
  const std::string_view body = without_bom(text);
  return scan_text(body, text_format(body, options), source_name, sinks, options);
}

TraceParse parse_trace(std::string_view text, const std::string& source_name,
                       const TraceParseOptions& options) {
  const std::string_view body = without_bom(text);
  const TraceFormat format = text_format(body, options);
  return keep_rows(body.size(), format, options, [&](std::span<const TraceRowSink> sinks) {
    return scan_text(body, format, source_name, sinks, options);
  });
}

namespace {
#if defined(__unix__)
// A trace file, read with pread in blocks: each parsing thread reads its own part into a buffer small
// enough to stay in its core's cache and parses it there. (A memory-mapped file costs a page fault or
// a page-table walk per 4 KiB page touched; on virtual machines with shadow page tables that took
// longer than the parse itself.)
class TraceFile {
 public:
  static constexpr std::size_t block_bytes = 256u << 10;

  explicit TraceFile(const std::string& path) : path_(path), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    struct stat st {};
    if (fd_ < 0 || ::fstat(fd_, &st) != 0) {
      const int err = errno;
      if (fd_ >= 0) ::close(fd_);
      throw std::runtime_error(fmt::format("{}: cannot open the trace file: {}", path, std::strerror(err)));
    }
    if (S_ISDIR(st.st_mode)) {  // read() would fail with EISDIR (a stream said "basic_filebuf::underflow")
      ::close(fd_);
      throw std::runtime_error(fmt::format("{}: cannot read the trace file: {} (a file is expected)", path,
                                           std::strerror(EISDIR)));
    }
    regular_ = S_ISREG(st.st_mode);
    size_ = static_cast<std::uint64_t>(st.st_size);
  }
  ~TraceFile() { ::close(fd_); }
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;

  bool regular() const { return regular_; }  // else a pipe or a device: read it as a stream
  std::uint64_t size() const { return size_; }

  // Up to n bytes at `offset`, fewer only at the end of the file. Throws naming the path on an error.
  std::size_t read_at(char* to, std::size_t n, std::uint64_t offset) const {
    std::size_t done = 0;
    while (done < n) {
      const ssize_t got = ::pread(fd_, to + done, n - done, static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0)
        throw std::runtime_error(
            fmt::format("{}: cannot read the trace file: {}", path_, std::strerror(errno)));
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    return done;
  }

  // The offset just past the first newline at or after `from` (the size when there is none).
  std::uint64_t next_line_start(std::uint64_t from) const {
    std::array<char, 4096> window;
    for (std::uint64_t at = from; at < size_; at += window.size()) {
      const std::size_t got = read_at(window.data(), window.size(), at);
      if (const void* nl = std::memchr(window.data(), '\n', got))
        return at + static_cast<std::uint64_t>(static_cast<const char*>(nl) - window.data()) + 1;
      if (got < window.size()) break;
    }
    return size_;
  }

  // Calls consume(lines) with the bytes [begin, end) in blocks of whole lines (only the file's last
  // line may come without its newline); a line longer than the buffer grows it.
  void read_lines(std::uint64_t begin, std::uint64_t end,
                  const std::function<void(std::string_view)>& consume) const {
    std::size_t capacity = block_bytes;
    auto buffer = std::make_unique_for_overwrite<char[]>(capacity);
    std::size_t held = 0;  // the start of a line whose end is not read yet, at the front of the buffer
    for (std::uint64_t at = begin; at < end;) {
      if (held == capacity) {
        auto bigger = std::make_unique_for_overwrite<char[]>(capacity *= 2);
        std::memcpy(bigger.get(), buffer.get(), held);
        buffer = std::move(bigger);
      }
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(capacity - held, end - at));
      const std::size_t got = read_at(buffer.get() + held, want, at);
      if (got == 0) break;  // the file got shorter since it was measured
      at += got;
      const std::string_view block(buffer.get(), held + got);
      const auto last_newline = block.rfind('\n');
      const std::size_t whole = last_newline == std::string_view::npos ? 0 : last_newline + 1;
      if (whole > 0) consume(block.substr(0, whole));
      held = block.size() - whole;
      std::memmove(buffer.get(), buffer.get() + whole, held);
    }
    if (held > 0) consume({buffer.get(), held});
  }

  // Where the body starts (after a UTF-8 BOM) and its format.
  std::pair<std::uint64_t, TraceFormat> body_and_format(const TraceParseOptions& options) const {
    std::array<char, 4096> window;
    const std::size_t got = read_at(window.data(), window.size(), 0);
    const std::uint64_t body = has_bom({window.data(), got}) ? 3 : 0;
    if (options.format != TraceFormat::detect) return {body, options.format};
    for (std::uint64_t at = body; at < size_; at += window.size()) {
      const std::size_t n = read_at(window.data(), window.size(), at);
      if (const auto format = format_from({window.data(), n})) return {body, *format};
      if (n < window.size()) break;
    }
    return {body, TraceFormat::jsonl};
  }

  // The body from `body` on, in the given format.
  TraceParse scan(std::uint64_t body, TraceFormat format, std::span<const TraceRowSink> sinks,
                  const TraceParseOptions& options) const {
    sinks = or_discard(sinks);
    TraceParse out;
    ErrorSink errors{out, path_, options.max_errors};
    if (format == TraceFormat::jsonl) {
      const std::size_t parts = part_count(size_ - body, sinks, options);
      std::vector<std::uint64_t> cuts{body};  // part k is [cuts[k], cuts[k + 1]), whole lines
      for (std::size_t k = 1; k < parts; ++k)
        cuts.push_back(std::max(cuts.back(), next_line_start(body + (size_ - body) * k / parts)));
      cuts.push_back(size_);
      in_parts(parts, out, errors, [&](std::size_t k, TraceParse& part_out, ErrorSink& part_errors) {
        RowBlocks rows(sinks[k]);
        read_lines(cuts[k], cuts[k + 1],
                   [&](std::string_view lines) { parse_jsonl(lines, part_out, part_errors, rows); });
        rows.flush();
      });
    } else {
      RowBlocks rows(sinks[0]);
      CsvReader csv(out, errors, rows);
      read_lines(body, size_, [&](std::string_view lines) { csv.read(lines); });
      csv.finish();
    }
    return out;
  }

 private:
  std::string path_;
  int fd_;
  bool regular_ = false;
  std::uint64_t size_ = 0;
};
#endif

// Any readable file, pipes included, as one string.
std::string slurp(const std::string& path) {
  return read_file_text(path, "the trace file");
}
}  // namespace

TraceParse read_trace_file(const std::string& path, const TraceParseOptions& options) {
#if defined(__unix__)
  const TraceFile file(path);
  if (file.regular()) {
    const auto [body, format] = file.body_and_format(options);
    return keep_rows(file.size() - body, format, options,
                     [&, body = body, format = format](
                         std::span<const TraceRowSink> sinks) {  // clang 14: no captured bindings
                       return file.scan(body, format, sinks, options);
                     });
  }
#endif
  return parse_trace(slurp(path), path, options);
}

TraceParse scan_trace_file(const std::string& path, std::span<const TraceRowSink> sinks,
                           const TraceParseOptions& options) {
#if defined(__unix__)
  const TraceFile file(path);
  if (file.regular()) {
    const auto [body, format] = file.body_and_format(options);
    return file.scan(body, format, sinks, options);
  }
#endif
  return scan_trace(slurp(path), path, sinks, options);
}

namespace {
template <class RowFn>
void write_rows(const std::vector<TraceRow>& rows, std::ostream& out, RowFn&& row_fn) {
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
                   r.primary_1.sec, r.primary_1.ok, r.primary_2.sec, r.primary_2.ok, r.alternate.sec,
                   r.alternate.ok);
  });
}

void write_trace_csv(const std::vector<TraceRow>& rows, std::ostream& out) {
  out << "primary_1_sec,primary_1_ok,primary_2_sec,primary_2_ok,alternate_sec,alternate_ok\n";
  write_rows(rows, out, [](fmt::memory_buffer& buf, const TraceRow& r) {
    fmt::format_to(std::back_inserter(buf), "{:.3f},{},{:.3f},{},{:.3f},{}\n", r.primary_1.sec,
                   r.primary_1.ok, r.primary_2.sec, r.primary_2.ok, r.alternate.sec, r.alternate.ok);
  });
}

void write_trace_file(const std::vector<TraceRow>& rows, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw std::runtime_error(fmt::format("{}: cannot write the trace file: {}", path, std::strerror(errno)));
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
