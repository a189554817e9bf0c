#!/usr/bin/env bash
# CTest ci_action: action.yml's steps with an `id: llmchaos-*` (install, run, merge, gate), read out of
# the file and run locally in order as a runner would, with GITHUB_OUTPUT / GITHUB_ENV files and the
# step's inputs as its `env:` passes them, over a copy of the catalog under virtual time:
#  1. one job: the whole catalog, merged, gated on a baseline recorded from it (passes);
#  2. examples/ci/github-action.yml's shape: two shard jobs (merge: false), then a merge-only job
#     (run: false, reports: a glob), with the same counts as one run; then a baseline with one changed
#     case makes the gate step fail;
#  3. the install step from the platform wheel, when scripts/package has built one in this build dir.
# Not run (GitHub-only, `uses:` steps with no local equivalent): the artifact uploads and the pull
# request comment (actions/upload-artifact, marocchino/sticky-pull-request-comment).
# Usage: run-action.sh LLMCHAOS_BINARY SOURCE_DIR [BUILD_DIR]
set -euo pipefail
bin=$1 src=$2 build=${3:-}
action=$src/action.yml
work=$(mktemp -d "${TMPDIR:-/tmp}/llmchaos-ci-action.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "ci_action: $*" >&2; exit 1; }
source "$(dirname "$0")/yaml_steps.sh"

for id in install run merge gate; do
  [[ -n $(step "$action" llmchaos-$id) ]] || fail "no step 'id: llmchaos-$id' with a run block in $action"
done
grep -q 'uses: \./' "$src/examples/ci/github-action.yml" || fail "examples/ci/github-action.yml does not use the action"
echo "ci_action: skipped (GitHub-only): $(grep -c 'uses: \(actions/upload-artifact\|marocchino\)' "$action") upload/comment steps"

# One step as the runner runs it: bash -e, its outputs read back from GITHUB_OUTPUT into STEP_<name>.
run_step() {
  local id=$1 out=$work/out-$1
  : >"$out"
  GITHUB_OUTPUT=$out GITHUB_ENV=$work/github-env bash -eo pipefail -c "$(step "$action" "llmchaos-$id")" || return $?
  while IFS="=" read -r key value; do [[ -n $key ]] && export "STEP_${key//-/_}=$value"; done <"$out"
  return 0
}
load_env() { while IFS="=" read -r key value; do [[ -n $key ]] && export "$key=$value"; done <"$work/github-env"; }

cp -r "$src/cases" "$work/cases"
cd "$work"
"$bin" run cases --virtual-time -q --write-baseline baseline.json --report-dir one-run >/dev/null || fail "the unsharded run failed"

echo "ci_action: 1. one job"
: >"$work/github-env"
INPUT_LLMCHAOS=$bin INPUT_WHEEL= run_step install || fail "install step"
load_env
[[ $LLMCHAOS == "$(realpath "$bin")" ]] || fail "install did not export LLMCHAOS ($LLMCHAOS)"
INPUT_CASES=cases INPUT_ARGS=--virtual-time INPUT_SHARD= INPUT_DURATIONS= run_step run || fail "run step"
[[ -s $STEP_json ]] || fail "the run step wrote no JSON report"
INPUT_REPORTS= INPUT_REPORT_DIR=single INPUT_BASELINE=baseline.json RUN_JSON=$STEP_json run_step merge >merge1.out ||
  { cat merge1.out; fail "merge step"; }
[[ $STEP_exit_code == 0 && $STEP_passed == true ]] || { cat merge1.out; fail "merge said exit $STEP_exit_code passed $STEP_passed"; }
for f in junit.xml report.json report.md report.html; do [[ -s single/$f ]] || fail "no single/$f"; done
MERGE_EXIT=$STEP_exit_code run_step gate || fail "the gate failed a passing run"

echo "ci_action: 2. two shard jobs, then the merge job"
rm -rf llmchaos-shards
for k in 1 2; do
  INPUT_CASES=cases INPUT_ARGS=--virtual-time INPUT_SHARD=$k/2 INPUT_DURATIONS= run_step run || fail "shard $k"
  [[ $STEP_json == llmchaos-shards/shard-$k.json && -s $STEP_json ]] || fail "shard $k wrote no $STEP_json"
done
INPUT_REPORTS='llmchaos-shards/shard-*.json' INPUT_REPORT_DIR=llmchaos-report INPUT_BASELINE=baseline.json RUN_JSON= \
  run_step merge >merge2.out || { cat merge2.out; fail "merge of the shards"; }
grep -q "merged 2 shard report(s)" merge2.out || { cat merge2.out; fail "the merge did not merge 2 shards"; }
count() { grep -o '<testsuites[^>]*' "$1" | grep -o " $2=\"[0-9]*\""; }
for a in tests failures errors; do
  [[ $(count llmchaos-report/junit.xml $a) == $(count one-run/junit.xml $a) ]] || fail "junit $a differ from one run"
done
MERGE_EXIT=$STEP_exit_code run_step gate || fail "the gate failed the sharded run"
sed -i '0,/"action":"retry","actions":\["retry"\]/s//"action":"fallback","actions":["fallback"]/' baseline.json
INPUT_REPORTS='llmchaos-shards/shard-*.json' INPUT_REPORT_DIR=llmchaos-report INPUT_BASELINE=baseline.json RUN_JSON= \
  run_step merge >gate.out || fail "the merge step itself must not fail on a changed case (the gate does)"
[[ $STEP_exit_code == 1 && $STEP_passed == false ]] || fail "a changed case gave exit $STEP_exit_code"
grep -q "1 case(s) changed action" gate.out || { cat gate.out; fail "the merge did not name the change"; }
if MERGE_EXIT=$STEP_exit_code run_step gate >gate2.out; then fail "the gate passed a changed case"; fi
grep -q "::error::llmchaos" gate2.out || fail "the gate gave no error annotation"

wheel=$(ls "$build"/package/dist/pytest_llmchaostest-*manylinux*.whl 2>/dev/null | head -1 || true)
if [[ -n $wheel ]] && python3 -c 'import venv, ensurepip' 2>/dev/null; then
  echo "ci_action: 3. install from the wheel $(basename "$wheel")"
  RUNNER_TEMP=$work INPUT_LLMCHAOS= INPUT_WHEEL=$wheel run_step install || fail "install from the wheel"
  # the wheel carries the binary as a script (`llmchaos` on the venv's PATH); auditwheel keeps it here
  [[ $STEP_llmchaos == "$work/llmchaos-venv/"*/pytest_llmchaostest.scripts/llmchaos ]] ||
    fail "the wheel's binary is not used: $STEP_llmchaos"
else
  echo "ci_action: 3. skipped: no wheel in ${build:-?}/package/dist (scripts/package wheel builds one)"
fi
echo "ci_action: the action's steps ran as a runner runs them: one job, shards + merge, gate"
