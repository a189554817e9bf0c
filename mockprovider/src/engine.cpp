// The engine: which step applies to an attempt, the plan it gets, and the ledger. Thread-safe, no I/O.
#include "llmchaos/mockprovider/engine.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <deque>
#include <iterator>
#include <map>
#include <mutex>
#include <unordered_map>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <fmt/format.h>

#include "ledger_store.hpp"
#include "llmchaos/core/rng.hpp"
#include "llmchaos/mockprovider/fault.hpp"
#include "llmchaos/mockprovider/fault_traits.hpp"
#include "llmchaos/mockprovider/router.hpp"
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {

// Every fault kind has a name and a spec: faults/registry.cpp checks its table's size against the names.
constexpr std::size_t fault_kinds = std::size(enum_names<FaultKind>::table);
constexpr std::size_t outcomes = std::size(enum_names<AttemptOutcome>::table);
static_assert(outcomes == static_cast<std::size_t>(AttemptOutcome::client_closed) + 1,
              "an outcome without a name");

// Attempts of one route by fault and outcome: a flat array, so counting an attempt allocates nothing.
struct RouteCounts {
  std::array<std::uint64_t, fault_kinds * outcomes> n{};
  std::uint64_t& at(FaultKind f, AttemptOutcome o) {
    return n[static_cast<std::size_t>(f) * outcomes + static_cast<std::size_t>(o)];
  }
};

struct RouteState {
  RouteScript script;
  StepCursor cursor{};  // the current step and the attempts it has taken
  int attempts = 0;     // attempts seen on this route
  Step then{};          // the step of every attempt after the script (select_step hands out a reference)
  // The answer text last split into tokens, and its tokens: a route answers the same text again and
  // again, and splitting it per attempt cost more than copying the result.
  std::string split_text{};
  std::vector<std::string> split{};
  RouteCounts* counts = nullptr;  // this route's attempts metric (Engine::Impl::attempts_metric)
};

// A background response the provider stored (Responses API `background: true`): its whole healthy
// answer, whatever happened to the stream that created it, and the attempt that did.
struct Stored {
  Answer answer;
  std::uint64_t seq = 0;
};

// Stored responses kept per namespace; the oldest is forgotten past this (a retrieve of it is a 404).
constexpr std::size_t stored_limit = 1024;

struct Namespace {
  std::map<std::string, RouteState, std::less<>> routes;  // transparent: looked up by string_view
  std::unordered_map<std::string, Stored> stored;         // by response id
  std::deque<std::string> stored_order;                   // ids, oldest first
  double installed_at_ms = 0;
  LedgerStore ledger;         // every attempt, compact (ledger_store.hpp)
  std::uint64_t dropped = 0;  // oldest entries dropped over the ledger limit (ledger[0] is entry `dropped`)
  std::vector<SideEffect> side_effects;
  std::uint64_t seed = 0;  // of rng, kept for reset
  Rng rng{0};
};

using NamespaceEntry = std::pair<const std::string, Namespace>;  // a node of Engine::Impl::namespaces

struct Pending {
  // Its namespace's node (stable: a namespace is replaced, reset or removed only after its pending
  // attempts are forgotten), so finishing an attempt looks no name up.
  NamespaceEntry* ns = nullptr;
  std::uint64_t index = 0;  // entry number in the namespace's ledger since its reset (dropped ones included)
  RouteCounts* counts = nullptr;  // the route's metric (map nodes are stable), so finishing looks nothing up
  FaultKind fault = FaultKind::ok;
  bool commits_when_sent = false;
};

ErrorKind error_kind(RequestError e) {
  switch (e) {
    case RequestError::not_found:
      return ErrorKind::not_found;
    case RequestError::method_not_allowed:
      return ErrorKind::method_not_allowed;
    default:
      return ErrorKind::invalid_json;
  }
}

// The request headers the ledger keeps (the first of each name), read in one pass over the headers.
struct LedgerHeaders {
  std::string_view request_id;  // x-request-id, else request-id: the id the answer echoes
  std::string_view idempotency_key, stainless_retry_count;
  std::string_view amz_sdk_invocation_id, amz_sdk_request;  // the AWS SDKs' (Bedrock)
};

LedgerHeaders ledger_headers(const RequestView& req) {
  std::string_view x_request_id, request_id, idempotency_key, retry_count, invocation, amz_request;
  bool seen_x = false, seen_plain = false, seen_key = false, seen_count = false, seen_inv = false,
       seen_amz = false;
  const auto take = [](std::string_view value, std::string_view& into, bool& seen) {
    if (!seen) into = value;
    seen = true;
  };
  using namespace std::string_view_literals;  // compared as views: the sizes first, no strlen
  for (const auto& [k, v] : req.headers) {
    const std::string_view name = k;
    if (name == "x-request-id"sv)
      take(v, x_request_id, seen_x);
    else if (name == "request-id"sv)
      take(v, request_id, seen_plain);
    else if (name == "idempotency-key"sv)
      take(v, idempotency_key, seen_key);
    else if (name == "x-stainless-retry-count"sv)
      take(v, retry_count, seen_count);
    else if (name == "amz-sdk-invocation-id"sv)
      take(v, invocation, seen_inv);
    else if (name == "amz-sdk-request"sv)
      take(v, amz_request, seen_amz);
  }
  return {x_request_id.empty() ? request_id : x_request_id,
          req.idempotency_key.empty() ? idempotency_key : req.idempotency_key,
          req.stainless_retry_count.empty() ? retry_count : req.stainless_retry_count, invocation,
          amz_request};
}

// The step for an attempt at `t_ms` after install (next_step, script.hpp), else the route's `then`.
const Step& select_step(RouteState& r, double t_ms, double time_scale) {
  if (const Step* s = next_step(r.script.steps, r.cursor, t_ms, time_scale)) return *s;
  if (r.then.fault != r.script.then) {  // a plain step of the `then` fault (scripts are replaced whole)
    r.then = Step{};
    r.then.fault = r.script.then;
    r.then.retry_after_form = dialect_spec(r.script.dialect).default_retry_after_form;
  }
  return r.then;
}

}  // namespace

