// HTML: one self-contained page (inline CSS, inline SVG, inline script; nothing fetched): run facts,
// the metric split, then what needs looking at first: failed and unknown cases, each with its row of
// the action matrix and its timeline drawn in SVG. Passing cases come last as compact data (one JSON
// line each) that the page's script lists a page at a time and draws on demand (expand); what cases
// share (strings, tooltips' parts, whole drawings) is in two tables said once, so the page stays small
// and opens fast for 10,000 cases.
#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <map>
#include <optional>
#include <ostream>
#include <set>

#include "html_timeline.hpp"
#include "text.hpp"
#include "text_table.hpp"
#include "writers.hpp"

namespace llmchaos::reports::detail {
namespace {

using harness::CaseResult;
using harness::Verdict;

std::string h(std::string_view s) {
  return markup_escape(s, true);
}

constexpr std::string_view style = R"css(
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;
--pass:#1a7f37;--pass-bg:#dafbe1;--fail:#cf222e;--fail-bg:#ffebe9;--unk:#9a6700;--unk-bg:#fff8c5;
--primary_success:#2da44e;--retry_recovery:#0969da;--fallback_recovery:#1b7c83;--degraded:#bf8700;
--queued:#8c959f;--fail_closed:#cf222e;
--a-ok:#2da44e;--a-retryable:#fb8f44;--a-fatal:#cf222e;--a-unknown:#8250df;--a-failed:#bc4c00}
*{box-sizing:border-box}
[hidden]{display:none!important}
body{margin:0;background:#fff;color:var(--fg);font:14px/1.5 -apple-system,"Segoe UI","Noto Sans",Helvetica,Arial,"Liberation Sans",sans-serif}
main{max-width:1180px;margin:0 auto;padding:28px 32px 64px}
h1{font-size:24px;margin:0 0 4px}
h2{font-size:18px;margin:36px 0 12px;padding-bottom:6px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:0}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:12.5px}
pre{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:10px 12px;overflow:auto;white-space:pre-wrap;word-break:break-word}
.muted,.facts{color:var(--muted)}
.facts span{margin-right:18px;white-space:nowrap}
.facts b{color:var(--fg);font-weight:600}
.tiles{display:flex;gap:12px;flex-wrap:wrap;margin:18px 0 0}
.tile{flex:1 1 130px;border:1px solid var(--line);border-radius:8px;padding:10px 14px;background:#fff;color:inherit;text-decoration:none}
.tile:hover{box-shadow:0 1px 4px rgba(31,35,40,.15)}
button.expand{font:inherit;font-size:12px;border:1px solid var(--line);background:#fff;border-radius:4px;padding:0 6px;margin-right:6px;cursor:pointer}
button.more{font:inherit;font-size:13px;border:1px solid var(--line);background:#fff;border-radius:6px;padding:4px 14px;margin:10px 0;cursor:pointer}
tr.tl td{background:#fff;padding:6px 10px 12px}
.tile .n{display:block;font-size:26px;font-weight:600;line-height:1.2}
.tile .l{color:var(--muted);font-size:13px}
.tile.pass{border-color:#aceebb;background:var(--pass-bg)}.tile.pass .n{color:var(--pass)}
.tile.fail{border-color:#ffcecb;background:var(--fail-bg)}.tile.fail .n{color:var(--fail)}
.tile.unknown{border-color:#f5e0a0;background:var(--unk-bg)}.tile.unknown .n{color:var(--unk)}
.tile.zero{background:#fff;border-color:var(--line)}.tile.zero .n{color:var(--muted)}
.splitbar{display:flex;height:14px;border-radius:7px;overflow:hidden;background:var(--soft);border:1px solid var(--line)}
.splitbar span{display:block;height:100%}
.split{display:grid;grid-template-columns:repeat(6,1fr);gap:10px;margin-top:12px}
.split div{border:1px solid var(--line);border-radius:8px;padding:8px 12px;border-top-width:4px}
.split .n{font-size:20px;font-weight:600}.split .p{color:var(--muted);font-size:12px;margin-left:6px}
.split .l{display:block;color:var(--muted);font-size:12.5px}
.note{color:var(--muted);font-size:12.5px;margin:8px 0 0}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:6px 10px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:12px;color:var(--muted);font-weight:600;text-transform:uppercase;letter-spacing:.03em;background:var(--soft)}
td.num,th.num{text-align:right}
.matrix td{font-size:13.5px}
.matrix a{color:var(--fg);text-decoration:none;font-weight:500}.matrix a:hover{text-decoration:underline}
.folder{display:block;color:var(--muted);font-size:12px}
.act{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;border:1px solid var(--line);background:var(--soft);white-space:nowrap}
td.match{background:var(--pass-bg)}td.match .act{color:var(--pass);border-color:#aceebb;background:#fff}
td.mismatch,td.changed{background:var(--fail-bg)}
td.mismatch .act,td.changed .act{color:var(--fail);border-color:#ffcecb;background:#fff}
td.unk{background:var(--unk-bg);color:var(--unk);font-weight:600;font-size:12.5px}
p.warning{background:var(--unk-bg);color:var(--unk);padding:8px 12px;border-radius:6px}
.chip{display:inline-block;margin:1px 4px 1px 0;padding:0 7px;border-radius:9px;font-size:11.5px;border:1px solid var(--line);white-space:nowrap}
.chip.ok{color:var(--pass);border-color:#aceebb}.chip.bad{color:var(--fail);border-color:#ff8182;background:var(--fail-bg)}
.badge{display:inline-block;min-width:64px;text-align:center;padding:1px 8px;border-radius:10px;font-size:11.5px;font-weight:700;letter-spacing:.04em;text-transform:uppercase}
.badge.pass{background:var(--pass-bg);color:var(--pass)}.badge.fail{background:var(--fail-bg);color:var(--fail)}.badge.unknown{background:var(--unk-bg);color:var(--unk)}
.o{font-weight:600;white-space:nowrap}
.o-primary_success{color:var(--primary_success)}.o-retry_recovery{color:var(--retry_recovery)}.o-fallback_recovery{color:var(--fallback_recovery)}
.o-degraded{color:var(--degraded)}.o-queued{color:#6e7781}.o-fail_closed{color:var(--fail_closed)}
.exp-miss{display:block;font-size:12px;color:var(--fail)}
.confusion{width:auto;margin-top:8px}.confusion td,.confusion th{text-align:center;min-width:74px}
.confusion th.rowh{text-align:right}
.confusion td.diag{background:var(--pass-bg);color:var(--pass);font-weight:600}
.confusion td.off{background:var(--fail-bg);color:var(--fail);font-weight:600}
.confusion td.zero{color:#c4c9cf}
.filters{margin:0 0 10px}
.filters button{font:inherit;font-size:13px;border:1px solid var(--line);background:#fff;border-radius:6px;padding:3px 12px;margin-right:6px;cursor:pointer;color:var(--fg)}
.filters button.on{background:var(--fg);color:#fff;border-color:var(--fg)}
.legend{display:flex;flex-wrap:wrap;gap:6px 18px;font-size:12.5px;color:var(--muted);margin:0 0 14px}
.legend i{display:inline-block;width:14px;height:10px;border-radius:2px;margin-right:6px;vertical-align:-1px}
.legend i.mk{width:12px;height:12px;border-radius:50%}
article.case{border:1px solid var(--line);border-left-width:4px;border-radius:8px;padding:14px 18px 12px;margin:0 0 16px}
article.case.pass{border-left-color:var(--pass)}article.case.fail{border-left-color:var(--fail)}article.case.unknown{border-left-color:#d4a72c}
article.case header{display:flex;align-items:baseline;gap:10px;flex-wrap:wrap}
article.case .where{color:var(--muted);font-size:12.5px}
.summary{margin:6px 0 4px;font-weight:500}
.desc{margin:6px 0 0;color:var(--muted)}
ul.failed{margin:4px 0 8px;padding-left:20px;color:var(--fail)}
ul.failed b{font-weight:600}
.axis-note{margin:6px 0 2px;color:var(--muted);font-size:12px}
svg.timeline{display:block;width:100%;height:auto}
svg .row{fill:#fff}svg .row.odd{fill:#f6f8fa}
svg text{font-size:11px;fill:var(--fg)}
svg .row-label{text-anchor:end;font-size:12px}
svg .tick{text-anchor:middle;fill:var(--muted);font-size:10.5px}
svg .grid{stroke:#d1d9e0;stroke-dasharray:2 3}
svg .wait{stroke:#8c959f;stroke-dasharray:3 3;stroke-width:1.2}
svg .bar.a-ok{fill:var(--a-ok)}svg .bar.a-retryable{fill:var(--a-retryable)}svg .bar.a-fatal{fill:var(--a-fatal)}
svg .bar.a-unknown{fill:var(--a-unknown)}svg .bar.a-failed{fill:var(--a-failed)}
svg .bar.committed{stroke:#1f2328;stroke-width:1.6}
svg .bar-label{fill:#fff;font-size:10px;font-weight:600;pointer-events:none}
svg .mark line{stroke-width:2}svg .mark .num{fill:#fff;font-size:9.5px;font-weight:700;text-anchor:middle}
svg .mark .act{font-size:10.5px;font-weight:600}svg .mark .act.left{text-anchor:end}
svg .end{font-weight:600;font-size:11.5px}
svg .end.o-primary_success{fill:var(--primary_success)}svg .end.o-retry_recovery{fill:var(--retry_recovery)}
svg .end.o-fallback_recovery{fill:var(--fallback_recovery)}svg .end.o-degraded{fill:var(--degraded)}
svg .end.o-queued{fill:#6e7781}svg .end.o-fail_closed{fill:var(--fail_closed)}
details{margin-top:8px}
details summary{cursor:pointer;color:var(--muted);font-size:13px}
details table{margin:8px 0 4px;font-size:12.5px}
details td,details th{padding:4px 8px}
td.okc{color:var(--pass);font-weight:600}td.badc{color:var(--fail);font-weight:600}
footer{margin-top:40px;color:var(--muted);font-size:12px}
@media (max-width:900px){main{padding:20px 16px 48px}.split{grid-template-columns:repeat(3,1fr)}}
)css";

// One mark colour per action, for the timeline marks and the legend: an action added to the Action
// table needs its colour here (the size check says so), and gets its CSS with no other edit.
constexpr std::pair<Action, std::string_view> action_colors[] = {
    {Action::none, "#8c959f"},  {Action::retry, "#0969da"},   {Action::fallback, "#1b7c83"},
    {Action::queue, "#6e7781"}, {Action::degrade, "#bf8700"}, {Action::fail_closed, "#cf222e"},
    {Action::resume, "#8250df"}};
static_assert(std::size(action_colors) == std::size(enum_names<Action>::table),
              "every action needs a mark colour");

// The --x-ACTION colours and the rules that paint a timeline mark of class x-ACTION with them.
std::string action_style() {
  std::string out = ":root{";
  for (const auto& [a, colour] : action_colors) out += fmt::format("--x-{}:{};", to_string(a), colour);
  out += "}\n";
  for (const auto& [a, colour] : action_colors) {
    const auto n = to_string(a);
    out += fmt::format(
        "svg .x-{0} line{{stroke:var(--x-{0})}}svg .x-{0} circle,svg .x-{0} .act{{fill:var(--x-{0})}}\n", n);
  }
  return out;
}

// The passing cases: listed PAGE rows at a time from the JSON data block, each timeline drawn when its
// row is expanded. drawTimeline draws timeline_json's drawing as html_timeline.cpp's render() does; all
// text goes through esc().
constexpr std::string_view script = R"js(
// When the page was ready to read (bench/suite reads it from headless Chromium).
window.addEventListener('load', function () {
  document.documentElement.setAttribute('data-ready-ms', String(Math.round(performance.now())));
});
(function () {
  var PAGE = 200;
  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) { return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]; });
  }
  function cp(s) { return Array.from(s).length; }
  function trunc(s, n) { var a = Array.from(s); return a.length > n ? a.slice(0, n - 1).join('') + '\u2026' : s; }
  function f1(v) { return (Math.round(v * 10) / 10).toString(); }
  function drawTimeline(d) {
    if (!d) return '<p class="muted">No attempt reached the mock provider.</p>';
    var x = function (t) { return G.LW + Math.min(Math.max(t / Math.max(d.x, 1), 0), 1) * G.PW; };
    var top = function (r) { return G.TP + r * G.RH; }, rh = d.r.length * G.RH;
    var note = d.n || G.NOTE;
    var s = '<p class="axis-note">' + esc(note) + '</p><svg class="timeline" viewBox="0 0 ' + G.W + ' ' + (G.TP + rh + G.AH) +
      '" role="img" preserveAspectRatio="xMinYMin meet"><title>' + esc(note) + '</title>';
    d.r.forEach(function (name, r) {
      s += '<rect class="row' + (r % 2 ? ' odd' : '') + '" x="0" y="' + top(r) + '" width="' + G.W + '" height="' + G.RH +
        '"/><text class="row-label" x="' + (G.LW - 10) + '" y="' + f1(top(r) + 27) + '"><title>' + esc(name) + '</title>' +
        esc(trunc(name, 26)) + '</text>';
    });
    d.t.forEach(function (t) {
      var X = f1(x(t[0]));
      s += '<line class="grid" x1="' + X + '" y1="' + G.TP + '" x2="' + X + '" y2="' + (G.TP + rh + 4) + '"/><text class="tick" x="' +
        X + '" y="' + (G.TP + rh + 18) + '">' + esc(t[1]) + '</text>';
    });
    d.l.forEach(function (l) {
      s += '<line class="wait" x1="' + f1(x(l[2])) + '" y1="' + f1(top(l[0]) + 23) + '" x2="' + f1(x(l[3])) + '" y2="' +
        f1(top(l[1]) + 23) + '"/>';
    });
    d.b.forEach(function (b) {
      var X = x(b[1]), w = Math.max(3, x(b[2]) - X);
      s += '<rect class="bar a-' + esc(b[3]) + (b[4] ? ' committed' : '') + '" x="' + f1(X) + '" y="' + f1(top(b[0]) + 16) +
        '" width="' + f1(w) + '" height="14" rx="2"><title>' + esc(b[5]) + '</title></rect>';
      if (b[6] && w >= G.CW * cp(b[6]) + 8)
        s += '<text class="bar-label" x="' + f1(X + 4) + '" y="' + f1(top(b[0]) + 26.5) + '">' + esc(b[6]) + '</text>';
    });
    var m = d.m.slice().sort(function (a, b) { return a[0] !== b[0] ? a[0] - b[0] : a[1] - b[1]; }), xs = [], taken = 0;
    m.forEach(function (k, i) {
      var crowded = i > 0 && m[i - 1][0] === k[0] && x(k[1]) - xs[i - 1] < 16;
      xs.push(crowded ? xs[i - 1] + 16 : x(k[1]));
    });
    m.forEach(function (k, i) {
      var X = xs[i], y = top(k[0]);
      if (i === 0 || m[i - 1][0] !== k[0]) taken = 0;
      var need = G.CW * cp(k[4]) + 14, last = i + 1 === m.length || m[i + 1][0] !== k[0];
      var right = X + need <= (last ? G.LW + G.PW : xs[i + 1]), left = !right && last && X - need >= taken;
      s += '<g class="mark x-' + esc(k[3]) + '"><title>' + esc(k[5]) + '</title><line x1="' + f1(X) + '" y1="' + f1(y + 8) +
        '" x2="' + f1(X) + '" y2="' + f1(y + 32) + '"/><circle cx="' + f1(X) + '" cy="' + f1(y + 8) + '" r="7"/><text class="num" x="' +
        f1(X) + '" y="' + f1(y + 11.2) + '">' + k[2] + '</text>';
      if (right || left)
        s += '<text class="act' + (left ? ' left' : '') + '" x="' + f1(left ? X - 10 : X + 10) + '" y="' + f1(y + 12) + '">' +
          esc(k[4]) + '</text>';
      s += '</g>';
      taken = right ? X + need : X + 8;
    });
    d.e.forEach(function (e) {
      s += '<text class="end o-' + esc(e[1]) + '" x="' + (G.LW + G.PW + 12) + '" y="' + f1(top(e[0]) + 27) + '">' +
        esc(OUTCOMES[e[1]] || e[1]) + '</text>';
    });
    return s + '</svg>';
  }
  // The page's tables (write_tables in html.cpp): the lists name strings and drawings by index.
  function table(id) { return JSON.parse(document.getElementById(id).textContent); }
  var S = table('page-strings'), D = table('page-drawings');
  function str(k) { return S[k]; }
  function tip(parts) { return parts.map(str).join(' \u00b7 '); }
  // A drawing of D (timeline_data in html_timeline.cpp) as drawTimeline reads it.
  function drawing(k) {
    if (k === null) return null;
    var d = D[k];
    return {r: d[0].map(str), l: d[3], x: d[5], n: d[7] === null ? null : S[d[7]],
      b: d[1].map(function (b) { return [b[0], b[1], b[2], S[b[3]], b[4], tip(b[5]), S[b[6]]]; }),
      m: d[2].map(function (m) { return [m[0], m[1], m[2], S[m[3]], S[m[4]], tip(m[5])]; }),
      e: d[4].map(function (e) { return [e[0], S[e[1]]]; }),
      t: d[6].map(function (t) { return [t[0], S[t[1]]]; })};
  }
  // A list's entry (write_list in html.cpp): [index, name, folder, directory, file name, policy, time,
  // expected, observed, outcome, attempts, points, drawing, verdict, summary], as row() reads it.
  function unpack(p) {
    var where = S[p[3]] + p[4] + (S[p[5]] ? ' \u00b7 policy ' + S[p[5]] : '') + ' \u00b7 ' + S[p[6]];
    return [p[0], p[1], S[p[2]], where, S[p[7]], S[p[8]], S[p[9]], p[10],
      p[11].map(function (x) { return [x[0], S[x[1]]]; }), drawing(p[12]), S[p[13]], S[p[14]]];
  }
  function chip(a) { return '<span class="act">' + esc(a) + '</span>'; }
  // c: [index, name, folder, file and time, expected, observed, outcome, attempts, points, drawing, verdict, summary]
  function row(c) {
    var tr = document.createElement('tr'), verdict = c[10] || 'pass', summary = c[11] || '';
    tr.id = 'case-' + c[0];
    tr.setAttribute('data-verdict', verdict);
    var pts = c[8].map(function (p) { return '<span class="chip ok">' + p[0] + ' ' + esc(p[1]) + '</span>'; }).join('');
    var observed = verdict === 'unknown' ? '<td class="unk">' + esc(summary) + '</td>'
      : '<td class="' + (c[4] === c[5] ? 'match' : 'mismatch') + '">' + chip(c[5]) + '</td>';
    tr.innerHTML = '<td><button class="expand" aria-expanded="false" title="draw the timeline">+</button>' + esc(c[1]) +
      (c[2] ? '<span class="folder">' + esc(c[2]) + '</span>' : '') + '</td><td>' + chip(c[4]) + '</td>' + observed + '<td>' +
      (pts || '<span class="muted">none</span>') + '</td><td>' +
      (c[6] ? '<span class="o o-' + esc(c[6]) + '">' + esc(OUTCOMES[c[6]] || c[6]) + '</span>' : '<span class="muted">-</span>') +
      '</td><td class="num">' + c[7] + '</td><td><span class="badge ' + esc(verdict) + '">' + esc(verdict) + '</span></td>';
    var button = tr.querySelector('button');
    button.addEventListener('click', function () {
      var next = tr.nextElementSibling;
      if (next && next.className === 'tl') {
        next.remove();
        button.setAttribute('aria-expanded', 'false');
        button.textContent = '+';
        return;
      }
      var t = document.createElement('tr');
      t.className = 'tl';
      t.innerHTML = '<td colspan="7"><span class="where">' + esc(c[3]) + '</span>' +
        (summary ? '<p class="summary">' + esc(summary) + '</p>' : '') + drawTimeline(c[9]) + '</td>';
      tr.after(t);
      button.setAttribute('aria-expanded', 'true');
      button.textContent = '\u2212';
    });
    return tr;
  }
  // Each list: <script type="application/json" data-list="ID"> with its rows in tbody ID-rows.
  document.querySelectorAll('script[data-list]').forEach(function (holder) {
    var id = holder.getAttribute('data-list'), data = JSON.parse(holder.textContent), shown = 0;
    var body = document.getElementById(id + '-rows'), more = document.getElementById(id + '-more');
    function page() {
      var frag = document.createDocumentFragment();
      for (var n = 0; n < PAGE && shown < data.length; n++, shown++) frag.appendChild(row(unpack(data[shown])));
      body.appendChild(frag);
      more.hidden = shown >= data.length;
      more.textContent = 'Show ' + Math.min(PAGE, data.length - shown) + ' more (' + (data.length - shown) + ' left)';
    }
    more.addEventListener('click', page);
    page();
    if (location.hash === '#expand-all') {  // every case listed, then every timeline drawn
      while (shown < data.length) page();
      body.querySelectorAll('button.expand').forEach(function (b) { b.click(); });
    }
  });
})();
)js";

// Failed or unknown cases drawn in full (card, tables, SVG) before the rest are listed as data.
constexpr std::size_t max_drawn_cases = 100;

std::string action_chip(Action a) {
  return "<span class=\"act\">" + h(to_string(a)) + "</span>";
}

int attempts_of(const CaseResult& c) {
  int n = 0;
  for (const auto& [route, k] : c.attempts_by_route) n += k;
  return n;
}

void write_head(std::ostream& out, const harness::RunResult& run) {
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out << fmt::format("<title>llmchaos report · {} passed, {} failed, {} unknown{}</title>\n", run.passed(),
                     run.failed(), run.unknown(),
                     run.not_applicable() ? fmt::format(", {} n/a", run.not_applicable()) : std::string());
  out << "<style>" << style << action_style() << "</style>\n</head>\n<body>\n<main>\n";
}

void write_summary(std::ostream& out, const harness::RunResult& run) {
  out << "<h1>llmchaos run report</h1>\n<p class=\"facts\">";
  out << "<span>seed <b class=\"mono\">" << run.seed << "</b></span>";
  out << "<span>driver <b>" << h(run.driver) << "</b></span>";
  out << "<span>time scale <b>" << h(format_number(run.time_scale)) << "</b></span>";
  if (!run.started_at.empty()) out << "<span>started <b>" << h(run.started_at) << "</b></span>";
  out << "<span>took <b>" << h(format_ms(run.duration_ms)) << "</b></span>";
  out << "<span>llmchaos <b>" << h(run.tool_version) << "</b></span>";
  if (!run.label.empty()) out << "<span>target <b>" << h(run.label) << "</b></span>";
  out << "</p>\n";
  for (const auto& w : run.warnings) out << "<p class=\"warning\"><b>warning:</b> " << h(w) << "</p>\n";
  if (run.shard.sharded())
    out << "<p class=\"facts\"><span>shard <b>" << run.shard.index << "/" << run.shard.count
        << "</b> of a catalog of " << run.catalog_cases << " cases</span></p>\n";
  if (run.merged_shards > 0)
    out << "<p class=\"facts\"><span>merged from <b>" << run.merged_shards << " shards</b></span></p>\n";
  // Each count links to its section (the failed and unknown cases are on the page first).
  const auto tile = [&](std::string_view cls, std::size_t n, std::string_view label,
                        std::string_view target) {
    out << fmt::format(
        "<a class=\"tile {}{}\" href=\"#{}\"><span class=\"n\">{}</span><span class=\"l\">{}</span></a>", cls,
        n == 0 && !cls.empty() ? " zero" : "", target, n, label);
  };
  out << "<div class=\"tiles\">";
  tile("", run.cases.size(), "cases", "matrix");
  tile("pass", static_cast<std::size_t>(run.passed()), "passed", "passed");
  tile("fail", static_cast<std::size_t>(run.failed()), "failed", "failed");
  tile("unknown", static_cast<std::size_t>(run.unknown()), "unknown (hang or crash)", "unknown");
  if (run.not_applicable() > 0)
    tile("na", static_cast<std::size_t>(run.not_applicable()), "n/a (not run)", "na");
  if (const auto v =
          std::count_if(run.cases.begin(), run.cases.end(), [](const auto& c) { return c.virtual_time; }))
    tile("", static_cast<std::size_t>(v), "ran under virtual time (exact_time)", "matrix");
  out << "</div>\n";
}

void write_split(std::ostream& out, const harness::RunResult& run) {
  const auto split = run.outcome_split();
  const int total = split_total(split);
  out << fmt::format("<h2>Outcomes of {} requests</h2>\n<div class=\"splitbar\">", total);
  const auto count = [&](Outcome o) {
    const auto it = split.find(o);
    return it == split.end() ? 0 : it->second;
  };
  for (const auto& [o, name] : enum_names<Outcome>::table)
    if (count(o) > 0)
      out << fmt::format("<span style=\"width:{:.3f}%;background:var(--{})\" title=\"{}: {}\"></span>",
                         100.0 * count(o) / total, name, outcome_label(o), count(o));
  out << "</div>\n<div class=\"split\">";
  for (const auto& [o, name] : enum_names<Outcome>::table)
    out << fmt::format(
        "<div style=\"border-top-color:var(--{})\"><span class=\"n\">{}</span><span class=\"p\">{}</span>"
        "<span class=\"l\">{}</span></div>",
        name, count(o), h(percent(count(o), total)), outcome_label(o));
  out << "</div>\n<p class=\"note\">Each outcome is counted apart: recoveries, degraded and queued answers "
         "are "
         "never folded into one success rate.</p>\n";
}

void write_baseline(std::ostream& out, const harness::RunResult& run) {
  if (run.baseline.empty() && run.baseline_changes.empty()) return;
  out << fmt::format("<h2>Action changes vs baseline ({})</h2>\n", run.baseline_changes.size());
  if (!run.baseline.empty())
    out << "<p class=\"muted\">Compared with <code>" << h(run.baseline) << "</code>.</p>\n";
  if (run.baseline_changes.empty()) {
    out << "<p>No case changed its action.</p>\n";
    return;
  }
  out << "<table "
         "class=\"matrix\"><thead><tr><th>case</th><th>before</th><th>after</th></tr></thead><tbody>\n";
  for (const auto& ch : run.baseline_changes)
    out << "<tr><td>" << h(ch.case_name) << "</td><td><span class=\"act\">"
        << h(actions_text(ch.before_all, ch.before))
        << "</span></td><td class=\"changed\"><span class=\"act\">" << h(actions_text(ch.after_all, ch.after))
        << "</span></td></tr>\n";
  out << "</tbody></table>\n";
}

void write_matrix_row(std::ostream& out, const CaseResult& c, std::size_t i) {
  const auto verdict = to_string(c.verdict);
  out << "<tr data-verdict=\"" << verdict << "\"><td><a href=\"#case-" << i << "\">" << h(c.name) << "</a>";
  if (!c.folder.empty()) out << "<span class=\"folder\">" << h(c.folder) << "</span>";
  out << "</td><td>" << action_chip(c.expected) << "</td>";
  if (c.verdict == Verdict::unknown || c.verdict == Verdict::na)
    out << "<td class=\"unk\">" << h(verdict_summary(c)) << "</td>";
  else
    out << "<td class=\"" << (c.observed == c.expected ? "match" : "mismatch") << "\">"
        << action_chip(c.observed) << "</td>";
  out << "<td>";
  for (const auto& p : c.points) {
    const bool bad = (p.expected != Action::none && p.from_log != p.expected) || p.from_log != p.from_ledger;
    std::string title = fmt::format("point {}: expected {} · from the log {} · from the ledger {}", p.point,
                                    to_string(p.expected), to_string(p.from_log), to_string(p.from_ledger));
    if (!p.rule.empty()) title += " · " + p.rule;
    out << "<span class=\"chip " << (bad ? "bad" : "ok") << "\" title=\"" << h(title) << "\">" << p.point
        << " " << h(to_string(p.from_log));
    if (p.from_log != p.from_ledger) out << " / ledger " << h(to_string(p.from_ledger));
    out << "</span>";
  }
  if (c.points.empty()) out << "<span class=\"muted\">none</span>";
  out << "</td><td>";
  if (c.observed_outcome)
    out << "<span class=\"o o-" << to_string(*c.observed_outcome) << "\">"
        << outcome_label(*c.observed_outcome) << "</span>";
  else
    out << "<span class=\"muted\">-</span>";
  if (c.expected_outcome && c.expected_outcome != c.observed_outcome)
    out << "<span class=\"exp-miss\">expected " << outcome_label(*c.expected_outcome) << "</span>";
  out << "</td><td class=\"num\">" << attempts_of(c) << "</td><td><span class=\"badge " << verdict << "\">"
      << verdict << "</span></td></tr>\n";
}

// Expected action (rows) against observed action (columns); unknown verdicts get their own column.
void write_confusion(std::ostream& out, const harness::RunResult& run) {
  std::map<std::pair<Action, Action>, int> cell;
  std::map<Action, int> unknown;
  std::set<Action> used;
  for (const auto& c : run.cases) {
    used.insert(c.expected);
    if (c.verdict == Verdict::unknown) {
      ++unknown[c.expected];
    } else {
      used.insert(c.observed);
      ++cell[{c.expected, c.observed}];
    }
  }
  if (used.empty()) return;
  out << "<h3 style=\"margin-top:22px\">Expected vs observed action</h3>\n<table "
         "class=\"confusion\"><thead><tr>"
         "<th class=\"rowh\">expected \\ observed</th>";
  for (Action a : used) out << "<th>" << h(to_string(a)) << "</th>";
  if (!unknown.empty()) out << "<th>unknown</th>";
  out << "</tr></thead><tbody>\n";
  for (Action e : used) {
    out << "<tr><th class=\"rowh\">" << h(to_string(e)) << "</th>";
    for (Action o : used) {
      const int n = cell.count({e, o}) ? cell.at({e, o}) : 0;
      out << "<td class=\"" << (n == 0 ? "zero" : e == o ? "diag" : "off") << "\">" << n << "</td>";
    }
    if (!unknown.empty()) {
      const int n = unknown.count(e) ? unknown.at(e) : 0;
      out << "<td class=\"" << (n == 0 ? "zero" : "off") << "\">" << n << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</tbody></table>\n";
}

constexpr std::string_view matrix_head =
    "<table class=\"matrix\"><thead><tr><th>case</th><th>expected</th><th>observed</th>"
    "<th>failure points (log / ledger)</th><th>outcome</th><th class=\"num\">attempts</th><th>verdict</th>"
    "</tr></thead><tbody>\n";

void write_legend(std::ostream& out) {
  out << "<div class=\"legend\">";
  for (auto k : {AttemptClass::ok, AttemptClass::retryable, AttemptClass::fatal, AttemptClass::unknown,
                 AttemptClass::failed}) {
    out << "<span><i style=\"background:var(--a-" << attempt_class_name(k) << ")\"></i>"
        << h(attempt_class_label(k)) << "</span>";
  }
  out << "<span><i style=\"background:#fff;border:1.6px solid #1f2328\"></i>outlined: committed before it "
         "failed</span>";
  for (const auto& [a, name] : enum_names<Action>::table)
    if (a != Action::none)
      out << "<span><i class=\"mk\" style=\"background:var(--x-" << name << ")\"></i>" << name << "</span>";
  out << "<span>numbered marks: failure points; dashed: wait before the next attempt</span></div>\n";
}

void write_case_tables(std::ostream& out, const CaseResult& c) {
  out << "<details" << (c.verdict == Verdict::pass ? "" : " open")
      << "><summary>Checks, failure points, requests and "
      << "the mock's ledger</summary>\n";
  if (!c.checks.empty()) {
    out << "<table><thead><tr><th>check</th><th>result</th><th>detail</th></tr></thead><tbody>\n";
    for (const auto& ch : c.checks)
      out << "<tr><td class=\"mono\">" << h(ch.name) << "</td><td class=\""
          << (ch.ok ? "okc\">ok" : "badc\">failed") << "</td><td>" << h(ch.message) << "</td></tr>\n";
    out << "</tbody></table>\n";
  }
  if (!c.points.empty()) {
    out << "<table><thead><tr><th>point</th><th>expected</th><th>from the log</th><th>from the ledger</th>"
           "<th>rule</th></tr></thead><tbody>\n";
    for (const auto& p : c.points)
      out << "<tr><td>" << p.point << "</td><td>" << h(to_string(p.expected)) << "</td><td>"
          << h(to_string(p.from_log)) << "</td><td>" << h(to_string(p.from_ledger)) << "</td><td>"
          << h(p.rule) << "</td></tr>\n";
    out << "</tbody></table>\n";
  }
  if (!c.logs.empty() || c.alive_log) {
    out << "<table><thead><tr><th>request</th><th>operation</th><th "
           "class=\"num\">started</th><th>outcome</th>"
           "<th>answered by</th><th>model</th><th class=\"num\">tokens in/out</th><th "
           "class=\"num\">elapsed</th>"
           "<th class=\"num\">extra cost</th></tr></thead><tbody>\n";
    const auto row = [&](const client::DecisionLog& log, const std::string& label,
                         std::optional<double> started) {
      out << "<tr><td>" << h(label) << "</td><td class=\"mono\">" << h(log.operation_id)
          << "</td><td class=\"num\">" << (started ? "+" + h(format_ms(*started)) : "")
          << "</td><td><span class=\"o o-" << to_string(log.outcome) << "\">" << outcome_label(log.outcome)
          << "</span></td><td>" << (log.answered ? h(log.route) : "<span class=\"muted\">no answer</span>")
          << "</td><td>" << h(log.model) << "</td><td class=\"num\">" << log.input_tokens << " / "
          << log.output_tokens << "</td><td class=\"num\">" << h(format_ms(log.elapsed_ms))
          << "</td><td class=\"num\">" << fmt::format("${:.4f}", log.extra_cost_usd) << "</td></tr>\n";
    };
    for (std::size_t k = 0; k < c.logs.size(); ++k)
      row(c.logs[k], request_label(c, k),
          k < c.request_started_ms.size() ? std::optional(c.request_started_ms[k]) : std::nullopt);
    if (c.alive_log) row(*c.alive_log, "alive probe after the case", std::nullopt);
    out << "</tbody></table>\n";
  }
  if (!c.ledger.empty()) {
    out << "<table><thead><tr><th>attempt</th><th>route</th><th>dialect</th><th>fault</th><th "
           "class=\"num\">status</th>"
           "<th class=\"num\">received</th><th>ended</th><th>committed</th>"
           "</tr></thead><tbody>\n";
    for (std::size_t k = 0; k < c.ledger.size(); ++k) {
      const auto& e = c.ledger[k];
      out << "<tr><td>" << k + 1 << "</td><td>" << h(e.route) << "#" << e.attempt << "</td><td>"
          << to_string(e.dialect) << "</td><td class=\"mono\">" << to_string(e.fault)
          << "</td><td class=\"num\">" << e.status << "</td><td class=\"num\">"
          << h(format_ms(e.received_at_ms)) << "</td><td>" << h(ledger_end_label(e)) << "</td><td>"
          << (e.committed ? "yes" : "") << "</td></tr>\n";
    }
    out << "</tbody></table>\n";
  }
  if (!c.side_effects.empty()) {
    out << "<table><thead><tr><th>side effect</th><th>operation</th><th>tool</th><th "
           "class=\"num\">at</th></tr>"
           "</thead><tbody>\n";
    for (const auto& s : c.side_effects)
      out << "<tr><td>" << s.seq << "</td><td class=\"mono\">" << h(s.operation_id) << "</td><td>"
          << h(s.tool) << "</td><td class=\"num\">" << h(format_ms(s.received_at_ms)) << "</td></tr>\n";
    out << "</tbody></table>\n";
  }
  if (!c.driver_output.empty()) out << "<pre>" << h(c.driver_output) << "</pre>\n";
  out << "</details>\n";
}

void write_case(std::ostream& out, const CaseResult& c, std::size_t i, double time_scale) {
  const auto verdict = to_string(c.verdict);
  out << "<article class=\"case " << verdict << "\" id=\"case-" << i << "\" data-verdict=\"" << verdict
      << "\">\n";
  out << "<header><span class=\"badge " << verdict << "\">" << verdict << "</span><h3>" << h(c.name)
      << "</h3><span class=\"where\">" << h(c.file);
  if (!c.policy_name.empty()) out << " · policy " << h(c.policy_name);
  if (!c.policy_file.empty()) out << " (" << h(c.policy_file) << ")";
  for (const auto& t : c.tags) out << " · #" << h(t);
  if (c.virtual_time) out << " · ran under virtual time";
  out << " · " << h(format_ms(c.wall_ms)) << "</span></header>\n";
  if (!c.description.empty()) out << "<p class=\"desc\">" << h(report_description(c.description)) << "</p>\n";
  out << "<p class=\"summary\">" << h(verdict_summary(c));
  if (c.verdict == Verdict::unknown && c.deadline_ms > 0)
    out << " (deadline " << h(format_ms(c.deadline_ms)) << ")";
  out << "</p>\n";
  if (!c.foreign.empty())
    out << "<p class=\"warning\">foreign traffic: " << c.foreign.size()
        << " attempt(s) the mock saw that are not the case's requests (a forwarded drain, a health probe): "
           "not counted</p>\n";
  if (const auto failed = failed_checks(c); !failed.empty()) {
    out << "<ul class=\"failed\">";
    for (const auto* ch : failed) out << "<li><b>" << h(ch->name) << "</b>: " << h(ch->message) << "</li>";
    out << "</ul>\n";
  }
  out << timeline_svg(c, time_scale);
  write_case_tables(out, c);
  out << "</article>\n";
}

// JSON inside <script>: no "<" at all (no "</script>", no "<!--"), as \u003c.
std::string script_safe(std::string json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

// The strings and drawings the page's lists name by index (each said once), the vocabulary first.
struct PageData {
  TextTable strings, drawings;
  PageData() {
    strings.ref("");
    for (const auto& [a, name] : enum_names<Action>::table) strings.ref(name);
    for (const auto& [o, name] : enum_names<Outcome>::table) strings.ref(name);
  }
};

// Cases as data, one JSON line each, that the page's script lists 200 at a time and draws on demand:
// [index, name, folder, directory, file name, policy, time, expected, observed, outcome, attempts,
// points [[point, action]], drawing] (plus verdict and summary when not passed), every string but the
// name and file name (their own) as its index in data.strings, the drawing in data.drawings.
void write_list(std::ostream& out, const harness::RunResult& run, const std::vector<std::size_t>& cases,
                std::string_view id, PageData& data) {
  namespace json = boost::json;
  out << "<p class=\"muted\">Listed 200 at a time; + draws a case's timeline.</p>\n"
      << matrix_head << "</tbody><tbody id=\"" << id << "-rows\"></tbody></table>\n"
      << "<button class=\"more\" id=\"" << id << "-more\" hidden></button>\n"
      << "<script type=\"application/json\" data-list=\"" << id << "\">[";
  const auto s = [&](std::string_view text) { return data.strings.ref(text); };
  bool first = true;
  for (std::size_t i : cases) {
    const auto& c = run.cases[i];
    json::array points;
    for (const auto& p : c.points) points.push_back(json::array{p.point, s(to_string(p.from_log))});
    const std::string drawing = timeline_data(c, run.time_scale, data.strings);
    const std::string_view file = c.file;
    const std::size_t name_at = file.rfind('/') + 1;  // npos + 1: no directory
    json::array row{i,
                    clean_text(c.name),
                    s(c.folder),
                    s(file.substr(0, name_at)),
                    clean_text(file.substr(name_at)),
                    s(c.policy_name),
                    s(format_ms(c.wall_ms)),
                    s(to_string(c.expected)),
                    s(to_string(c.observed)),
                    s(c.observed_outcome ? to_string(*c.observed_outcome) : ""),
                    attempts_of(c),
                    std::move(points),
                    drawing == "null" ? json::value(nullptr) : json::value(data.drawings.ref(drawing))};
    if (c.verdict != Verdict::pass) {
      row.push_back(s(to_string(c.verdict)));
      row.push_back(s(verdict_summary(c)));
    }
    out << (first ? "\n" : ",\n") << script_safe(json::serialize(row));
    first = false;
  }
  out << "\n]</script>\n";
}

// The two tables, one entry a line: strings (cleaned here, once) and drawings.
void write_tables(std::ostream& out, const PageData& data) {
  out << "<script type=\"application/json\" id=\"page-strings\">[";
  const char* sep = "\n";
  for (const auto* text : data.strings.texts()) {
    out << sep << script_safe(boost::json::serialize(boost::json::value(clean_text(*text))));
    sep = ",\n";
  }
  out << "\n]</script>\n<script type=\"application/json\" id=\"page-drawings\">[";
  sep = "\n";
  for (const auto* drawing : data.drawings.texts()) {
    out << sep << *drawing;  // numbers and null only
    sep = ",\n";
  }
  out << "\n]</script>\n";
}

// The failed (or unknown) cases: their rows of the action matrix, then each one's card and timeline;
// past max_drawn_cases the rest are listed as data, like the passing ones (the page stays small).
void write_group(std::ostream& out, const harness::RunResult& run, Verdict verdict, std::string_view title,
                 std::string_view id, PageData& data) {
  std::vector<std::size_t> group;
  for (std::size_t i = 0; i < run.cases.size(); ++i)
    if (run.cases[i].verdict == verdict) group.push_back(i);
  out << "<h2 id=\"" << id << "\">" << title << " (" << group.size() << ")</h2>\n";
  if (group.empty()) {
    out << "<p class=\"muted\">None.</p>\n";
    return;
  }
  const std::size_t drawn = std::min(group.size(), max_drawn_cases);
  out << matrix_head;
  for (std::size_t k = 0; k < drawn; ++k) write_matrix_row(out, run.cases[group[k]], group[k]);
  out << "</tbody></table>\n";
  for (std::size_t k = 0; k < drawn; ++k) write_case(out, run.cases[group[k]], group[k], run.time_scale);
  if (drawn == group.size()) return;
  out << "<h3 id=\"" << id << "-rest\">" << group.size() - drawn << " more, drawn on demand</h3>\n";
  write_list(out, run,
             std::vector<std::size_t>(group.begin() + static_cast<std::ptrdiff_t>(drawn), group.end()),
             std::string(id) + "-rest", data);
}

// The passing cases, as data.
void write_passed(std::ostream& out, const harness::RunResult& run, PageData& data) {
  out << "<h2 id=\"passed\">Passed (" << run.passed() << ")</h2>\n";
  std::vector<std::size_t> passed;
  for (std::size_t i = 0; i < run.cases.size(); ++i)
    if (run.cases[i].verdict == Verdict::pass) passed.push_back(i);
  if (passed.empty())
    out << "<p class=\"muted\">None.</p>\n";
  else
    write_list(out, run, passed, "passed", data);
}

}  // namespace

void write_html(const harness::RunResult& run, const Options& /*options*/, std::ostream& out) {
  write_head(out, run);
  write_summary(out, run);
  write_split(out, run);
  write_baseline(out, run);
  out << "<h2 id=\"matrix\">Cases</h2>\n<p class=\"muted\">Failed and unknown cases first, each with its "
         "timeline; then the passing ones.</p>\n";
  write_legend(out);
  PageData data;
  write_group(out, run, Verdict::fail, "Failed", "failed", data);
  write_group(out, run, Verdict::unknown, "Unknown (hang or crash)", "unknown", data);
  if (run.not_applicable() > 0)
    write_group(out, run, Verdict::na,
                "Not applicable, not run (the target lacks a capability the case needs, or the case needs "
                "--virtual-time)",
                "na", data);
  write_passed(out, run, data);
  write_confusion(out, run);
  write_tables(out, data);
  out << "<footer>Written by llmchaos " << h(run.tool_version)
      << ". Self-contained: this page loads nothing from anywhere.</footer>\n</main>\n<script>"
      << timeline_geometry_js(run.time_scale) << script << "</script>\n</body>\n</html>\n";
}

}  // namespace llmchaos::reports::detail
