#!/usr/bin/env bash
# Runs every benchmark built in BUILD_DIR/bench and prints their table lines; fails if any
# benchmark misses its target or fails to run. Usage: bench/run_all.sh BUILD_DIR
set -uo pipefail
build=${1:-build}
status=0
shopt -s nullglob
benches=("$build"/bench/bench_*)
if [ ${#benches[@]} -eq 0 ]; then
    echo "no benchmarks in $build/bench (configure with -DPG_BUILD_BENCH=ON and build)" >&2
    exit 1
fi
for b in "${benches[@]}"; do
    [ -x "$b" ] || continue
    echo "== $(basename "$b")"
    "$b" --polygraph "$build/polygraph" || status=1
done
# The reference interpreter against ONNX Runtime (not a bench_* binary: it has no pass/fail target).
[ -x "$build/bench/interpreter_bench" ] && { echo "== interpreter_bench"; "$build/bench/interpreter_bench" || status=1; }
exit $status