namespace {
// healthy_answer with the answer's tokens already split.
Answer healthy_answer_of(const RouteScript& route, const Step& step, const ChatRequest& request,
                         std::uint64_t seq, std::vector<std::string> tokens) {
  Answer a;
  // Built in place (a conditional over std::string and a literal would copy through a temporary).
  const fmt::format_int digits(seq);
  const auto& dialect = dialect_spec(route.dialect);
  a.id = dialect.id_prefix;
  a.id.append(digits.data(), digits.size());
  if (step.model)
    a.model = *step.model;
  else if (!request.model.empty())
    a.model = request.model;
  else
    a.model = "mock-model";
  a.tokens = std::move(tokens);
  a.input_tokens = request.input_tokens;
  a.include_usage = request.include_usage;
  a.operation = request.operation;
  if (!request.tools.empty() && !request.tools.front().empty() && !request.last_is_tool_result) {
    a.tool_name = request.tools.front();
    a.tool_call_id = fmt::format("{}{}", dialect.tool_call_id_prefix, seq);
    a.finish = Finish::tool_call;
  }
  return a;
}

// The same, with the route's cached split of the answer text, lent to the answer (no copy of the tokens
// per attempt): give_back() returns it once the plan is built. A split not given back is made again.
Answer healthy_answer_cached(RouteState& r, const Step& step, const ChatRequest& request, std::uint64_t seq) {
  const std::string& text = step.text ? *step.text : r.script.default_text;
  if (text != r.split_text || (r.split.empty() && !text.empty())) {
    r.split_text = text;
    r.split = split_tokens(text);
  }
  return healthy_answer_of(r.script, step, request, seq, std::move(r.split));
}

void give_back(RouteState& r, Answer& answer) {
  r.split = std::move(answer.tokens);
}
}  // namespace

Answer healthy_answer(const RouteScript& route, const Step& step, const ChatRequest& request,
                      std::uint64_t seq) {
  return healthy_answer_of(route, step, request, seq,
                           split_tokens(step.text ? *step.text : route.default_text));
}

