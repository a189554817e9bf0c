#!/usr/bin/env bash
# CTest `catalog_reports_unchanged` (label cli): the bundled catalog's four reports, played under virtual
# time with seed 1, are byte-identical to the last accepted ones, but for the run's clock (its start
# time and duration). A refactor must not change a report; a change of the catalog or of a report's
# format must be looked at and accepted on purpose:
#   LLMCHAOS_UPDATE_GOLDEN=1 tests/golden/catalog_reports.sh build/app/llmchaos
# rewrites tests/golden/catalog-reports.sha256 (one digest per report: the files are ~4 MB, too big to keep).
# usage: catalog_reports.sh LLMCHAOS_BINARY
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${1:?usage: catalog_reports.sh LLMCHAOS_BINARY}
sums=$here/catalog-reports.sha256
out=${LLMCHAOS_GOLDEN_OUT:-$(mktemp -d)}
[[ -n ${LLMCHAOS_GOLDEN_OUT:-} ]] || trap 'rm -rf "$out"' EXIT
mkdir -p "$out"
cd "$root"  # the reports name cases by paths relative to where the run starts
"$bin" run cases --virtual-time --seed 1 -q --report-dir "$out" >"$out/run.txt" 2>&1 ||
  { cat "$out/run.txt"; echo "catalog_reports: the catalog did not pass under virtual time"; exit 1; }
# The run's own clock: the start time (ISO 8601 UTC) and how long it took are the only volatile bytes.
sed -E -i \
  -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z/STARTED_AT/g' \
  -e 's/("duration_ms": )[0-9.e+-]+/\1DURATION/' \
  -e 's/(<testsuites [^>]* time=")[0-9.]+/\1DURATION/' \
  -e 's/ · [0-9.]+ (ms|s|min) · STARTED_AT/ · DURATION · STARTED_AT/' \
  -e 's|<span>took <b>[^<]*</b></span>|<span>took <b>DURATION</b></span>|' \
  "$out"/report.json "$out"/junit.xml "$out"/report.md "$out"/report.html
(cd "$out" && sha256sum junit.xml report.html report.json report.md) >"$out/now.sha256"
if [[ ${LLMCHAOS_UPDATE_GOLDEN:-} == 1 ]]; then
  cp "$out/now.sha256" "$sums"
  echo "catalog_reports: wrote $sums"
  exit 0
fi
if ! diff -u "$sums" "$out/now.sha256"; then
  echo "catalog_reports: the catalog's reports changed (the digests above differ). If the change is meant"
  echo "(a new case, a new report field), look at the reports (LLMCHAOS_GOLDEN_OUT=DIR keeps them) and accept"
  echo "them: LLMCHAOS_UPDATE_GOLDEN=1 tests/golden/catalog_reports.sh $bin"
  exit 1
fi
echo "catalog_reports: 4 reports byte-identical ($(grep -c '"name"' "$out/report.json") names in report.json)"
