#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <regex>

#include "helpers.hpp"
#include "llmchaos/reports/reports.hpp"
#include "sample_run.hpp"

using namespace llmchaos;
using test_helpers::count;

namespace {

std::string html(const harness::RunResult& run) {
  return reports::render(*reports::find_format("html"), run);
}

// Anything a browser would fetch: inside a tag, a src/href/srcset/action/poster/data/xlink:href
// attribute with a scheme or a protocol-relative URL, or a <link>/<iframe>/<object>/<embed>/<img>
// element; inside the style sheet, url() or @import. Text is escaped, so every '<' starts a real tag.
bool loads_anything(const std::string& page) {
  static const std::regex tag(R"(<[^>]*>)");
  static const std::regex fetch_attr(
      R"(\s(src|href|srcset|action|poster|data|xlink:href)\s*=\s*["']?\s*([a-z][a-z0-9+.-]*:|//))",
      std::regex::icase);
  static const std::regex fetch_tag(R"(^<(link|iframe|object|embed|img|frame|base)\b)", std::regex::icase);
  for (auto it = std::sregex_iterator(page.begin(), page.end(), tag); it != std::sregex_iterator(); ++it) {
    const std::string t = it->str();
    if (std::regex_search(t, fetch_attr) || std::regex_search(t, fetch_tag)) return true;
  }
  const auto style_begin = page.find("<style>"), style_end = page.find("</style>");
  const auto css = page.substr(style_begin, style_end - style_begin);
  return css.find("url(") != std::string::npos || css.find("@import") != std::string::npos;
}

}  // namespace

TEST_CASE("HTML is one self-contained page with no external reference", "[reports][html]") {
  const auto page = html(sample::run());
  CHECK_THAT(page, Catch::StartsWith("<!DOCTYPE html>"));
  CHECK(page.find("http://") == std::string::npos);
  CHECK(page.find("https://") == std::string::npos);
  CHECK_FALSE(loads_anything(page));
  CHECK(count(page, "<style>") == 1);
  CHECK(count(page, "<script>") == 1);  // inline, no src
}

// The run with every case failed: the page draws all of them in SVG up front.
// The page without its script (which holds the markup it draws with, as text).
static std::string drawn(const std::string& page) {
  return page.substr(0, page.rfind("<script>"));
}

static harness::RunResult all_failed(harness::RunResult run) {
  for (auto& c : run.cases)
    if (c.verdict == harness::Verdict::pass) c.verdict = harness::Verdict::fail;
  return run;
}

// A JSON block of the page: the list data-list="ID" (one array per case), or the table id="ID".
static boost::json::array block(const std::string& page, const std::string& open) {
  const auto begin = page.find(open);
  if (begin == std::string::npos) return {};
  const auto end = page.find("</script>", begin);
  return boost::json::parse(page.substr(begin + open.size(), end - begin - open.size())).as_array();
}
static boost::json::array passed_data(const std::string& page) {
  return block(page, "<script type=\"application/json\" data-list=\"passed\">");
}

// The page's tables: the lists name their strings and drawings by index.
struct Tables {
  boost::json::array strings, drawings;
  explicit Tables(const std::string& page)
      : strings(block(page, "<script type=\"application/json\" id=\"page-strings\">")),
        drawings(block(page, "<script type=\"application/json\" id=\"page-drawings\">")) {}
  std::string text(const boost::json::value& ref) const {
    return std::string(strings.at(ref.to_number<std::size_t>()).as_string());
  }
  // A tooltip: its parts' texts with " · " between them.
  std::string tooltip(const boost::json::value& parts) const {
    std::string out;
    for (const auto& k : parts.as_array()) out += (out.empty() ? "" : " · ") + text(k);
    return out;
  }
  const boost::json::array& drawing(const boost::json::value& ref) const {
    return drawings.at(ref.to_number<std::size_t>()).as_array();
  }
};

