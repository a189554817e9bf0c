#include "text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace llmchaos::reports::detail {
namespace {

constexpr std::string_view replacement_char = "\xEF\xBF\xBD";  // U+FFFD

// Length of the well-formed UTF-8 sequence starting at s[i] (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF), or 0 when the bytes there are not one.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 == 0xE0) {
    n = 3, lo = 0xA0;
  } else if ((b0 >= 0xE1 && b0 <= 0xEC) || b0 == 0xEE || b0 == 0xEF) {
    n = 3;
  } else if (b0 == 0xED) {
    n = 3, hi = 0x9F;
  } else if (b0 == 0xF0) {
    n = 4, lo = 0x90;
  } else if (b0 >= 0xF1 && b0 <= 0xF3) {
    n = 4;
  } else if (b0 == 0xF4) {
    n = 4, hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  const auto b1 = static_cast<unsigned char>(s[i + 1]);
  if (b1 < lo || b1 > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (b < 0x80 || b > 0xBF) return 0;
  }
  return n;
}

std::string route_attempt(const std::string& route, int n) {
  return fmt::format("{}#{}", route, n);
}

std::string repair(std::string_view s, bool for_xml) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      if (for_xml && b < 0x20 && b != '\t' && b != '\n' && b != '\r')
        out += fmt::format("\\x{:02x}", b);
      else
        out += static_cast<char>(b);
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out += replacement_char;
      ++i;
      continue;
    }
    const auto seq = s.substr(i, n);
    out += (for_xml && (seq == "\xEF\xBF\xBE" || seq == "\xEF\xBF\xBF")) ? replacement_char : seq;
    i += n;
  }
  return out;
}

}  // namespace

std::string clean_text(std::string_view s) {
  return repair(s, true);
}
std::string valid_utf8(std::string_view s) {
  return repair(s, false);
}

std::string markup_escape(std::string_view s, bool attribute) {
  const std::string clean = clean_text(s);
  std::string out;
  out.reserve(clean.size() + clean.size() / 8);
  for (char c : clean) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;  // named, not &#39;: some JUnit readers decode only the five named entities
      case '\t':
        out += attribute ? "&#9;" : "\t";
        break;
      case '\n':
        out += attribute ? "&#10;" : "\n";
        break;
      case '\r':
        out += "&#13;";
        break;  // a raw CR would be normalised away by the parser
      default:
        out += c;
    }
  }
  return out;
}

