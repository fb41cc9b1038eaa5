#!/usr/bin/env bash
# `make demo`: the main job on example models that the project generates itself.
set -euo pipefail
BUILD_DIR=${1:-build}
PG="$BUILD_DIR/polygraph"
EX="$BUILD_DIR/examples"
mkdir -p "$EX"
"$BUILD_DIR/pg_make_examples" "$EX"

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

step "$PG" inspect model "$EX/small_cnn.onnx"
step "$PG" inspect model "$EX/needs_constraints.onnx" --show layers attrs
step "$PG" inspect model "$EX/small_cnn.onnx" --json
if "$PG" surgeon --help >/dev/null 2>&1 && "$PG" surgeon sanitize --help >/dev/null 2>&1; then
    step "$PG" surgeon sanitize "$EX/small_cnn.onnx" --cleanup --toposort -o "$EX/small_cnn_clean.onnx"
    step "$PG" inspect model "$EX/small_cnn_clean.onnx"
fi
# Compare the reference interpreter with ONNX Runtime, then layer by layer (streaming).
step "$PG" run "$EX/small_cnn.onnx" --ref --onnxrt --atol 1e-4 --rtol 1e-4 || true
step "$PG" run "$EX/small_cnn.onnx" --onnxrt --ref --onnx-outputs mark all --atol 1e-4 --rtol 1e-4 || true
# Will it survive FP16? Polygraphy's precision-constraints story, emulated on the CPU:
# x -> MatMul -> Add(65504) -> Sub(65504) -> MatMul. In FP16, Add's exact result exceeds 65504.
NC=(--val-range 'x:[1,2]' --check-error-stat median --atol 1e-3 --rtol 1e-3)
step "$PG" run "$EX/needs_constraints.onnx" --ref --emu --fp16 "${NC[@]}" --onnx-outputs mark all || true
step "$PG" run "$EX/needs_constraints.onnx" --ref --emu --fp16 "${NC[@]}" \
    --layer-precisions Add:float32 Sub:float32 --precision-constraints obey --show-precisions || true
# The fewest nodes that must stay in FP32, and the fixed model with FP32 islands joined by Casts.
step "$PG" debug precision "$EX/needs_constraints.onnx" --fp16 "${NC[@]}" -o "$EX/needs_constraints_fixed.onnx" || true
step "$PG" debug reduce "$EX/needs_constraints.onnx" --fp16 "${NC[@]}" -o "$EX/needs_constraints_reduced.onnx" || true
# An FP16 model any engine can run (inputs and outputs stay float32).
step "$PG" convert "$EX/small_cnn.onnx" --fp-to-fp16 -o "$EX/small_cnn_fp16.onnx"
step "$PG" run "$EX/small_cnn_fp16.onnx" --ref --onnxrt --atol 1e-2 --rtol 1e-2 || true
printf '\nDemo finished. Models are in %s\n' "$EX"
