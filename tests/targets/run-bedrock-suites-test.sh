#!/usr/bin/env bash
# CTest `target_bedrock_suites` (label targets): examples/run-target-suites bedrock (boto3 and the Vercel AI
# SDK's @ai-sdk/amazon-bedrock, default and hardened, through the exec driver) on four cases of
# examples/cases/bedrock, then bedrock.check.mjs asserts the verdicts the full run showed and that the
# findings table explains every failure.
# Exit 77 (skip, with the reason) when node, npm or its registry, python3 with venv, or PyPI (for the first
# install of examples/python/bedrock-requirements.lock) is missing.
#   LLMCHAOS_BIN   path of the llmchaos binary (required)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[[ -n ${LLMCHAOS_BIN:-} && -x ${LLMCHAOS_BIN} ]] || { echo "target_bedrock_suites: LLMCHAOS_BIN is not an executable: '${LLMCHAOS_BIN:-}'" >&2; exit 2; }
command -v node >/dev/null || { echo "SKIP target_bedrock_suites: node is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP target_bedrock_suites: python3 is not installed"; exit 77; }

out=$(mktemp -d "${TMPDIR:-/tmp}/llmchaos-bedrock-suites.XXXXXX")
trap 'rm -rf "$out"' EXIT
start=$(date +%s%N)
rc=0
cases=(stream-cut-plain-retried quota-400-falls-back rate-429-long-retry-after-falls-back stream-error-throttling-before-tokens-retried)
filters=()
for c in "${cases[@]}"; do filters+=(--filter "examples/cases/bedrock/$c.toml"); done
"$root/examples/run-target-suites" bedrock --out "$out" --jobs 4 "${filters[@]}" >"$out/run.log" 2>&1 || rc=$?
if [[ $rc -eq 77 ]]; then grep '^SKIP' "$out/run.log" || true; exit 77; fi
[[ $rc -eq 0 ]] || { cat "$out/run.log"; echo "target_bedrock_suites: run-target-suites failed (exit $rc)" >&2; exit 1; }
echo "target_bedrock_suites: the suites took $(( ($(date +%s%N) - start) / 1000000 )) ms"
node "$here/bedrock.check.mjs" "$out"