std::string md_inline(std::string_view s) {
  const std::string clean = clean_text(s);
  std::string out;
  out.reserve(clean.size() + 8);
  for (char c : clean) {
    switch (c) {
      case '\n':
      case '\r':
      case '\t':
        out += ' ';
        break;
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '\\':
      case '*':
      case '_':
      case '`':
      case '|':
      case '[':
      case ']':
      case '~':
      case '#':
        out += '\\';
        out += c;
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string md_code(std::string_view s) {
  std::string body;
  bool backtick = false;
  for (char c : clean_text(s)) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    if (c == '|') body += '\\';  // GFM splits table cells on '|' even inside code spans
    backtick = backtick || c == '`';
    body += c;
  }
  return backtick ? "`` " + body + " ``" : "`" + body + "`";
}

std::string md_code_block(std::string_view content, std::string_view info) {
  std::string body = clean_text(content);
  std::size_t longest = 0, run = 0;
  for (char c : body) {
    run = (c == '`') ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  if (body.empty() || body.back() != '\n') body += '\n';
  return fence + std::string(info) + "\n" + body + fence + "\n";
}

std::string format_ms(double ms) {
  if (!std::isfinite(ms)) return "?";
  if (std::fabs(ms) < 1000) return fmt::format("{:.1f} ms", ms);
  return fmt::format("{:.2f} s", ms / 1000);
}

std::string format_seconds(double ms) {
  // JUnit's time pattern has no sign and no exponent.
  if (!std::isfinite(ms) || ms < 0) ms = 0;
  return fmt::format("{:.3f}", ms / 1000);
}

std::string format_number(double v) {
  if (!std::isfinite(v)) return "null";
  return fmt::format("{}", v);
}

std::string ledger_end_label(const LedgerEntry& e) {
  const bool held = e.status == 0 && e.outcome == AttemptOutcome::held_then_closed;
  if (!e.finished)
    return e.status == 0 ? "held, still open when the case ended" : "still open when the case ended";
  const std::string at = format_ms(e.finished_at_ms);
  switch (e.outcome) {
    case AttemptOutcome::held_then_closed:
      // Shorter than the planned hold (1 ms of slack): the client closed first.
      if (held && e.finished_at_ms - e.received_at_ms + 1 < e.planned_latency_ms)
        return "held, client gave up at " + at;
      return "held " + format_ms(e.planned_latency_ms) + ", closed by the mock at " + at;
    case AttemptOutcome::client_closed:
      return "client gave up at " + at;
    case AttemptOutcome::completed:
      return "completed at " + at;
    case AttemptOutcome::cut:
      return "cut at " + at;
    case AttemptOutcome::reset:
      return "reset at " + at;
  }
  return std::string(to_string(e.outcome)) + " at " + at;
}

std::string report_description(std::string_view d) {
  if (d.size() <= description_limit) return std::string(d);
  std::size_t cut = description_limit;
  while (cut > 0 && (static_cast<unsigned char>(d[cut]) & 0xC0) == 0x80)
    --cut;  // not inside a UTF-8 sequence
  return fmt::format("{} [description cut: {} bytes, the reports keep the first {}]", d.substr(0, cut),
                     d.size(), description_limit);
}

std::string rule_label(const client::FailurePoint& fp) {
  std::string_view text = fp.rule_text;
  const std::string number = std::to_string(fp.rule);
  if (text.substr(0, number.size()) == number && text.substr(number.size(), 2) == ": ")
    text.remove_prefix(number.size() + 2);
  return text.empty() ? "rule " + number : "rule " + number + ": " + std::string(text);
}

std::string_view outcome_label(Outcome o) {
  switch (o) {
    case Outcome::primary_success:
      return "primary success";
    case Outcome::retry_recovery:
      return "retry recovery";
    case Outcome::fallback_recovery:
      return "fallback recovery";
    case Outcome::degraded:
      return "degraded";
    case Outcome::queued:
      return "queued";
    case Outcome::fail_closed:
      return "fail closed";
  }
  return "?";
}

std::vector<int> failure_anchors(const client::DecisionLog& log) {
  std::vector<int> anchors;
  for (const auto& fp : log.failures) {
    const bool sent = std::any_of(log.attempts.begin(), log.attempts.end(),
                                  [&](const client::AttemptRecord& a) { return a.index == fp.attempt; });
    anchors.push_back(sent ? fp.attempt : anchors.empty() ? -1 : anchors.back());
  }
  return anchors;
}

std::string request_label(const harness::CaseResult& c, std::size_t log_index) {
  // Requests are numbered by first delivery; a redelivery carries the number of the request it repeats.
  const auto& log = c.logs.at(log_index);
  std::size_t first = log_index;
  if (log.delivery > 1)
    for (std::size_t j = 0; j < log_index; ++j)
      if (c.logs[j].operation_id == log.operation_id && c.logs[j].delivery <= 1) {
        first = j;
        break;
      }
  const auto number = std::count_if(c.logs.begin(), c.logs.begin() + static_cast<std::ptrdiff_t>(first) + 1,
                                    [](const client::DecisionLog& l) { return l.delivery <= 1; });
  std::string label = fmt::format("request {}", number);
  if (log.delivery > 1) label += fmt::format(" · redelivery {}", log.delivery - 1);
  return label;
}

std::string case_label(const harness::CaseResult& c) {
  return c.folder.empty() ? c.name : c.folder + "/" + c.name;
}

std::string suite_name(const harness::CaseResult& c) {
  return c.folder.empty() ? "cases" : c.folder;
}

std::string actions_text(const std::vector<Action>& all, Action first) {
  if (all.empty()) return std::string(to_string(first));
  std::string out;
  for (Action a : all) out += (out.empty() ? "" : " → ") + std::string(to_string(a));
  return out;
}

int split_total(const std::map<Outcome, int>& split) {
  int total = 0;
  for (const auto& [outcome, n] : split) total += n;
  return total;
}

std::string percent(int part, int whole) {
  if (whole <= 0) return "-";
  return fmt::format("{:.1f}%", 100.0 * part / whole);
}

std::vector<const harness::CheckResult*> failed_checks(const harness::CaseResult& c) {
  std::vector<const harness::CheckResult*> out;
  for (const auto& check : c.checks)
    if (!check.ok) out.push_back(&check);
  return out;
}

std::string verdict_summary(const harness::CaseResult& c) {
  if (c.verdict == harness::Verdict::unknown)
    return c.unknown_reason.empty() ? "unknown" : "unknown: " + c.unknown_reason;
  if (c.verdict == harness::Verdict::na) return "n/a: " + c.reason;
  if (!c.reason.empty()) return fmt::format("{}: {}", to_string(c.verdict), c.reason);
  std::string out = fmt::format("expected {}, observed {}", to_string(c.expected), to_string(c.observed));
  if (c.expected_outcome && c.expected_outcome != c.observed_outcome)
    out += fmt::format("; outcome expected {}, observed {}", to_string(*c.expected_outcome),
                       c.observed_outcome ? to_string(*c.observed_outcome) : "none");
  std::string names;
  for (const auto* check : failed_checks(c)) names += (names.empty() ? "" : ", ") + check->name;
  if (!names.empty()) out += "; failed: " + names;
  return out;
}

namespace {

// `number`: the case's own attempt count so far (attempts are numbered 1, 2, ... across the case).
void log_text(std::string& out, const client::DecisionLog& log, std::string_view label,
              std::optional<double> started_ms, int& number) {
  out += fmt::format("{}  op {}  outcome {}  elapsed {}", label, log.operation_id, to_string(log.outcome),
                     format_ms(log.elapsed_ms));
  if (started_ms) out += "  started at +" + format_ms(*started_ms);
  if (log.answered)
    out += fmt::format("  answered by {} (model {}, tokens {}/{})", log.route, log.model, log.input_tokens,
                       log.output_tokens);
  else
    out += "  no answer";
  if (log.extra_cost_usd > 0) out += fmt::format("  extra cost ${:.4f}", log.extra_cost_usd);
  out += '\n';
  const auto anchors = failure_anchors(log);
  const auto points_after = [&](int anchor) {
    for (std::size_t f = 0; f < log.failures.size(); ++f) {
      if (anchors[f] != anchor) continue;
      const auto& fp = log.failures[f];
      out += fmt::format("    point {}: {}", fp.point, to_string(fp.action));
      if (!fp.next_route.empty()) out += " -> " + fp.next_route;
      if (fp.wait_ms > 0) out += " after " + format_ms(fp.wait_ms);
      if (fp.attempt < 0) out += fmt::format("  (no attempt sent on {})", fp.route);
      out += "  [" + rule_label(fp) + "]";
      if (!fp.inputs.empty()) out += "  inputs: " + fp.inputs;
      out += '\n';
    }
  };
  points_after(-1);
  for (const auto& a : log.attempts) {
    out += fmt::format("  attempt {:<2} {:<14} {:<10} {:>9} -> {:>9}  status {:>3}  {}", ++number,
                       route_attempt(a.route, a.route_attempt), to_string(a.kind), format_ms(a.start_ms),
                       format_ms(a.end_ms), a.status,
                       a.owner == Owner::none ? "ok" : "owner " + std::string(to_string(a.owner)));
    if (a.commit != CommitState::none) out += fmt::format("  commit {}", to_string(a.commit));
    if (a.event != client::TransportEvent::none) out += fmt::format("  event {}", to_string(a.event));
    if (a.visible_tokens > 0) out += fmt::format("  visible tokens {}", a.visible_tokens);
    if (a.tool_call) out += "  tool call";
    if (!a.reason.empty()) out += fmt::format("  ({})", a.reason);
    out += '\n';
    points_after(a.index);
  }
}

}  // namespace

std::string timeline_text(const harness::CaseResult& c) {
  std::string out;
  if (c.logs.empty()) out += "no decision log (the request never returned)\n";
  int number = 0;
  for (std::size_t k = 0; k < c.logs.size(); ++k)
    log_text(out, c.logs[k], fmt::format("{} (log {} of {})", request_label(c, k), k + 1, c.logs.size()),
             k < c.request_started_ms.size() ? std::optional(c.request_started_ms[k]) : std::nullopt, number);
  if (c.alive_log) {
    int alive = 0;  // a ledger of its own (the probe runs on a fresh script)
    log_text(out, *c.alive_log, "alive probe after the case", std::nullopt, alive);
  }
  out += fmt::format("mock ledger ({} attempt{}):\n", c.ledger.size(), c.ledger.size() == 1 ? "" : "s");
  for (std::size_t k = 0; k < c.ledger.size(); ++k) {
    const auto& e = c.ledger[k];
    out += fmt::format("  attempt {:<2} {:<14} {:<9} {:<19} status {:>3}  received {:>9}  {}", k + 1,
                       route_attempt(e.route, e.attempt), to_string(e.dialect), to_string(e.fault), e.status,
                       format_ms(e.received_at_ms), ledger_end_label(e));
    if (e.committed) out += "  committed";
    out += '\n';
  }
  if (!c.foreign.empty()) {
    out += fmt::format("foreign traffic ({}: not the case's requests, not counted as their attempts):\n",
                       c.foreign.size());
    for (const auto& e : c.foreign)
      out += fmt::format("  seq {:<4} {:<14} {} key \"{}\" status {:>3} at {}\n", e.seq, e.route, e.path,
                         e.idempotency_key, e.status, format_ms(e.received_at_ms));
  }
  if (!c.side_effects.empty()) {
    out += fmt::format("side effects ({}):\n", c.side_effects.size());
    for (const auto& s : c.side_effects)
      out += fmt::format("  seq {:<4} op {}  tool {}  at {}\n", s.seq, s.operation_id, s.tool,
                         format_ms(s.received_at_ms));
  }
  return out;
}

std::string case_details_text(const harness::CaseResult& c) {
  std::string out;
  out += fmt::format("case:     {}\nfile:     {}\n", c.name, c.file);
  if (!c.policy_name.empty()) out += fmt::format("policy:   {}\n", c.policy_name);
  out += fmt::format("verdict:  {}\n", to_string(c.verdict));
  if (!c.reason.empty()) out += fmt::format("reason:   {}\n", c.reason);
  if (c.verdict == harness::Verdict::unknown && !c.unknown_reason.empty())
    out += fmt::format("reason:   {}\n", c.unknown_reason);
  auto outcome_of = [](const std::optional<Outcome>& o) {
    return o ? fmt::format(" (outcome {})", to_string(*o)) : std::string();
  };
  out += fmt::format("expected: {}{}\n", to_string(c.expected), outcome_of(c.expected_outcome));
  out += fmt::format("observed: {}{}\n", to_string(c.observed), outcome_of(c.observed_outcome));
  if (!c.points.empty()) {
    out += "failure points:\n";
    for (const auto& p : c.points)
      out += fmt::format("  {}: expected {}, from log {}, from ledger {}{}\n", p.point, to_string(p.expected),
                         to_string(p.from_log), to_string(p.from_ledger),
                         p.rule.empty() ? "" : "  [" + p.rule + "]");
  }
  if (const auto failed = failed_checks(c); !failed.empty()) {
    out += "failed checks:\n";
    for (const auto* check : failed) out += fmt::format("  {}: {}\n", check->name, check->message);
  }
  if (!c.attempts_by_route.empty()) {
    out += "attempts by route:";
    for (const auto& [route, n] : c.attempts_by_route) out += fmt::format(" {} {}", route, n);
    out += '\n';
  }
  out += "timeline:\n" + timeline_text(c);
  if (!c.driver_output.empty())
    out += "driver output:\n" + c.driver_output + (c.driver_output.back() == '\n' ? "" : "\n");
  return out;
}

double timeline_extent_ms(const harness::CaseResult& c) {
  double extent = 1;
  for (const auto& log : c.logs) {
    extent = std::max(extent, log.elapsed_ms);
    for (const auto& a : log.attempts) extent = std::max(extent, a.end_ms);
    for (const auto& fp : log.failures)
      for (const auto& a : log.attempts)
        if (a.index == fp.attempt) extent = std::max(extent, a.end_ms + fp.wait_ms);
  }
  return extent;
}

}  // namespace llmchaos::reports::detail
