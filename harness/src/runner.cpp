// The runner: the only part of the harness that does I/O (the mock, the driver, threads, time).
#include "llmchaos/harness/runner.hpp"

#include <fmt/format.h>
#include <fnmatch.h>
#include <toml++/toml.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <functional>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <thread>

#include "case_play.hpp"
#include "llmchaos/core/rng.hpp"
#include "llmchaos/core/toml_reader.hpp"
#include "llmchaos/harness/capabilities.hpp"
#include "llmchaos/harness/checker.hpp"
#include "llmchaos/mockprovider/server.hpp"

namespace llmchaos::harness {

// ---- suite ----

bool matches_filter(const Case& c, const std::vector<std::string>& filters) {
  if (filters.empty()) return true;
  for (const auto& f : filters) {
    if (std::find(c.tags.begin(), c.tags.end(), f) != c.tags.end()) return true;
    if (fnmatch(f.c_str(), c.name.c_str(), 0) == 0 || fnmatch(f.c_str(), c.file.c_str(), 0) == 0) return true;
  }
  return false;
}

std::vector<std::string> take_exact_time_cases(std::vector<Case>& cases) {
  std::vector<std::string> taken;
  std::erase_if(cases, [&](const Case& c) {
    if (c.exact_time) taken.push_back(c.name);
    return c.exact_time;
  });
  return taken;
}

SuiteLoad load_suite(const std::vector<std::string>& paths, const std::vector<std::string>& filters) {
  SuiteLoad out;
  std::vector<SuiteFile> files;
  try {
    files = expand_paths(paths);
  } catch (const SpecError& e) {
    out.errors.push_back(e);
    return out;
  }
  std::map<std::string, std::string> names;  // case name -> file
  for (const auto& f : files) {
    try {
      if (!is_case_document(parse_toml_file(f.path))) {
        ++out.skipped_policy_files;  // a shared policy file: checked when a case names it
        continue;
      }
    } catch (const SpecError& e) {
      out.errors.push_back(e);
      continue;
    }
    auto loaded = load_case_file(f.path, f.folder);
    out.errors.insert(out.errors.end(), loaded.errors.begin(), loaded.errors.end());
    if (!loaded.value) continue;
    auto [it, fresh] = names.emplace(loaded.value->name, f.path);
    if (!fresh) {
      out.errors.emplace_back(SourcePos{f.path, 1, 1}, fmt::format("name: \"{}\" is already the name of {}",
                                                                   loaded.value->name, it->second));
      continue;
    }
    if (matches_filter(*loaded.value, filters)) out.cases.push_back(std::move(*loaded.value));
  }
  return out;
}

std::uint64_t case_seed(std::uint64_t run_seed, std::string_view case_name) {
  return derive_seed(run_seed, case_name);
}

// ---- one case ----

namespace {

// What every case of a live run uses. Held by shared_ptr: a hung case's thread may outlive run_suite,
// and the mock server, the options and the clock must outlive it (the last holder frees them).
struct Shared {
  std::unique_ptr<mock::MockServer> mock;
  const Driver* driver = nullptr;
  RunOptions options;  // a copy: the caller's may be gone when an abandoned case thread ends
  SteadyClock clock;
};

}  // namespace

mock::Script healthy_script(const mock::Script& script) {
  mock::Script out = script;
  for (auto& [name, route] : out.routes) {
    route.steps.clear();
    route.then = FaultKind::ok;
  }
  return out;
}

CaseEnv case_env(const Case& c, const std::string& ns, const std::string& mock_base_url,
                 const RunOptions& options) {
  CaseEnv env;
  env.c = &c;
  env.ns = ns;
  env.mock_base_url = mock_base_url;
  for (const auto& [name, route] : c.script.routes)
    env.endpoints[name] =
        client::Endpoint{name, route.dialect, fmt::format("{}/{}/{}", mock_base_url, ns, name)};
  env.time_scale = options.time_scale;
  env.seed = case_seed(options.seed, c.name);
  env.deadline_real_ms = c.deadline_real_ms(options.time_scale, options.min_deadline_ms);
  return env;
}

void collect_ledger(History& h, mock::Engine& engine, const std::string& ns, Clock& clock,
                    const std::atomic<bool>& cancelled) {
  h.ledger = engine.ledger(ns);
  for (int i = 0;
       i < 200 && !cancelled &&
       std::any_of(h.ledger.begin(), h.ledger.end(), [](const LedgerEntry& e) { return !e.finished; });
       ++i) {
    clock.sleep_ms(5);
    h.ledger = engine.ledger(ns);
  }
  split_foreign(h);  // a forwarded drain, a health check: shown apart, never the requests' attempts
  h.side_effects = engine.side_effects(ns);
}

CaseResult unknown_result(const Case& c, const std::string& reason, const std::string& message,
                          std::vector<LedgerEntry> ledger) {
  History h;
  h.ledger = std::move(ledger);
  CaseResult r = check_case(c, h, CheckOptions{});
  r.verdict = Verdict::unknown;
  r.unknown_reason = reason;
  r.checks.insert(r.checks.begin(), CheckResult{"deadline", false, message});
  return r;
}

CaseResult not_applicable_result(const Case& c, const std::string& reason) {
  CaseResult r = check_case(c, History{}, CheckOptions{});
  r.verdict = Verdict::na;
  r.reason = reason;
  r.checks = {CheckResult{c.exact_time ? "exact_time" : "capabilities", true, reason}};
  return r;
}

namespace {

// One request of the case, recorded with its start and duration (ms since t0).
RequestRecord send_one(const Case& c, CaseSession& session, Clock& clock, double t0) {
  RequestRecord rec;
  rec.started_ms = clock.now_ms() - t0;
  rec.log = session.send(c.request);
  rec.wall_ms = clock.now_ms() - t0 - rec.started_ms;
  return rec;
}

// The case's requests at their times: one after another (each waits for the one before), or with
// `[sequence] overlap` each on a thread of its own from its time on (the clock decides how they
// interleave: at once on a real one, in turns by time on a virtual one).
void send_requests(const Case& c, CaseSession& session, Clock& clock, double t0, double scale,
                   const std::atomic<bool>& cancelled, History& h) {
  const double interval = c.sequence ? c.sequence->interval_ms * scale : 0;
  if (c.sequence && c.sequence->overlap) {
    std::vector<double> starts;
    for (int i = 0; i < c.request_count(); ++i)
      starts.push_back(std::max(0.0, t0 + i * interval - clock.now_ms()));
    h.requests.resize(starts.size());
    clock.run_overlapping(starts, [&](std::size_t i) {
      if (!cancelled) h.requests[i] = send_one(c, session, clock, t0);
    });
    return;
  }
  for (int i = 0; i < c.request_count() && !cancelled; ++i) {
    const double due = t0 + i * interval;
    if (const double now = clock.now_ms(); due > now) clock.sleep_ms(due - now);
    h.requests.push_back(send_one(c, session, clock, t0));
  }
}

}  // namespace

namespace detail {

Played play_case(const Case& c, const std::string& ns, const CaseWorld& world, const Driver& driver,
                 const RunOptions& options, const std::atomic<bool>& cancelled) {
  auto& engine = world.engine;
  auto& clock = world.clock;
  const double scale = options.time_scale;

  CaseEnv env = case_env(c, ns, world.base_url, options);
  env.clock = &clock;
  env.engine = &engine;
  env.make_transport = options.make_transport ? options.make_transport : live_transport();

  // The mock's draws for this case (slow latencies) from (--seed, case name): the same whatever --jobs
  // is, which namespace the case got, or what runs beside it; and the same as under --virtual-time.
  engine.install(ns, c.script, env.seed);
  const double t0 = clock.now_ms();
  auto session = driver.open(env, options.driver_options);

  Played played;
  History& h = played.history;
  send_requests(c, *session, clock, t0, scale, cancelled, h);
  // Queued requests are redelivered once; their attempts count in the same budget.
  if (!cancelled) {
    for (auto& again : session->drain()) {
      auto it = std::find_if(h.requests.begin(), h.requests.end(), [&](const RequestRecord& r) {
        return r.log.operation_id == again.operation_id;
      });
      if (it != h.requests.end()) it->redeliveries.push_back(std::move(again));
    }
  }
  // Asked after every delivery: a driver may know only then whether the target logged its decisions.
  h.has_decision_log = session->has_decision_log();
  h.wall_ms = clock.now_ms() - t0;
  // An attempt the client gave up on ends in the ledger once the mock sees the close, a moment after the
  // client moved on: wait for that (bounded), so the ledger says how each attempt ended ("held, client
  // gave up at N ms"), not "unfinished". An attempt still open after the wait really is.
  collect_ledger(h, engine, ns, clock, cancelled);

  if (c.checks.alive_after && !cancelled) {
    engine.install(ns, healthy_script(c.script),
                   env.seed);  // a fresh ledger; the stack keeps its breakers and pools
    RequestRecord rec;
    const double start = clock.now_ms();
    rec.log = session->send(c.request);
    rec.wall_ms = clock.now_ms() - start;
    h.alive = std::move(rec);
  }
  engine.remove(ns);
  played.output = session->output();
  return played;
}

}  // namespace detail

namespace {

CaseResult run_case(const Case& c, const std::string& ns, Shared& sh, const std::atomic<bool>& cancelled) {
  const detail::CaseWorld world{sh.mock->engine(), sh.clock, sh.mock->base_url()};
  auto played = detail::play_case(c, ns, world, *sh.driver, sh.options, cancelled);
  CheckOptions opt;
  opt.time_scale = sh.options.time_scale;
  auto result = check_case(c, played.history, opt);
  result.driver_output = std::move(played.output);
  return result;
}

// The system under test failed on its own although the provider served it (TargetFailure).
CaseResult target_failure_result(const Case& c, const TargetFailure& e, std::vector<LedgerEntry> ledger) {
  History h;
  h.ledger = std::move(ledger);
  CaseResult r = check_case(c, h, CheckOptions{});
  r.verdict = Verdict::fail;
  r.reason = e.reason;
  r.checks.insert(r.checks.begin(), CheckResult{"target_error", false, e.reason + ": " + e.what()});
  r.driver_output = e.output;
  return r;
}

// A case in its own virtual world (virtual_run.cpp); a throw is the case's unknown verdict.
CaseResult virtual_result(const Case& c, const RunOptions& options) {
  try {
    return run_case_virtual(c, options).result;
  } catch (const std::exception& e) {
    return unknown_result(c, fmt::format("crash: {}", e.what()), fmt::format("the case threw: {}", e.what()),
                          {});
  }
}

// Why a live run does not play a case ("" when it does): a capability the target declared it lacks,
// or a time boundary only a virtual clock can hit (`exact_time`).
std::string not_run_live(const Case& c, const std::optional<std::vector<std::string>>& capabilities) {
  if (c.exact_time) return std::string(exact_time_not_run);
  return missing_capability(c, capabilities);
}

// A case on a thread of its own, so a hung case can be abandoned while the run goes on.
struct CaseJob {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  std::atomic<bool> cancelled{false};
  std::optional<CaseResult> result;
};

std::string iso_now() {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

class Progress {
 public:
  Progress(const RunOptions& o, int total) : out_(o.progress), tty_(o.progress_tty), total_(total) {}
  void finished(const CaseResult& r) {
    if (!out_) return;
    std::lock_guard lock(mutex_);
    ++done_;
    if (r.verdict != Verdict::pass) ++bad_;
    if (tty_) {
      *out_ << fmt::format("\r\033[K[{}/{}] {} failed or unknown  {}", done_, total_, bad_,
                           r.name.substr(0, 60))
            << std::flush;
    } else {
      const auto why = r.verdict == Verdict::unknown ? " (" + r.unknown_reason + ")"
                       : !r.reason.empty()           ? " (" + r.reason + ")"
                                                     : std::string();
      *out_ << fmt::format("[{}/{}] {:7} {}{}\n", done_, total_, to_string(r.verdict), r.name, why)
            << std::flush;
    }
  }
  void end() {
    if (out_ && tty_) *out_ << "\r\033[K" << std::flush;
  }

 private:
  std::mutex mutex_;
  std::ostream* out_;
  bool tty_;
  int total_;
  int done_ = 0;
  int bad_ = 0;
};

}  // namespace

namespace {

// Phase 1: the driver, checked and prepared; its warnings and capabilities noted in the run.
std::pair<const Driver*, DriverOptions> prepare_driver(const RunOptions& options, RunResult& run) {
  const Driver* driver = find_driver(options.driver);
  if (!driver)
    throw std::invalid_argument(
        fmt::format("unknown driver \"{}\" (drivers: {})", options.driver, driver_names()));
  if (auto problem = driver->validate(options.driver_options); !problem.empty())
    throw std::invalid_argument(fmt::format("--driver {}: {}", options.driver, problem));
  if (options.virtual_time &&
      options.driver != "inproc")  // only a stack in this process talks through the virtual transport
    throw std::invalid_argument(
        fmt::format("--virtual-time drives the in-process stack (--driver inproc), not {}", options.driver));
  DriverOptions driver_options = options.driver_options;
  if (driver->prepare)
    if (auto problem = driver->prepare(driver_options, options.time_scale, run.warnings); !problem.empty())
      throw std::invalid_argument(fmt::format("--driver {}: {}", options.driver, problem));
  for (const auto& w : run.warnings)
    if (options.progress) *options.progress << "llmchaos run: warning: " << w << "\n";
  if (driver_options.capabilities) {
    std::string list;
    for (const auto& cap : *driver_options.capabilities) list += (list.empty() ? "" : ", ") + cap;
    run.settings.push_back(Setting{"capabilities", list.empty() ? "none" : list});
  }
  return {driver, std::move(driver_options)};
}

// The one pool of both modes: `jobs` workers (this thread one of them) take the cases in order.
void for_each_case(std::size_t count, int jobs, const std::function<void(std::size_t)>& play) {
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < count; i = next++) play(i);
  };
  std::vector<std::thread> pool;
  for (int k = 1; k < jobs; ++k) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

// A live run: one mock server for every case; each case on a thread of its own under its hard deadline,
// abandoned (its verdict unknown) when it hangs.
class LiveRun {
 public:
  LiveRun(const Driver* driver, const RunOptions& options, const DriverOptions& driver_options)
      : shared_(std::make_shared<Shared>()) {
    mock::ServerOptions so;
    so.time_scale = options.time_scale;
    so.threads = 2;
    shared_->mock = std::make_unique<mock::MockServer>(so);
    shared_->mock->start();
    shared_->driver = driver;
    shared_->options = options;
    shared_->options.driver_options = driver_options;
  }

