#include "html_timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <map>

#include "text.hpp"

namespace llmchaos::reports::detail {
namespace {

constexpr std::string_view logs_axis_note = "time since the request started";

// Geometry of the drawing (SVG user units; the SVG scales to the page width).
constexpr double width = 960, label_w = 180, outcome_w = 130, plot_w = width - label_w - outcome_w;
constexpr double row_h = 36, top_pad = 6, axis_h = 26;
constexpr double char_w = 6.3;  // average glyph width at the 10-11px sizes used, for fit checks

struct Bar {
  std::size_t row;
  double start, end;
  AttemptClass cls;
  bool committed;
  std::string title, label;
};
struct Marker {
  std::size_t row;
  double at;
  int point;
  Action action;
  std::string text, title;
};
struct Link {  // from the end of one attempt to the start of the next (the wait between them)
  std::size_t from_row, to_row;
  double from, to;
};
struct RowEnd {
  std::size_t row;
  Outcome outcome;
};

struct Drawing {
  std::vector<std::string> rows;
  std::vector<Bar> bars;
  std::vector<Marker> markers;
  std::vector<Link> links;
  std::vector<RowEnd> ends;
  double extent = 1;
  std::string axis_note;
  std::vector<std::pair<double, std::string>> ticks;  // real time of the tick, its label
};

std::size_t row_of(std::vector<std::string>& rows, const std::string& name) {
  auto it = std::find(rows.begin(), rows.end(), name);
  if (it != rows.end()) return static_cast<std::size_t>(it - rows.begin());
  rows.push_back(name);
  return rows.size() - 1;
}

AttemptClass classify_attempt(const client::AttemptRecord& a) {
  if (a.owner == Owner::none) return AttemptClass::ok;
  if (a.owner == Owner::unknown || a.commit == CommitState::unknown) return AttemptClass::unknown;
  switch (a.owner) {
    case Owner::transient:
    case Owner::rate:
    case Owner::quota:
      return AttemptClass::retryable;
    default:
      return AttemptClass::fatal;
  }
}

// The client's view: every attempt of every request, and the action at each failure point.
Drawing from_logs(const harness::CaseResult& c) {
  Drawing d;
  const bool sequence = c.logs.size() > 1;
  d.extent = timeline_extent_ms(c);
  d.axis_note = std::string(logs_axis_note);
  int number = 0;  // the case's own attempt numbers, 1, 2, ... across its requests
  for (std::size_t k = 0; k < c.logs.size(); ++k) {
    const auto& log = c.logs[k];
    const std::string request_row = sequence ? request_label(c, k) : "";
    const auto row_for = [&](const std::string& route) {
      return row_of(d.rows, sequence ? request_row : route);
    };
    if (sequence) row_for("");
    std::map<int, std::pair<std::size_t, double>> attempt_end;  // attempt index -> (row, end)
    const client::AttemptRecord* previous = nullptr;
    for (const auto& a : log.attempts) {
      const std::size_t row = row_for(a.route);
      std::string title =
          fmt::format("attempt {} ({}) · {}#{} · {} – {} · status {} · {}", ++number, to_string(a.kind),
                      a.route, a.route_attempt, format_ms(a.start_ms), format_ms(a.end_ms), a.status,
                      a.owner == Owner::none ? "ok" : "owner " + std::string(to_string(a.owner)));
      if (a.commit != CommitState::none) title += " · commit " + std::string(to_string(a.commit));
      if (a.event != client::TransportEvent::none) title += " · " + std::string(to_string(a.event));
      if (!a.reason.empty()) title += " · " + a.reason;
      d.bars.push_back(Bar{row, a.start_ms, a.end_ms, classify_attempt(a),
                           a.owner != Owner::none && a.commit == CommitState::committed, title,
                           sequence ? a.route : ""});
      if (previous) d.links.push_back(Link{row_for(previous->route), row, previous->end_ms, a.start_ms});
      attempt_end[a.index] = {row, a.end_ms};
      previous = &a;
    }
    const auto anchors = failure_anchors(log);
    for (std::size_t f = 0; f < log.failures.size(); ++f) {
      const auto& fp = log.failures[f];
      // A point with no attempt (breaker open, budget spent) sits at its predecessor, or at the start.
      const auto it = attempt_end.find(anchors[f]);
      const auto [row, at] = it != attempt_end.end()
                                 ? it->second
                                 : std::pair{row_for(fp.route.empty() ? c.logs[k].route : fp.route), 0.0};
      std::string text(to_string(fp.action));
      if (fp.action == Action::fallback && !fp.next_route.empty()) text += " → " + fp.next_route;
      std::string title = fmt::format("point {}: {} · {}", fp.point, to_string(fp.action), rule_label(fp));
      if (fp.attempt < 0) title += " · no attempt sent on " + fp.route;
      if (fp.wait_ms > 0) title += " · wait " + format_ms(fp.wait_ms);
      d.markers.push_back(Marker{row, at, fp.point, fp.action, text, title});
    }
    if (previous || sequence)
      d.ends.push_back(RowEnd{row_for(previous ? previous->route : ""), log.outcome});
    else if (!log.failures.empty())
      d.ends.push_back(RowEnd{d.markers.back().row, log.outcome});
  }
  return d;
}

// The mock's view, for a case whose request never returned (no decision log): what reached the mock.
Drawing from_ledger(const harness::CaseResult& c) {
  Drawing d;
  d.axis_note = "time since the case's script was installed (mock ledger; the request never returned)";
  double latest = c.wall_ms;
  for (const auto& e : c.ledger) latest = std::max({latest, e.received_at_ms, e.finished_at_ms});
  d.extent = std::max(1.0, latest);
  for (std::size_t k = 0; k < c.ledger.size(); ++k) {
    const auto& e = c.ledger[k];
    const std::size_t row = row_of(d.rows, e.route);
    const bool unfinished = !e.finished || e.status == 0 || e.outcome == AttemptOutcome::held_then_closed;
    const bool ok =
        !unfinished && e.status >= 200 && e.status < 300 && e.outcome == AttemptOutcome::completed;
    const double end = e.finished ? std::max(e.finished_at_ms, e.received_at_ms) : d.extent;
    std::string title =
        fmt::format("attempt {} · {}#{} · {} · status {} · received {} · {}", k + 1, e.route, e.attempt,
                    to_string(e.fault), e.status, format_ms(e.received_at_ms), ledger_end_label(e));
    if (e.committed) title += " · committed";
    d.bars.push_back(Bar{row, e.received_at_ms, end,
                         unfinished ? AttemptClass::unknown
                         : ok       ? AttemptClass::ok
                                    : AttemptClass::failed,
                         e.committed && !ok, title, ""});
  }
  return d;
}

double nice_step(double extent) {
  const double raw = extent / 6;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  const double f = raw / magnitude;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * magnitude;
}

std::string time_label(double t, double extent) {
  if (extent >= 2000) return fmt::format("{} s", std::round(t) / 1000);
  return fmt::format("{} ms", std::round(t * 1000) / 1000);
}

std::string scale_note(double scale) {
  if (scale == 1) return {};
  return fmt::format(", in scripted time (the case file's); real time at --time-scale {} beside it",
                     format_number(scale));
}

// Ticks at round scripted times (what the case file says); the real time beside when scaled.
void add_ticks(Drawing& d, double time_scale) {
  const double scale = time_scale > 0 ? time_scale : 1;
  const double scripted_extent = d.extent / scale;
  const double step = nice_step(scripted_extent);
  for (double t = 0; t <= scripted_extent * 1.0001; t += step) {
    std::string label = time_label(t, scripted_extent);
    if (scale != 1 && t > 0) label += " · " + time_label(t * scale, d.extent);
    d.ticks.emplace_back(t * scale, std::move(label));
  }
  d.axis_note += scale_note(scale);
}

std::size_t code_points(std::string_view s) {
  return static_cast<std::size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// At most max_chars code points, the last one an ellipsis when the text is cut.
std::string truncate(const std::string& s, std::size_t max_chars) {
  std::size_t chars = 0, cut = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;  // inside a UTF-8 sequence
    if (chars + 1 == max_chars) cut = i;
    if (++chars > max_chars) return s.substr(0, cut) + "…";
  }
  return s;
}

// Where a drawing's times and rows land in SVG user units.
struct Layout {
  const Drawing& d;
  const double rows_h = static_cast<double>(d.rows.size()) * row_h;

