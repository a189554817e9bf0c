#!/usr/bin/env bash
# The SDK test tier: the official openai, @anthropic-ai/sdk, @google/genai and
# @aws-sdk/client-bedrock-runtime SDKs (pinned in package.json / package-lock.json) against
# `llmchaos serve`. Run by CTest as `sdk_tier`.
#   LLMCHAOS_BIN   path of the llmchaos binary (required)
#   LLMCHAOS_BEDROCK_HANDLER  http1: the Bedrock client on HTTP/1.1 (NodeHttpHandler); else the SDK's
#                  default HTTP/2 handler (bedrock.test.mjs; CTest runs the default)
# Installs node_modules with `npm ci` only when it is missing or older than the lockfile.
# Exit 77 (CTest SKIP_RETURN_CODE) when node/npm are missing or the npm registry is unreachable.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

skip() {
  echo "SKIP sdk_tier: $*"
  exit 77
}

[[ -n ${LLMCHAOS_BIN:-} && -x ${LLMCHAOS_BIN} ]] || { echo "sdk_tier: LLMCHAOS_BIN is not an executable: '${LLMCHAOS_BIN:-}'" >&2; exit 2; }
command -v node >/dev/null || skip "node is not installed"
command -v npm >/dev/null || skip "npm is not installed"

registry_reachable() { timeout 30 npm ping --fetch-retries=0 --fetch-timeout=10000 >/dev/null 2>&1; }

# The lockfile hash that node_modules was installed from; npm ci runs again when it changes.
stamp=node_modules/.llmchaos-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
install_if_stale() {
  [[ -f $stamp && $(cat "$stamp") == "$want" ]] && return 0
  registry_reachable || skip "the npm registry is unreachable, cannot install the pinned SDKs (npm ci)"
  echo "sdk_tier: npm ci (node_modules missing or stale)"
  if ! npm ci --no-audit --no-fund --loglevel=error; then
    registry_reachable || skip "the npm registry became unreachable during npm ci"
    echo "sdk_tier: npm ci failed" >&2
    exit 1
  fi
  echo "$want" >"$stamp"
}

# Two test runs (two build dirs) may share this source folder: one installs at a time.
exec 9>"${TMPDIR:-/tmp}/llmchaos-sdk-npm-$(id -u).lock"
flock 9
install_if_stale
flock -u 9

# Each file starts its own server; files run in parallel child processes.
exec node --test --test-reporter=spec ./*.test.mjs