  CaseResult play(const Case& kase, std::size_t index) {
    const auto& options = shared_->options;
    const auto& capabilities = options.driver_options.capabilities;
    if (kase.exact_time && options.driver == "inproc" && missing_capability(kase, capabilities).empty()) {
      // Only a virtual clock hits the case's boundary, and the in-process stack needs no socket:
      // play it on one inside the live run (issue 27) rather than report it n/a.
      auto r = virtual_result(kase, options);
      r.virtual_time = true;
      return r;
    }
    if (auto missing = not_run_live(kase, capabilities); !missing.empty())
      return not_applicable_result(kase, missing);
    if (kase.sequence && kase.sequence->overlap && !shared_->driver->overlapping_sends)
      return not_applicable_result(
          kase, fmt::format("its requests overlap ([sequence] overlap) and the {} driver sends one at a time",
                            shared_->driver->name));
    return play_on_thread(std::make_shared<const Case>(kase), fmt::format("case{}", index + 1));
  }

  // Stopping the mock cancels its holds, so abandoned cases can end; wait a little for them. Returns
  // how many were left running (detached: they still hold the shared state, freed by the last one).
  int finish() {
    shared_->mock->stop();
    int left = 0;
    for (auto& [t, job_ref] : abandoned_) {
      auto& job = job_ref;  // a lambda cannot capture a structured binding under clang 14 (the fuzz build)
      std::unique_lock lock(job->mutex);
      if (job->cv.wait_for(lock, std::chrono::seconds(3), [&job] { return job->done; })) {
        lock.unlock();
        t.join();
      } else {
        t.detach();
        ++left;
      }
    }
    return left;
  }