namespace {
void store_response(Namespace& ns, Answer answer, std::uint64_t seq) {
  if (ns.stored.size() >= stored_limit && !ns.stored_order.empty()) {
    ns.stored.erase(ns.stored_order.front());
    ns.stored_order.pop_front();
  }
  std::string id = answer.id;
  if (ns.stored.emplace(id, Stored{std::move(answer), seq}).second) ns.stored_order.push_back(std::move(id));
}

// What a planner decided for an attempt beside its plan (returned on its own, built in place): what the
// ledger and the stored responses keep of it. The planners only decide; Engine::Impl::record_attempt
// writes the ledger entry and stores the response.
struct AttemptFacts {
  bool missing_credential = false;          // the provider refused it for want of a key
  std::int64_t starting_after = -1;         // a retrieve's resume point
  const Stored* resumed = nullptr;          // a retrieve of a response the mock stored
  std::optional<Answer> response_to_store;  // a background create the provider accepted
};

// What every plan of one attempt shares; the planners vary only the step and the answer. The one place
// a FaultInput is built, by name.
struct AttemptContext {
  const DialectSpec& dialect;
  const ChatRequest& request;
  std::string_view request_id;
  double time_scale;
  Rng& rng;
  double unix_now_ms;
  bool body_forwarded = false;  // FaultInput::body_forwarded

  FaultInput fault_input(const Step& step, const Answer& answer) const {
    return {.step = step,
            .request = request,
            .dialect = dialect,
            .answer = answer,
            .request_id = request_id,
            .time_scale = time_scale,
            .rng = rng,
            .unix_now_ms = unix_now_ms,
            .body_forwarded = body_forwarded};
  }
  Plan fault_plan(const Step& step, const Answer& answer) const {
    return fault_spec(step.fault).plan(fault_input(step, answer));
  }
};

// "req_<seq>": the answer's request id when the client sent none (the ledger rebuilds it instead of
// storing it). Built in place: no allocation per attempt.
class DefaultRequestId {
 public:
  explicit DefaultRequestId(std::uint64_t seq) {
    const fmt::format_int digits(seq);
    std::copy(digits.data(), digits.data() + digits.size(), text_.begin() + prefix_size);
    size_ = prefix_size + digits.size();
  }
  std::string_view view() const { return {text_.data(), size_}; }

 private:
  static constexpr std::size_t prefix_size = 4;
  std::array<char, prefix_size + 20> text_{'r', 'e', 'q', '_'};
  std::size_t size_ = 0;
};

// Runs `make_plan` over the attempt's healthy answer, lent the route's cached split (give_back).
template <class MakePlan>
Plan over_healthy_answer(RouteState& route, const Step& step, const AttemptContext& at, std::uint64_t seq,
                         MakePlan&& make_plan) {
  Answer answer = healthy_answer_cached(route, step, at.request, seq);
  Plan plan = make_plan(answer);
  give_back(route, answer);
  return plan;
}

// The plan of a retrieve of a stored response: the step's fault over the stored answer, as for any
// attempt. A resume (stream, starting_after N) keeps the frames after sequence N: a dialect that stores
// responses numbers its frames from 0 in order, so frame i is sequence i. On a resume the stream
// faults' cut_after_events count the content events the resume itself sends (default 1). When the
// answer comes from elsewhere (`upstream_frames`: the proxy's upstream already sends only the frames
// after N), the plan keeps every frame of `answer`, so its edit counts the resume's own events.
Plan retrieve_plan(const AttemptContext& at, const Step& scripted, const Answer& answer, const Retrieve& r,
                   bool upstream_frames) {
  if (!r.stream || r.starting_after < 0) return at.fault_plan(scripted, answer);
  const auto parts = at.dialect.render_stream(answer);
  const auto kept_from =
      upstream_frames ? std::size_t{0}
                      : static_cast<std::size_t>(std::min<std::int64_t>(r.starting_after, 1 << 30)) + 1;
  const auto head = parts.head.size();
  const auto shown = kept_from > head ? std::min(kept_from - head, parts.content.size()) : std::size_t{0};
  Step step = scripted;
  if (step.cut_after_events || fault_traits(step.fault).breaks_stream)
    step.cut_after_events = static_cast<int>(shown) + step.cut_after_events.value_or(1);
  Plan plan = at.fault_plan(step, answer);
  if (plan.streamed && plan.action == WireAction::respond) {
    const auto drop = std::min(kept_from, plan.frames.size());
    plan.frames.erase(plan.frames.begin(), plan.frames.begin() + static_cast<std::ptrdiff_t>(drop));
  }
  return plan;
}

// --- One planner per path of Engine::begin ------------------------------------------------------

Plan unknown_route_plan(const RequestView& req) {
  return json_plan(
      404, fmt::format(
               R"({{"error":{{"message":"no route \"{}\" in namespace \"{}\"","type":"not_found_error"}}}})",
               req.route, req.ns));
}

