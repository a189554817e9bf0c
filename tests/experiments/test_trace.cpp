#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "llmchaos/core/rng.hpp"
#include "llmchaos/experiments/synth.hpp"
#include "llmchaos/experiments/trace.hpp"

using namespace llmchaos;
using namespace llmchaos::experiments;

namespace {
// Shortest round-trip decimal text of v (never an exponent for the values used here).
std::string fmt_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9f", v);
  return buf;
}

std::string errors_of(const TraceParse& p) {
  std::string s;
  for (const auto& e : p.errors) s += e.str() + "\n";
  return s;
}
}  // namespace

TEST_CASE("a JSON line gives the three attempts with their seconds and outcomes", "[experiments][trace]") {
  const auto p = parse_trace(
      R"({"primary_1": {"sec": 2.41, "ok": true}, "primary_2": {"sec": 2.38, "ok": false}, "alternate": {"sec": 4.1, "ok": true}})",
      "t.jsonl");
  REQUIRE(p.error_count == 0);
  REQUIRE(p.rows.size() == 1);
  CHECK(p.rows[0].primary_1.sec == 2.41);
  CHECK(p.rows[0].primary_1.ok);
  CHECK(p.rows[0].primary_2.sec == 2.38);
  CHECK_FALSE(p.rows[0].primary_2.ok);
  CHECK(p.rows[0].alternate.sec == 4.1);
  CHECK(p.rows[0].alternate.ok);
}

TEST_CASE("JSON lines accept any key order, extra keys, CRLF and blank lines", "[experiments][trace]") {
  const std::string text =
      "\xEF\xBB\xBF"
      "{\"id\": \"r-1\", \"alternate\":{\"ok\":false,\"sec\":1e-1},\"primary_2\":{\"sec\":0,\"ok\":true,"
      "\"note\":[1,{\"a\":null},\"x\\\"y\"]},\"primary_1\":{\"sec\":3,\"ok\":true},\"meta\":{\"n\":-2.5E3}}"
      "\r\n"
      "\n   \r\n"
      "{\"primary_1\":{\"sec\":1.5,\"ok\":false},\"primary_2\":{\"sec\":2,\"ok\":true},\"alternate\":{"
      "\"sec\":2.5,\"ok\":true}}";
  const auto p = parse_trace(text, "t.jsonl");
  INFO(errors_of(p));
  REQUIRE(p.error_count == 0);
  REQUIRE(p.rows.size() == 2);
  CHECK(p.lines == 4);
  CHECK(p.rows[0].primary_1.sec == 3);
  CHECK(p.rows[0].primary_2.sec == 0);
  CHECK(p.rows[0].alternate.sec == 0.1);
  CHECK_FALSE(p.rows[0].alternate.ok);
  CHECK(p.rows[1].primary_1.sec == 1.5);
  CHECK_FALSE(p.rows[1].primary_1.ok);
}

TEST_CASE("bad JSON lines are reported as file:line:col with what is wrong, good lines still count",
          "[experiments][trace]") {
  const std::string good =
      R"({"primary_1":{"sec":1,"ok":true},"primary_2":{"sec":2,"ok":true},"alternate":{"sec":3,"ok":true}})";
  const std::string text = good + "\n" +  // 1
                           R"({"primary_1":{"sec":1,"ok":true},"primary_2":{"sec":2,"ok":true}})"
                           "\n"  // 2 missing
                           R"({"primary_1":{"sec":-1,"ok":true}})"
                           "\n"  // 3 negative
                           R"({"primary_1":{"sec":1,"ok":"yes"}})"
                           "\n"               // 4 ok type
                           + good + " x\n" +  // 5 trailing
                           "[1,2]\n"          // 6 not object
                           R"({"primary_1":{"sec":1,"ok":true},"primary_1":{"sec":1,"ok":true}})"
                           "\n"  // 7 duplicate
                           R"({"primary_1":{"sec":nan,"ok":true}})"
                           "\n"  // 8 nan
                           R"({"primary_1)"
                           "\n"  // 9 unterminated
                           R"({"primary_1":{"ok":true}})"
                           "\n"            // 10 no sec
                           + good + "\n";  // 11
  const auto p = parse_trace(text, "t.jsonl");
  CHECK(p.rows.size() == 2);
  CHECK(p.error_count == 9);
  REQUIRE(p.errors.size() == 9);
  CHECK(p.errors[0].str() == "t.jsonl:2:1: missing \"alternate\"");
  CHECK(p.errors[1].str() == "t.jsonl:3:21: \"primary_1\".sec: must be >= 0, got -1");
  CHECK(p.errors[2].str() == "t.jsonl:4:28: \"primary_1\".ok: expected true or false");
  CHECK(p.errors[3].str() == "t.jsonl:5:99: unexpected characters after the object");
  CHECK(p.errors[4].str() == "t.jsonl:6:1: expected '{', found '['");
  CHECK(p.errors[5].str() == "t.jsonl:7:46: duplicate key \"primary_1\"");
  CHECK(p.errors[6].str() == "t.jsonl:8:21: \"primary_1\".sec: expected a finite number");
  CHECK(p.errors[7].str() == "t.jsonl:9:12: unterminated string");
  CHECK(p.errors[8].str() == "t.jsonl:10:14: \"primary_1\": missing \"sec\"");
}