 private:
  static CaseResult verdict_of(const Case& c, const std::string& ns, Shared& sh,
                               const std::atomic<bool>& cancelled) {
    try {
      return run_case(c, ns, sh, cancelled);
    } catch (const UnknownVerdict& e) {  // the driver saw the system under test hang or crash
      auto r = unknown_result(c, e.reason, e.what(), sh.mock->engine().ledger(ns));
      r.driver_output = e.output;
      return r;
    } catch (const TargetFailure& e) {  // the target's own error after a healthy upstream answer
      return target_failure_result(c, e, sh.mock->engine().ledger(ns));
    } catch (const std::exception& e) {
      return unknown_result(c, fmt::format("crash: {}", e.what()),
                            fmt::format("the case threw: {}", e.what()), sh.mock->engine().ledger(ns));
    }
  }

  // The case thread may outlive this call (a hang): it owns its case and shares the run's state.
  CaseResult play_on_thread(std::shared_ptr<const Case> c, const std::string& ns) {
    auto job = std::make_shared<CaseJob>();
    std::thread t([job, c, ns, sh = shared_] {
      auto r = verdict_of(*c, ns, *sh, job->cancelled);
      std::lock_guard lock(job->mutex);
      job->result = std::move(r);
      job->done = true;
      job->cv.notify_all();
    });
    const auto& options = shared_->options;
    const double deadline = c->deadline_real_ms(options.time_scale, options.min_deadline_ms);
    std::unique_lock lock(job->mutex);
    const bool done = job->cv.wait_for(lock, std::chrono::duration<double, std::milli>(deadline),
                                       [&] { return job->done; });
    CaseResult r;
    if (done) {
      lock.unlock();
      t.join();
      r = std::move(*job->result);
    } else {
      job->cancelled = true;
      lock.unlock();
      r = unknown_result(*c, "hang",
                         fmt::format("no verdict within the hard deadline of {:.0f} ms", deadline),
                         shared_->mock->engine().ledger(ns));
      std::lock_guard al(abandoned_mutex_);
      abandoned_.emplace_back(std::move(t), job);
    }
    r.deadline_ms = deadline;
    return r;
  }

