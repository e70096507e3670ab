#!/usr/bin/env bash
# Builds the `amrex_rs` Python package (crates/amrex-python: maturin, pyo3, one abi3 wheel
# for CPython >= 3.9) in release mode and installs the wheel into .venv, so the tests and
# examples import the installed package (site-packages), never a file from this checkout.
#
# Usage: bash scripts/build-python.sh [--testing] [--no-install] [--out DIR]
#   --testing     adds the cargo feature `testing`: the test stand-ins python-tests/ needs
#                 (amrex_rs._debug_*, _DebugDeviceArray, the fake device arena). Without
#                 it the wheel is the one users get from `pip install ./crates/amrex-python`.
#   --no-install  builds the wheel only; .venv keeps what it has.
#   --out DIR     where the wheel goes (default build/wheels; emptied first).
# AMREX_PY_FEATURES (e.g. "cuda", "mpi") adds further cargo features of the extension (GPU
# arenas; MPI, which links the machine's MPI library and is built with --auditwheel skip).
#
# Why `maturin build` + `pip install <wheel>` rather than `pip install ./crates/amrex-python`
# (which works too, and is what users run): the same PEP 517 backend builds the same wheel,
# but calling it directly skips pip's isolated build environment (no network, no fresh
# maturin download) and leaves the wheel in build/wheels for inspection. Cargo's
# incremental cache makes a rebuild with no Rust change take a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

testing=0
install=1
out="$PWD/build/wheels"
while [ $# -gt 0 ]; do
    case "$1" in
        --testing) testing=1 ;;
        --no-install) install=0 ;;
        --out) out=$(realpath -m "$2"); shift ;;
        *) echo "build-python.sh: unknown argument $1 (--testing, --no-install, --out DIR)" >&2; exit 2 ;;
    esac
    shift
done

venv="$PWD/.venv"
# A .venv made before mypy (stub check), matplotlib (the example's PNG) and JAX (a test
# consumer) joined scripts/requirements.txt gets them here; setup.sh installs the list
# only into venvs that lack its first packages.
if ! "$venv/bin/python" -c 'import maturin, mypy, matplotlib, jax' >/dev/null 2>&1; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r scripts/requirements.txt
fi
rm -rf "$out"
# maturin sets PYO3_BUILD_EXTENSION_MODULE (do not link libpython) and names the module
# amrex_rs._core; it respects CARGO_TARGET_DIR. Each feature set keeps its own artifacts in
# target/, so alternating between the default and the testing build recompiles nothing.
list="${AMREX_PY_FEATURES:-}"
if [ "$testing" = 1 ]; then
    list="${list:+$list,}testing"
fi
features=()
if [ -n "$list" ]; then
    features=(--features "$list")
fi
# The MPI build links the machine's MPI (the one mpi4py uses), which must stay outside
# the wheel: auditwheel's repair would copy libmpich into it, and a process would then
# load two MPI libraries, one initialised and one not.
case ",$list," in
    *,mpi,*) features+=(--auditwheel skip) ;;
esac
"$venv/bin/maturin" build --release --quiet "${features[@]}" \
    --manifest-path crates/amrex-python/Cargo.toml \
    --interpreter "$venv/bin/python" --out "$out"
wheel=$(ls "$out"/amrex_rs-*.whl)
if [ "$install" = 0 ]; then
    echo "built $wheel (features: ${list:-none}), not installed"
    exit 0
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index --no-deps \
    --force-reinstall "$wheel"
echo "installed $(basename "$wheel") (features: ${list:-none}) into .venv"
