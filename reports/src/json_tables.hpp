#pragma once
// The JSON report's fields, in the order they are written (report.json's contract: README.md). The
// writer and the reader both walk these tables (json_fields.hpp says how).
#include "json_fields.hpp"
#include "llmchaos/reports/json.hpp"
#include "text.hpp"

namespace llmchaos::reports::detail::jsonf {

// The key of the case list: the writer streams it case by case after every other run field.
inline constexpr std::string_view cases_key = "cases";

template <>
struct table<client::AttemptRecord> {
  using T = client::AttemptRecord;
  static std::span<const Field<T>> fields() {
    static const Field<T> f[] = {field<&T::index>("index"),
                                 field<&T::route>("route"),
                                 field<&T::route_attempt>("route_attempt"),
                                 field<&T::kind>("kind"),
                                 field<&T::start_ms>("start_ms"),
                                 field<&T::end_ms>("end_ms"),
                                 field<&T::status>("status"),
                                 field<&T::event>("event"),
                                 field<&T::owner>("owner"),
                                 field<&T::commit>("commit"),
                                 field<&T::events>("events"),
                                 field<&T::visible_tokens>("visible_tokens"),
                                 field<&T::tool_call>("tool_call"),
                                 field<&T::reason>("reason")};
    return f;
  }
};

template <>
struct table<client::FailurePoint> {
  using T = client::FailurePoint;
  static std::span<const Field<T>> fields() {
    static const Field<T> f[] = {field<&T::point>("point"),    field<&T::attempt>("attempt"),
                                 field<&T::route>("route"),    field<&T::action>("action"),
                                 field<&T::rule>("rule"),      field<&T::rule_text>("rule_text"),
                                 field<&T::inputs>("inputs"),  field<&T::next_route>("next_route"),
                                 field<&T::wait_ms>("wait_ms")};
    return f;
  }
};

// Journal lines are JSON themselves and are written parsed; a line that does not parse is kept whole
// under "unparsed". Read back, a line is the serialised value (or the unparsed text).
inline json::value journal_line(const std::string& line) {
  boost::system::error_code ec;
  auto v = json::parse(line, ec);
  if (ec) return json::object{{"unparsed", line}};
  return v;
}
inline std::string journal_text(const json::value& v) {
  if (const auto* o = v.if_object(); o && o->size() == 1)
    if (const auto* u = o->if_contains("unparsed"); u && u->is_string()) return std::string(u->get_string());
  return json::serialize(v);
}

template <>
struct table<client::DecisionLog> {
  using T = client::DecisionLog;
  static std::span<const Field<T>> fields() {
    static const Field<T> f[] = {
        field<&T::operation_id>("operation_id"),
        field<&T::delivery>("delivery"),
        field<&T::outcome>("outcome"),
        field<&T::answered>("answered"),
        field<&T::text>("text"),
        field<&T::route>("route"),
        field<&T::model>("model"),
        field<&T::input_tokens>("input_tokens"),
        field<&T::output_tokens>("output_tokens"),
        field<&T::elapsed_ms>("elapsed_ms"),
        field<&T::extra_cost_usd>("extra_cost_usd"),
        field<&T::attempts>("attempts"),
        field<&T::failures>("failures"),
        field<&T::limited_by>(
            "limited_by"),  // a tier refusal: read back so a merge leaves it out of the split too
        {"journal",
         [](const T& t) {
           json::array a;
           for (const auto& line : t.journal) a.push_back(journal_line(line));
           return json::value(std::move(a));
         },
         [](const json::value& j, T& t) {
           const auto* a = j.if_array();
           if (!a) expected("an array", j);
           t.journal.clear();
           for (const auto& v : *a) t.journal.push_back(journal_text(v));
         }}};
    return f;
  }
};

template <>
struct table<harness::PointResult> {
  using T = harness::PointResult;
  static std::span<const Field<T>> fields() {
    static const Field<T> f[] = {field<&T::point>("point"), field<&T::expected>("expected"),
                                 field<&T::from_log>("from_log"), field<&T::from_ledger>("from_ledger"),
                                 field<&T::rule>("rule")};
    return f;
  }
};

template <>
struct table<harness::CheckResult> {
  using T = harness::CheckResult;
  static std::span<const Field<T>> fields() {
    static const Field<T> f[] = {field<&T::name>("name"), field<&T::ok>("ok"), field<&T::message>("message")};
    return f;
  }
};

inline void read_verdict(const json::value& j, harness::CaseResult& c) {
  std::string s;
  decode(j, s);
  for (auto v :
       {harness::Verdict::pass, harness::Verdict::fail, harness::Verdict::unknown, harness::Verdict::na})
    if (harness::to_string(v) == s) {
      c.verdict = v;
      return;
    }
  throw BadValue("\"" + s + "\" is not one of pass, fail, unknown, n/a");
}

template <>
struct table<harness::CaseResult> {
  using T = harness::CaseResult;
  static std::span<const Field<T>> fields() {
    static const Field<T> f[] = {
        field<&T::name>("name"),
        field<&T::index>("index"),
        // Cut to description_limit with a marker (a 50 MB description must not be copied whole).
        {"description", [](const T& c) { return json::value(report_description(c.description)); },
         [](const json::value& j, T& c) { decode(j, c.description); }},
        field<&T::file>("file"),
        field<&T::folder>("folder"),
        field<&T::tags>("tags"),
        {"verdict", [](const T& c) { return json::value(harness::to_string(c.verdict)); }, read_verdict},
        field<&T::unknown_reason>("unknown_reason"),
        field<&T::reason>("reason"),
        {"summary", [](const T& c) { return json::value(verdict_summary(c)); }, nullptr},
        field<&T::expected>("expected"),
        field<&T::observed>("observed"),
        field<&T::expected_outcome>("expected_outcome"),
        field<&T::observed_outcome>("observed_outcome"),
        field<&T::observed_actions>("observed_actions"),
        field<&T::policy_name>("policy"),
        field<&T::policy_file>("policy_file"),
        field<&T::wall_ms>("wall_ms"),
        field<&T::deadline_ms>("deadline_ms"),
        field<&T::virtual_time>("virtual_time"),
        field<&T::points>("points"),
        field<&T::checks>("checks"),
        field<&T::attempts_by_route>("attempts_by_route"),
        field<&T::ledger>("ledger"),
        field<&T::foreign>("foreign_traffic"),
        field<&T::side_effects>("side_effects"),
        field<&T::request_started_ms>("request_started_ms"),
        field<&T::logs>("logs"),
        field<&T::alive_log>("alive_log"),
        field<&T::driver_output>("driver_output")};
    return f;
  }
};

template <>
struct table<harness::BaselineChange> {
  using T = harness::BaselineChange;
  static std::span<const Field<T>> fields() {
    static const Field<T> f[] = {field<&T::case_name>("case"), field<&T::before>("before"),
                                 field<&T::after>("after"), field<&T::before_all>("before_all"),
                                 field<&T::after_all>("after_all")};
    return f;
  }
};

template <>
struct table<harness::Setting> {
  using T = harness::Setting;
  static std::span<const Field<T>> fields() {
    static const Field<T> f[] = {field<&T::name>("name"), field<&T::value>("value")};
    return f;
  }
};

template <>
struct table<harness::Shard> {
  using T = harness::Shard;
  static std::span<const Field<T>> fields() {
    static const Field<T> f[] = {field<&T::index>("index"), field<&T::count>("count")};
    return f;
  }
};

template <>
struct table<harness::RunResult> {
  using T = harness::RunResult;
  static json::value outcome_split(const T& run) {
    // Every outcome is present, zeros included: the split is six numbers, never one success rate.
    const auto split = run.outcome_split();
    json::object outcomes;
    for (const auto& [outcome, name] : enum_names<Outcome>::table) {
      const auto it = split.find(outcome);
      outcomes[name] = it == split.end() ? 0 : it->second;
    }
    return outcomes;
  }
  static std::span<const Field<T>> fields() {
    static const Field<T> f[] = {
        {"schema", [](const T&) { return json::value(json_schema_id); },
         [](const json::value& j, T&) {
           std::string s;
           decode(j, s);
           if (s != json_schema_id)
             throw BadValue("\"" + s + "\" is not " + std::string(json_schema_id) +
                            " (not a report of this version)");
         }},
        field<&T::tool_version>("tool_version"),
        field<&T::seed>("seed"),
        field<&T::driver>("driver"),
        field<&T::time_scale>("time_scale"),
        field<&T::label>("label"),
        field<&T::settings>("settings"),
        field<&T::warnings>("warnings"),
        field<&T::started_at>("started_at"),
        field<&T::duration_ms>("duration_ms"),
        {"shard", [](const T& run) { return run.shard.sharded() ? encode(run.shard) : json::value(nullptr); },
         [](const json::value& j, T& run) {
           if (!j.is_null()) decode(j, run.shard);
         }},
        field<&T::merged_shards>("merged_shards"),
        field<&T::catalog>("catalog"),
        field<&T::catalog_cases>("catalog_cases"),
        {"totals",
         [](const T& run) {
           return json::value(json::object{{"cases", run.cases.size()},
                                           {"passed", run.passed()},
                                           {"failed", run.failed()},
                                           {"unknown", run.unknown()},
                                           {"not_applicable", run.not_applicable()}});
         },
         nullptr},
        {"outcome_split", outcome_split, nullptr},
        {"requests", [](const T& run) { return json::value(split_total(run.outcome_split())); }, nullptr},
        {"baseline",
         [](const T& run) { return run.baseline.empty() ? json::value(nullptr) : json::value(run.baseline); },
         [](const json::value& j, T& run) {
           if (!j.is_null()) decode(j, run.baseline);
         }},
        field<&T::baseline_changes>("baseline_changes"),
        field<&T::cases>(cases_key)};
    return f;
  }
};

}  // namespace llmchaos::reports::detail::jsonf