// GET /v1/models where the dialect has a list: not an attempt.
std::optional<Plan> models_list_plan(const DialectSpec& dialect, const ParsedRequest& parsed) {
  if (!parsed.models_list || parsed.error != RequestError::none) return std::nullopt;
  const auto body = dialect.models_body(parsed.chat.model.empty() ? "mock-model" : parsed.chat.model);
  if (body.empty()) return std::nullopt;
  Plan plan = json_plan(200, body);
  plan.headers.emplace_back(dialect.request_id_header, "req_models");
  return plan;
}

// A request the provider refuses before any work (no key, bad JSON, a wrong path): ledgered, but it
// takes no script step.
Plan refusal_plan(RouteState& route, const AttemptContext& at, std::uint64_t seq, FaultKind fault,
                  ErrorKind error, std::string_view error_detail = {}) {
  Step step;
  step.fault = fault;
  return over_healthy_answer(route, step, at, seq, [&](const Answer& answer) {
    return plan_blocks::error_plan(at.fault_input(step, answer), fault, error, error_detail);
  });
}

// A retrieve of an id the mock does not hold: the dialect's own 404.
Plan unknown_response_plan(const AttemptContext& at, std::string_view id) {
  auto reply = at.dialect.unknown_response(id);
  Plan plan = json_plan(reply.status, std::move(reply.body));
  plan.fault = FaultKind::bad_request;
  plan.headers.emplace_back(at.dialect.request_id_header, at.request_id);
  return plan;
}

// The upstream holds the response (an id it issued): the plan is sized on the route's synthetic answer
// and forwarded, whether or not the create passed here (an unknown id is the upstream's 404).
Plan forwarded_retrieve_plan(RouteState& route, const AttemptContext& at, const Step& step,
                             const Retrieve& retrieve, std::uint64_t seq) {
  return over_healthy_answer(route, step, at, seq, [&](Answer& answer) {
    answer.background = true;
    return retrieve_plan(at, step, answer, retrieve, true);
  });
}

// A retrieve is an attempt: it takes its step, so a script can fault a resume like any attempt.
Plan retrieve_attempt_plan(RouteState& route, const Namespace& ns, const AttemptContext& at,
                           const Retrieve& retrieve, const LedgerStore::NewAttempt& e, bool answers_forwarded,
                           AttemptFacts& facts) {
  facts.starting_after = retrieve.starting_after;
  const auto it = ns.stored.find(retrieve.id);
  facts.resumed = it == ns.stored.end() ? nullptr : &it->second;
  const Step& step = select_step(route, e.received_at_ms, at.time_scale);
  if (answers_forwarded) return forwarded_retrieve_plan(route, at, step, retrieve, e.seq);
  if (!facts.resumed) return unknown_response_plan(at, retrieve.id);
  return retrieve_plan(at, step, facts.resumed->answer, retrieve, false);
}

// The common case: the script's next step over the healthy answer.
Plan scripted_attempt_plan(RouteState& route, const AttemptContext& at, const ParsedRequest& parsed,
                           const LedgerStore::NewAttempt& e, bool answers_forwarded, AttemptFacts& facts) {
  const Step& step = select_step(route, e.received_at_ms, at.time_scale);
  return over_healthy_answer(route, step, at, e.seq, [&](Answer& answer) {
    answer.background = e.background;
    Plan plan = at.fault_plan(step, answer);
    if (parsed.chat.json_array_stream) plan_blocks::as_json_array(plan);
    // The provider stores a background response once it accepted the request; it goes on generating it
    // whatever becomes of the stream (a cut, a stall), so the stored answer is the whole one.
    const bool accepted =
        (plan.action == WireAction::respond && plan.status / 100 == 2) || plan.committed_on_arrival;
    // Forwarded answers carry the upstream's ids: the forwarder reports the one it saw (note_response).
    if (answer.background && accepted && !answers_forwarded) facts.response_to_store = answer;
    return plan;
  });
}