TEST_CASE("HTML puts failed and unknown cases first, each with its matrix row and timeline",
          "[reports][html]") {
  const auto run = sample::run();
  const auto page = html(run);
  const auto bad = static_cast<std::size_t>(run.failed() + run.unknown());
  CHECK(count(page, "<table class=\"matrix\">") >= 1);
  CHECK(count(page, "<tr data-verdict=\"") == bad);
  CHECK(count(page, "<article class=\"case ") == bad);
  CHECK(count(drawn(page), "<svg class=\"timeline\"") == bad);
  for (std::size_t i = 0; i < run.cases.size(); ++i) {
    if (run.cases[i].verdict == harness::Verdict::pass) continue;
    CHECK_THAT(page, Catch::Contains("href=\"#case-" + std::to_string(i) + "\""));
    CHECK_THAT(page, Catch::Contains("id=\"case-" + std::to_string(i) + "\""));
  }
  // Failed, then unknown, then the passing ones; the summary's cards link to each.
  const auto failed_at = page.find("<h2 id=\"failed\">"), unknown_at = page.find("<h2 id=\"unknown\">"),
             passed_at = page.find("<h2 id=\"passed\">");
  CHECK(failed_at < unknown_at);
  CHECK(unknown_at < passed_at);
  CHECK(passed_at != std::string::npos);
  for (const char* target : {"#failed", "#unknown", "#passed"})
    CHECK(
        std::regex_search(page, std::regex(std::string("<a class=\"tile [^\"]*\" href=\"") + target + "\"")));
  // The matrix cell of the failed case is marked as a mismatch, the unknown one as unknown.
  CHECK(count(drawn(page), "<td class=\"mismatch\">") == static_cast<std::size_t>(run.failed()));
  CHECK(count(drawn(page), "<td class=\"unk\">") == static_cast<std::size_t>(run.unknown()));
  // The metric split: a tile per outcome.
  for (const auto& [o, name] : enum_names<Outcome>::table)
    CHECK_THAT(page, Catch::Contains("border-top-color:var(--" + std::string(name) + ")"));
}

TEST_CASE("HTML lists passing cases as compact data, timelines drawn on demand", "[reports][html]") {
  const auto run = sample::run();
  const auto page = html(run);
  const auto data = passed_data(page);
  const Tables tables(page);
  REQUIRE(data.size() == static_cast<std::size_t>(run.passed()));
  std::size_t k = 0;
  for (std::size_t i = 0; i < run.cases.size(); ++i) {
    const auto& c = run.cases[i];
    if (c.verdict != harness::Verdict::pass) continue;
    const auto& row = data[k++].as_array();
    CHECK(row[0].to_number<std::size_t>() == i);
    CHECK(row[1].as_string() == c.name);
    CHECK(tables.text(row[3]) + std::string(row[4].as_string()) == c.file);
    CHECK(tables.text(row[5]) == c.policy_name);
    CHECK(tables.text(row[7]) == to_string(c.expected));
    CHECK(tables.text(row[8]) == to_string(c.observed));
    CHECK(row.size() == 13);  // no verdict or summary: passed
    // The drawing: a bar per attempt, a mark per failure point, as the SVG would draw them, each with
    // its tooltip.
    std::size_t attempts = 0, points = 0;
    for (const auto& log : c.logs) {
      attempts += log.attempts.size();
      points += log.failures.size();
    }
    const auto& d = tables.drawing(row[12]);
    CHECK(d[1].as_array().size() == attempts);
    CHECK(d[2].as_array().size() == points);
    for (const auto& bar : d[1].as_array())
      CHECK_THAT(tables.tooltip(bar.at(5)), Catch::StartsWith("attempt "));
    for (const auto& mark : d[2].as_array())
      CHECK_THAT(tables.tooltip(mark.at(5)),
                 Catch::StartsWith("point " + std::to_string(mark.at(2).as_int64())));
  }
  // The script draws them (and only it: no SVG of a passing case in the page).
  CHECK_THAT(page, Catch::Contains("function drawTimeline(d)"));
  CHECK_THAT(page, Catch::Contains("var G = {W: 960"));
}

TEST_CASE("HTML timelines draw one bar per attempt and mark each failure point with its action",
          "[reports][html]") {
  const auto run = all_failed(sample::run());
  const auto page = html(run);
  std::size_t bars = 0, points = 0, fallbacks = 0;
  for (const auto& c : run.cases) {
    if (c.logs.empty()) bars += c.ledger.size();  // drawn from the mock's ledger
    for (const auto& log : c.logs) {
      bars += log.attempts.size();
      points += log.failures.size();
      for (const auto& f : log.failures) fallbacks += f.action == Action::fallback;
    }
  }
  CHECK(count(drawn(page), "<rect class=\"bar ") == bars);
  CHECK(count(drawn(page), "<g class=\"mark x-") == points);
  CHECK(count(drawn(page), "<g class=\"mark x-fallback\">") == fallbacks);
  // A sequence has one row per request, labelled with its number; a redelivery says so.
  CHECK_THAT(page, Catch::Contains(">request 5</text>"));
  CHECK_THAT(page, Catch::Contains(">request 1 · redelivery 1</text>"));
}

TEST_CASE("every action has a mark colour: its legend swatch and its timeline marks are painted",
          "[reports][html]") {
  const auto page = html(sample::run());
  for (const auto& [a, name] : enum_names<Action>::table) {
    CAPTURE(name);
    const std::string n(name);
    CHECK_THAT(page, Catch::Contains("--x-" + n + ":#"));
    CHECK_THAT(page,
               Catch::Contains("svg .x-" + n + " circle,svg .x-" + n + " .act{fill:var(--x-" + n + ")}"));
  }
}

