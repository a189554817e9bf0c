#!/usr/bin/env bash
# helm-check.sh ROOT BUILD_DIR [LLMCHAOS]: the checks of the Helm chart deploy/helm/llmchaos that run without a
# cluster (none runs here; see the chart's README.md):
#   1. helm, built from its Go module at the version pinned in deploy/helm/tools/go.mod (go.sum
#      verified), into BUILD_DIR/helm-tools; kept there, so a later run skips the build;
#   2. helm lint and helm lint --strict of each values case (ci/*-values.yaml and the defaults);
#   3. helm template of each case, the ServiceMonitor with --api-versions monitoring.coreos.com/v1;
#   4. the rendered manifests validated against the Kubernetes schemas (kubernetes-validate from PyPI,
#      installed with --require-hashes from deploy/helm/tools/requirements.txt into a venv in BUILD_DIR);
#   5. Pod Security "restricted", probes, arguments, token and cases asserted (helm_check.py);
#   6. values the schema forbids (a bad mode, a bad port, ...) make lint and template fail;
#   7. with LLMCHAOS (the binary the image holds): each mode's rendered arguments and environment run
#      it on loopback, and the probes' paths answer 200 (helm_check.py run).
# Exits 77 with the reason when go or python3's venv is missing, or a registry does not answer.
set -uo pipefail

ROOT=$(cd "${1:?usage: helm-check.sh ROOT BUILD_DIR}" && pwd)
BUILD=$(mkdir -p "${2:?usage: helm-check.sh ROOT BUILD_DIR}" && cd "$2" && pwd)
CHART="$ROOT/deploy/helm/llmchaos"
TOOLS="$ROOT/deploy/helm/tools"
OUT="$BUILD/helm-tools"
HERE="$ROOT/tests/container"
LLMCHAOS=${3:-}
mkdir -p "$OUT"

skip() { echo "SKIP: $*"; exit 77; }
die() { echo "FAIL: $*"; exit 1; }
now() { date +%s; }

command -v go >/dev/null || skip "no go toolchain on PATH (helm is built from its Go module)"
command -v python3 >/dev/null || skip "no python3 on PATH (kubernetes-validate runs in a venv)"
python3 -c 'import venv, ensurepip' 2>/dev/null || skip "python3 has no venv/ensurepip (Debian: apt-get install python3-venv)"

# --- 1. helm from its Go module, pinned --------------------------------------------------------------
HELM_MOD=$(awk '$1 ~ /^helm\.sh\/helm\/v[0-9]+$/ {print $1; exit}' "$TOOLS/go.mod")
HELM_VERSION=$(awk '$1 ~ /^helm\.sh\/helm\/v[0-9]+$/ {print $2; exit}' "$TOOLS/go.mod")
[ -n "$HELM_MOD" ] && [ -n "$HELM_VERSION" ] || die "no helm.sh/helm/vN requirement in $TOOLS/go.mod"
# Keyed by the pins themselves: a changed go.mod or go.sum builds anew. $OUT/helm links to the newest.
pins=$(cat "$TOOLS/go.mod" "$TOOLS/go.sum" | sha256sum | cut -c1-12)
HELM="$OUT/helm-$HELM_VERSION-$pins"
if [ -x "$HELM" ]; then
  echo "helm $HELM_VERSION: cached ($HELM)"
else
  echo "helm $HELM_VERSION: building $HELM_MOD/cmd/helm (cold: a few minutes on 2 cores)"
  t0=$(now)
  log="$OUT/helm-build.log"
  # GOFLAGS=-mod=readonly: go.mod and go.sum as committed, every module checked against go.sum.
  # GOTOOLCHAIN=local: no toolchain download; GOWORK=off: this module alone.
  if ! (cd "$TOOLS" && GOWORK=off GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0 \
          nice -n 10 go build -trimpath \
            -ldflags "-s -w -X $HELM_MOD/internal/version.version=$HELM_VERSION" \
            -o "$HELM.tmp" "$HELM_MOD/cmd/helm") >"$log" 2>&1; then
    tail -20 "$log"
    if grep -qE 'checksum mismatch|SECURITY ERROR|missing go.sum entry|updates to go.mod needed' "$log"; then
      die "building helm: go.sum does not verify (see above)"
    fi
    if grep -qE 'requires go >=|toolchain' "$log"; then
      skip "the go toolchain here is older than $TOOLS/go.mod asks: $(go version)"
    fi
    if grep -qE 'GOPROXY=off|module lookup disabled|dial tcp|no such host|i/o timeout|connection refused|TLS handshake|proxy.*(404|410|403)|Get "https?://' "$log"; then
      skip "the Go module proxy did not answer (helm's modules are not in the module cache)"
    fi
    die "building helm failed (log: $log)"
  fi
  mv "$HELM.tmp" "$HELM"
  echo "helm $HELM_VERSION: built in $(($(now) - t0)) s"
fi
ln -sfn "$(basename "$HELM")" "$OUT/helm"
"$HELM" version --short || die "the built helm does not run"

