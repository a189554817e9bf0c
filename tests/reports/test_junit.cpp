#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "helpers.hpp"
#include "llmchaos/reports/reports.hpp"
#include "mini_xml.hpp"
#include "sample_run.hpp"

using namespace llmchaos;
using test_helpers::count;
using test_helpers::read_file;
using test_helpers::ScratchDir;

namespace {

std::string junit(const harness::RunResult& run) {
  return reports::render(*reports::find_format("junit"), run);
}

const mini_xml::Element* testcase_named(const mini_xml::Element& root, const std::string& name) {
  for (const auto* tc : root.all("testcase"))
    if (tc->attr("name") == name) return tc;
  return nullptr;
}

}  // namespace

TEST_CASE("JUnit report is well-formed XML with one testcase per case and the run's counts",
          "[reports][junit]") {
  const auto run = sample::run();
  const auto root = mini_xml::parse(junit(run));
  REQUIRE(root->name == "testsuites");
  CHECK(root->attr("tests") == std::to_string(run.cases.size()));
  CHECK(root->attr("failures") == std::to_string(run.failed()));
  CHECK(root->attr("errors") == std::to_string(run.unknown()));
  CHECK(root->all("testcase").size() == run.cases.size());
  CHECK(root->all("failure").size() == static_cast<std::size_t>(run.failed()));
  CHECK(root->all("error").size() == static_cast<std::size_t>(run.unknown()));

  // One suite per folder; each suite's counts add up to its own testcases.
  std::set<std::string> folders;
  for (const auto& c : run.cases) folders.insert(c.folder.empty() ? "cases" : c.folder);
  const auto suites = root->all("testsuite");
  CHECK(suites.size() == folders.size());
  std::size_t total = 0;
  for (const auto* s : suites) {
    const auto cases = s->all("testcase");
    CHECK(s->attr("tests") == std::to_string(cases.size()));
    CHECK(s->attr("failures") == std::to_string(s->all("failure").size()));
    CHECK(s->attr("errors") == std::to_string(s->all("error").size()));
    for (const auto* tc : cases) CHECK(tc->attr("classname") == s->attr("name"));
    total += cases.size();
  }
  CHECK(total == run.cases.size());
}

TEST_CASE("JUnit failure carries expected vs observed and the attempt timeline", "[reports][junit]") {
  const auto run = sample::run();
  const auto failed = sample::retry_fail();
  const auto root = mini_xml::parse(junit(run));
  const auto* tc = testcase_named(*root, failed.name);
  REQUIRE(tc != nullptr);
  CHECK(tc->attr("classname") == failed.folder);
  const auto failures = tc->all("failure");
  REQUIRE(failures.size() == 1);
  CHECK_THAT(failures[0]->attr("message"), Catch::Contains("expected queue, observed retry"));
  CHECK_THAT(failures[0]->attr("message"), Catch::Contains("action_agreement"));
  const auto& text = failures[0]->text;
  CHECK_THAT(text, Catch::Contains("point 2: log says retry, ledger says fallback"));
  // Every attempt of the timeline is there, with the action at each failure point.
  // Numbered as the case's own attempts, 1, 2, ...
  for (std::size_t k = 1; k <= failed.logs[0].attempts.size(); ++k)
    CHECK_THAT(text, Catch::Contains("attempt " + std::to_string(k) + " "));
  CHECK(count(text, "point 1: retry -> primary") == 1);
  CHECK(count(text, "point 2: retry -> primary") == 1);
  CHECK_THAT(text, Catch::Contains("mock ledger (3 attempts)"));
}

TEST_CASE("JUnit reports an unknown verdict as an error, not a failure", "[reports][junit]") {
  const auto run = sample::run();
  const auto hang = sample::hang_unknown();
  const auto root = mini_xml::parse(junit(run));
  const auto* tc = testcase_named(*root, hang.name);
  REQUIRE(tc != nullptr);
  CHECK(tc->all("failure").empty());
  const auto errors = tc->all("error");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0]->attr("type") == "hang");
  CHECK(errors[0]->attr("message") == "unknown: hang");
  CHECK_THAT(errors[0]->text, Catch::Contains("post_commit_timeout"));
  CHECK_THAT(errors[0]->text, Catch::Contains("held, still open when the case ended"));
}