TEST_CASE("the timeline axis is in scripted time, with the real time beside it when scaled",
          "[reports][html]") {
  auto run = all_failed(sample::run());
  run.time_scale = 1;
  CHECK_THAT(html(run), !Catch::Contains("real time at --time-scale"));
  run.time_scale = 0.1;
  const auto page = html(run);
  CHECK_THAT(page, Catch::Contains("real time at --time-scale 0.1 beside it"));
  // A tick at 1 s scripted is 100 ms real.
  CHECK(std::regex_search(page, std::regex(R"(class="tick"[^>]*>[0-9.]+ s · [0-9.]+ ms</text>)")));
}

TEST_CASE("HTML escapes case text so it cannot inject markup or fetch anything", "[reports][html]") {
  auto run = sample::run();
  run.cases[0].name = "<script>alert(1)</script><img src=https://evil.example/x.png>";
  run.cases[0].checks[0].message = "\"><link rel=stylesheet href=//evil.example/a.css>";
  run.cases[0].logs[0].attempts[0].reason = "</title></svg><iframe src=http://evil.example>";
  REQUIRE(run.cases[0].verdict == harness::Verdict::pass);  // in the data block
  run.cases[1].name = run.cases[0].name;                    // failed: drawn in the page
  REQUIRE(run.cases[1].verdict == harness::Verdict::fail);
  const auto page = html(run);
  CHECK_FALSE(loads_anything(page));
  CHECK(page.find("<script>alert") == std::string::npos);
  CHECK(page.find("</script><img") == std::string::npos);
  // The data block holds no '<' at all (\u003c), so nothing in it can close the script or open a tag.
  const auto data_at = page.find("data-list=\"passed\">");
  REQUIRE(data_at != std::string::npos);
  const auto data = page.substr(data_at + 19, page.find("</script>", data_at) - data_at - 19);
  CHECK(data.find('<') == std::string::npos);
  const auto strings_at = page.find("id=\"page-strings\">");
  REQUIRE(strings_at != std::string::npos);
  CHECK(page.substr(strings_at + 19, page.find("</script>", strings_at) - strings_at - 19).find('<') ==
        std::string::npos);
  CHECK(passed_data(page).size() == static_cast<std::size_t>(run.passed()));
  CHECK(page.find("<img") == std::string::npos);
  CHECK_THAT(page, Catch::Contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
}

TEST_CASE("HTML draws the first failures in full and lists the rest as data, so a failing run stays small",
          "[reports][html]") {
  const auto sample_run = sample::run();
  harness::RunResult run = sample_run;
  run.cases.clear();
  run.baseline_changes.clear();
  const auto& failed = sample_run.cases[1];
  REQUIRE(failed.verdict == harness::Verdict::fail);
  for (int i = 0; i < 1000; ++i) {
    run.cases.push_back(failed);
    run.cases.back().name += " #" + std::to_string(i);
  }
  const auto page = html(run);
  const auto drawn_cards = count(drawn(page), "<article class=\"case ");
  CHECK(drawn_cards > 0);
  CHECK(drawn_cards < run.cases.size());
  const auto rest = block(page, "<script type=\"application/json\" data-list=\"failed-rest\">");
  const Tables tables(page);
  CHECK(drawn_cards + rest.size() == run.cases.size());
  CHECK(tables.text(rest[0].as_array()[13]) == "fail");
  // The same one-line reason the JSON report gives.
  const auto report = boost::json::parse(reports::render(*reports::find_format("json"), sample_run));
  CHECK(tables.text(rest[0].as_array()[14]) == report.at("cases").at(1).at("summary").as_string());
  // Their drawings are one and the same: said once.
  CHECK(tables.drawings.size() == 1);
  CHECK_THAT(page, Catch::Contains("<h2 id=\"failed\">Failed (1000)</h2>"));
}

TEST_CASE("HTML says what passing cases share once: each more one costs little beyond its own name",
          "[reports][html]") {
  const auto sample_run = sample::run();
  const auto& passed = sample_run.cases[0];
  REQUIRE(passed.verdict == harness::Verdict::pass);
  REQUIRE_FALSE(passed.logs.empty());
  const auto page_of = [&](int copies) {
    harness::RunResult run = sample_run;
    run.cases.clear();
    run.baseline_changes.clear();
    for (int i = 0; i < copies; ++i) {
      run.cases.push_back(passed);
      run.cases.back().name += " #" + std::to_string(i);
    }
    return html(run);
  };
  const auto one = page_of(1), many = page_of(1001);
  const Tables tables(many);
  CHECK(passed_data(many).size() == 1001);
  CHECK(tables.drawings.size() == 1);
  CHECK(tables.strings.size() == Tables(one).strings.size());
  // The index, name, file name and a dozen small indexes.
  const auto per_case = (many.size() - one.size()) / 1000;
  CAPTURE(per_case);
  CHECK(per_case < passed.name.size() + passed.file.size() + 50);
}
