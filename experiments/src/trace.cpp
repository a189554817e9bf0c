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

// Matches a literal. The length is a compile-time constant, so the compiler turns the compare into a
// few loads instead of a memcmp call (which took a sixth of the parse when the lengths were not).
template <std::size_t N> bool literal_at(const char*& p, const char* e, const char (&t)[N]) {
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
  const char* after = parse_plain_decimal(p, e, a.sec);
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
template <class Spelling> const char* canonical_row(const char* p, const char* e, TraceRow& row) {
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
  rows.flush();
}

void parse_csv(std::string_view text, TraceParse& out, ErrorSink& errors, RowBlocks& rows) {
  std::array<std::size_t, csv_columns.size()> index{};
  bool have_header = false;
  std::size_t needed = 0;
  std::vector<std::pair<const char*, const char*>> fields;
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
    rows.push(row);
    return true;
  });
  rows.flush();
  if (!have_header && out.error_count == 0) errors.add(out.lines == 0 ? 1 : out.lines, 1, "empty trace: no header row");
}

}  // namespace

unsigned trace_threads(const TraceParseOptions& options) {
  return options.threads != 0 ? options.threads : std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
}

namespace {
// The text without a UTF-8 BOM, and its format (detect: '{' first -> JSON lines, else CSV).
std::pair<std::string_view, TraceFormat> body_and_format(std::string_view text, TraceFormat format) {
  if (text.size() >= 3 && std::memcmp(text.data(), "\xEF\xBB\xBF", 3) == 0) text.remove_prefix(3);
  if (format == TraceFormat::detect) {
    std::size_t i = 0;
    while (i < text.size() && (is_space(text[i]) || text[i] == '\n')) ++i;
    format = (i == text.size() || text[i] == '{') ? TraceFormat::jsonl : TraceFormat::csv;
  }
  return {text, format};
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

// Big JSON-line inputs are cut at line ends into one part per sink and thread. Each part counts its
// own lines and errors; they are joined in order afterwards (line numbers shifted), so errors and
// counts equal those of a single-threaded parse.
void scan_jsonl(std::string_view text, std::span<const TraceRowSink> sinks, const TraceParseOptions& options,
                TraceParse& out, ErrorSink& errors) {
  constexpr std::size_t min_part = 4u << 20;  // below this a thread costs more than it saves
  const auto parts = cut_at_lines(text, std::min({sinks.size(), std::size_t{trace_threads(options)},
                                                  text.size() / min_part + 1}));
  auto parse_part = [&](std::size_t k, TraceParse& part_out, ErrorSink& part_errors) {
    RowBlocks rows(sinks[k]);
    parse_jsonl(parts[k], part_out, part_errors, rows);
  };
  std::vector<TraceParse> tails(parts.size());  // part 0 counts straight into `out`
  std::vector<std::thread> workers;
  for (std::size_t k = 1; k < parts.size(); ++k)
    workers.emplace_back([&, k] {
      ErrorSink sink{tails[k], errors.source, errors.max_errors};
      parse_part(k, tails[k], sink);
    });
  parse_part(0, out, errors);
  for (auto& w : workers) w.join();
  for (std::size_t k = 1; k < tails.size(); ++k) {
    for (auto& e : tails[k].errors) {
      if (out.errors.size() >= errors.max_errors) break;
      e.pos.line += static_cast<int>(out.lines);
      out.errors.push_back(std::move(e));
    }
    out.error_count += tails[k].error_count;
    out.lines += tails[k].lines;
  }
}
}  // namespace

TraceParse scan_trace(std::string_view text, const std::string& source_name, std::span<const TraceRowSink> sinks,
                      const TraceParseOptions& options) {
  static const TraceRowSink discard = [](std::span<const TraceRow>) {};
  if (sinks.empty()) sinks = {&discard, 1};
  TraceParse out;
  ErrorSink errors{out, source_name, options.max_errors};
  const auto [body, format] = body_and_format(text, options.format);
  if (format == TraceFormat::jsonl) {
    scan_jsonl(body, sinks, options, out, errors);
  } else {
    RowBlocks rows(sinks[0]);
    parse_csv(body, out, errors, rows);
  }
  return out;
}

TraceParse parse_trace(std::string_view text, const std::string& source_name, const TraceParseOptions& options) {
  // Part 0 appends straight to `rows` (reserved for the whole text, so it never moves); the other
  // parts' rows are appended after it once all are parsed.
  std::vector<TraceRow> rows;
  const bool jsonl = body_and_format(text, options.format).second == TraceFormat::jsonl;
  reserve_rows(text, jsonl ? 97 : 12, rows);  // the shortest valid line, newline included
  std::vector<std::vector<TraceRow>> tails(trace_threads(options));
  std::vector<TraceRowSink> sinks;
  for (std::size_t k = 0; k < tails.size(); ++k)
    sinks.emplace_back([to = k == 0 ? &rows : &tails[k]](std::span<const TraceRow> block) {
      to->insert(to->end(), block.begin(), block.end());
    });
  TraceParse out = scan_trace(text, source_name, sinks, options);
  for (const auto& tail : tails) rows.insert(rows.end(), tail.begin(), tail.end());
  out.rows = std::move(rows);
  return out;
}

namespace {
// The whole file as one buffer for `parse`: memory-mapped when it is a regular file (no copy and no
// zero-filled buffer: both cost more than the parse itself), else read as a stream (pipes, devices).
// Throws naming the path when it cannot be read.
TraceParse with_file_text(const std::string& path, const std::function<TraceParse(std::string_view)>& parse) {
  auto read_stream = [&] {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot open the trace file");
    std::string buffer{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (in.bad()) throw std::runtime_error(path + ": cannot read the trace file");
    return parse(buffer);
  };
#if defined(__unix__)
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(path + ": cannot open the trace file");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return read_stream();
  }
  if (st.st_size == 0) {
    ::close(fd);
    return parse({});
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return read_stream();
  ::madvise(map, size, MADV_SEQUENTIAL);
  struct Unmap {
    void* map;
    std::size_t size;
    ~Unmap() { ::munmap(map, size); }
  } unmap{map, size};
  return parse({static_cast<const char*>(map), size});
#else
  return read_stream();
#endif
}
}  // namespace

TraceParse read_trace_file(const std::string& path, const TraceParseOptions& options) {
  return with_file_text(path, [&](std::string_view text) { return parse_trace(text, path, options); });
}

TraceParse scan_trace_file(const std::string& path, std::span<const TraceRowSink> sinks,
                           const TraceParseOptions& options) {
  return with_file_text(path, [&](std::string_view text) { return scan_trace(text, path, sinks, options); });
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