// The ledger entry of an attempt as it arrives; record_attempt fills in the rest from the plan and its facts.
LedgerStore::NewAttempt new_ledger_entry(const RequestView& req, const ParsedRequest& parsed,
                                         const LedgerHeaders& headers, RouteState& route, std::uint64_t seq,
                                         double received_at_ms) {
  LedgerStore::NewAttempt e;
  e.seq = seq;
  e.route = req.route;
  e.path = req.path;
  e.request_id = headers.request_id;
  e.dialect = route.script.dialect;
  e.attempt = route.attempts++;
  e.received_at_ms = received_at_ms;
  e.stream = parsed.chat.stream;
  e.model = parsed.chat.model;
  e.idempotency_key = headers.idempotency_key;
  e.stainless_retry_count = headers.stainless_retry_count;
  e.amz_sdk_invocation_id = headers.amz_sdk_invocation_id;
  e.amz_sdk_request = headers.amz_sdk_request;
  e.protocol = req.protocol;
  e.background = parsed.chat.background && dialect_spec(route.script.dialect).stores_responses;
  return e;
}
}  // namespace

struct Engine::Impl {
  Impl(Clock& c, double scale, std::uint64_t s)
      : clock(c),
        time_scale(scale),
        seed(s),
        unix_base_ms(
            std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch())
                .count() -
            c.now_ms()) {}
  double unix_now_ms() const { return unix_base_ms + clock.now_ms(); }
  Clock& clock;
  const double time_scale;
  const std::uint64_t seed;
  mutable std::mutex mutex;
  const double unix_base_ms;  // the wall clock at clock 0: dates the HTTP-date / RFC 3339 retry hints
  std::map<std::string, Namespace, std::less<>> namespaces;  // transparent: looked up by string_view
  std::uint64_t next_seq = 1;
  std::size_t ledger_limit = 0;  // per namespace; 0 = unlimited
  std::unordered_map<std::uint64_t, Pending> pending;
  bool answers_forwarded = false;  // set_answers_forwarded
  bool require_auth = false;       // set_require_auth
  // Nodes of finished attempts, reused by the next ones: an attempt in flight costs no allocation.
  std::vector<std::unordered_map<std::uint64_t, Pending>::node_type> spare_pending;
  static constexpr std::size_t spare_pending_max = 64;

  void add_pending(std::uint64_t seq, Pending p) {
    if (spare_pending.empty()) {
      pending.emplace(seq, std::move(p));
      return;
    }
    auto node = std::move(spare_pending.back());
    spare_pending.pop_back();
    node.key() = seq;
    node.mapped() = std::move(p);
    pending.insert(std::move(node));
  }
  void drop_pending(std::unordered_map<std::uint64_t, Pending>::iterator it) {
    auto node = pending.extract(it);
    if (spare_pending.size() < spare_pending_max) spare_pending.push_back(std::move(node));
  }
  std::map<std::string, RouteCounts, std::less<>> attempts_metric;  // by route name
  std::map<std::string, std::uint64_t, std::less<>> events_metric;

  void forget_pending(const std::string& ns) {
    std::erase_if(pending, [&](const auto& kv) { return kv.second.ns->first == ns; });
    if (pending.empty()) {
      decltype(pending){}.swap(pending);  // clear() keeps the bucket array of the peak
      decltype(spare_pending){}.swap(spare_pending);
    }
  }
  // The route's state and its namespace's node; both null when either is unknown.
  std::pair<NamespaceEntry*, RouteState*> find_route(std::string_view ns, std::string_view route) {
    const auto n = namespaces.find(ns);
    if (n == namespaces.end()) return {nullptr, nullptr};
    const auto r = n->second.routes.find(route);
    if (r == n->second.routes.end()) return {nullptr, nullptr};
    return {&*n, &r->second};
  }
  // The plan of an attempt and its facts: one planner per path (credential refused, bad request,
  // retrieve, scripted). It writes neither the ledger nor the stored responses.
  Plan plan_attempt(const RequestView& req, RouteState& route, const Namespace& ns, const AttemptContext& at,
                    const ParsedRequest& parsed, const LedgerStore::NewAttempt& e, AttemptFacts& facts);
  // Records the decision: completes the attempt's ledger entry from the plan and its facts, counts it in
  // flight, ledgers it and stores the response it accepted.
  void record_attempt(NamespaceEntry& entry, RouteState& route, std::string_view route_name,
                      LedgerStore::NewAttempt& e, Plan& plan, AttemptFacts& facts);
  void reset_locked(const std::string& ns, Namespace& n) {
    forget_pending(ns);
    for (auto& [name, r] : n.routes) r = RouteState{std::move(r.script)};
    n.ledger = LedgerStore{};  // clear() would keep the peak capacity
    n.dropped = 0;
    std::vector<SideEffect>{}.swap(n.side_effects);
    decltype(n.stored){}.swap(n.stored);
    decltype(n.stored_order){}.swap(n.stored_order);
    n.rng = Rng(n.seed);
    n.installed_at_ms = clock.now_ms();
  }
};

