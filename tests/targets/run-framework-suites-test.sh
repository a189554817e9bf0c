#!/usr/bin/env bash
# CTest `target_framework_suites` (label targets): examples/run-target-suites over the framework clients
# (@google/genai, the Vercel AI SDK, LangChain.js; default and hardened, through the exec driver) on two
# cases, then frameworks.check.mjs asserts what the harness must say of them (see there): each default
# client's real behaviour on those cases, the hardened clients passing.
# Exit 77 (skip) when node, npm or the npm registry (to install the pinned packages) is missing.
#   LLMCHAOS_BIN   path of the llmchaos binary (required)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[[ -n ${LLMCHAOS_BIN:-} && -x ${LLMCHAOS_BIN} ]] || { echo "target_framework_suites: LLMCHAOS_BIN is not an executable: '${LLMCHAOS_BIN:-}'" >&2; exit 2; }
command -v node >/dev/null || { echo "SKIP target_framework_suites: node is not installed"; exit 77; }

out=$(mktemp -d "${TMPDIR:-/tmp}/llmchaos-framework-suites.XXXXXX")
trap 'rm -rf "$out"' EXIT
start=$(date +%s%N)
rc=0
# The filters pick from each target's own suite: a gemini case (genai and the AI SDK speak gemini), an
# openai quota case (the AI SDK and LangChain), and an openai case whose policy allows 3 attempts (the
# hardened clients must take the case's budget, LLMCHAOS_POLICY_JSON, not a fixed one of 2).
"$root/examples/run-target-suites" gemini-default gemini-hardened vercel-ai-default vercel-ai-hardened \
  langchain-default langchain-hardened --out "$out" --jobs 4 \
  --filter 'cases/faults/gemini/rate-429-streamed-retried.toml' \
  --filter 'examples/cases/openai/quota-429-falls-back.toml' \
  --filter 'cases/faults/openai/overloaded-503-retried-twice.toml' >"$out/run.log" 2>&1 || rc=$?
if [[ $rc -eq 77 ]]; then grep '^SKIP' "$out/run.log" || true; exit 77; fi
[[ $rc -eq 0 ]] || { cat "$out/run.log"; echo "target_framework_suites: run-target-suites failed (exit $rc)" >&2; exit 1; }
echo "target_framework_suites: the suites took $(( ($(date +%s%N) - start) / 1000000 )) ms"
node "$here/frameworks.check.mjs" "$out"
