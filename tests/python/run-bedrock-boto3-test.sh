#!/usr/bin/env bash
# CTest `bedrock_boto3` (label python): boto3 (examples/python/bedrock-requirements.lock, its own venv
# examples/python/.venv-bedrock, pip install --require-hashes) against `llmchaos serve` on an ephemeral
# port: tests/python/bedrock_boto3.py. Exit 77 (skip, with the reason) when python3 or its venv module, or
# PyPI (for the first install) is missing.
#   LLMCHAOS_BIN   path of the llmchaos binary (required)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[[ -n ${LLMCHAOS_BIN:-} && -x ${LLMCHAOS_BIN} ]] || { echo "bedrock_boto3: LLMCHAOS_BIN is not an executable: '${LLMCHAOS_BIN:-}'" >&2; exit 2; }
command -v python3 >/dev/null || { echo "SKIP bedrock_boto3: python3 is not installed"; exit 77; }
rc=0
py=$(PY_LOCK=bedrock-requirements.lock PY_VENV_DIR=$root/examples/python/.venv-bedrock "$root/examples/python/venv") || rc=$?
if [[ $rc -eq 77 ]]; then echo "$py"; exit 77; fi
[[ $rc -eq 0 ]] || { echo "bedrock_boto3: examples/python/venv failed (exit $rc)" >&2; exit 1; }
exec "$py" "$here/bedrock_boto3.py" "$LLMCHAOS_BIN"
