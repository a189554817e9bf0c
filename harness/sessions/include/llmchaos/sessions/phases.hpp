#pragma once
// The session API's decisions, each a pure function over plain data (session_api.hpp does the I/O):
// which endpoint a request names, what a create or finish body says, the JSON of a session, the judging
// of what the caller saw over the ledger, the verdict's JSON, which sessions expired.
#include <boost/json/value.hpp>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "llmchaos/core/ledger.hpp"
#include "llmchaos/harness/case.hpp"
#include "llmchaos/harness/checker.hpp"
#include "llmchaos/harness/exec_contract.hpp"
#include "llmchaos/results/result.hpp"

namespace llmchaos::sessions {

// ---- the endpoint ----
enum class Op { create, show, finish, probe, end, list, reports };
struct Call {
  Op op = Op::show;
  std::string id;  // empty for create and list
};
// An error the API answers with: the status and the message of {"error": ...} (and more headers).
struct ApiError {
  int status = 400;
  std::string message;
  std::vector<std::pair<std::string, std::string>> headers = {};
};
// `path` below /__llmchaos/ ("sessions", "sessions/ID", "sessions/ID/finish", "sessions/ID/alive",
// "sessions/reports"):
// the call, or 404 (no such endpoint) / 405 (another method on a known one).
std::variant<Call, ApiError> route_call(std::string_view method, std::string_view path);

// ---- create ----
// Where a create body's case comes from: TOML text (any body that is not a JSON object), or
// {"case_path": "..."} (a path as `serve` sees it: relative to its working directory).
struct CaseText {
  std::string text;
};
struct CasePath {
  std::string path;
};
using CaseSource = std::variant<CaseText, CasePath>;
std::variant<CaseSource, ApiError> read_create_body(std::string_view body);

// The pseudo file name errors of a case sent as TOML text name (`<session>:3:9: ...`).
inline constexpr std::string_view text_source_name = "<session>";

// The 201 body: {"id", "namespace", "case", "routes": {NAME: {"base_url", "dialect"}}, "request": {...},
// "policy": {...}, "primary", "fallback", "time_scale", "requests", "alive_after", ...}.
boost::json::object session_json(std::string_view id, std::string_view ns, const harness::Case& c,
                                 const harness::CaseFacts& facts, const std::string& not_run);

// ---- finish ----
// What the caller saw: one contract object per request (a sequence: an array, in order; a case of one
// request: the object, or an array of one). With the alive_after probe asked for (/alive), one more
// object: the probe's. Each is the exec contract's last line (an "outcome" is required). The objects,
// serialised, or 400 naming what is wrong.
std::variant<std::vector<std::string>, ApiError> read_seen(std::string_view body, int expected_count);

// The judging of one session, as `run --driver exec` judges a case: `history` holds the ledger of the
// case's requests (collect_ledger) and the requests' records with their operation ids; `seen` one
// contract line per request (then the probe's, when `probe` is set: its attempts in `probe_ledger`).
// Each request's attempts are the ledger entries the checker gives it (group_by_request: by
// Idempotency-Key, or every entry for a case of one request).
struct Judging {
  double time_scale = 1;
  std::optional<std::vector<LedgerEntry>> probe_ledger;  // the alive_after probe's attempts
};
harness::CaseResult judge(const harness::Case& c, harness::History history,
                          const std::vector<std::string>& seen, const Judging& judging);

// {"verdict", "case", "expected", "observed", "expected_outcome", "observed_outcome", "actions",
//  "checks": [{"name", "passed", "message"}], "timeline": [...], "attempts", "summary", "reason"}.
boost::json::object verdict_json(const harness::CaseResult& result);
// One line a test failure can show: `case "NAME" (FILE): fail: expected retry, observed fallback;
// action: ...; max_total_attempts: ...` (every failed check with its message).
std::string verdict_summary(const harness::CaseResult& result);

// ---- reports ----
// A reports body {"dir": "PATH"}: the folder, or 400.
std::variant<std::string, ApiError> read_reports_body(std::string_view body);
// The run the reports show: every judged session's last verdict, in the order they were first judged.
harness::RunResult judged_run(std::vector<harness::CaseResult> cases, double time_scale, std::uint64_t seed);

// ---- where the caller is, and where files may be ----
// The base URL the caller reaches the server at: `public_url` (serve --public-url) when set, else
// "http://" + the Host header the caller used (a port mapping's host port included) when it is a plain
// host[:port], else `fallback` (the server's own base URL).
std::string caller_base_url(std::string_view host_header, std::string_view public_url,
                            std::string_view fallback);

// (Which paths are inside a root: core/confined_path.hpp.) The 403 for a path outside its root: names the key
// and the root's flag, nothing about the file.
ApiError outside_root(std::string_view key, std::string_view root_flag);

// The refusal of a create beyond `max_sessions` open ones, or nullopt: 429 with a Retry-After of the
// seconds until the oldest open session expires (at least 1).
std::optional<ApiError> over_session_limit(std::size_t open, std::size_t max_sessions,
                                           double oldest_last_call_ms, double now_ms, double ttl_ms);

// ---- expiry ----
// The ids of the sessions whose last call is older than `ttl_ms` at `now_ms` (id -> last call).
std::vector<std::string> expired(const std::map<std::string, double>& last_call_ms, double now_ms,
                                 double ttl_ms);

}  // namespace llmchaos::sessions