TEST_CASE("only the first max_errors bad lines are kept, all are counted", "[experiments][trace]") {
  std::string text;
  for (int i = 0; i < 50; ++i) text += "{}\n";
  TraceParseOptions options;
  options.max_errors = 3;
  const auto p = parse_trace(text, "t.jsonl", options);
  CHECK(p.error_count == 50);
  CHECK(p.errors.size() == 3);
  CHECK(p.errors[2].pos.line == 3);
}

TEST_CASE("CSV finds the six columns by header name and accepts true/false/1/0", "[experiments][trace]") {
  const std::string text =
      "alternate_ok,alternate_sec,extra,primary_1_sec,primary_1_ok,primary_2_sec,primary_2_ok\r\n"
      "true,4.1,zzz,2.41,True,2.38,0\r\n"
      "\n"
      "0, 1.5 ,,\"3\",FALSE,1,1\n";
  const auto p = parse_trace(text, "t.csv");
  INFO(errors_of(p));
  REQUIRE(p.error_count == 0);
  REQUIRE(p.rows.size() == 2);
  CHECK(p.rows[0].primary_1.sec == 2.41);
  CHECK(p.rows[0].primary_1.ok);
  CHECK_FALSE(p.rows[0].primary_2.ok);
  CHECK(p.rows[0].alternate.sec == 4.1);
  CHECK(p.rows[1].primary_1.sec == 3);
  CHECK_FALSE(p.rows[1].primary_1.ok);
  CHECK(p.rows[1].alternate.sec == 1.5);
  CHECK_FALSE(p.rows[1].alternate.ok);
}

TEST_CASE("bad CSV rows and a header without the columns are reported with line and column",
          "[experiments][trace]") {
  const std::string header =
      "primary_1_sec,primary_1_ok,primary_2_sec,primary_2_ok,alternate_sec,alternate_ok\n";
  const auto p = parse_trace(
      header + "1,true,2,true,3\n1,yes,2,true,3,true\nx,true,2,true,3,true\n1,1,2,1,3,1\n", "t.csv");
  CHECK(p.rows.size() == 1);
  REQUIRE(p.errors.size() == 3);
  CHECK(p.errors[0].str() == "t.csv:2:16: expected at least 6 fields, found 5");
  CHECK(p.errors[1].str() == "t.csv:3:3: primary_1_ok: expected true, false, 1 or 0");
  CHECK(p.errors[2].str() == "t.csv:4:1: primary_1_sec: expected a finite number");

  const auto h = parse_trace("primary_1_sec,primary_1_ok\n1,true\n", "h.csv");
  CHECK(h.rows.empty());
  REQUIRE(h.errors.size() == 1);
  CHECK(h.errors[0].pos.line == 1);
  CHECK(h.errors[0].message.find("lacks column \"primary_2_sec\"") != std::string::npos);
}

TEST_CASE("an empty input is no error in JSON lines and lacks a header in CSV", "[experiments][trace]") {
  CHECK(parse_trace("", "e.jsonl").error_count == 0);
  TraceParseOptions csv;
  csv.format = TraceFormat::csv;
  const auto p = parse_trace("", "e.csv", csv);
  REQUIRE(p.errors.size() == 1);
  CHECK(p.errors[0].message == "empty trace: no header row");
}