  double x_of(double t) const { return label_w + std::clamp(t / d.extent, 0.0, 1.0) * plot_w; }
  double row_top(std::size_t r) const { return top_pad + static_cast<double>(r) * row_h; }
};

// The row bands with their labels, then the time grid with its ticks.
void draw_grid(const Layout& at, std::string& svg) {
  for (std::size_t r = 0; r < at.d.rows.size(); ++r) {
    svg += fmt::format("<rect class=\"row{}\" x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
                       r % 2 ? " odd" : "", at.row_top(r), width, row_h);
    svg += fmt::format("<text class=\"row-label\" x=\"{}\" y=\"{:.1f}\"><title>{}</title>{}</text>\n",
                       label_w - 10, at.row_top(r) + 27, markup_escape(at.d.rows[r]),
                       markup_escape(truncate(at.d.rows[r], 26)));
  }
  for (const auto& [t, label] : at.d.ticks) {
    const double x = at.x_of(t);
    svg += fmt::format("<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>", x,
                       top_pad, top_pad + at.rows_h + 4);
    svg += fmt::format("<text class=\"tick\" x=\"{:.1f}\" y=\"{}\">{}</text>\n", x, top_pad + at.rows_h + 18,
                       markup_escape(label));
  }
}

// The waits between attempts, then the attempts over them.
void draw_attempts(const Layout& at, std::string& svg) {
  for (const auto& l : at.d.links)
    svg +=
        fmt::format("<line class=\"wait\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>\n",
                    at.x_of(l.from), at.row_top(l.from_row) + 23, at.x_of(l.to), at.row_top(l.to_row) + 23);
  for (const auto& b : at.d.bars) {
    const double x = at.x_of(b.start), w = std::max(3.0, at.x_of(b.end) - x);
    svg += fmt::format(
        "<rect class=\"bar a-{}{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"14\" rx=\"2\">"
        "<title>{}</title></rect>",
        attempt_class_name(b.cls), b.committed ? " committed" : "", x, at.row_top(b.row) + 16, w,
        markup_escape(b.title));
    if (!b.label.empty() && w >= char_w * static_cast<double>(code_points(b.label)) + 8)
      svg += fmt::format("<text class=\"bar-label\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", x + 4,
                         at.row_top(b.row) + 26.5, markup_escape(b.label));
    svg += '\n';
  }
}

// Points at the same spot (a point with no attempt of its own) are set side by side.
std::vector<double> marker_xs(const Layout& at, const std::vector<Marker>& sorted) {
  std::vector<double> xs;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const bool crowded =
        i > 0 && sorted[i - 1].row == sorted[i].row && at.x_of(sorted[i].at) - xs.back() < 16;
    xs.push_back(crowded ? xs.back() + 16 : at.x_of(sorted[i].at));
  }
  return xs;
}

// Markers go last so they sit on top.
void draw_markers(const Layout& at, std::string& svg) {
  auto markers = at.d.markers;
  std::sort(markers.begin(), markers.end(),
            [](const Marker& a, const Marker& b) { return a.row != b.row ? a.row < b.row : a.at < b.at; });
  const std::vector<double> xs = marker_xs(at, markers);
  // A label goes right of its mark when it fits before the next mark (or, for the last mark of a row,
  // before the outcome column), else left of it when that side is free, else it is left out (the
  // mark's colour and tooltip still say the action).
  double taken_until = 0;  // right edge of what the previous mark of the row occupies
  for (std::size_t i = 0; i < markers.size(); ++i) {
    const auto& m = markers[i];
    const double x = xs[i], y = at.row_top(m.row);
    if (i == 0 || markers[i - 1].row != m.row) taken_until = 0;
    const double needed = char_w * static_cast<double>(code_points(m.text)) + 14;
    const bool last_in_row = i + 1 == markers.size() || markers[i + 1].row != m.row;
    const double room_until = last_in_row ? label_w + plot_w : xs[i + 1];
    const bool right = x + needed <= room_until;
    const bool left = !right && last_in_row && x - needed >= taken_until;
    const auto action = to_string(m.action);
    svg += fmt::format("<g class=\"mark x-{}\"><title>{}</title>", action, markup_escape(m.title));
    svg +=
        fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>", x, y + 8, y + 32);
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"7\"/>", x, y + 8);
    svg += fmt::format("<text class=\"num\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", x, y + 11.2, m.point);
    if (right || left)
      svg += fmt::format("<text class=\"act{}\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", left ? " left" : "",
                         left ? x - 10 : x + 10, y + 12, markup_escape(m.text));
    svg += "</g>\n";
    taken_until = right ? x + needed : x + 8;
  }
}

