#!/usr/bin/env bash
# The Python half of the test suite (called by scripts/test.sh; assumes scripts/setup.sh
# has run): builds the `amrex_rs` wheel and installs it into .venv, runs the Rust half of
# the main example, then pytest over python-tests/ against the installed package (including
# mypy's stubtest, which checks the typed stubs against the module).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '\n==> [%s] %s\n' "$(date +%T)" "$*"; }

log "Python package (release wheel, installed into .venv)"
bash scripts/build-python.sh
log "the main example (Rust half; the Python half runs in pytest)"
cargo run -q --release --features ndarray --example heat
log "pytest python-tests"
status=0
.venv/bin/python -m pytest -q python-tests || status=$?
exit "$status"