namespace {
// A reset drops a whole ledger at once (tens of MB after a soak). glibc keeps freed small blocks in its
// arenas for reuse; handing them back to the OS here is what lets memory return to where it started.
void return_freed_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}
}  // namespace

Engine::Engine(Clock& clock, double time_scale, std::uint64_t seed)
    : impl_(std::make_unique<Impl>(clock, time_scale > 0 ? time_scale : 1.0, seed)) {}
Engine::~Engine() = default;

double Engine::time_scale() const {
  return impl_->time_scale;
}

void Engine::install(const std::string& ns, Script script, std::optional<std::uint64_t> seed) {
  std::lock_guard lock(impl_->mutex);
  Namespace n;
  n.seed = seed ? *seed : derive_seed(impl_->seed, ns);
  n.rng = Rng(n.seed);
  for (auto& [name, route] : script.routes) n.routes.emplace(name, RouteState{std::move(route)});
  n.installed_at_ms = impl_->clock.now_ms();
  impl_->forget_pending(ns);
  impl_->namespaces[ns] = std::move(n);
}

void Engine::reset(const std::string& ns) {
  std::lock_guard lock(impl_->mutex);
  if (auto it = impl_->namespaces.find(ns); it != impl_->namespaces.end())
    impl_->reset_locked(ns, it->second);
  return_freed_memory();
}

void Engine::reset_all() {
  std::lock_guard lock(impl_->mutex);
  for (auto& [name, n] : impl_->namespaces) impl_->reset_locked(name, n);
  return_freed_memory();
}

void Engine::remove(const std::string& ns) {
  std::lock_guard lock(impl_->mutex);
  impl_->forget_pending(ns);
  impl_->namespaces.erase(ns);
}

bool Engine::has_route(const std::string& ns, const std::string& route) const {
  return route_dialect(ns, route).has_value();
}

std::optional<Dialect> Engine::route_dialect(std::string_view ns, std::string_view route) const {
  std::lock_guard lock(impl_->mutex);
  const auto [entry, r] = impl_->find_route(ns, route);
  if (!r) return std::nullopt;
  return r->script.dialect;
}

int Engine::route_segments(std::string_view first, std::string_view second) const {
  std::lock_guard lock(impl_->mutex);
  const auto has = [&](std::string_view ns, std::string_view route) {
    const auto it = impl_->namespaces.find(ns);
    return it != impl_->namespaces.end() && it->second.routes.find(route) != it->second.routes.end();
  };
  if (!second.empty() && has(first, second)) return 2;
  return has("", first) ? 1 : 0;
}

std::vector<std::string> Engine::routes(const std::string& ns) const {
  std::lock_guard lock(impl_->mutex);
  std::vector<std::string> out;
  if (auto it = impl_->namespaces.find(ns); it != impl_->namespaces.end())
    for (const auto& [name, r] : it->second.routes) out.push_back(name);
  return out;
}

PlannedAttempt Engine::begin(const RequestView& req) {
  std::lock_guard lock(impl_->mutex);
  const auto [entry, route] = impl_->find_route(req.ns, req.route);
  if (!route) return {0, unknown_route_plan(req)};
  const auto& dialect = dialect_spec(route->script.dialect);
  const auto parsed = dialect.parse(req.method, req.path, req.body);
  if (auto models = models_list_plan(dialect, parsed)) return {0, std::move(*models)};

  Namespace& ns = entry->second;
  const auto seq = impl_->next_seq++;
  const auto headers = ledger_headers(req);
  const DefaultRequestId default_request_id(seq);
  const AttemptContext at{
      .dialect = dialect,
      .request = parsed.chat,
      .request_id = headers.request_id.empty() ? default_request_id.view() : headers.request_id,
      .time_scale = impl_->time_scale,
      .rng = ns.rng,
      .unix_now_ms = impl_->unix_now_ms(),
      .body_forwarded = impl_->answers_forwarded};
  // Views: parsed, req and the stored answer outlive it.
  auto e = new_ledger_entry(req, parsed, headers, *route, seq, impl_->clock.now_ms() - ns.installed_at_ms);
  AttemptFacts facts;
  Plan plan = impl_->plan_attempt(req, *route, ns, at, parsed, e, facts);
  impl_->record_attempt(*entry, *route, req.route, e, plan, facts);
  return {seq, std::move(plan)};
}