TEST_CASE("JUnit passing cases keep their timeline in system-out", "[reports][junit]") {
  const auto pass = sample::fallback_pass();
  const auto root = mini_xml::parse(junit(sample::run()));
  const auto* tc = testcase_named(*root, pass.name);
  REQUIRE(tc != nullptr);
  CHECK(tc->all("failure").empty());
  CHECK(tc->all("error").empty());
  const auto out = tc->all("system-out");
  REQUIRE(out.size() == 1);
  CHECK_THAT(out[0]->text, Catch::Contains("point 1: fallback -> backup"));
}

TEST_CASE("JUnit properties carry seed, driver, time scale and policy", "[reports][junit]") {
  const auto run = sample::run();
  const auto root = mini_xml::parse(junit(run));
  for (const auto* suite : root->all("testsuite")) {
    std::map<std::string, std::string> props;
    for (const auto* p : suite->all("property")) props[p->attr("name")] = p->attr("value");
    CHECK(props["seed"] == std::to_string(run.seed));
    CHECK(props["driver"] == run.driver);
    CHECK(std::stod(props["time_scale"]) == Approx(run.time_scale));
    CHECK(props.count("policy") == 1);
  }
  const auto* staging = root->all("testsuite").front();
  REQUIRE(staging->attr("name") == "staging");
  for (const auto* p : staging->all("property"))
    if (p->attr("name") == "policy") CHECK(p->attr("value") == sample::fallback_pass().policy_name);
}

TEST_CASE("JUnit escapes markup and replaces characters XML 1.0 forbids", "[reports][junit]") {
  auto run = sample::run();
  auto& c = run.cases[1];
  c.name =
      std::string("a <b> & \"c\" 'd' \x01\x1f bell\x07 ") + "\xff" + " noncharacter \xEF\xBF\xBE tab\tend";
  c.checks[0].message = "line one\nline two ]]> <![CDATA[ not a section";
  const auto xml = junit(run);
  const auto root = mini_xml::parse(xml);  // throws on anything not well-formed
  const auto* tc = testcase_named(*root,
                                  "a <b> & \"c\" 'd' \\x01\\x1f bell\\x07 \xEF\xBF\xBD noncharacter "
                                  "\xEF\xBF\xBD tab\tend");  // a tab sent as &#9; survives normalisation
  REQUIRE(tc != nullptr);
  const auto failures = tc->all("failure");
  REQUIRE(failures.size() == 1);
  CHECK_THAT(failures[0]->text, Catch::Contains("line one\nline two ]]> <![CDATA[ not a section"));
  CHECK_THAT(xml, Catch::Contains("tab&#9;end\""));  // in an attribute a tab must go out as a reference
}

TEST_CASE("JUnit validates against the junit-10 schema shape (xmllint)", "[reports][junit]") {
  if (std::system("command -v xmllint >/dev/null 2>&1") != 0) {
    WARN("xmllint not installed (Debian package libxml2-utils): schema validation skipped");
    return;
  }
  const auto xsd = test_helpers::source_dir() / "tests" / "reports" / "junit-10.xsd";
  REQUIRE(std::filesystem::exists(xsd));
  ScratchDir dir("xsd");
  auto hostile = sample::run();
  hostile.cases[0].name = "hostile \x02 <name> & more";
  for (const auto& run : {sample::run(), hostile, harness::RunResult{}}) {
    const auto file = dir.path() / "junit.xml";
    reports::write_report(*reports::find_format("junit"), run, file.string());
    const auto log = dir.path() / "xmllint.log";
    const std::string cmd = "xmllint --noout --schema '" + xsd.string() + "' '" + file.string() + "' > '" +
                            log.string() + "' 2>&1";
    const int rc = std::system(cmd.c_str());
    INFO(read_file(log));
    CHECK(rc == 0);
  }
}