  std::shared_ptr<Shared> shared_;
  std::mutex abandoned_mutex_;
  std::vector<std::pair<std::thread, std::shared_ptr<CaseJob>>> abandoned_;
};

}  // namespace

RunOutcome run_suite(const std::vector<Case>& cases, const RunOptions& options) {
  RunOutcome out;
  auto& run = out.result;
  auto [driver, driver_options] = prepare_driver(options, run);
  run.seed = options.seed;
  run.driver = options.driver;
  run.time_scale = options.time_scale;
  run.started_at = iso_now();
  run.cases.resize(cases.size());
  const int jobs = std::max(
      1,
      std::min<int>(options.jobs > 0 ? options.jobs : static_cast<int>(std::thread::hardware_concurrency()),
                    static_cast<int>(cases.size())));
  Progress progress(options, static_cast<int>(cases.size()));
  // Virtual time: each case in its own virtual world (virtual_run.cpp), no mock server, no per-case
  // thread, no deadline (a wait advances the virtual clock, so nothing blocks).
  std::optional<LiveRun> live;
  if (!options.virtual_time) live.emplace(driver, options, driver_options);
  SteadyClock wall;
  for_each_case(cases.size(), jobs, [&](std::size_t i) {
    run.cases[i] = live ? live->play(cases[i], i) : virtual_result(cases[i], options);
    progress.finished(run.cases[i]);
  });
  progress.end();
  run.duration_ms = wall.now_ms();
  if (live) out.abandoned = live->finish();
  return out;
}

std::string summary_table(const RunResult& run) {
  std::size_t width = 4;
  for (const auto& c : run.cases) width = std::max(width, std::min<std::size_t>(c.name.size(), 70));
  std::string out = fmt::format("{:<8} {:<{}} {:<12} {:<12} {:<18} {:>8} {:>8}\n", "verdict", "case", width,
                                "expected", "observed", "outcome", "attempts", "ms");
  for (const auto& c : run.cases) {
    int attempts = 0;
    for (const auto& [route, n] : c.attempts_by_route) attempts += n;
    auto name = c.name.size() > width ? c.name.substr(0, width - 3) + "..." : c.name;
    out += fmt::format("{:<8} {:<{}} {:<12} {:<12} {:<18} {:>8} {:>8.0f}\n", to_string(c.verdict), name,
                       width, to_string(c.expected), to_string(c.observed),
                       c.observed_outcome ? std::string(to_string(*c.observed_outcome)) : std::string("-"),
                       attempts, c.wall_ms);
  }
  std::string split;
  for (const auto& [o, n] : run.outcome_split())
    split += fmt::format("{}{} {}", split.empty() ? "" : ", ", to_string(o), n);
  out += fmt::format(
      "\n{} cases: {} passed, {} failed, {} unknown{} in {:.1f} s (seed {}, driver {}, time scale {})\n",
      run.cases.size(), run.passed(), run.failed(), run.unknown(),
      run.not_applicable() ? fmt::format(", {} n/a", run.not_applicable()) : std::string(),
      run.duration_ms / 1000, run.seed, run.driver, run.time_scale);
  for (const auto& w : run.warnings) out += fmt::format("warning: {}\n", w);
  out += fmt::format("requests by outcome: {}\n", split);
  for (const auto& c : run.cases) {
    if (c.verdict == Verdict::pass) continue;
    out += fmt::format("\n{} {} ({})\n", to_string(c.verdict), c.name, c.file);
    if (!c.unknown_reason.empty()) out += fmt::format("  unknown: {}\n", c.unknown_reason);
    if (!c.reason.empty()) out += fmt::format("  {}: {}\n", to_string(c.verdict), c.reason);
    if (!c.foreign.empty())
      out += fmt::format("  foreign traffic (not counted): {} attempt(s)\n", c.foreign.size());
    if (c.verdict == Verdict::na) continue;
    for (const auto& k : c.checks)
      if (!k.ok) out += fmt::format("  {}: {}\n", k.name, k.message);
  }
  return out;
}

}  // namespace llmchaos::harness
