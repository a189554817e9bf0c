#!/usr/bin/env bash
# `go test` of one Go module of the session API's Go tier, against the built llmchaos (label "go").
# usage: run-go-test.sh LLMCHAOS_BIN MODULE_DIR [go test args...]. Skips (77) without go. Downloads
# nothing: the helper and the example use the standard library only (GOPROXY=off, GOFLAGS=-mod=readonly).
set -euo pipefail
bin=$1 dir=$2
shift 2
if ! command -v go >/dev/null; then
  echo "skipped: go is not installed (the Go helper's tests need the go toolchain)"
  exit 77
fi
cd "$dir"
export LLMCHAOS_BIN=$bin GOPROXY=off GOFLAGS=-mod=readonly GOTOOLCHAIN=local
unset LLMCHAOS_URL
exec go test -count=1 "$@" ./...
