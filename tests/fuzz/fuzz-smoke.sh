#!/usr/bin/env bash
# CTest `fuzz_targets` (label fuzz): every libFuzzer target built with clang++ (ASan+UBSan, its own tree
# build-fuzz-smoke) and run briefly over its committed corpus and new inputs (scripts/fuzz-ci: 2000 runs
# from seed 1 each, at most 30 s): a fuzz build that stops compiling, or a target that crashes soon, fails the
# test suite the day it happens instead of only the hardening job. Exit 77 (skip) without clang++ or
# libFuzzer's runtime (scripts/setup installs both).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v clang++ >/dev/null || { echo "SKIP fuzz_targets: no clang++ (apt-get install clang libclang-rt-14-dev)"; exit 77; }
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' >"$probe/p.cpp"
clang++ -fsanitize=fuzzer,address "$probe/p.cpp" -o "$probe/p" 2>"$probe/err" ||
  { echo "SKIP fuzz_targets: clang++ cannot link a libFuzzer target ($(head -c 200 "$probe/err"))"; exit 77; }
# A tree of its own at -O0 without debug info: compiling is the cost here (a cold -O1 -g build took
# some 700 CPU seconds, -O0 414), and 3 s of fuzzing needs no speed.
export FUZZ_BUILD_DIR=${FUZZ_BUILD_DIR:-$root/build-fuzz-smoke} FUZZ_CXX_FLAGS=${FUZZ_CXX_FLAGS:--O0}
# A fixed seed and number of runs (the time is only a bound): every CI run tries the same inputs, so a
# crash it finds is one anybody reproduces, not a draw of the day.
export FUZZ_ARGS=${FUZZ_ARGS:--seed=1 -runs=2000}
FUZZ_SECONDS=${FUZZ_SECONDS:-30} FUZZ_JOBS=${FUZZ_JOBS:-2} exec nice "$root/scripts/fuzz-ci"
