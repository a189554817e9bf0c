#!/usr/bin/env bash
# End to end: the catalog's OpenAI stream-fault cases, played by `llmchaos run --driver exec` with the
# official openai SDK client (examples/sdk/openai-default.mjs) twice: straight at the run's mock provider,
# and through `llmchaos proxy` in front of it (tests/sdk/via-proxy.sh). The verdicts (expected and observed
# outcome, attempts per route, failed checks but the wall-clock ones) must be the same, and the client's
# API key must appear in no written file or log (reports, the proxy's stdout and stderr, the runs'
# output). CTest: sdk_proxy_e2e.
#   LLMCHAOS_BIN   the llmchaos binary (required)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
[[ -n ${LLMCHAOS_BIN:-} && -x ${LLMCHAOS_BIN} ]] || { echo "proxy-e2e: LLMCHAOS_BIN is not an executable" >&2; exit 2; }
command -v node >/dev/null || { echo "SKIP proxy-e2e: node is not installed"; exit 77; }
[[ -d tests/sdk/node_modules/openai ]] || { echo "SKIP proxy-e2e: the pinned SDKs are not installed (npm ci in tests/sdk, or run sdk_tier first)"; exit 77; }
export LLMCHAOS_BIN

key=sk-llmchaos-example  # the key examples/sdk/openai-default.mjs sends
c=cases/faults/openai
cases=("$c/stream-cut-after-tokens-fails-closed.toml" "$c/stream-error-before-tokens-retried.toml"
       "$c/stream-stall-after-tokens-fails-closed.toml" "$c/malformed-event-before-tokens-retried.toml"
       "$c/no-terminator-streamed.toml" "$c/slow-first-token-under-timeout.toml" "$c/ok.toml")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/logs"

# Per case: the expected and observed outcome, the attempts per route and the checks that failed. The
# wall-clock checks (no_hang, max_elapsed_ms) are left out: they time the whole call, node's start-up and
# (through the proxy) the wrapper's proxy start included, so on a loaded machine they vary run to run.
verdicts() {
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const timing = new Set(["no_hang", "max_elapsed_ms"]);
    for (const c of r.cases) {
      const failed = c.checks.filter((k) => !k.ok && !timing.has(k.name)).map((k) => k.name);
      console.log([c.name, c.expected_outcome, c.observed_outcome, JSON.stringify(c.attempts_by_route),
                   failed.join(",") || "-"].join(" | "));
    }' "$1"
}
play() {  # NAME EXEC
  "$LLMCHAOS_BIN" run --driver exec --min-deadline-ms 20000 --exec "$2" --report-dir "$work/$1" "${cases[@]}" >"$work/$1.out" 2>&1 || true
  verdicts "$work/$1/report.json" >"$work/$1.verdicts"
}
play direct "node examples/sdk/openai-default.mjs"
PROXY_LOG_DIR=$work/logs play via "tests/sdk/via-proxy.sh node examples/sdk/openai-default.mjs"

status=0
n=$(wc -l <"$work/direct.verdicts")
if [[ $n -ne ${#cases[@]} ]]; then
  echo "proxy-e2e: expected ${#cases[@]} verdicts from the direct run, got $n:"; cat "$work/direct.out"; status=1
elif ! diff "$work/direct.verdicts" "$work/via.verdicts"; then
  echo "proxy-e2e: the verdicts through the proxy differ from the direct ones (< direct, > via proxy)"; status=1
else
  echo "proxy-e2e: the same $n verdicts direct and through llmchaos proxy:"; cat "$work/via.verdicts"
fi
grep -q 'listening on' "$work/logs/proxy.stdout" || { echo "proxy-e2e: the proxy never started"; status=1; }
if found=$(grep -rl -- "$key" "$work"); then
  echo "proxy-e2e: the API key is written in: $found"; status=1
else
  echo "proxy-e2e: the API key is in none of the $(find "$work" -type f | wc -l) written files"
fi
exit $status