Plan Engine::Impl::plan_attempt(const RequestView& req, RouteState& route, const Namespace& ns,
                                const AttemptContext& at, const ParsedRequest& parsed,
                                const LedgerStore::NewAttempt& e, AttemptFacts& facts) {
  if (route.script.require_auth.value_or(require_auth) &&
      !has_credential(at.dialect, req.headers, req.path)) {
    // The provider checks the key before anything else.
    facts.missing_credential = true;
    return refusal_plan(route, at, e.seq, FaultKind::auth, ErrorKind::missing_key);
  }
  if (parsed.error != RequestError::none)
    return refusal_plan(route, at, e.seq, FaultKind::bad_request, error_kind(parsed.error), parsed.detail);
  if (parsed.retrieve)
    return retrieve_attempt_plan(route, ns, at, *parsed.retrieve, e, answers_forwarded, facts);
  return scripted_attempt_plan(route, at, parsed, e, answers_forwarded, facts);
}

void Engine::Impl::record_attempt(NamespaceEntry& entry, RouteState& route, std::string_view route_name,
                                  LedgerStore::NewAttempt& e, Plan& plan, AttemptFacts& facts) {
  e.missing_credential = facts.missing_credential;
  e.starting_after = facts.starting_after;
  if (facts.resumed) {
    e.resume_of = facts.resumed->seq;
    e.model = facts.resumed->answer.model;
  }
  e.fault = plan.fault;
  e.status = plan.status;
  e.planned_latency_ms = plan.action == WireAction::hold ? plan.hold_ms : plan.latency_ms;
  e.committed = plan.committed_on_arrival;
  e.retry_hint_ms = plan.hint_ms;
  e.retry_hint_form = plan.hint_form;
  if (plan.model.empty()) plan.model = e.model;
  if (!route.counts) {  // the metric's node is stable (never erased): looked up once per route state
    auto counts = attempts_metric.find(route_name);
    if (counts == attempts_metric.end()) counts = attempts_metric.emplace(route_name, RouteCounts{}).first;
    route.counts = &counts->second;
  }
  Namespace& ns = entry.second;
  add_pending(e.seq,
              {&entry, ns.dropped + ns.ledger.size(), route.counts, plan.fault, plan.commits_when_sent});
  ns.ledger.push_back(e);
  if (ledger_limit && ns.ledger.size() > ledger_limit) {
    ns.ledger.pop_front();
    ++ns.dropped;
  }
  if (facts.response_to_store) store_response(ns, std::move(*facts.response_to_store), e.seq);
}

void Engine::finish(std::uint64_t seq, AttemptOutcome outcome, int events_sent, int status) {
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->pending.find(seq);
  if (it == impl_->pending.end()) return;  // not an attempt, or its namespace was reset meanwhile
  const Pending p = std::move(it->second);
  impl_->drop_pending(it);
  ++p.counts->at(p.fault, outcome);
  auto& ns = p.ns->second;
  if (p.index < ns.dropped) return;  // dropped over the ledger limit: only the metric remembers it
  // Committed once a content token left (streams) or a whole answer was written (plain).
  const bool committed = events_sent > 0 || (p.commits_when_sent && outcome == AttemptOutcome::completed);
  ns.ledger.finish(p.index - ns.dropped, outcome, events_sent, status,
                   impl_->clock.now_ms() - ns.installed_at_ms, committed);
}

namespace {
// A forwarded background create's response, kept under the id the upstream issued (note_response).
void keep_forwarded_response(Namespace& ns, const std::string& ns_name, std::size_t index, std::uint64_t seq,
                             std::string_view response_id) {
  if (response_id.empty() || !ns.ledger.background(index)) return;  // only a background create's is stored
  Answer a;
  a.id = std::string(response_id);
  a.model = ns.ledger.entry(index, ns_name).model;
  a.background = true;
  store_response(ns, a, seq);
}
}  // namespace

void Engine::note_upstream(std::uint64_t seq, int upstream_status, double head_ms, double total_ms,
                           std::string_view response_id) {
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->pending.find(seq);
  if (it == impl_->pending.end()) return;
  auto& ns = it->second.ns->second;
  if (it->second.index < ns.dropped) return;
  const std::size_t index = it->second.index - ns.dropped;
  ns.ledger.note_upstream(index, upstream_status, head_ms, total_ms);
  keep_forwarded_response(ns, it->second.ns->first, index, seq, response_id);
}

