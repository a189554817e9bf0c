#pragma once
// `serve`'s session API (README.md beside this folder): a team's own test creates a session from a case
// (its scripts in a fresh namespace of the mock), calls the routes' base URLs with its own code, and
// finishes with what it saw; the checker judges that over the namespace's ledger as `run --driver exec`
// would. An admin extension of the mock (mock::AdminExtension): the mock knows nothing of cases.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmchaos/core/clock.hpp"
#include "llmchaos/harness/case.hpp"
#include "llmchaos/mockprovider/admin_extension.hpp"
#include "llmchaos/mockprovider/engine.hpp"
#include "llmchaos/results/result.hpp"
#include "llmchaos/sessions/phases.hpp"

namespace llmchaos::sessions {

struct SessionOptions {
  double time_scale = 1;      // the server's --time-scale (its engine plays the scripts at it)
  std::uint64_t seed = 0;     // the server's --seed: a case's draws come from (seed, case name), as in `run`
  double ttl_ms = 600'000;    // a session untouched this long is ended (--session-ttl)
  std::uint64_t id_salt = 0;  // mixed into the ids, so an id from an earlier server names nothing here
  std::size_t max_sessions = 1000;  // open at once (--max-sessions); one more create: 429 + Retry-After
  std::string public_url;           // the base URL routes are handed out at (--public-url); "": the Host
  // The folders callers' paths must stay inside (403 otherwise): a case_path and its policy file
  // (--cases-root), a reports dir (--reports-root); "" = not confined.
  std::string cases_root, reports_root;
};

class SessionApi final : public mock::AdminExtension {
 public:
  // `base_url` gives the mock's "http://HOST:PORT" (known once the server listens).
  SessionApi(mock::Engine& engine, Clock& clock, std::function<std::string()> base_url,
             SessionOptions options);
  ~SessionApi() override;
  bool handles(std::string_view path) const override;
  mock::AdminReply handle(const mock::RawRequest& request, std::string_view path) override;
  std::size_t live_sessions() const;

 private:
  struct Session;
  std::shared_ptr<Session> find(const std::string& id);
  void sweep();  // ends the sessions past their TTL
  mock::AdminReply create(const mock::RawRequest& request);
  harness::LoadResult load(const CaseSource& source, std::optional<ApiError>& refused) const;
  std::optional<ApiError> at_session_limit();
  mock::AdminReply show(Session& s);
  mock::AdminReply finish(Session& s, const mock::RawRequest& request);
  mock::AdminReply probe(Session& s);
  mock::AdminReply list();
  mock::AdminReply write_reports(const mock::RawRequest& request);
  void end(Session& s);

  mock::Engine& engine_;
  Clock& clock_;
  std::function<std::string()> base_url_;
  SessionOptions options_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Session>> sessions_;
  std::uint64_t created_ = 0;
  // Every judged session's last verdict (id, result), first-judged order, for the reports; at most
  // max_judged kept (the oldest dropped).
  std::vector<std::pair<std::string, harness::CaseResult>> judged_;
  static constexpr std::size_t max_judged = 10'000;
};

}  // namespace llmchaos::sessions