std::string render(const Drawing& d) {
  const Layout at{d};
  const double height = top_pad + at.rows_h + axis_h;
  std::string svg = fmt::format(
      "<svg class=\"timeline\" viewBox=\"0 0 {} {}\" role=\"img\" preserveAspectRatio=\"xMinYMin meet\">"
      "<title>{}</title>\n",
      width, height, markup_escape(d.axis_note, true));
  draw_grid(at, svg);
  draw_attempts(at, svg);
  draw_markers(at, svg);
  for (const auto& e : d.ends)
    svg += fmt::format("<text class=\"end o-{}\" x=\"{}\" y=\"{:.1f}\">{}</text>\n", to_string(e.outcome),
                       label_w + plot_w + 12, at.row_top(e.row) + 27, outcome_label(e.outcome));
  svg += "</svg>\n";
  return svg;
}

}  // namespace

std::string_view attempt_class_name(AttemptClass k) {
  switch (k) {
    case AttemptClass::ok:
      return "ok";
    case AttemptClass::retryable:
      return "retryable";
    case AttemptClass::fatal:
      return "fatal";
    case AttemptClass::unknown:
      return "unknown";
    case AttemptClass::failed:
      return "failed";
  }
  return "?";
}

std::string_view attempt_class_label(AttemptClass k) {
  switch (k) {
    case AttemptClass::ok:
      return "answered";
    case AttemptClass::retryable:
      return "failed: transient / rate / quota";
    case AttemptClass::fatal:
      return "failed: request / auth / policy / contract";
    case AttemptClass::unknown:
      return "unknown result (commit state unknown, or never answered)";
    case AttemptClass::failed:
      return "failed (mock's view only)";
  }
  return "?";
}

