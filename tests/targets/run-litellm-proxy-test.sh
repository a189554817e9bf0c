#!/usr/bin/env bash
# CTest `target_litellm_proxy` (label targets): examples/run-target-suites litellm-proxy over four cases,
# then litellm-proxy.check.mjs asserts the verdicts the full run showed (examples/README.md, "Third-party
# targets: the LiteLLM proxy"): a rate 429 is retried (a pass), a 401 is fallen back from (a FAIL: the
# Router falls back on any error), a healthy stream is answered but named after the requested model,
# not the one that served (a FAIL: names_serving_route), a queue case is n/a.
# Exit 77 (skip, with the reason) when node, python3 with venv, or PyPI (for the first install of the
# pinned proxy, examples/targets/litellm-proxy/venv) is missing.
#   LLMCHAOS_BIN   path of the llmchaos binary (required)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[[ -n ${LLMCHAOS_BIN:-} && -x ${LLMCHAOS_BIN} ]] || { echo "target_litellm_proxy: LLMCHAOS_BIN is not an executable: '${LLMCHAOS_BIN:-}'" >&2; exit 2; }
command -v node >/dev/null || { echo "SKIP target_litellm_proxy: node is not installed (run-target-suites selects cases with it)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP target_litellm_proxy: python3 is not installed"; exit 77; }

out=$(mktemp -d "${TMPDIR:-/tmp}/llmchaos-litellm-proxy.XXXXXX")
trap 'rm -rf "$out"' EXIT
start=$(date +%s%N)
rc=0
"$root/examples/run-target-suites" litellm-proxy --out "$out" --jobs 3 \
  --filter 'cases/faults/anthropic/ok-streamed.toml' --filter 'cases/faults/openai/auth-401-fails-closed.toml' \
  --filter 'cases/faults/openai/rate-429-retried.toml' --filter 'cases/faults/openai/server-500-queued.toml' \
  >"$out/run.log" 2>&1 || rc=$?
if [[ $rc -eq 77 ]]; then grep '^SKIP' "$out/run.log" || true; exit 77; fi
[[ $rc -eq 0 ]] || { cat "$out/run.log"; echo "target_litellm_proxy: run-target-suites failed (exit $rc)" >&2; exit 1; }
echo "target_litellm_proxy: the suite took $(( ($(date +%s%N) - start) / 1000000 )) ms"
node "$here/litellm-proxy.check.mjs" "$out/litellm-proxy/report.json"
