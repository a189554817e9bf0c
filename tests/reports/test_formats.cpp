#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>

#include "helpers.hpp"
#include "llmchaos/reports/reports.hpp"
#include "sample_run.hpp"

using namespace llmchaos;
using test_helpers::read_file;
using test_helpers::ScratchDir;

TEST_CASE("the format table lists junit, json, markdown and html, each with its own file name", "[reports]") {
  std::set<std::string_view> names, files;
  for (const auto& f : reports::formats()) {
    names.insert(f.name);
    files.insert(f.file_name);
    REQUIRE(f.write != nullptr);
    CHECK(reports::find_format(f.name) == &f);
  }
  CHECK(names == std::set<std::string_view>{"junit", "json", "markdown", "html"});
  CHECK(files.size() == names.size());
  CHECK(reports::find_format("pdf") == nullptr);
}

TEST_CASE("write_report creates missing parent directories and leaves no temporary file behind",
          "[reports]") {
  ScratchDir dir("mkdir");
  const auto run = sample::run();
  const auto target = dir.path() / "a" / "b" / "junit.xml";
  reports::write_report(*reports::find_format("junit"), run, target.string());
  CHECK(read_file(target) == reports::render(*reports::find_format("junit"), run));
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(target.parent_path())) {
    CHECK(e.path().filename() == "junit.xml");
    ++entries;
  }
  CHECK(entries == 1);
}

TEST_CASE("write_report replaces an existing report whole", "[reports]") {
  ScratchDir dir("replace");
  const auto target = dir.path() / "report.md";
  {
    std::ofstream old(target);
    old << std::string(100000, 'x');  // longer than the new report: nothing of it may remain
  }
  const auto run = sample::run();
  reports::write_report(*reports::find_format("markdown"), run, target.string());
  CHECK(read_file(target) == reports::render(*reports::find_format("markdown"), run));
}

TEST_CASE("write_report names the path when it cannot write", "[reports]") {
  ScratchDir dir("error");
  const auto blocker = dir.path() / "not-a-dir";
  std::ofstream(blocker) << "a file where a directory should be";
  const auto target = (blocker / "report.json").string();
  try {
    reports::write_report(*reports::find_format("json"), sample::run(), target);
    FAIL("write_report should have thrown");
  } catch (const std::runtime_error& e) {
    CHECK_THAT(e.what(), Catch::Contains(target));
  }
}

TEST_CASE("a writer that throws leaves no file and the error names the path", "[reports]") {
  ScratchDir dir("throw");
  const reports::Format broken{"broken", "broken.txt",
                               [](const harness::RunResult&, const reports::Options&, std::ostream& out) {
                                 out << "half a report";
                                 throw std::runtime_error("writer gave up");
                               }};
  const auto target = (dir.path() / "broken.txt").string();
  try {
    reports::write_report(broken, sample::run(), target);
    FAIL("write_report should have thrown");
  } catch (const std::runtime_error& e) {
    CHECK_THAT(e.what(), Catch::Contains(target) && Catch::Contains("writer gave up"));
  }
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("every format renders a run with no cases", "[reports]") {
  harness::RunResult empty;
  for (const auto& f : reports::formats()) CHECK_FALSE(reports::render(f, empty).empty());
}

// Hidden (run by hand): writes the four reports of the sample run into $LLMCHAOS_REPORTS_SAMPLE_DIR, to
// look at them (e.g. the HTML page in a headless browser).
TEST_CASE("write the sample reports for a person to look at", "[.sample]") {
  const char* dir = std::getenv("LLMCHAOS_REPORTS_SAMPLE_DIR");
  REQUIRE(dir != nullptr);
  for (const auto& f : reports::formats()) {
    const auto path = std::filesystem::path(dir) / f.file_name;
    reports::write_report(f, sample::run(), path.string());
    CHECK(std::filesystem::file_size(path) > 0);
  }
}
