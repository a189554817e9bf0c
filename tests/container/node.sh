#!/usr/bin/env bash
# CTest container_node (label container): the Node tier through the image.
#  1. llmchaostest/containers under Vitest (tests/container/node: testcontainers and vitest from its
#     package-lock.json by npm ci, the helper packed from js/ with npm pack): a hardened client passes the
#     quota case, a naive one fails it naming the check, reports copied out, 401 without the token;
#  2. examples/apps/typescript with LLMCHAOS_DOCKER_IMAGE (startLlmchaos's docker CLI mode): the fixed
#     service passes every case (5 tests), CHAT_SERVICE_RULES=before fails the quota case by name.
# usage: node.sh SOURCE_DIR BUILD_DIR. Image: LLMCHAOS_DOCKER_IMAGE, default llmchaos:dev. Ryuk as in
# go.sh. Skips (77) without a daemon, node/npm, the image or the npm registry. Installs into a temporary
# folder, never the source tree.
set -uo pipefail
root=$1 build=$2
fail() { echo "FAIL: $*"; exit 1; }
docker info >/dev/null 2>&1 || { echo "SKIP: no Docker daemon answers (docker info failed)"; exit 77; }
command -v node >/dev/null && command -v npm >/dev/null || { echo "SKIP: node/npm not installed"; exit 77; }
image=${LLMCHAOS_DOCKER_IMAGE:-llmchaos:dev}
docker image inspect "$image" >/dev/null 2>&1 || { echo "SKIP: no local image $image (container_image builds it: scripts/image)"; exit 77; }
npm view vitest@3.2.4 version >/dev/null 2>&1 || { echo "SKIP: the npm registry is unreachable"; exit 77; }
export LLMCHAOS_DOCKER_IMAGE=$image NO_COLOR=1
unset LLMCHAOS_URL LLMCHAOS_BIN LLMCHAOS_ADMIN_TOKEN LLMCHAOS_CASES_DIR FORCE_COLOR
ryuk_image=testcontainers/ryuk:0.14.0
if docker image inspect "$ryuk_image" >/dev/null 2>&1; then
  export TESTCONTAINERS_RYUK_DISABLED=false; echo "Ryuk on ($ryuk_image is here)"
else
  export TESTCONTAINERS_RYUK_DISABLED=true; echo "Ryuk off: $ryuk_image cannot be pulled here (TESTCONTAINERS_RYUK_DISABLED=true)"
fi
mkdir -p "$build"
work=$(mktemp -d "$build/container-node.XXXXXX")
trap 'rm -rf "$work"' EXIT
strip_colours() { sed 's/\x1b\[[0-9;]*m//g' "$1" >"$1.plain" && mv "$1.plain" "$1"; }
start=$SECONDS

# The helper as npm would install it: npm pack of js/, unpacked into node_modules/llmchaostest (its
# optional platform package is left out: the image carries the binary).
(cd "$root/js" && npm pack --silent --pack-destination "$work" >/dev/null) || fail "npm pack js/"
helper=$(ls "$work"/llmchaostest-*.tgz)
grep -q 'package/containers.js' <<<"$(tar -tzf "$helper")" || fail "the packed helper lacks containers.js"
install_helper() { mkdir -p "$1/node_modules/llmchaostest" && tar -xzf "$helper" -C "$1/node_modules/llmchaostest" --strip-components=1; }

check=$work/check
mkdir -p "$check"
cp "$root/tests/container/node/package.json" "$root/tests/container/node/package-lock.json" \
   "$root/tests/container/node/vitest.config.mjs" "$root/tests/container/node/containers.test.ts" "$check/"
(cd "$check" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >/dev/null) || fail "npm ci (testcontainers, vitest from the lock)"
install_helper "$check"
echo "installed in $((SECONDS - start)) s: testcontainers $(node -p "require('$check/node_modules/testcontainers/package.json').version")"
(cd "$check" && LLMCHAOS_TEST_CASES=$root/examples/apps/cases npx vitest run) >"$work/module.log" 2>&1
code=$?
strip_colours "$work/module.log"
cat "$work/module.log"
[[ $code == 0 ]] || fail "llmchaostest/containers' Vitest suite exited $code"
grep -Eq 'Tests +5 passed' "$work/module.log" || fail "expected 5 passed container tests"

step=$SECONDS
mkdir -p "$work/apps"
cp -r "$root/examples/apps/typescript" "$root/examples/apps/cases" "$work/apps/"
rm -rf "$work/apps/typescript/node_modules"
app=$work/apps/typescript
(cd "$app" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >/dev/null) || fail "npm ci (the example's vitest)"
install_helper "$app"
(cd "$app" && LLMCHAOS_REPORT_DIR=$work/report npx vitest run) >"$work/fixed.log" 2>&1
code=$?
strip_colours "$work/fixed.log"
cat "$work/fixed.log"
[[ $code == 0 ]] || fail "the fixed service through $image exited $code"
grep -Eq 'Tests +5 passed' "$work/fixed.log" || fail "expected 5 passed tests"
for f in junit.xml report.json report.md report.html; do
  [[ -s $work/report/$f ]] || fail "chaos.writeReports copied no $f out of the container"
done
(cd "$app" && CHAT_SERVICE_RULES=before npx vitest run) >"$work/before.log" 2>&1
code=$?
strip_colours "$work/before.log"
cat "$work/before.log"
[[ $code != 0 ]] || fail "the before suite passed through $image"
grep -q 'FAIL .*quota-429-falls-back.toml' "$work/before.log" || fail "the before suite does not fail the quota case by name"
grep -q 'check no_hammering failed' "$work/before.log" || fail "the checker's failed check (no_hammering) is not named"
echo "examples/apps/typescript through $image: $((SECONDS - step)) s"
echo "container_node: module and example app through $image in $((SECONDS - start)) s"
