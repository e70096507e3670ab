#!/usr/bin/env bash
# Builds the `amrex_rs` Python extension module (crates/amrex-python: pyo3, abi3 for
# CPython >= 3.9) in release mode and places it at build/python/amrex_rs.abi3.so, where
# python-tests/conftest.py (and `PYTHONPATH=build/python`) find it.
#
# PYO3_BUILD_EXTENSION_MODULE=1 tells pyo3 not to link libpython: the interpreter that
# imports the module provides the symbols (pyo3 >= 0.26 replaced the old
# `extension-module` feature with this variable, so plain `cargo build`/`cargo test` of the
# workspace still link libpython and need no variable).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${PYO3_PYTHON:-}" ] && [ -x .venv/bin/python ]; then
    export PYO3_PYTHON="$PWD/.venv/bin/python"
fi
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
PYO3_BUILD_EXTENSION_MODULE=1 cargo build -q -p amrex-python --release
mkdir -p build/python
# Replace, never overwrite in place: a running interpreter may have the old file mapped.
rm -f build/python/amrex_rs.abi3.so
cp "$target_dir/release/libamrex_rs.so" build/python/amrex_rs.abi3.so
echo "built build/python/amrex_rs.abi3.so"
