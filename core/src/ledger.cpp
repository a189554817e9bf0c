#include "llmchaos/core/ledger.hpp"

#include <boost/json.hpp>
#include <stdexcept>

#include "llmchaos/core/ledger_json.hpp"

namespace json = boost::json;

namespace llmchaos {
namespace {
template <class E>
E enum_field(const json::object& o, std::string_view key, E fallback) {
  if (auto* v = o.if_contains(key); v && v->is_string()) {
    if (auto e = parse_enum<E>(v->get_string())) return *e;
    throw std::runtime_error("ledger: bad value for " + std::string(key));
  }
  return fallback;
}
std::string str_field(const json::object& o, std::string_view key) {
  if (auto* v = o.if_contains(key); v && v->is_string()) return std::string(v->get_string());
  return {};
}
double num_field(const json::object& o, std::string_view key) {
  if (auto* v = o.if_contains(key); v && v->is_number()) return v->to_number<double>();
  return 0;
}
bool bool_field(const json::object& o, std::string_view key) {
  if (auto* v = o.if_contains(key); v && v->is_bool()) return v->get_bool();
  return false;
}
}  // namespace

json::value to_json_value(const LedgerEntry& e) {
  json::object o{{"seq", e.seq},
                 {"ns", e.ns},
                 {"route", e.route},
                 {"dialect", to_string(e.dialect)},
                 {"attempt", e.attempt},
                 {"received_at_ms", e.received_at_ms},
                 {"finished_at_ms", e.finished_at_ms},
                 {"planned_latency_ms", e.planned_latency_ms},
                 {"path", e.path},
                 {"stream", e.stream},
                 {"model", e.model},
                 {"idempotency_key", e.idempotency_key},
                 {"x_stainless_retry_count", e.stainless_retry_count},
                 {"request_id", e.request_id},
                 {"fault", to_string(e.fault)},
                 {"status", e.status},
                 {"outcome", to_string(e.outcome)},
                 {"events_sent", e.events_sent},
                 {"committed", e.committed},
                 {"finished", e.finished}};
  if (e.forwarded) {  // `llmchaos proxy` only: a mock's ledger keeps its shape
    o["forwarded"] = true;
    o["upstream_status"] = e.upstream_status;
    o["upstream_head_ms"] = e.upstream_head_ms;
    o["upstream_ms"] = e.upstream_ms;
  }
  if (e.background) o["background"] = true;  // only then, like the proxy's fields
  if (!e.amz_sdk_invocation_id.empty()) o["amz_sdk_invocation_id"] = e.amz_sdk_invocation_id;
  if (!e.amz_sdk_request.empty()) o["amz_sdk_request"] = e.amz_sdk_request;
  if (e.missing_credential) o["missing_credential"] = true;
  if (e.retry_after_sent_ms) {  // only then: a reader of the older shape sees nothing new
    o["retry_after_sent_ms"] = *e.retry_after_sent_ms;
    o["retry_after_form"] = e.retry_after_form;
  }
  if (e.protocol != WireProtocol::none) o["protocol"] = to_string(e.protocol);
  if (e.resume_of != 0) {
    o["resume_of"] = e.resume_of;
    o["starting_after"] = e.starting_after;
  }
  return o;
}

LedgerEntry ledger_entry_from_json_value(const json::value& v) {
  if (!v.is_object()) throw std::runtime_error("ledger: entry is not an object");
  const auto& o = v.get_object();
  LedgerEntry e;
  e.seq = static_cast<std::uint64_t>(num_field(o, "seq"));
  e.ns = str_field(o, "ns");
  e.route = str_field(o, "route");
  e.dialect = enum_field(o, "dialect", Dialect::openai);
  e.attempt = static_cast<int>(num_field(o, "attempt"));
  e.received_at_ms = num_field(o, "received_at_ms");
  e.finished_at_ms = num_field(o, "finished_at_ms");
  e.planned_latency_ms = num_field(o, "planned_latency_ms");
  e.path = str_field(o, "path");
  e.stream = bool_field(o, "stream");
  e.model = str_field(o, "model");
  e.idempotency_key = str_field(o, "idempotency_key");
  e.stainless_retry_count = str_field(o, "x_stainless_retry_count");
  e.amz_sdk_invocation_id = str_field(o, "amz_sdk_invocation_id");
  e.amz_sdk_request = str_field(o, "amz_sdk_request");
  e.request_id = str_field(o, "request_id");
  e.fault = enum_field(o, "fault", FaultKind::ok);
  e.status = static_cast<int>(num_field(o, "status"));
  e.outcome = enum_field(o, "outcome", AttemptOutcome::completed);
  e.events_sent = static_cast<int>(num_field(o, "events_sent"));
  e.committed = bool_field(o, "committed");
  e.finished = bool_field(o, "finished");
  e.forwarded = bool_field(o, "forwarded");
  e.upstream_status = static_cast<int>(num_field(o, "upstream_status"));
  e.upstream_head_ms = num_field(o, "upstream_head_ms");
  e.upstream_ms = num_field(o, "upstream_ms");
  e.background = bool_field(o, "background");
  e.missing_credential = bool_field(o, "missing_credential");
  if (o.contains("retry_after_sent_ms")) {
    e.retry_after_sent_ms = num_field(o, "retry_after_sent_ms");
    e.retry_after_form = str_field(o, "retry_after_form");
  }
  e.protocol = enum_field(o, "protocol", WireProtocol::none);
  e.resume_of = static_cast<std::uint64_t>(num_field(o, "resume_of"));
  e.starting_after =
      o.contains("starting_after") ? static_cast<std::int64_t>(num_field(o, "starting_after")) : -1;
  return e;
}

json::value to_json_value(const SideEffect& e) {
  return json::object{{"seq", e.seq},
                      {"ns", e.ns},
                      {"operation_id", e.operation_id},
                      {"tool", e.tool},
                      {"received_at_ms", e.received_at_ms}};
}

SideEffect side_effect_from_json_value(const json::value& v) {
  if (!v.is_object()) throw std::runtime_error("side effects: entry is not an object");
  const auto& o = v.get_object();
  SideEffect e;
  e.seq = static_cast<std::uint64_t>(num_field(o, "seq"));
  e.ns = str_field(o, "ns");
  e.operation_id = str_field(o, "operation_id");
  e.tool = str_field(o, "tool");
  e.received_at_ms = num_field(o, "received_at_ms");
  return e;
}

std::string ledger_to_json(const std::vector<LedgerEntry>& entries) {
  json::array a;
  for (const auto& e : entries) a.push_back(to_json_value(e));
  return json::serialize(a);
}

std::vector<LedgerEntry> ledger_from_json(std::string_view text) {
  auto v = json::parse(text);
  if (!v.is_array()) throw std::runtime_error("ledger: expected a JSON array");
  std::vector<LedgerEntry> out;
  for (const auto& e : v.get_array()) out.push_back(ledger_entry_from_json_value(e));
  return out;
}

std::string side_effects_to_json(const std::vector<SideEffect>& effects) {
  json::array a;
  for (const auto& e : effects) a.push_back(to_json_value(e));
  return json::serialize(a);
}

std::vector<SideEffect> side_effects_from_json(std::string_view text) {
  auto v = json::parse(text);
  if (!v.is_array()) throw std::runtime_error("side effects: expected a JSON array");
  std::vector<SideEffect> out;
  for (const auto& item : v.get_array()) out.push_back(side_effect_from_json_value(item));
  return out;
}

}  // namespace llmchaos