namespace {
Drawing drawing_of(const harness::CaseResult& c, double time_scale) {
  Drawing d = c.logs.empty() ? from_ledger(c) : from_logs(c);
  add_ticks(d, time_scale);
  return d;
}
// In tenths of a ms, whole: the page draws at 960 units wide, nothing finer shows (and "1438" is
// shorter than "1.438E2").
std::int64_t coarse(double v) {
  return std::isfinite(v) ? static_cast<std::int64_t>(std::llround(v * 10)) : 0;
}
}  // namespace

std::string timeline_svg(const harness::CaseResult& c, double time_scale) {
  const Drawing d = drawing_of(c, time_scale);
  if (d.rows.empty()) return "<p class=\"muted\">No attempt reached the mock provider.</p>\n";
  return "<p class=\"axis-note\">" + markup_escape(d.axis_note) + "</p>\n" + render(d);
}

std::string timeline_geometry_js(double time_scale) {
  std::string labels;
  for (const auto& [o, name] : enum_names<Outcome>::table)
    labels += fmt::format("{}{}: \"{}\"", labels.empty() ? "" : ", ", name, outcome_label(o));
  return fmt::format(
      "var G = {{W: {}, LW: {}, PW: {}, RH: {}, TP: {}, AH: {}, CW: {}, NOTE: {}}}, OUTCOMES = {{{}}};\n",
      width, label_w, plot_w, row_h, top_pad, axis_h, char_w,
      boost::json::serialize(boost::json::value(std::string(logs_axis_note) + scale_note(time_scale))),
      labels);
}

namespace {
// A title's parts (split at " · "), each as its index: the parts repeat across cases where whole
// titles do not.
boost::json::array title_parts(std::string_view title, TextTable& strings) {
  constexpr std::string_view separator = " · ";
  boost::json::array parts;
  for (std::size_t from = 0;;) {
    const auto at = title.find(separator, from);
    parts.push_back(strings.ref(title.substr(from, at == std::string_view::npos ? at : at - from)));
    if (at == std::string_view::npos) return parts;
    from = at + separator.size();
  }
}
}  // namespace

std::string timeline_data(const harness::CaseResult& c, double time_scale, TextTable& strings) {
  namespace json = boost::json;
  const Drawing d = drawing_of(c, time_scale);
  if (d.rows.empty()) return "null";
  json::array rows, bars, marks, links, ends, ticks;
  for (const auto& r : d.rows) rows.emplace_back(strings.ref(r));
  for (const auto& b : d.bars)
    bars.push_back(json::array{b.row, coarse(b.start), coarse(b.end), strings.ref(attempt_class_name(b.cls)),
                               b.committed ? 1 : 0, title_parts(b.title, strings), strings.ref(b.label)});
  for (const auto& m : d.markers)
    marks.push_back(json::array{m.row, coarse(m.at), m.point, strings.ref(to_string(m.action)),
                                strings.ref(m.text), title_parts(m.title, strings)});
  for (const auto& l : d.links)
    links.push_back(json::array{l.from_row, l.to_row, coarse(l.from), coarse(l.to)});
  for (const auto& e : d.ends) ends.push_back(json::array{e.row, strings.ref(to_string(e.outcome))});
  for (const auto& [t, label] : d.ticks) ticks.push_back(json::array{coarse(t), strings.ref(label)});
  // the usual note is the page's G.NOTE (said once, not per case)
  const bool usual_note = d.axis_note == std::string(logs_axis_note) + scale_note(time_scale);
  return json::serialize(json::array{
      std::move(rows), std::move(bars), std::move(marks), std::move(links), std::move(ends), coarse(d.extent),
      std::move(ticks), usual_note ? json::value(nullptr) : json::value(strings.ref(d.axis_note))});
}

}  // namespace llmchaos::reports::detail
