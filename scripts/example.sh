#!/usr/bin/env bash
# Runs the main example on a fresh machine (installs what it needs first): the heat
# equation on a MultiFab, stepped in Rust and checked against ndarray and DLPack
# (examples/heat.rs), then driven from Python with NumPy kernels on zero-copy views
# (examples/heat.py); and a two-level AMR hierarchy, subcycled and refluxed, that
# conserves mass to round-off (examples/two_level.rs), and the same hierarchy driven from
# Python (examples/two_level.py).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo run --release --features ndarray --example heat
cargo run --release --example two_level
bash scripts/build-python.sh
.venv/bin/python examples/heat.py
.venv/bin/python examples/two_level.py
