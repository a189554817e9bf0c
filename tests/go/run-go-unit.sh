#!/usr/bin/env bash
# CTest `go_unit` (label go): `go test ./...` in examples/go (the policy decision, the classification,
# the exec contract's environment). Exit 77 (skip) when go is missing or the Go module proxy is
# unreachable to fetch the pinned modules (go.sum).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v go >/dev/null || { echo "SKIP go_unit: go is not installed"; exit 77; }
cd "$root/examples/go"
timeout 300 go mod download || { echo "SKIP go_unit: go mod download failed: the Go module proxy is unreachable"; exit 77; }
go test -mod=readonly -count=1 ./...