# --- the validator's venv, pinned by hash --------------------------------------------------------------
VENV="$OUT/venv"
REQ="$TOOLS/requirements.txt"
stamp=$(sha256sum "$REQ" | cut -d' ' -f1)
if [ "$(cat "$VENV/.requirements.sha256" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV" || skip "python3 -m venv failed (Debian: apt-get install python3-venv)"
  log="$OUT/pip.log"
  if ! "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
         --require-hashes --only-binary :all: -r "$REQ" >"$log" 2>&1; then
    tail -20 "$log"
    grep -q 'DO NOT MATCH THE HASHES' "$log" && die "a wheel's hash does not match $REQ"
    rm -rf "$VENV"
    skip "pip could not install $REQ (PyPI unreachable?)"
  fi
  echo "$stamp" >"$VENV/.requirements.sha256"
fi
PY="$VENV/bin/python"
echo "kubernetes-validate $("$VENV/bin/kubernetes-validate" --version)"

# --- 2-5. lint, template, validate, assert each case ----------------------------------------------------
RENDERED="$OUT/rendered"
rm -rf "$RENDERED" && mkdir -p "$RENDERED"
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

# case name -> helm flags
declare -A FLAGS=(
  [default]=""
  [serve]="-f $CHART/ci/serve-values.yaml"
  [proxy]="-f $CHART/ci/proxy-values.yaml"
  [gateway]="-f $CHART/ci/gateway-values.yaml"
  [servicemonitor]="-f $CHART/ci/servicemonitor-values.yaml --api-versions monitoring.coreos.com/v1"
)
for case in default serve proxy gateway servicemonitor; do
  # shellcheck disable=SC2086  # the flags are words
  set -- ${FLAGS[$case]}
  lint_flags=()
  for f in "$@"; do [ "$f" = --api-versions ] && break; lint_flags+=("$f"); done
  if "$HELM" lint "$CHART" "${lint_flags[@]}" >"$RENDERED/$case.lint" 2>&1 &&
     "$HELM" lint --strict "$CHART" "${lint_flags[@]}" >>"$RENDERED/$case.lint" 2>&1; then
    echo "ok: helm lint, helm lint --strict ($case)"
  else
    cat "$RENDERED/$case.lint"; fail "helm lint ($case)"
  fi
  if "$HELM" template rel "$CHART" --namespace staging "$@" >"$RENDERED/$case.yaml" 2>"$RENDERED/$case.err"; then
    echo "ok: helm template ($case): $(grep -c '^kind:' "$RENDERED/$case.yaml") manifests"
    "$PY" "$HERE/helm_check.py" assert "$case" "$RENDERED/$case.yaml" || fail "assertions ($case)"
  else
    cat "$RENDERED/$case.err"; fail "helm template ($case)"
  fi
done

# helm install --dry-run=client: the release as helm would install it, NOTES.txt included (no cluster).
if "$HELM" install chaos "$CHART" --dry-run=client --namespace staging -f "$CHART/ci/serve-values.yaml" \
     >"$RENDERED/install.txt" 2>&1 && grep -q 'helm test chaos --namespace staging' "$RENDERED/install.txt"; then
  echo "ok: helm install --dry-run=client renders the release and its NOTES"
else
  cat "$RENDERED/install.txt"; fail "helm install --dry-run=client"
fi

# The ServiceMonitor needs both the value and the API: without monitoring.coreos.com/v1, none.
if "$HELM" template rel "$CHART" -f "$CHART/ci/servicemonitor-values.yaml" >"$RENDERED/sm-no-api.yaml" 2>&1 &&
   ! grep -q '^kind: ServiceMonitor' "$RENDERED/sm-no-api.yaml"; then
  echo "ok: no ServiceMonitor where the cluster does not serve monitoring.coreos.com/v1"
else
  fail "a ServiceMonitor rendered without monitoring.coreos.com/v1 (or template failed)"
fi

if "$PY" "$HERE/helm_check.py" validate "$RENDERED"/{default,serve,proxy,gateway,servicemonitor}.yaml; then
  echo "ok: the rendered manifests validate against the Kubernetes schemas"
else
  fail "kubernetes-validate"
fi

# --- 6. values the schema refuses -------------------------------------------------------------------------
bad=(
  "mode=bogus"
  "service.port=70000"
  "containerPort=0"
  "image.pullPolicy=Sometimes"
  "serve.script=../../etc/passwd"
  "bogusKey=1"
  "mode=proxy"          # no proxy.upstream
  "mode=gateway"        # no gateway.config
)
for value in "${bad[@]}"; do
  if "$HELM" template rel "$CHART" --set "$value" >/dev/null 2>"$RENDERED/bad.err"; then
    fail "helm template accepted --set $value"
  elif ! grep -q "values don't meet the specifications of the schema" "$RENDERED/bad.err"; then
    cat "$RENDERED/bad.err"; fail "helm template refused --set $value, but not by the values schema"
  elif "$HELM" lint "$CHART" --set "$value" >"$RENDERED/bad.lint" 2>&1; then
    fail "helm lint accepted --set $value"
  else
    echo "ok: --set $value refused by the schema (template and lint):$(grep -E '^ *- at ' "$RENDERED/bad.err" | tail -1 | cut -c1-140)"
  fi
done

# --- 7. the rendered command lines, run ------------------------------------------------------------------
if [ -n "$LLMCHAOS" ] && [ -x "$LLMCHAOS" ]; then
  for case in default serve proxy gateway; do
    "$PY" "$HERE/helm_check.py" run "$case" "$RENDERED/$case.yaml" "$LLMCHAOS" || fail "the rendered $case command line"
  done
else
  echo "note: no llmchaos binary given: the rendered command lines were not run"
fi

if [ "$failed" -ne 0 ]; then
  echo "helm-check: $failed failed"
  exit 1
fi
echo "helm-check: all passed (helm $HELM_VERSION, chart $(awk '/^version:/ {print $2}' "$CHART/Chart.yaml"))"
