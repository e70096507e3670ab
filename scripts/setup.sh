#!/usr/bin/env bash
# Installs what the example and the tests need on a fresh machine; safe to run again.
#   - the pinned stable toolchain (rust-toolchain.toml) with rustfmt, clippy and the
#     thumbv7em-none-eabihf target for the no_std builds;
#   - nightly with miri and rust-src for the unsafe-code checks (only with --miri);
#   - Debian's Level Zero loader (libze1), so the "loader present, no driver" path is tested;
#   - a Python virtual environment in .venv with scripts/requirements.txt: NumPy, pytest,
#     array-api-strict, apache-tvm-ffi (which ships the official dlpack.h used by the C
#     interop tests), maturin, mypy (stub checks), matplotlib (the example's PNG), JAX.
# (cargo-fuzz is installed on the dated nightly by scripts/fuzz.sh when it first runs.)
set -euo pipefail
cd "$(dirname "$0")/.."

want_miri=0
for arg in "$@"; do
    case "$arg" in
        --miri) want_miri=1 ;;
        *) echo "setup.sh: unknown argument $arg" >&2; exit 2 ;;
    esac
done

# A dated nightly, so that Miri's verdicts do not move under us.
MIRI_TOOLCHAIN="${MIRI_TOOLCHAIN:-nightly-2026-10-29}"
export MIRI_TOOLCHAIN

log() { printf '\n==> %s\n' "$*"; }

log "Rust toolchain (rust-toolchain.toml)"
rustup show active-toolchain >/dev/null 2>&1 || rustup toolchain install "$(sed -n 's/^channel = "\(.*\)"/\1/p' rust-toolchain.toml)"
rustup component add rustfmt clippy >/dev/null
rustup target add thumbv7em-none-eabihf >/dev/null
if [ "$want_miri" = 1 ]; then
    log "nightly toolchain with miri"
    rustup toolchain install "$MIRI_TOOLCHAIN" --profile minimal --component miri,rust-src >/dev/null
    cargo "+$MIRI_TOOLCHAIN" miri setup >/dev/null 2>&1 || cargo "+$MIRI_TOOLCHAIN" miri setup
fi

if ! ldconfig -p 2>/dev/null | grep -q 'libze_loader.so.1'; then
    log "Debian packages: libze1 (Level Zero loader)"
    if command -v apt-get >/dev/null 2>&1; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null || true
        apt-get install -y -qq libze1 >/dev/null || echo "warning: libze1 could not be installed" >&2
    fi
fi

log "Python virtual environment (.venv)"
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
if ! .venv/bin/python -c 'import numpy, pytest, array_api_strict, tvm_ffi, mypy, matplotlib, jax' >/dev/null 2>&1; then
    .venv/bin/pip install -q --disable-pip-version-check -r scripts/requirements.txt
fi
.venv/bin/python -c 'import numpy; print("numpy", numpy.__version__)'
