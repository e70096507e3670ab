#!/usr/bin/env bash
# Runs the main example on a fresh machine (installs what it needs first).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo run --release --features ndarray --example heat