TEST_CASE("random bytes never crash the reader: every non-blank line is a row or an error",
          "[experiments][trace]") {
  Rng rng(2024);
  const std::string alphabet = "{}[]\":,.-+eE0123456789 \t\r\ntruefalsnpimy_ok sec\\\x01\xff";
  for (int round = 0; round < 300; ++round) {
    std::string text;
    const auto len = rng.between(0, 400);
    for (std::int64_t i = 0; i < len; ++i)
      text +=
          alphabet[static_cast<std::size_t>(rng.between(0, static_cast<std::int64_t>(alphabet.size()) - 1))];
    // Also mutate a valid line now and then, which reaches deeper paths.
    if (round % 3 == 0) {
      std::string line =
          R"({"primary_1":{"sec":1,"ok":true},"primary_2":{"sec":2,"ok":true},"alternate":{"sec":3,"ok":true}})";
      line[static_cast<std::size_t>(rng.between(0, static_cast<std::int64_t>(line.size()) - 1))] =
          alphabet[static_cast<std::size_t>(rng.between(0, static_cast<std::int64_t>(alphabet.size()) - 1))];
      text = line + "\n" + text;
    }
    for (const auto format : {TraceFormat::jsonl, TraceFormat::csv}) {
      TraceParseOptions options;
      options.format = format;
      const auto p = parse_trace(text, "fuzz", options);
      REQUIRE(p.errors.size() <= options.max_errors);
      REQUIRE(p.rows.size() + p.error_count <= p.lines + 1);
      for (const auto& row : p.rows) REQUIRE(row.primary_1.sec >= 0);
    }
  }
}

TEST_CASE("a synthetic trace written as JSON lines or CSV reads back to the same rows (3 decimals)",
          "[experiments][trace]") {
  SynthOptions options;
  options.rows = 500;
  options.seed = 9;
  options.outage = std::pair<std::size_t, std::size_t>{100, 150};
  const auto rows = synth_trace(options);
  std::ostringstream jsonl, csv;
  write_trace_jsonl(rows, jsonl);
  write_trace_csv(rows, csv);
  for (const auto& text : {jsonl.str(), csv.str()}) {
    const auto p = parse_trace(text, "round-trip");
    INFO(errors_of(p));
    REQUIRE(p.error_count == 0);
    REQUIRE(p.rows.size() == rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      REQUIRE(p.rows[i].primary_1.sec == Approx(rows[i].primary_1.sec).margin(0.0005));
      REQUIRE(p.rows[i].primary_1.ok == rows[i].primary_1.ok);
      REQUIRE(p.rows[i].primary_2.ok == rows[i].primary_2.ok);
      REQUIRE(p.rows[i].alternate.sec == Approx(rows[i].alternate.sec).margin(0.0005));
    }
  }
}

TEST_CASE("the synthetic trace is seeded, has rare failures and a failing primary in the outage window",
          "[experiments][trace]") {
  SynthOptions options;
  options.rows = 20000;
  options.seed = 3;
  options.outage = std::pair<std::size_t, std::size_t>{1000, 1200};
  const auto a = synth_trace(options);
  const auto b = synth_trace(options);
  REQUIRE(a.size() == 20000);
  std::size_t failures_outside = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].primary_1.sec == b[i].primary_1.sec);
    const bool in_outage = i >= 1000 && i < 1200;
    if (in_outage) {
      REQUIRE_FALSE(a[i].primary_1.ok);
      REQUIRE_FALSE(a[i].primary_2.ok);
    } else if (!a[i].primary_1.ok) {
      ++failures_outside;
    }
  }
  // 0.5% failure rate: about 99 of 19800; a loose band, it is only "rare".
  CHECK(failures_outside > 40);
  CHECK(failures_outside < 200);
  options.seed = 4;
  CHECK(synth_trace(options)[0].primary_1.sec != a[0].primary_1.sec);
}