void Engine::set_require_auth(bool required) {
  std::lock_guard lock(impl_->mutex);
  impl_->require_auth = required;
}

void Engine::set_answers_forwarded(bool forwarded) {
  std::lock_guard lock(impl_->mutex);
  impl_->answers_forwarded = forwarded;
}

void Engine::note_response(std::uint64_t seq, std::string_view response_id) {
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->pending.find(seq);
  if (it == impl_->pending.end()) return;
  auto& ns = it->second.ns->second;
  if (it->second.index < ns.dropped) return;
  keep_forwarded_response(ns, it->second.ns->first, it->second.index - ns.dropped, seq, response_id);
}

void Engine::set_ledger_limit(std::size_t entries) {
  std::lock_guard lock(impl_->mutex);
  impl_->ledger_limit = entries;
}

void Engine::record_side_effect(const std::string& ns, const std::string& operation_id,
                                const std::string& tool) {
  std::lock_guard lock(impl_->mutex);
  auto& n = impl_->namespaces[ns];
  SideEffect s;
  s.seq = impl_->next_seq++;
  s.ns = ns;
  s.operation_id = operation_id;
  s.tool = tool;
  s.received_at_ms = impl_->clock.now_ms() - n.installed_at_ms;
  n.side_effects.push_back(std::move(s));
}

std::vector<LedgerEntry> Engine::ledger(const std::string& ns) const {
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->namespaces.find(ns);
  if (it == impl_->namespaces.end()) return {};
  std::vector<LedgerEntry> out;
  it->second.ledger.append_to(out, it->first);
  return out;
}

std::vector<LedgerEntry> Engine::ledger_all() const {
  std::lock_guard lock(impl_->mutex);
  std::vector<LedgerEntry> out;
  for (const auto& [name, n] : impl_->namespaces) n.ledger.append_to(out, name);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
  return out;
}

std::vector<SideEffect> Engine::side_effects(const std::string& ns) const {
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->namespaces.find(ns);
  return it == impl_->namespaces.end() ? std::vector<SideEffect>{} : it->second.side_effects;
}

std::vector<SideEffect> Engine::side_effects_all() const {
  std::lock_guard lock(impl_->mutex);
  std::vector<SideEffect> out;
  for (const auto& [name, n] : impl_->namespaces)
    out.insert(out.end(), n.side_effects.begin(), n.side_effects.end());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
  return out;
}

void Engine::count_event(std::string_view event) {
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->events_metric.find(event);
  if (it == impl_->events_metric.end()) it = impl_->events_metric.emplace(std::string(event), 0).first;
  ++it->second;
}

std::string Engine::metrics_text() const {
  std::lock_guard lock(impl_->mutex);
  std::string out =
      "# HELP llmchaos_attempts_total Attempts the mock provider answered, by route, fault and outcome.\n"
      "# TYPE llmchaos_attempts_total counter\n";
  // Route, then fault, then outcome in enum order; only the pairs seen.
  for (const auto& [route, counts] : impl_->attempts_metric)
    for (std::size_t f = 0; f < fault_kinds; ++f)
      for (std::size_t o = 0; o < outcomes; ++o)
        if (const auto n = counts.n[f * outcomes + o])
          out +=
              fmt::format("llmchaos_attempts_total{{route=\"{}\",fault=\"{}\",outcome=\"{}\"}} {}\n", route,
                          to_string(static_cast<FaultKind>(f)), to_string(static_cast<AttemptOutcome>(o)), n);
  out +=
      "# HELP llmchaos_attempts_in_flight Attempts being served now (held ones included).\n"
      "# TYPE llmchaos_attempts_in_flight gauge\n";
  out += fmt::format("llmchaos_attempts_in_flight {}\n", impl_->pending.size());
  out +=
      "# HELP llmchaos_server_events_total Connection-level events (timeouts, rejections).\n"
      "# TYPE llmchaos_server_events_total counter\n";
  for (const auto& [event, n] : impl_->events_metric)
    out += fmt::format("llmchaos_server_events_total{{event=\"{}\"}} {}\n", event, n);
  return out;
}

}  // namespace llmchaos::mock
