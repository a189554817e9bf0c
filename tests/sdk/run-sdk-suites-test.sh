#!/usr/bin/env bash
# CTest `sdk_suites`: runs examples/run-sdk-suites (the openai and @anthropic-ai/sdk example clients
# through `llmchaos run --driver exec`) and asserts the findings' pattern with sdk-suites.check.mjs:
# the hardened clients over every case; the default clients over the cases the check asserts on (each
# case is a node start-up, about 0.5 s of CPU: the full default suites are examples/run-sdk-suites).
# Exit 77 (skip) when node, npm or the npm registry (to install the pinned SDKs) is missing.
#   LLMCHAOS_BIN   path of the llmchaos binary (required)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[[ -n ${LLMCHAOS_BIN:-} && -x ${LLMCHAOS_BIN} ]] || { echo "sdk_suites: LLMCHAOS_BIN is not an executable: '${LLMCHAOS_BIN:-}'" >&2; exit 2; }
command -v node >/dev/null || { echo "SKIP sdk_suites: node is not installed"; exit 77; }

out=$(mktemp -d "${TMPDIR:-/tmp}/llmchaos-sdk-suites.XXXXXX")
trap 'rm -rf "$out"' EXIT
start=$(date +%s%N)
suites() {
  local rc=0
  "$root/examples/run-sdk-suites" --out "$out" --time-scale 0.2 --jobs 4 "$@" || rc=$?
  [[ $rc -eq 77 ]] && exit 77
  [[ $rc -eq 0 ]] || { echo "sdk_suites: run-sdk-suites $* failed (exit $rc)" >&2; exit 1; }
}
suites --client openai-hardened --client anthropic-hardened
# The cases sdk-suites.check.mjs asserts for the default clients (DEFAULT_CASES there).
suites --client openai-default --client anthropic-default \
  --filter '*/quota-429-falls-back.toml' --filter '*/overloaded-persistent-within-budget.toml' \
  --filter '*/post-commit-timeout-no-duplicate.toml' --filter '*/bad-request-fails-closed.toml' \
  --filter '*/connect-reset-retried.toml'
echo "sdk_suites: the suites took $(( ($(date +%s%N) - start) / 1000000 )) ms"
node "$root/examples/sdk/lib/findings.mjs" "$out" openai-default openai-hardened anthropic-default anthropic-hardened
node "$here/sdk-suites.check.mjs" "$out"