TEST_CASE("a large JSON-lines trace parsed on several threads equals the single-threaded parse",
          "[experiments][trace]") {
  SynthOptions options;
  options.rows = 60000;  // ~6.6 MB: over the 4 MiB chunk threshold
  std::ostringstream out;
  write_trace_jsonl(synth_trace(options), out);
  std::string text = out.str();
  // Bad lines near the start, the middle and the end, and one spaced-out (non-canonical) good line.
  text.insert(0, "oops\n");
  text.insert(text.size() / 2, "\n{\"primary_1\": 1}\n");
  text +=
      "{ \"alternate\" : {\"ok\":true,\"sec\":1}, \"primary_2\":{\"sec\":1,\"ok\":true}, "
      "\"primary_1\":{\"sec\":2,\"ok\":false} }\n";
  text += "{\n";
  TraceParseOptions one, many;
  one.threads = 1;
  many.threads = 3;
  one.format = many.format = TraceFormat::jsonl;  // the first line is bad: detection would say CSV
  const auto a = parse_trace(text, "big.jsonl", one);
  const auto b = parse_trace(text, "big.jsonl", many);
  REQUIRE(a.rows.size() == b.rows.size());
  CHECK(a.lines == b.lines);
  CHECK(a.error_count == b.error_count);
  REQUIRE(a.errors.size() == b.errors.size());
  for (std::size_t i = 0; i < a.errors.size(); ++i) CHECK(a.errors[i].str() == b.errors[i].str());
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    REQUIRE(a.rows[i].primary_1.sec == b.rows[i].primary_1.sec);
    REQUIRE(a.rows[i].alternate.ok == b.rows[i].alternate.ok);
  }
  CHECK(a.rows.back().primary_1.sec == 2);
  CHECK(a.error_count >= 3);
  CHECK(a.errors.front().pos.line == 1);
}

TEST_CASE("the streaming reader hands each part's rows to its own sink, in order and in small blocks",
          "[experiments][trace]") {
  SynthOptions options;
  options.rows = 90000;  // ~10 MB: three parts over the 4 MiB threshold
  std::ostringstream out;
  write_trace_jsonl(synth_trace(options), out);
  const std::string text = "bad\n" + out.str();
  TraceParseOptions parse;
  parse.threads = 3;
  parse.format = TraceFormat::jsonl;
  std::vector<std::vector<TraceRow>> parts(4);  // one more sink than threads: it stays unused
  std::size_t largest_block = 0;
  std::vector<TraceRowSink> sinks;
  for (auto& part : parts)
    sinks.emplace_back([&part, &largest_block](std::span<const TraceRow> block) {
      part.insert(part.end(), block.begin(), block.end());
      largest_block = std::max(largest_block, block.size());  // each sink runs on one thread; a benign max
    });
  const auto scanned = scan_trace(text, "s.jsonl", sinks, parse);
  const auto read = parse_trace(text, "s.jsonl", parse);
  CHECK(scanned.rows.empty());
  CHECK(scanned.lines == read.lines);
  REQUIRE(scanned.errors.size() == 1);
  CHECK(scanned.errors[0].str() == read.errors[0].str());
  CHECK(largest_block <= trace_block_rows);
  CHECK(parts[2].size() > 0);
  CHECK(parts[3].empty());
  std::vector<TraceRow> joined;
  for (const auto& part : parts) joined.insert(joined.end(), part.begin(), part.end());
  REQUIRE(joined.size() == read.rows.size());
  for (std::size_t i = 0; i < joined.size(); ++i) {
    REQUIRE(joined[i].primary_1.sec == read.rows[i].primary_1.sec);
    REQUIRE(joined[i].alternate.ok == read.rows[i].alternate.ok);
  }
  // No sink at all: the rows are parsed and dropped, errors still counted.
  CHECK(scan_trace(text, "s.jsonl", {}, parse).error_count == 1);
}

