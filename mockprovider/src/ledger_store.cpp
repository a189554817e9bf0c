// The compact ledger of one namespace (ledger_store.hpp).
#include "ledger_store.hpp"

#include <fmt/format.h>

#include "llmchaos/core/redact.hpp"

namespace llmchaos::mock {

std::uint32_t LedgerStore::intern(std::string_view s, Memo& last) {
  if (last.id != UINT32_MAX && last.name == s) return last.id;
  auto it = index_.find(s);
  if (it == index_.end()) {
    const std::string_view kept = names_.emplace_back(s);
    it = index_.emplace(kept, static_cast<std::uint32_t>(names_.size() - 1)).first;
  }
  last = {it->second, it->first};
  return last.id;
}

LedgerStore::Extra& LedgerStore::extra(Record& r) {
  if (!r.extra) r.extra = std::make_unique<Extra>();
  return *r.extra;
}

void LedgerStore::push_back(const NewAttempt& a) {
  Record& r = records_.emplace_back();
  r.seq = a.seq;
  r.received_at_ms = a.received_at_ms;
  r.planned_latency_ms = a.planned_latency_ms;
  r.route = intern(a.route, last_route_);
  // A query may carry a credential (Gemini's ?key=): the ledger never keeps one.
  r.path = a.path.find('?') == std::string_view::npos ? intern(a.path, last_path_)
                                                      : intern(without_credentials(a.path), last_path_);
  r.model = intern(a.model, last_model_);
  r.attempt = a.attempt;
  r.status = a.status;
  r.dialect = static_cast<std::uint8_t>(a.dialect);
  r.fault = static_cast<std::uint8_t>(a.fault);
  r.outcome = static_cast<std::uint8_t>(AttemptOutcome::completed);  // a LedgerEntry's default until finish()
  r.stream = a.stream;
  r.committed = a.committed;
  r.background = a.background;
  r.missing_credential = a.missing_credential;
  r.protocol = static_cast<std::uint8_t>(a.protocol);
  r.default_request_id = a.request_id.empty();
  if (!a.idempotency_key.empty()) extra(r).idempotency_key = a.idempotency_key;
  if (!a.stainless_retry_count.empty()) extra(r).stainless_retry_count = a.stainless_retry_count;
  if (!a.amz_sdk_invocation_id.empty()) extra(r).amz_sdk_invocation_id = a.amz_sdk_invocation_id;
  if (!a.amz_sdk_request.empty()) extra(r).amz_sdk_request = a.amz_sdk_request;
  if (!r.default_request_id) extra(r).request_id = a.request_id;
  if (a.resume_of != 0 || a.starting_after != -1) {
    auto& x = extra(r);
    x.resume_of = a.resume_of;
    x.starting_after = a.starting_after;
  }
  if (a.retry_hint_form != RetryAfterForm::none) {  // error answers only: the hot path stays lean
    auto& x = extra(r);
    x.retry_hint_ms = a.retry_hint_ms;
    x.retry_hint_form = a.retry_hint_form;
  }
}

void LedgerStore::pop_front() {
  records_.pop_front();
}

void LedgerStore::finish(std::size_t i, AttemptOutcome outcome, int events_sent, int status,
                         double finished_at_ms, bool committed) {
  Record& r = records_.at(i);
  r.outcome = static_cast<std::uint8_t>(outcome);
  r.events_sent = events_sent;
  r.status = status;
  r.finished = true;
  r.finished_at_ms = finished_at_ms;
  if (committed) r.committed = true;
}

void LedgerStore::note_upstream(std::size_t i, int upstream_status, double head_ms, double total_ms) {
  Record& r = records_.at(i);
  r.forwarded = true;
  r.upstream_status = upstream_status;
  r.upstream_head_ms = head_ms;
  r.upstream_ms = total_ms;
}

LedgerEntry LedgerStore::entry(std::size_t i, const std::string& ns) const {
  const Record& r = records_.at(i);
  LedgerEntry e;
  e.seq = r.seq;
  e.ns = ns;
  e.route = names_[r.route];
  e.dialect = static_cast<Dialect>(r.dialect);
  e.attempt = r.attempt;
  e.received_at_ms = r.received_at_ms;
  e.finished_at_ms = r.finished_at_ms;
  e.planned_latency_ms = r.planned_latency_ms;
  e.path = names_[r.path];
  e.stream = r.stream;
  e.model = names_[r.model];
  e.fault = static_cast<FaultKind>(r.fault);
  e.status = r.status;
  e.outcome = static_cast<AttemptOutcome>(r.outcome);
  e.events_sent = r.events_sent;
  e.committed = r.committed;
  e.finished = r.finished;
  e.background = r.background;
  e.missing_credential = r.missing_credential;
  e.protocol = static_cast<WireProtocol>(r.protocol);
  e.forwarded = r.forwarded;
  e.upstream_status = r.upstream_status;
  e.upstream_head_ms = r.upstream_head_ms;
  e.upstream_ms = r.upstream_ms;
  if (r.default_request_id) {
    e.request_id = "req_";
    e.request_id += fmt::format_int(r.seq).c_str();
  }
  if (const Extra* x = r.extra.get()) {
    e.idempotency_key = x->idempotency_key;
    e.stainless_retry_count = x->stainless_retry_count;
    e.amz_sdk_invocation_id = x->amz_sdk_invocation_id;
    e.amz_sdk_request = x->amz_sdk_request;
    if (!r.default_request_id) e.request_id = x->request_id;
    e.resume_of = x->resume_of;
    e.starting_after = x->starting_after;
    if (x->retry_hint_form != RetryAfterForm::none) {
      e.retry_after_sent_ms = x->retry_hint_ms;
      e.retry_after_form = to_string(x->retry_hint_form);
    }
  }
  return e;
}

void LedgerStore::append_to(std::vector<LedgerEntry>& out, const std::string& ns) const {
  out.reserve(out.size() + records_.size());
  for (std::size_t i = 0; i < records_.size(); ++i) out.push_back(entry(i, ns));
}

}  // namespace llmchaos::mock
