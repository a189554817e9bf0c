#!/usr/bin/env bash
# CTest js_helper_example (label js): scripts/package packs the npm tarballs (the helper, and the platform
# package carrying the already-built binary: no second C++ build), a fresh temporary project gets
# examples/apps/typescript with vitest from its lock (npm ci) and the two tarballs, and Vitest runs the
# example: the fixed service passes every case; the "before" rules fail naming the quota case and its
# failed check; tests/js_helper/jest runs the same tarballs under Jest. Exit 77 (skip) without node/npm, python3-venv (the packaging tools) or the registries.
set -uo pipefail
llmchaos=$1 root=$2 build=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

command -v node >/dev/null && command -v npm >/dev/null || { echo "SKIP: node/npm not installed"; exit 77; }
python3 -c 'import venv, ensurepip' 2>/dev/null || { echo "SKIP: python3-venv (the packaging tools) is not installed"; exit 77; }
npm view vitest@3.2.4 version >/dev/null 2>&1 || { echo "SKIP: the npm registry is unreachable"; exit 77; }
python3 -m pip index versions pip >/dev/null 2>&1 || { echo "SKIP: the Python package registry is unreachable"; exit 77; }

start=$SECONDS
BUILD_DIR=$build LLMCHAOS_PACKAGE_BINARY=$llmchaos "$root/scripts/package" wheel npm >"$work/package.log" 2>&1 ||
  { cat "$work/package.log"; fail "scripts/package wheel npm"; }
dist=$build/package/dist
ls -l "$dist"/llmchaostest-*.tgz
echo "packed in $((SECONDS - start)) s"

mkdir -p "$work/apps"
cp -r "$root/examples/apps/typescript" "$root/examples/apps/cases" "$work/apps/"
rm -rf "$work/apps/typescript/node_modules"
app=$work/apps/typescript
(cd "$app" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >/dev/null) || fail "npm ci (vitest from the lock)"
(cd "$app" && npm install --no-save --prefer-offline --no-audit --no-fund --loglevel=error \
   "$dist"/llmchaostest-linux-x64-*.tgz "$dist"/llmchaostest-[0-9]*.tgz >/dev/null) || fail "installing the tarballs"

clean_path=$(printf '%s' "$PATH" | tr ':' '\n' | while read -r d; do [[ -x $d/llmchaos ]] || printf '%s:' "$d"; done)
# No colours: under CI=true Vitest's colour library turns them on even into a file, and the greps below read plain text.
export NO_COLOR=1
strip_colours() { sed 's/\x1b\[[0-9;]*m//g' "$1" >"$1.plain" && mv "$1.plain" "$1"; }
run() { (cd "$app" && env -u LLMCHAOS_BIN -u FORCE_COLOR PATH="$clean_path" "$@"); }
binary=$(run node -p 'require("llmchaostest").findBinary()')
[[ $binary == "$app/node_modules/llmchaostest-linux-x64/bin/llmchaos" ]] || fail "the binary is not the platform package's: $binary"
echo "binary: $binary"

run env LLMCHAOS_REPORT_DIR="$work/report" npx vitest run >"$work/fixed.log" 2>&1
code=$?
strip_colours "$work/fixed.log"
cat "$work/fixed.log"
[[ $code == 0 ]] || fail "the fixed service's Vitest suite exited $code"
grep -Eq 'Tests +5 passed' "$work/fixed.log" || fail "expected 5 passed tests"
for f in junit.xml report.json report.md report.html; do
  [[ -s $work/report/$f ]] || fail "chaos.writeReports wrote no $f"
done
grep -q 'quota 429 goes to the fallback' "$work/report/junit.xml" || fail "junit.xml does not name the quota case"

CHAT_SERVICE_RULES=before run npx vitest run >"$work/before.log" 2>&1
code=$?
strip_colours "$work/before.log"
cat "$work/before.log"
[[ $code != 0 ]] || fail "the before suite passed"
grep -q 'FAIL .*quota-429-falls-back.toml' "$work/before.log" || fail "the before suite does not fail the quota case by name"
grep -q 'llmchaos case "quota 429 goes to the fallback, never retried"' "$work/before.log" || fail "no checker message naming the case"
grep -q 'check no_hammering failed' "$work/before.log" || fail "the checker's failed check (no_hammering) is not named"
# The same tarballs under Jest (CommonJS, no transform): a passing and a failing client on the quota case.
mkdir -p "$work/jest"
cp "$root/tests/js_helper/jest/package.json" "$root/tests/js_helper/jest/package-lock.json" "$root/tests/js_helper/jest/helper.test.js" "$work/jest/"
(cd "$work/jest" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >/dev/null) || fail "npm ci (jest from the lock)"
(cd "$work/jest" && npm install --no-save --prefer-offline --no-audit --no-fund --loglevel=error \
   "$dist"/llmchaostest-linux-x64-*.tgz "$dist"/llmchaostest-[0-9]*.tgz >/dev/null) || fail "installing the tarballs beside jest"
(cd "$work/jest" && env -u LLMCHAOS_BIN PATH="$clean_path" LLMCHAOS_CASES="$work/apps/cases/chat" npx jest) >"$work/jest.log" 2>&1
code=$?
strip_colours "$work/jest.log"
cat "$work/jest.log"
[[ $code == 0 ]] || fail "the Jest check exited $code"
grep -Eq 'Tests: +2 passed' "$work/jest.log" || fail "expected 2 passed Jest tests"

echo "js helper tier: fixed passes, before fails naming the case and its check, in $((SECONDS - start)) s"