TEST_CASE("a trace file read in blocks equals the same text parsed in memory", "[experiments][trace]") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("llmchaos-trace-file-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  SynthOptions options;
  options.rows = 50000;  // ~5.5 MB: two parts, each read in many blocks
  std::ostringstream jsonl, csv;
  write_trace_jsonl(synth_trace(options), jsonl);
  write_trace_csv(synth_trace(options), csv);
  // A good line longer than a read block (a 600 KB extra key), a bad one after it, blank lines, a
  // BOM, and a last line without its newline.
  const std::string long_line =
      R"({"note":")" + std::string(600000, 'x') +
      R"(","primary_1":{"sec":1,"ok":true},"primary_2":{"sec":2,"ok":true},"alternate":{"sec":3,"ok":true}})";
  std::string text = "\xEF\xBB\xBF\n" + jsonl.str();
  text.insert(text.find('\n', text.size() / 3) + 1, long_line + "\n{\"primary_1\": 1}\n\n");
  text +=
      R"({"primary_1":{"sec":1,"ok":true},"primary_2":{"sec":2,"ok":true},"alternate":{"sec":3,"ok":false}})";
  std::string csv_text = csv.str();
  csv_text.insert(csv_text.find('\n', csv_text.size() / 2) + 1, "1,true,2\n\n");
  for (const auto& [name, content] :
       {std::pair{"f.jsonl", text}, std::pair{"f.csv", csv_text}, std::pair{"e.jsonl", std::string()},
        std::pair{"h.csv", std::string("a,b\n")}}) {
    const auto path = (dir / name).string();
    std::ofstream(path, std::ios::binary) << content;
    for (const unsigned threads : {1u, 2u}) {
      TraceParseOptions parse;
      parse.threads = threads;
      const auto from_file = read_trace_file(path, parse);
      const auto in_memory = parse_trace(content, path, parse);
      INFO(path << " threads " << threads);
      CHECK(from_file.lines == in_memory.lines);
      CHECK(from_file.error_count == in_memory.error_count);
      REQUIRE(from_file.errors.size() == in_memory.errors.size());
      for (std::size_t i = 0; i < in_memory.errors.size(); ++i)
        CHECK(from_file.errors[i].str() == in_memory.errors[i].str());
      REQUIRE(from_file.rows.size() == in_memory.rows.size());
      for (std::size_t i = 0; i < in_memory.rows.size(); ++i) {
        REQUIRE(from_file.rows[i].primary_1.sec == in_memory.rows[i].primary_1.sec);
        REQUIRE(from_file.rows[i].alternate.ok == in_memory.rows[i].alternate.ok);
      }
    }
  }
  const auto big = read_trace_file((dir / "f.jsonl").string());
  CHECK(big.rows.size() == 50002);
  CHECK(big.error_count == 1);
  CHECK_FALSE(big.rows.back().alternate.ok);
  CHECK(read_trace_file((dir / "f.csv").string()).error_count == 1);
  CHECK_THROWS_WITH(read_trace_file((dir / "missing.jsonl").string()),
                    Catch::Contains("cannot open the trace file"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the fast decimal path reads the same doubles as the general number reader",
          "[experiments][trace]") {
  // Lines in canonical order take the fast path; the same numbers with an exponent take from_chars.
  Rng rng(77);
  for (int i = 0; i < 2000; ++i) {
    const double v = std::floor(rng.uniform() * 1e9) / std::pow(10.0, static_cast<double>(rng.between(0, 9)));
    const std::string plain = fmt_number(v);
    const std::string with_exp = plain + "e0";
    auto line = [](const std::string& n) {
      return "{\"primary_1\":{\"sec\":" + n +
             ",\"ok\":true},\"primary_2\":{\"sec\":1,\"ok\":true},\"alternate\":{\"sec\":1,\"ok\":true}}";
    };
    const auto a = parse_trace(line(plain), "a");
    const auto b = parse_trace(line(with_exp), "b");
    REQUIRE(a.rows.size() == 1);
    REQUIRE(b.rows.size() == 1);
    REQUIRE(a.rows[0].primary_1.sec == b.rows[0].primary_1.sec);
  }
  // The writers' shape (1-2 integer digits, 3 decimals) has a fixed-offset path of its own; the
  // shapes next to it (3 integer digits, 2 or 4 decimals, a leading zero, an exponent) do not.
  for (int i = 0; i < 3000; ++i) {
    const auto digits = static_cast<int>(rng.between(0, 6));
    const double v = std::floor(rng.uniform() * std::pow(10.0, static_cast<double>(digits)));
    char plain[64];
    std::snprintf(plain, sizeof plain, "%.*f", static_cast<int>(rng.between(2, 4)), v / 1000);
    const std::string text = i % 10 == 0 ? "0" + std::string(plain) : std::string(plain);
    auto line = [](const std::string& n) {
      return "{\"primary_1\":{\"sec\":1,\"ok\":true},\"primary_2\":{\"sec\":" + n +
             ",\"ok\":true},\"alternate\":{\"sec\":1,\"ok\":true}}";
    };
    const auto a = parse_trace(line(text), "a");
    const auto b = parse_trace(line(text + "e0"), "b");
    INFO(text);
    REQUIRE(a.rows.size() == 1);
    REQUIRE(b.rows.size() == 1);
    REQUIRE(a.rows[0].primary_2.sec == b.rows[0].primary_2.sec);
  }
}
