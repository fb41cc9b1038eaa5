#!/usr/bin/env bash
# Installs ONNX Runtime's shared library (libonnxruntime.so.1) for the --onnxrt runner, from the
# npm package onnxruntime-node, into .deps/onnxruntime in the repository root. Polygraph loads
# it at run time (dlopen); nothing links against it. Idempotent: does nothing when the library
# is already there. Installs Debian's nodejs/npm only when `npm` is missing.
set -euo pipefail
VERSION=1.30.0
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="$ROOT/.deps/onnxruntime"
LIB="$PREFIX/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"
[ -e "$LIB" ] && exit 0
if [ "$(uname -m)" != x86_64 ]; then
    echo "install_onnxruntime: only linux x86_64 is set up; skipping (--onnxrt needs --onnxrt-lib)" >&2
    exit 0
fi
command -v npm >/dev/null 2>&1 || "$ROOT/tools/install_packages.sh" nodejs npm
echo "Installing onnxruntime-node@$VERSION into $PREFIX"
mkdir -p "$PREFIX"
ONNXRUNTIME_NODE_INSTALL=skip npm install --no-save --ignore-scripts --no-audit --no-fund \
    --prefix "$PREFIX" "onnxruntime-node@$VERSION" >/dev/null
if [ ! -e "$LIB" ]; then
    echo "install_onnxruntime: npm finished but $LIB is missing" >&2
    exit 1
fi
