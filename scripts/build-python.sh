#!/usr/bin/env bash
# Builds the `amrex_rs` Python package (crates/amrex-python: maturin, pyo3, one abi3 wheel
# for CPython >= 3.9) in release mode and installs the wheel into .venv, so the tests and
# examples import the installed package (site-packages), never a file from this checkout.
#
# Why `maturin build` + `pip install <wheel>` rather than `pip install ./crates/amrex-python`
# (which works too, and is what users run): the same PEP 517 backend builds the same wheel,
# but calling it directly skips pip's isolated build environment (no network, no fresh
# maturin download) and leaves the wheel in build/wheels for inspection. Cargo's
# incremental cache makes a rebuild with no Rust change take a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

venv="$PWD/.venv"
# A .venv made before mypy (stub check), matplotlib (the example's PNG) and JAX (a test
# consumer) joined scripts/requirements.txt gets them here; setup.sh installs the list
# only into venvs that lack its first packages.
if ! "$venv/bin/python" -c 'import maturin, mypy, matplotlib, jax' >/dev/null 2>&1; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r scripts/requirements.txt
fi
out="$PWD/build/wheels"
rm -rf "$out"
# maturin sets PYO3_BUILD_EXTENSION_MODULE (do not link libpython) and names the module
# amrex_rs._core; it respects CARGO_TARGET_DIR.
# AMREX_PY_FEATURES (e.g. "cuda") adds cargo features of the extension (GPU arenas).
features=()
if [ -n "${AMREX_PY_FEATURES:-}" ]; then
    features=(--features "$AMREX_PY_FEATURES")
fi
"$venv/bin/maturin" build --release --quiet "${features[@]}" \
    --manifest-path crates/amrex-python/Cargo.toml \
    --interpreter "$venv/bin/python" --out "$out"
wheel=$(ls "$out"/amrex_rs-*.whl)
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index --no-deps \
    --force-reinstall "$wheel"
echo "installed $(basename "$wheel") into .venv"
