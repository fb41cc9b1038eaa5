#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/) and fuzzes TARGET for SECONDS (default
# 60): load_model_fuzz (the default) parses models; run_model_fuzz also runs each model that
# loads on the reference interpreter, seeded with every ONNX node test under ../shared;
# load_data_fuzz reads data files (Polygraphy JSON, .npz, .npy, test-data .pb). Fails when
# the fuzzer finds a crash, a sanitizer report, a leak, a timeout or an allocation over the limit;
# the reproducer is left in build-fuzz/fuzz/artifacts/.
# Usage: tools/fuzz.sh [SECONDS] [TARGET]
#        (called by `make fuzz FUZZ_SECONDS=... FUZZ_TARGET=...`)
# Replay one input: build-fuzz/fuzz/TARGET build-fuzz/fuzz/artifacts/crash-...
set -euo pipefail

seconds=${1:-60}
target=${2:-load_model_fuzz}
case $target in
load_model_fuzz | run_model_fuzz | load_data_fuzz) ;;
*) echo "fuzz.sh: unknown target '$target' (load_model_fuzz, run_model_fuzz, load_data_fuzz)" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${JOBS:-$(nproc)}
work=$build/fuzz
corpus=$work/corpus-$target

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPG_FUZZ=ON -DPG_BUILD_TESTS=OFF -DPG_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j "$jobs" --target "$target" pg_fuzz_make_seeds pg_make_examples

# Seeds: models written by the project's own generators. Small models under ../shared/data, when
# present, are read in place (symlinked, never copied into the repository). $PG_SHARED_DIR
# overrides where shared/ is.
mkdir -p "$corpus" "$work/seeds" "$work/data-seeds" "$work/artifacts"
"$work/pg_fuzz_make_seeds" "$work/seeds" >/dev/null
"$build/pg_make_examples" "$work/seeds" >/dev/null
"$work/pg_fuzz_make_seeds" --data "$work/data-seeds"
seed_dirs=("$work/seeds")
[ "$target" = load_data_fuzz ] && seed_dirs=("$work/data-seeds")
shared=${PG_SHARED_DIR:-$root/../shared}
if [ "$target" = load_data_fuzz ]; then
    # ONNX test-data .pb files, a few hundred small ones, read in place.
    if [ -d "$shared/data/onnx-node-tests-1.22" ]; then
        rm -rf "$work/pb-seeds" && mkdir -p "$work/pb-seeds"
        # (awk limits the count: `head` would end the pipe early, failing it under pipefail)
        find "$shared/data/onnx-node-tests-1.22" -name '*.pb' -size -16k | sort |
            awk 'NR % 8 == 1 && ++n <= 400' | while read -r f; do
                ln -sf "$f" "$work/pb-seeds/$(echo "$f" | md5sum | cut -c1-16).pb"
            done
        seed_dirs+=("$work/pb-seeds")
    fi
elif [ -d "$shared/data" ]; then
    rm -rf "$work/shared-seeds" && mkdir -p "$work/shared-seeds"
    find "$shared/data" -name '*.onnx' -size -64k | sort | awk 'NR % 6 == 1 && ++n <= 300' |
        while read -r f; do ln -sf "$f" "$work/shared-seeds/$(echo "$f" | md5sum | cut -c1-16).onnx"; done
    seed_dirs+=("$work/shared-seeds")
    if [ "$target" = run_model_fuzz ] && [ -d "$shared/data/onnx-node-tests-1.22" ]; then
        rm -rf "$work/node-seeds" && mkdir -p "$work/node-seeds"
        for d in "$shared/data/onnx-node-tests-1.22"/*/; do
            [ -f "$d/model.onnx" ] && ln -sf "$d/model.onnx" "$work/node-seeds/$(basename "$d").onnx"
        done
        seed_dirs+=("$work/node-seeds")
    fi
fi

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
echo "fuzzing $target for ${seconds}s (corpus $corpus)"
"$work/$target" "$corpus" "${seed_dirs[@]}" -max_total_time="$seconds" \
    -max_len=65536 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -artifact_prefix="$work/artifacts/" -print_final_stats=1
echo "fuzz: no crash in ${seconds}s"
