// Paths named by remote callers kept inside their root (core/confined_path.hpp), and the ledger's
// target without credentials (core/redact.hpp).
#include <catch2/catch.hpp>
#include <filesystem>

#include "cli_run.hpp"
#include "llmchaos/core/confined_path.hpp"
#include "llmchaos/core/redact.hpp"

using namespace llmchaos;
namespace fs = std::filesystem;

TEST_CASE("confined_path: relative below the root, absolute only inside it, no climbing out", "[core]") {
  const fs::path root = "/srv/cases";
  CHECK(confined_path(root, "a.toml") == fs::path("/srv/cases/a.toml"));
  CHECK(confined_path(root, "sub/../a.toml") == fs::path("/srv/cases/a.toml"));
  CHECK(confined_path(root, "/srv/cases/sub/a.toml") == fs::path("/srv/cases/sub/a.toml"));
  CHECK(confined_path(root, ".") == fs::path("/srv/cases/"));
  CHECK_FALSE(confined_path(root, "/etc/passwd"));
  CHECK_FALSE(confined_path(root, "../x.toml"));
  CHECK_FALSE(confined_path(root, "sub/../../x.toml"));
  CHECK_FALSE(confined_path(root, "/srv/cases-other/a.toml"));  // a sibling sharing the prefix
  CHECK_FALSE(confined_path(root, "/srv"));
}

TEST_CASE("confined_existing_path: a symbolic link out of the root is outside", "[core]") {
  test::TempDir dir("confined");
  fs::create_directories(dir.path / "root");
  fs::create_directories(dir.path / "outside");
  fs::create_directory_symlink(dir.path / "outside", dir.path / "root" / "escape");
  CHECK(confined_existing_path(dir.path / "root", "a.toml"));
  CHECK(confined_existing_path(dir.path / "root", "new/folder"));  // need not exist yet
  CHECK_FALSE(confined_existing_path(dir.path / "root", "escape/a.toml"));
  CHECK_FALSE(confined_existing_path(dir.path / "root", (dir.path / "outside").string()));
}

TEST_CASE("without_credentials: a credential in the query is replaced, the rest kept as it was", "[core]") {
  CHECK(without_credentials("/v1beta/models/m:generateContent") == "/v1beta/models/m:generateContent");
  CHECK(without_credentials("/v1beta/models/m:streamGenerateContent?alt=sse&key=AIzaSECRET") ==
        "/v1beta/models/m:streamGenerateContent?alt=sse&key=REDACTED");
  CHECK(without_credentials("/x?KEY=s&api-key=t&Api_Key=u&apikey=v&x-api-key=w&access_token=y") ==
        "/x?KEY=REDACTED&api-key=REDACTED&Api_Key=REDACTED&apikey=REDACTED&x-api-key=REDACTED&access_token="
        "REDACTED");
  CHECK(without_credentials("/x?monkey=1&keys=2&key") == "/x?monkey=1&keys=2&key");
  CHECK(without_credentials("/x?") == "/x?");
  CHECK(without_credentials("/x?a=1&") == "/x?a=1&");
}
