#!/usr/bin/env bash
# CTest ci_workflow: the commands of examples/ci/github-actions.yml, run locally in their order: the
# steps `id: llmchaos-shard` (once per matrix entry) and `id: llmchaos-merge`, read out of the workflow
# file itself (so the example cannot drift from what is tested), over a copy of the catalog under
# virtual time. Then the gate: a baseline where one case changed makes the merge step fail.
# Usage: run-workflow.sh LLMCHAOS_BINARY SOURCE_DIR
set -euo pipefail
bin=$1
src=$2
workflow=$src/examples/ci/github-actions.yml
work=$(mktemp -d "${TMPDIR:-/tmp}/llmchaos-ci-workflow.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "ci_workflow: $*" >&2; exit 1; }

source "$(dirname "$0")/yaml_steps.sh"
shard_step=$(step "$workflow" llmchaos-shard)
merge_step=$(step "$workflow" llmchaos-merge)
[[ -n $shard_step ]] || fail "no step 'id: llmchaos-shard' with a run block in $workflow"
[[ -n $merge_step ]] || fail "no step 'id: llmchaos-merge' with a run block in $workflow"
matrix=$(sed -n 's/^ *shard: \[\(.*\)\]$/\1/p' "$workflow" | tr -d ' ' | tr ',' ' ')
shards=$(sed -n 's/^ *SHARDS: *\([0-9]*\).*/\1/p' "$workflow")
[[ -n $matrix && -n $shards ]] || fail "no shard matrix or SHARDS in $workflow"
[[ $(wc -w <<<"$matrix") -eq $shards ]] || fail "SHARDS=$shards but the matrix is [$matrix]"

# The workflow's env, pointed at this build and a copy of the catalog; virtual time keeps it fast.
cp -r "$src/cases" "$work/cases"
cd "$work"
export SHARDS=$shards LLMCHAOS=$bin CASES=$work/cases BASELINE=$work/baseline.json LLMCHAOS_ARGS=--virtual-time
"$bin" run "$CASES" $LLMCHAOS_ARGS -q --write-baseline "$BASELINE" --report-dir "$work/one-run" >/dev/null ||
  fail "the unsharded run failed"

for k in $matrix; do
  echo "ci_workflow: shard $k/$shards"
  bash -euo pipefail -c "${shard_step//'${{ matrix.shard }}'/$k}" || fail "the shard step failed for shard $k"
done
echo "ci_workflow: merge"
bash -euo pipefail -c "$merge_step" >"$work/merge.out" || { cat "$work/merge.out"; fail "the merge step failed"; }
for f in junit.xml report.json report.md report.html; do
  [[ -s llmchaos-report/$f ]] || fail "the merge wrote no llmchaos-report/$f"
done
grep -q "merged $shards shard report(s)" "$work/merge.out" || fail "the merge did not say it merged $shards shards"
grep -q "0 case(s) changed action" "$work/merge.out" || fail "the gate did not compare with the baseline"
# The merged report counts what the one run counted.
count() { grep -o '<testsuites[^>]*' "$1" | grep -o " $2=\"[0-9]*\""; }
for a in tests failures errors; do
  [[ $(count llmchaos-report/junit.xml $a) == $(count one-run/junit.xml $a) ]] ||
    fail "junit $a differ: merged $(count llmchaos-report/junit.xml $a), one run $(count one-run/junit.xml $a)"
done
(($(wc -c <llmchaos-report/report.md) < 60000)) || fail "report.md is over 60,000 characters"

# The gate: one case recorded with another action makes the merge step fail (exit 1), naming it.
sed -i '0,/"action":"retry","actions":\["retry"\]/s//"action":"fallback","actions":["fallback"]/' "$BASELINE"
if bash -euo pipefail -c "$merge_step" >"$work/gate.out"; then fail "the merge passed a baseline with a changed case"; fi
grep -q "1 case(s) changed action" "$work/gate.out" || { cat "$work/gate.out"; fail "the gate did not name the change"; }
grep -q "Action changes vs baseline (1)" llmchaos-report/report.md || fail "report.md does not show the change"
echo "ci_workflow: shards, merge and gate ran as the workflow runs them"
