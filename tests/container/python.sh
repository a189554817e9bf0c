#!/usr/bin/env bash
# CTest container_python (label container): the Python helper through the image llmchaos:dev.
#   - scripts/package builds the wheel around the already-built binary; it is installed from its file into
#     a venv of this tier's own ($BUILD/container/python-venv, python/locks/containers.txt pinned by hash:
#     testcontainers, pytest, pytest-xdist), and `llmchaos --version` runs from the venv's PATH;
#   - examples/apps/python with --llmchaos-docker llmchaos:dev: the fixed service passes every case (-n 2:
#     a container per xdist worker) and writes the four reports merged; CHAT_SERVICE_RULES=before fails
#     naming the quota case and its check;
#   - python/tests/test_containers.py (LlmchaosContainer: the token, 401 without it, ready, verdicts, the
#     reports copied out, cases copied in, the plugin's --llmchaos-docker).
# Ryuk off (TESTCONTAINERS_RYUK_DISABLED=true): its image cannot be pulled here; every container is removed
# by the helper itself. Exit 77 (skip) without a Docker daemon, the image, python3-venv or the registry.
set -uo pipefail
llmchaos=$1 root=$2 build=$3
image=${LLMCHAOS_TEST_IMAGE:-llmchaos:dev}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

docker info >/dev/null 2>&1 || { echo "SKIP: no Docker daemon answers (docker info failed)"; exit 77; }
docker image inspect "$image" >/dev/null 2>&1 || { echo "SKIP: no image $image (scripts/image builds it)"; exit 77; }
python3 -c 'import venv, ensurepip' 2>/dev/null || { echo "SKIP: python3-venv is not installed"; exit 77; }

# The published ports listen on loopback (scripts/docker-daemon): reach them there, also from a sandbox
# that looks like a container (/.dockerenv) to Testcontainers.
export TESTCONTAINERS_CONNECTION_MODE=${TESTCONTAINERS_CONNECTION_MODE:-docker_host}
start=$SECONDS
venv=$build/container/python-venv lock=$root/python/locks/containers.txt
stamp=$(sha256sum "$lock" | cut -c1-16)
if [[ ! -f $venv/.lock-$stamp ]]; then
  python3 -m pip index versions pip >/dev/null 2>&1 || { echo "SKIP: the Python package registry is unreachable"; exit 77; }
  rm -rf "$venv"
  python3 -m venv "$venv" || fail "python3 -m venv"
  "$venv/bin/pip" install -q --require-hashes -r "$lock" || fail "the containers lock did not install"
  touch "$venv/.lock-$stamp"
fi

BUILD_DIR=$build LLMCHAOS_PACKAGE_BINARY=$llmchaos "$root/scripts/package" wheel >"$work/package.log" 2>&1 ||
  { cat "$work/package.log"; fail "scripts/package wheel"; }
wheel=$(ls "$build"/package/dist/pytest_llmchaostest-*manylinux*.whl) || fail "no manylinux wheel"
"$venv/bin/pip" install -q --no-deps --force-reinstall "$wheel" || fail "the wheel did not install"
echo "venv and wheel $(basename "$wheel") ready in $((SECONDS - start)) s"

clean_path=$(printf '%s' "$PATH" | tr ':' '\n' | while read -r d; do [[ -x $d/llmchaos ]] || printf '%s:' "$d"; done)
export TESTCONTAINERS_RYUK_DISABLED=true PYTHONDONTWRITEBYTECODE=1
py() { env -u PYTHONPATH -u LLMCHAOS_BIN PATH="$venv/bin:$clean_path" "$venv/bin/python" "$@"; }

on_path=$(env PATH="$venv/bin:$clean_path" bash -c 'command -v llmchaos')
[[ $on_path == "$venv/bin/llmchaos" ]] || fail "llmchaos on the venv's PATH is '$on_path', not $venv/bin/llmchaos"
version=$(env PATH="$venv/bin:$clean_path" llmchaos --version 2>&1) || fail "llmchaos --version from the venv's PATH: $version"
echo "llmchaos on PATH: $on_path: $version"

app=$root/examples/apps/python
run() { (cd "$app" && py -m pytest -p no:cacheprovider -q --llmchaos-docker "$image" "$@"); }

t=$SECONDS
run -n 2 --llmchaos-report "$work/report" >"$work/fixed.log" 2>&1  # a container per xdist worker
code=$?
cat "$work/fixed.log"
[[ $code == 0 ]] || fail "the fixed service's suite through $image exited $code"
grep -Eq "^5 passed" "$work/fixed.log" || fail "expected 5 passed"
grep -q "reports of 2 server(s) written" "$work/fixed.log" || fail "expected the reports of 2 servers (one per worker) merged"
for f in junit.xml report.json report.md report.html; do
  [[ -s $work/report/$f ]] || fail "--llmchaos-report wrote no $f"
done
grep -q 'quota 429 goes to the fallback' "$work/report/junit.xml" || fail "junit.xml does not name the quota case"
echo "fixed service through $image: passed in $((SECONDS - t)) s"

t=$SECONDS
CHAT_SERVICE_RULES=before run >"$work/before.log" 2>&1
code=$?
cat "$work/before.log"
[[ $code == 1 ]] || fail "the before suite through $image exited $code, expected 1 (tests failed)"
grep -q 'FAILED tests/test_chat_resilience.py::test_classify_under_chaos\[quota-429-falls-back\]' "$work/before.log" ||
  fail "the before suite does not fail the quota case by its id"
grep -q 'llmchaos case "quota 429 goes to the fallback, never retried"' "$work/before.log" || fail "no checker message naming the case"
grep -q 'check no_hammering failed' "$work/before.log" || fail "the checker's failed check (no_hammering) is not named"
echo "before rules through $image: failed naming the quota case in $((SECONDS - t)) s"

t=$SECONDS
(cd "$work" && LLMCHAOS_TEST_IMAGE=$image py -m pytest -p no:cacheprovider -q -rs "$root/python/tests/test_containers.py") \
  >"$work/module.log" 2>&1
code=$?
cat "$work/module.log"
[[ $code == 0 ]] || fail "python/tests/test_containers.py exited $code"
grep -Eq '^[0-9]+ passed' "$work/module.log" && ! grep -q skipped "$work/module.log" || fail "test_containers.py skipped or ran nothing"
echo "LlmchaosContainer tests passed in $((SECONDS - t)) s"
echo "container python tier: passed in $((SECONDS - start)) s"
