#!/usr/bin/env bash
# CTest html_in_chromium: report.html's script in a real browser. The catalog's report opened with
# #expand-all in headless Chromium: every passing case listed and its timeline drawn from the page's
# compact data (one SVG per case, a bar per attempt, tooltips put together from the page's string
# table). Skipped (77) when chromium is not installed.
# Usage: html-in-chromium.sh LLMCHAOS_BINARY SOURCE_DIR
set -euo pipefail
bin=$1
src=$2
browser=$(command -v chromium || command -v chromium-browser || true)
[[ -n $browser ]] || { echo "html_in_chromium: skipped: no chromium (apt-get install chromium)"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/llmchaos-html.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "html_in_chromium: $*" >&2; exit 1; }
"$bin" run "$src/cases" --virtual-time -q --report-dir "$work/r" --time-scale 0.5 >"$work/out" || [[ $? -eq 1 ]] ||
  fail "llmchaos run failed"
json=$work/r/report.json
passed=$(grep -c '^      "verdict": "pass",' "$json" || true)
timeout 60 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run \
  --user-data-dir="$work/profile" --dump-dom "file://$work/r/report.html#expand-all" >"$work/dom" 2>/dev/null ||
  fail "chromium did not open the page"
rows=$(grep -o '<tr id="case-[0-9]*" data-verdict="pass"' "$work/dom" | wc -l)
drawn=$(grep -o '<tr class="tl"><td colspan="7">' "$work/dom" | wc -l)
svgs_in_rows=$(grep -o '<tr class="tl"><td colspan="7"><span class="where">[^<]*</span><p class="axis-note">[^<]*</p><svg class="timeline"' "$work/dom" | wc -l)
echo "html_in_chromium: $passed passing cases; $rows listed, $drawn expanded, $svgs_in_rows timelines drawn"
((passed > 0)) || fail "no passing case in the run"
((rows == passed && drawn == passed)) || fail "expected $passed rows and timelines"
((svgs_in_rows >= passed - 5)) || fail "timelines missing"  # a case with no attempt draws a note instead
grep -q 'class="bar a-ok' "$work/dom" || fail "no attempt bar drawn"
grep -q 'class="mark x-retry"' "$work/dom" || fail "no failure point drawn"
grep -q '<title>attempt 1 (initial) · primary#0 · [^<]* · status 200 · ok' "$work/dom" || fail "no attempt's tooltip"
grep -q '<title>point 1: retry · rule [0-9]*: [^<]*</title>' "$work/dom" || fail "no failure point's tooltip"
grep -q '<span class="where">[^<]*cases/[a-z0-9/-]*/[a-z0-9-]*\.toml · policy [a-z-]* · [0-9.]* m\?s</span>' "$work/dom" ||
  fail "no case's file, policy and time"
grep -q 'data-ready-ms="[0-9]*"' "$work/dom" || fail "the page never reached its load event"
grep -q ' ms · [0-9.]* ms</text>' "$work/dom" || fail "no tick with scripted and real time"
