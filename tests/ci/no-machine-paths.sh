#!/usr/bin/env bash
# CTest no_machine_paths (label cli): no tracked file outside tests/ names a path of the machine that
# wrote it: this checkout's own absolute path, the workplace's /work/, a home folder, or a mktemp name
# (/tmp/NAME.XXXXXX). Generated files (the scorecard) record paths relative to the repository instead.
set -uo pipefail
root=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
cd "$root"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "SKIP: not a git checkout"; exit 77; }
found=$(git grep -n -I -E -e "$root/" -e '(^|[^A-Za-z0-9_.])/(work|root|home/[a-z][a-z0-9_-]*)/' \
  -e '/tmp/[A-Za-z0-9._-]*\.[A-Za-z0-9]*[A-Z][A-Za-z0-9]*\b' -- ':!tests' |
  grep -E -e "$root/" -e '(^|[^A-Za-z0-9_.])/(work|root|home/[a-z][a-z0-9_-]*)/' -e '/tmp/[A-Za-z0-9._-]*\.[A-Za-z0-9]{6}([^A-Za-z0-9]|$)')
if [[ -n $found ]]; then
  echo "FAIL: tracked files name paths of this machine (write them relative to the repository):"
  cut -c1-200 <<<"$found"
  exit 1
fi
echo "no tracked file outside tests/ names a machine path ($(git ls-files -- ':!tests' | wc -l) files)"
