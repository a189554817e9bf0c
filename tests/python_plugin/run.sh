#!/usr/bin/env bash
# CTest python_plugin_example (label python): scripts/package builds the wheel around the already-built
# binary (no second C++ build), the wheel is installed from its file into a fresh venv (the test lock,
# pinned by hash; no source tree on sys.path, no llmchaos on PATH), and examples/apps/python's suite runs
# through it: the fixed service passes every case and writes the four reports; the plugin's own tests
# (python/tests) pass; `llmchaos --version` runs from the venv's PATH; the "before" rules fail naming the quota case and its failed check. Exit 77 (skip) without python3-venv or the registry.
set -uo pipefail
llmchaos=$1 root=$2 build=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

python3 -c 'import venv, ensurepip' 2>/dev/null || { echo "SKIP: python3-venv is not installed"; exit 77; }
python3 -m pip index versions pip >/dev/null 2>&1 || { echo "SKIP: the Python package registry is unreachable"; exit 77; }

start=$SECONDS
BUILD_DIR=$build LLMCHAOS_PACKAGE_BINARY=$llmchaos "$root/scripts/package" wheel >"$work/package.log" 2>&1 ||
  { cat "$work/package.log"; fail "scripts/package wheel"; }
wheel=$(ls "$build"/package/dist/pytest_llmchaostest-*manylinux*.whl) || fail "no manylinux wheel"
echo "wheel: $(basename "$wheel") ($(stat -c %s "$wheel") bytes), packaged in $((SECONDS - start)) s"

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --require-hashes -r "$root/python/locks/test.txt" || fail "the test lock did not install"
"$work/venv/bin/pip" install -q --no-deps "$wheel" || fail "the wheel did not install"

app=$root/examples/apps/python
clean_path=$(printf '%s' "$PATH" | tr ':' '\n' | while read -r d; do [[ -x $d/llmchaos ]] || printf '%s:' "$d"; done)
run() {  # run the example suite with the venv's python only (no PYTHONPATH, no LLMCHAOS_BIN, no llmchaos on PATH)
  (cd "$app" && env -u PYTHONPATH -u LLMCHAOS_BIN PATH="$clean_path" PYTHONDONTWRITEBYTECODE=1 \
     "$work/venv/bin/python" -m pytest -p no:cacheprovider -q "$@")
}
where=$(cd "$app" && env -u PYTHONPATH "$work/venv/bin/python" -c 'import llmchaostest; print(llmchaostest.__file__, llmchaostest.find_binary())')
[[ $where == "$work/venv/"* && $where != *"$root/python"* ]] || fail "llmchaostest imported from outside the venv: $where"
echo "imported: $where"
# the wheel's `llmchaos` command (a script execing the binary auditwheel moved beside its grafted libraries)
on_path=$(env PATH="$work/venv/bin:$clean_path" bash -c 'command -v llmchaos')
[[ $on_path == "$work/venv/bin/llmchaos" ]] || fail "llmchaos on the venv's PATH is '$on_path', not the venv's own"
version=$(env -u LLMCHAOS_BIN PATH="$work/venv/bin:$clean_path" llmchaos --version 2>&1) ||
  fail "llmchaos --version from the venv's PATH failed: $version"
echo "llmchaos on PATH: $on_path: $version"

run --llmchaos-report "$work/report" >"$work/fixed.log" 2>&1
code=$?
cat "$work/fixed.log"
[[ $code == 0 ]] || fail "the fixed service's suite exited $code"
grep -Eq "^5 passed" "$work/fixed.log" || fail "expected 5 passed"
for f in junit.xml report.json report.md report.html; do
  [[ -s $work/report/$f ]] || fail "--llmchaos-report wrote no $f"
done
grep -q 'quota 429 goes to the fallback' "$work/report/junit.xml" || fail "junit.xml does not name the quota case"
grep -q '5 passed' "$work/report/report.md" || fail "report.md does not count 5 passed"

# The plugin's own tests (pytester): marker ids and errors, the checker's messages, one server per xdist worker.
(cd "$work" && env -u PYTHONPATH -u LLMCHAOS_BIN PATH="$clean_path" PYTHONDONTWRITEBYTECODE=1 \
   "$work/venv/bin/python" -m pytest -p no:cacheprovider -q "$root/python/tests") >"$work/plugin.log" 2>&1
code=$?
cat "$work/plugin.log"
[[ $code == 0 ]] || fail "python/tests (the plugin's own tests) exited $code"

CHAT_SERVICE_RULES=before run --llmchaos-report "$work/before-report" >"$work/before.log" 2>&1
code=$?
cat "$work/before.log"
[[ $code == 1 ]] || fail "the before suite exited $code, expected 1 (tests failed)"
grep -q 'FAILED tests/test_chat_resilience.py::test_classify_under_chaos\[quota-429-falls-back\]' "$work/before.log" ||
  fail "the before suite does not fail the quota case by its id"
grep -q 'llmchaos case "quota 429 goes to the fallback, never retried"' "$work/before.log" || fail "no checker message naming the case"
grep -q 'check no_hammering failed' "$work/before.log" || fail "the checker's failed check (no_hammering) is not named"
grep -Eq '^(FAILED|ERROR).*healthy-primary' "$work/before.log" && fail "the before rules must not fail the healthy case"
grep -q 'quota 429 goes to the fallback, never retried' "$work/before-report/report.md" || fail "the before report.md does not list the failed case"
echo "python plugin tier: fixed passes, before fails naming the case and its check, in $((SECONDS - start)) s"
