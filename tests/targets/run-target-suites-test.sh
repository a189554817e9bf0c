#!/usr/bin/env bash
# CTest `target_suites` (label targets): examples/run-target-suites portkey over four cases, then
# targets.check.mjs asserts what the harness must say of the real gateway: a healthy stream passes
# (the pinned @hono/node-server streams), a 401 is fallen back from (Portkey's default fallback
# trigger is any non-2xx: a real finding, a FAIL), a rate 429 is retried, a queue case is n/a.
# Exit 77 (skip) when node, npm or the npm registry (to install the pinned gateway) is missing.
#   LLMCHAOS_BIN   path of the llmchaos binary (required)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[[ -n ${LLMCHAOS_BIN:-} && -x ${LLMCHAOS_BIN} ]] || { echo "target_suites: LLMCHAOS_BIN is not an executable: '${LLMCHAOS_BIN:-}'" >&2; exit 2; }
command -v node >/dev/null || { echo "SKIP target_suites: node is not installed"; exit 77; }

out=$(mktemp -d "${TMPDIR:-/tmp}/llmchaos-target-suites.XXXXXX")
trap 'rm -rf "$out"' EXIT
start=$(date +%s%N)
rc=0
"$root/examples/run-target-suites" portkey --out "$out" --jobs 4 \
  --filter 'cases/faults/anthropic/ok-streamed.toml' --filter 'cases/faults/openai/auth-401-fails-closed.toml' \
  --filter 'cases/faults/openai/rate-429-retried.toml' --filter 'cases/faults/openai/server-500-queued.toml' || rc=$?
[[ $rc -eq 77 ]] && exit 77
[[ $rc -eq 0 ]] || { echo "target_suites: run-target-suites failed (exit $rc)" >&2; exit 1; }
echo "target_suites: the suite took $(( ($(date +%s%N) - start) / 1000000 )) ms"
node "$here/targets.check.mjs" "$out/portkey/report.json"
