#!/usr/bin/env bash
# The latency client against `llmchaos serve` (a healthy answer: a figure line; two URLs: a line each,
# round-robin; a 404: an error naming it, exit 1), then bench/proxy for one short run when nginx and wrk are installed (else that part is
# skipped with a message). LLMCHAOS_BIN and LATENCY_CLIENT are set by CTest.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
serve_pid=
cleanup() { [[ -n $serve_pid ]] && kill "$serve_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$work/up.toml" <<'TOML'
[route.bench]
dialect = "openai"
text = "hello"
script = []
then = "ok"
TOML
"$LLMCHAOS_BIN" serve --script "$work/up.toml" --port 0 >"$work/serve.out" 2>&1 &
serve_pid=$!
url=
for _ in $(seq 100); do
  url=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/serve.out" | head -1) && [[ -n $url ]] && break
  sleep 0.1
done
[[ -n $url ]] || fail "serve did not start: $(cat "$work/serve.out")"
body='{"model":"m","messages":[{"role":"user","content":"hi"}]}'

line=$("$LATENCY_CLIENT" "$url/bench/v1/chat/completions" 1 "$body")
echo "latency client: $line"
[[ $line =~ ^requests\ ([0-9]+)\ p50\ ([0-9.]+)\ p90\ [0-9.]+\ p99\ ([0-9.]+)\ p99\.9\ [0-9.]+\ max\ [0-9.]+$ ]] ||
  fail "unexpected output: $line"
((BASH_REMATCH[1] > 10)) || fail "only ${BASH_REMATCH[1]} requests in 1 s"
awk -v a="${BASH_REMATCH[2]}" -v b="${BASH_REMATCH[3]}" 'BEGIN { exit !(a > 0 && a <= b) }' ||
  fail "p50 ${BASH_REMATCH[2]} not within (0, p99 ${BASH_REMATCH[3]}]"
# Every answer was counted: the ledger holds as many attempts as the client reported.
ledger=$(curl -sS "$url/__llmchaos/ledger" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
[[ $ledger == "${BASH_REMATCH[1]}" ]] || fail "ledger has $ledger attempts, the client counted ${BASH_REMATCH[1]}"

# Round-robin over two URLs (bench/proxy's mode): one line each, as many requests each, all of them in
# the ledger.
before=$ledger
pair=$("$LATENCY_CLIENT" "$url/bench/v1/chat/completions,$url/bench/v1/chat/completions" 1 "$body")
echo "latency client, two URLs: $pair"
[[ $(wc -l <<<"$pair") == 2 ]] || fail "two URLs gave: $pair"
first=$(awk 'NR == 1 {print $2}' <<<"$pair") second=$(awk 'NR == 2 {print $2}' <<<"$pair")
((first > 10)) && [[ $first == "$second" ]] || fail "round-robin counts $first and $second"
ledger=$(curl -sS "$url/__llmchaos/ledger" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
[[ $ledger == $((before + first + second)) ]] || fail "ledger has $ledger attempts, expected $before + $first + $second"
if out=$("$LATENCY_CLIENT" "$url/bench/v1/chat/completions,http://10.0.0.1:80/" 1 2>&1); then
  fail "a non-loopback second URL was accepted"
fi
[[ $out == *"loopback only"* ]] || fail "a non-loopback second URL gave: $out"

if out=$("$LATENCY_CLIENT" "$url/nope/v1/chat/completions" 1 "$body" 2>&1); then fail "a 404 was measured: $out"; fi
[[ $out == *"not a 2xx answer: HTTP/1.1 404"* ]] || fail "a 404 gave: $out"
if out=$("$LATENCY_CLIENT" "http://10.0.0.1:80/" 1 2>&1); then fail "a non-loopback URL was accepted"; fi
[[ $out == *"loopback only"* ]] || fail "a non-loopback URL gave: $out"

if ! command -v wrk >/dev/null || ! { command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]]; }; then
  echo "bench/proxy part skipped: needs wrk and nginx (apt-get install wrk nginx-light)"
  exit 0
fi
out=$(RUNS=1 LATENCY_DURATION=1s DURATION=1s STREAMS=3 "$root/bench/proxy" 2>&1) || fail "bench/proxy: $out"
echo "$out" | tail -5
grep -q '^ratio llmchaos/nginx: added p50 ' <<<"$out" || fail "bench/proxy printed no verdict"
grep -Eq '^run by run: llmchaos at or under nginx in [01] of 1 runs at p50 \(median difference -?[0-9.]+us\)' <<<"$out" ||
  fail "bench/proxy printed no run-by-run line"
