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

TEST_CASE("HTML holds the action matrix with a row per case and a timeline per case", "[reports][html]") {
  const auto run = sample::run();
  const auto page = html(run);
  CHECK(count(page, "<table class=\"matrix\">") >= 1);
  CHECK(count(page, "<tr data-verdict=\"") == run.cases.size());
  CHECK(count(page, "<article class=\"case ") == run.cases.size());
  CHECK(count(page, "<svg class=\"timeline\"") == run.cases.size());
  for (std::size_t i = 0; i < run.cases.size(); ++i) {
    CHECK_THAT(page, Catch::Contains("href=\"#case-" + std::to_string(i) + "\""));
    CHECK_THAT(page, Catch::Contains("id=\"case-" + std::to_string(i) + "\""));
  }
  // The matrix cell of the failed case is marked as a mismatch, the unknown one as unknown.
  CHECK(count(page, "<td class=\"mismatch\">") == static_cast<std::size_t>(run.failed()));
  CHECK(count(page, "<td class=\"unk\">") == static_cast<std::size_t>(run.unknown()));
  // The metric split: a tile per outcome.
  for (const auto& [o, name] : enum_names<Outcome>::table)
    CHECK_THAT(page, Catch::Contains("border-top-color:var(--" + std::string(name) + ")"));
}

TEST_CASE("HTML timelines draw one bar per attempt and mark each failure point with its action",
          "[reports][html]") {
  const auto run = sample::run();
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
  CHECK(count(page, "<rect class=\"bar ") == bars);
  CHECK(count(page, "<g class=\"mark x-") == points);
  CHECK(count(page, "<g class=\"mark x-fallback\">") == fallbacks);
  // A sequence has one row per request, labelled with its number; a redelivery says so.
  CHECK_THAT(page, Catch::Contains(">request 5</text>"));
  CHECK_THAT(page, Catch::Contains(">request 1 · redelivery 1</text>"));
}

TEST_CASE("HTML escapes case text so it cannot inject markup or fetch anything", "[reports][html]") {
  auto run = sample::run();
  run.cases[0].name = "<script>alert(1)</script><img src=https://evil.example/x.png>";
  run.cases[0].checks[0].message = "\"><link rel=stylesheet href=//evil.example/a.css>";
  run.cases[0].logs[0].attempts[0].reason = "</title></svg><iframe src=http://evil.example>";
  const auto page = html(run);
  CHECK_FALSE(loads_anything(page));
  CHECK(page.find("<script>alert") == std::string::npos);
  CHECK(page.find("<img") == std::string::npos);
  CHECK_THAT(page, Catch::Contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
}
