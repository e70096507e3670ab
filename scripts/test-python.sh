#!/usr/bin/env bash
# The Python half of the test suite (called by scripts/test.sh; assumes scripts/setup.sh
# has run): builds the `amrex_rs` module, runs the Rust half of the main example, then
# pytest over python-tests/.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '\n==> [%s] %s\n' "$(date +%T)" "$*"; }

log "Python module (release)"
bash scripts/build-python.sh
log "the main example (Rust half; the Python half runs in pytest)"
cargo run -q --release --features ndarray --example heat
log "pytest python-tests"
status=0
.venv/bin/python -m pytest -q python-tests || status=$?
exit "$status"
