// SPEC 3 rule 0 in the harness, on literal histories: the checker derives `resume` from the ledger (the
// next attempt re-reads the stored response: resume_of), a resume is no second commit, its answer is the
// created response's canonical text; the spec model (the independent oracle) resumes a cut background
// stream when an attempt and the time are left, and judges a failed resume committed.
#include <catch2/catch.hpp>

#include "builders.hpp"
#include "llmchaos/harness/spec_model.hpp"

using namespace llmchaos;
using namespace llmchaos::harness;
using namespace llmchaos::harness::test;

namespace {

// Primary on the responses dialect, a background workflow, a streamed request.
Case background_case(Action expect) {
  Case c = make_case(expect);
  c.script.routes["primary"].dialect = Dialect::responses;
  c.policy.workflow.background = true;
  c.policy.routes["primary"].expected_latency_ms = 300;
  c.request.stream = true;
  return c;
}

// The create, cut after 2 content events (committed: tokens were sent).
LedgerEntry cut_create() {
  auto e = entry(1, "primary", 0, FaultKind::stream_cut, 200, 0, 10, AttemptOutcome::cut, true);
  e.dialect = Dialect::responses;
  e.stream = true;
  e.background = true;
  e.events_sent = 2;
  e.path = "/v1/responses";
  return e;
}

// The resume of entry 1 from sequence N+1.
LedgerEntry resume_of_1(std::uint64_t seq, int attempt, FaultKind fault = FaultKind::ok, int status = 200) {
  auto e = entry(seq, "primary", attempt, fault, status, 20, 30);
  e.dialect = Dialect::responses;
  e.stream = true;
  e.resume_of = 1;
  e.starting_after = 5;
  e.events_sent = status == 200 ? 4 : 0;
  e.path = "/v1/responses/resp_1?stream=true&starting_after=5";
  return e;
}

}  // namespace

TEST_CASE("checker: the attempt after a cut that re-reads the stored response is a resume by the ledger",
          "[checker][resume]") {
  auto c = background_case(Action::resume);
  auto h = history({cut_create(), resume_of_1(2, 1)},
                   log({attempt(0, "primary", Owner::transient), attempt(1, "primary")},
                       {point(0, "primary", Action::resume, 0)}, Outcome::retry_recovery));
  auto r = check_case(c, h, {});
  CHECK(r.verdict == Verdict::pass);
  REQUIRE(r.points.size() == 1);
  CHECK(r.points[0].from_log == Action::resume);
  CHECK(r.points[0].from_ledger == Action::resume);
  const auto* dup = find_check(r, "no_duplicate_commit");
  REQUIRE(dup);
  CHECK(dup->ok);  // the resume re-reads the response: no second commit

  // Without a decision log (an outside driver), the ledger alone says resume.
  h.has_decision_log = false;
  r = check_case(c, h, {});
  REQUIRE(r.points.size() == 1);
  CHECK(r.observed == Action::resume);
  CHECK(r.verdict == Verdict::pass);
}

TEST_CASE("checker: a replay of the cut request is a retry by the ledger and a duplicate commit",
          "[checker][resume]") {
  auto c = background_case(Action::resume);
  auto again = entry(2, "primary", 1, FaultKind::ok, 200, 20, 30);
  again.dialect = Dialect::responses;
  auto h =
      history({cut_create(), again}, log({attempt(0, "primary", Owner::transient), attempt(1, "primary")},
                                         {point(0, "primary", Action::resume, 0)}, Outcome::retry_recovery));
  auto r = check_case(c, h, {});
  CHECK(r.verdict == Verdict::fail);
  REQUIRE(r.points.size() == 1);
  CHECK(r.points[0].from_ledger == Action::retry);  // the log's resume disagrees
  const auto* dup = find_check(r, "no_duplicate_commit");
  REQUIRE(dup);
  CHECK_FALSE(dup->ok);
}

