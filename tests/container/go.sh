#!/usr/bin/env bash
# CTest container_go (label container): the Go tier through the image.
#  1. go/llmchaostestcontainer's own tests (testcontainers-go, pinned in its go.sum): a hardened client
#     passes the quota case, a naive one fails it naming the check, reports copied out, 401 without the
#     token, the container removed at the end;
#  2. go/llmchaostest's tests with LLMCHAOS_DOCKER_IMAGE (its docker CLI mode, standard library only);
#  3. examples/apps/go with LLMCHAOS_DOCKER_IMAGE: the fixed service passes every case and
#     TestBeforeVersionFails sees the "before" version fail the quota case.
# usage: go.sh SOURCE_DIR BUILD_DIR. Image: LLMCHAOS_DOCKER_IMAGE, default llmchaos:dev (the fixture
# container_image builds it). Ryuk runs where its image is present locally, else
# TESTCONTAINERS_RYUK_DISABLED=true (no registry here). Skips (77) without a daemon, go, the image or the
# Go module proxy. GOFLAGS/GOCACHE stay the defaults: a fresh CI machine compiles testcontainers-go cold.
set -uo pipefail
root=$1 build=$2
fail() { echo "FAIL: $*"; exit 1; }
docker info >/dev/null 2>&1 || { echo "SKIP: no Docker daemon answers (docker info failed)"; exit 77; }
command -v go >/dev/null || { echo "SKIP: go is not installed"; exit 77; }
image=${LLMCHAOS_DOCKER_IMAGE:-llmchaos:dev}
docker image inspect "$image" >/dev/null 2>&1 || { echo "SKIP: no local image $image (container_image builds it: scripts/image)"; exit 77; }
export LLMCHAOS_DOCKER_IMAGE=$image GOTOOLCHAIN=local GOFLAGS=-mod=readonly
unset LLMCHAOS_URL LLMCHAOS_BIN LLMCHAOS_ADMIN_TOKEN LLMCHAOS_CASES_DIR
ryuk_image=testcontainers/ryuk:0.14.0   # testcontainers-go v0.45.0's reaper
if docker image inspect "$ryuk_image" >/dev/null 2>&1; then
  export TESTCONTAINERS_RYUK_DISABLED=false; echo "Ryuk on ($ryuk_image is here)"
else
  export TESTCONTAINERS_RYUK_DISABLED=true; echo "Ryuk off: $ryuk_image cannot be pulled here (TESTCONTAINERS_RYUK_DISABLED=true)"
fi
mod=$root/go/llmchaostestcontainer
(cd "$mod" && go mod download) >/dev/null 2>&1 || { echo "SKIP: the Go module proxy is unreachable (go mod download in go/llmchaostestcontainer)"; exit 77; }

start=$SECONDS
(cd "$mod" && nice -n 10 go test -count=1 -v ./...) 2>&1 | tee "$build/container_go_module.log"
code=${PIPESTATUS[0]}
echo "go/llmchaostestcontainer: go test in $((SECONDS - start)) s (compile included)"
[[ $code == 0 ]] || fail "go test in go/llmchaostestcontainer exited $code"
grep -q -- '--- SKIP' "$build/container_go_module.log" && fail "a container test skipped"
[[ $(grep -c -- '--- PASS' "$build/container_go_module.log") -ge 4 ]] || fail "expected 4 passing container tests"

step=$SECONDS
(cd "$root/go/llmchaostest" && GOPROXY=off LLMCHAOS_CASES_DIR=$root/cases go test -count=1 -v ./...) 2>&1 | tee "$build/container_go_helper.log"
code=${PIPESTATUS[0]}
echo "go/llmchaostest with LLMCHAOS_DOCKER_IMAGE=$image: $((SECONDS - step)) s"
[[ $code == 0 ]] || fail "go/llmchaostest with LLMCHAOS_DOCKER_IMAGE exited $code"
grep -q -- '--- PASS: TestSessionCallsCarryTheToken' "$build/container_go_helper.log" || fail "the token check did not run"

step=$SECONDS
(cd "$root/examples/apps/go" && GOPROXY=off LLMCHAOS_TIME_SCALE=0.2 go test -count=1 -v ./...) 2>&1 | tee "$build/container_go_example.log"
code=${PIPESTATUS[0]}
echo "examples/apps/go with LLMCHAOS_DOCKER_IMAGE=$image: $((SECONDS - step)) s"
[[ $code == 0 ]] || fail "examples/apps/go through the image exited $code"
grep -q -- '--- PASS: TestBeforeVersionFails' "$build/container_go_example.log" || fail "the before version's failure was not checked"
grep -q -- '--- PASS: TestCases/quota-429-falls-back' "$build/container_go_example.log" || fail "the fixed service did not pass the quota case"
echo "container_go: module, helper and example app through $image in $((SECONDS - start)) s"
