#!/usr/bin/env bash
# CTest `python_suites` (label python): the Python policy loop's unit tests (pytest), then
# examples/run-target-suites over a few cases of seven Python targets, then python-suites.check.py
# asserts the verdicts the full suites showed (examples/README.md, "Python clients").
# Exit 77 (skip, with the reason) when python3 or its venv module, node, or PyPI (first install) is missing.
#   LLMCHAOS_BIN   path of the llmchaos binary (required)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[[ -n ${LLMCHAOS_BIN:-} && -x ${LLMCHAOS_BIN} ]] || { echo "python_suites: LLMCHAOS_BIN is not an executable: '${LLMCHAOS_BIN:-}'" >&2; exit 2; }
command -v python3 >/dev/null || { echo "SKIP python_suites: python3 is not installed"; exit 77; }
command -v node >/dev/null || { echo "SKIP python_suites: node is not installed (run-target-suites selects cases with it)"; exit 77; }

rc=0
py=$("$root/examples/python/venv") || rc=$?
if [[ $rc -eq 77 ]]; then echo "$py"; exit 77; fi
[[ $rc -eq 0 ]] || { echo "python_suites: examples/python/venv failed (exit $rc)" >&2; exit 1; }

"$py" -m pytest -q -p no:cacheprovider "$here/test_policy.py"

out=$(mktemp -d "${TMPDIR:-/tmp}/llmchaos-python-suites.XXXXXX")
trap 'rm -rf "$out"' EXIT
start=$(date +%s%N)
rc=0
# Each target runs the filtered cases of its own suite: an openai quota 429 (every openai client), an
# openai case whose policy allows 3 attempts (the hardened loop must take the case's budget), a gemini
# per-minute 429 (genai).
"$root/examples/run-target-suites" py-openai-default py-openai-hardened py-genai-default py-genai-hardened \
  py-langchain-default py-pydantic-ai-hardened py-litellm-router-hardened --out "$out" --jobs 4 \
  --filter 'examples/cases/openai/quota-429-falls-back.toml' \
  --filter 'cases/faults/openai/overloaded-503-retried-twice.toml' \
  --filter 'cases/faults/gemini/rate-429-streamed-retried.toml' >"$out/run.log" 2>&1 || rc=$?
if [[ $rc -eq 77 ]]; then grep '^SKIP' "$out/run.log" || true; exit 77; fi
[[ $rc -eq 0 ]] || { cat "$out/run.log"; echo "python_suites: run-target-suites failed (exit $rc)" >&2; exit 1; }
echo "python_suites: the suites took $(( ($(date +%s%N) - start) / 1000000 )) ms"
"$py" "$here/python-suites.check.py" "$out"
