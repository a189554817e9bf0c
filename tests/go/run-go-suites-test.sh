#!/usr/bin/env bash
# CTest `go_suites` (label go): examples/run-target-suites over a few cases per Go client (the whole
# suites are the script's own run, examples/README.md), then go.check.mjs asserts the verdicts the full
# suites showed: the libraries' real behaviour (failures included) and the hardened clients' passes.
# Exit 77 (skip) when go, node or the Go module proxy is missing.
#   LLMCHAOS_BIN   path of the llmchaos binary (required)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[[ -n ${LLMCHAOS_BIN:-} && -x ${LLMCHAOS_BIN} ]] || { echo "go_suites: LLMCHAOS_BIN is not an executable: '${LLMCHAOS_BIN:-}'" >&2; exit 2; }
command -v go >/dev/null || { echo "SKIP go_suites: go is not installed"; exit 77; }
command -v node >/dev/null || { echo "SKIP go_suites: node is not installed (examples/run-target-suites needs it)"; exit 77; }

out=$(mktemp -d "${TMPDIR:-/tmp}/llmchaos-go-suites.XXXXXX")
trap 'rm -rf "$out"' EXIT
start=$(date +%s%N)
filters=()
while read -r f; do filters+=(--filter "$f"); done < <(node "$here/go.check.mjs" --cases)
rc=0
"$root/examples/run-target-suites" go --out "$out" --jobs 6 "${filters[@]}" || rc=$?
[[ $rc -eq 77 ]] && exit 77
[[ $rc -eq 0 ]] || { echo "go_suites: run-target-suites failed (exit $rc)" >&2; exit 1; }
echo "go_suites: the suites took $(( ($(date +%s%N) - start) / 1000000 )) ms"
node "$here/go.check.mjs" "$out"