TEST_CASE("checker: after a resume that answered 500, the next resume is a retry of it, not a new resume",
          "[checker][resume]") {
  auto c = background_case(Action::resume);
  auto h = history({cut_create(), resume_of_1(2, 1, FaultKind::server_500, 500), resume_of_1(3, 2)},
                   log({attempt(0, "primary", Owner::transient), attempt(1, "primary", Owner::unknown),
                        attempt(2, "primary")},
                       {point(0, "primary", Action::resume, 0), point(1, "primary", Action::retry)},
                       Outcome::retry_recovery));
  auto r = check_case(c, h, {});
  REQUIRE(r.points.size() == 2);
  CHECK(r.points[0].from_ledger == Action::resume);
  CHECK(r.points[1].from_ledger == Action::retry);
}

TEST_CASE("checker: a resumed answer is checked against the created response's canonical text",
          "[checker][resume]") {
  auto c = background_case(Action::resume);
  c.checks.no_truncated_success = true;
  mock::Step cut;
  cut.fault = FaultKind::stream_cut;
  cut.text = "the created text";
  c.script.routes["primary"].steps = {cut};  // the resume takes `then` (ok, no text of its own)
  auto h = history(
      {cut_create(), resume_of_1(2, 1)},
      log({attempt(0, "primary", Owner::transient), attempt(1, "primary")},
          {point(0, "primary", Action::resume, 0)}, Outcome::retry_recovery, "primary", "the created text"));
  auto r = check_case(c, h, {});
  const auto* t = find_check(r, "no_truncated_success");
  REQUIRE(t);
  CHECK(t->ok);
}

TEST_CASE("spec model: rule 0 resumes a cut background stream when an attempt and the time are left",
          "[spec_model][resume]") {
  auto c = background_case(Action::resume);
  auto h = history({cut_create(), resume_of_1(2, 1)}, log({}, {}, Outcome::retry_recovery));
  auto points = spec_points(c, h, 1);
  REQUIRE(points.size() == 1);
  REQUIRE(points[0].action);
  CHECK(*points[0].action == Action::resume);
  CHECK(points[0].rule == 0);

  // No attempt left: rule 2 (tokens were visible).
  c.policy.workflow.max_total_attempts = 1;
  points = spec_points(c, history({cut_create()}, log({}, {}, Outcome::fail_closed)), 1);
  REQUIRE(points.size() == 1);
  CHECK(*points[0].action == Action::fail_closed);
  CHECK(points[0].rule == 2);

  // Too little time for the resume's expected latency: rule 2.
  c.policy.workflow.max_total_attempts = 3;
  c.policy.workflow.max_elapsed_ms = 309;  // 10 ms spent, 299 left < 300
  points = spec_points(c, history({cut_create()}, log({}, {}, Outcome::fail_closed)), 1);
  CHECK(*points[0].action == Action::fail_closed);
  c.policy.workflow.max_elapsed_ms = 310;  // exactly 300 left
  points = spec_points(c, history({cut_create()}, log({}, {}, Outcome::fail_closed)), 1);
  CHECK(*points[0].action == Action::resume);

  // Not a background workflow: nothing stored, rule 2.
  c.policy.workflow.background = false;
  points = spec_points(c, history({cut_create()}, log({}, {}, Outcome::fail_closed)), 1);
  CHECK(*points[0].action == Action::fail_closed);
}

TEST_CASE("spec model: a resume that fails without a cut is committed by the tokens shown before it (rule 2)",
          "[spec_model][resume]") {
  auto c = background_case(Action::resume);
  c.policy.workflow.queue_allowed = true;  // a bare 500 of a fresh request would queue (rule 3)
  auto h = history({cut_create(), resume_of_1(2, 1, FaultKind::server_500, 500)},
                   log({}, {}, Outcome::fail_closed));
  const auto points = spec_points(c, h, 1);
  REQUIRE(points.size() == 2);
  CHECK(*points[0].action == Action::resume);
  CHECK(points[1].commit == CommitState::committed);
  CHECK(*points[1].action == Action::fail_closed);
  CHECK(points[1].rule == 2);
}
