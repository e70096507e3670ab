#!/usr/bin/env bash
# The Python half of the test suite (called by scripts/test.sh; assumes scripts/setup.sh
# has run): builds the `amrex_rs` wheel with the test stand-ins (cargo feature `testing`)
# and installs it into .venv, runs the Rust half of the main example, then pytest over
# python-tests/ against the installed package (including mypy's stubtest, which checks the
# typed stubs against the module).
#
# The default wheel (what `pip install ./crates/amrex-python` gives users) is built too,
# into build/wheels-default and not installed: python-tests/test_default_build.py checks
# that it has no test stand-ins and that the stubs agree with it. That second release
# build compiles amrex-arena and every crate above it once more with the other feature set
# (a few minutes on 2 cores the first time; cargo keeps both, so later runs recompile only
# what changed, amrex-python twice).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '\n==> [%s] %s\n' "$(date +%T)" "$*"; }

# The installed test build has MPI (feature `mpi`) where the machine has one (scripts/setup.sh
# installs MPICH): the whole suite then runs on that build in one process, and the `mpi`
# subset once more under mpirun below.
py_mpi=""
if command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1; then
    py_mpi=mpi
fi
py_features="testing${py_mpi:+,$py_mpi}"
log "cargo clippy for the test build (amrex-python, features $py_features)"
cargo clippy -q -p amrex-python --all-targets --features "$py_features" -- -D warnings
log "Python package: the default wheel (what users install), built, not installed"
bash scripts/build-python.sh --no-install --out build/wheels-default
AMREX_PY_DEFAULT_WHEEL=$(ls "$PWD"/build/wheels-default/amrex_rs-*.whl)
export AMREX_PY_DEFAULT_WHEEL
log "Python package with the test stand-ins (release wheel, features $py_features, installed into .venv)"
AMREX_PY_FEATURES="$py_mpi" bash scripts/build-python.sh --testing
log "the main example (Rust half; the Python half runs in pytest)"
cargo run -q --release --features ndarray --example heat
if [ -n "$py_mpi" ] && ! .venv/bin/python -c 'from mpi4py import MPI' >/dev/null 2>&1; then
    # python-tests/test_mpi.py needs mpi4py with the MPI build: without it the file
    # would skip, and the MPI tests pass by running nothing.
    echo "error: the MPI build of amrex_rs is installed but mpi4py does not import (scripts/setup.sh builds it against mpicc)" >&2
    exit 1
fi
log "pytest python-tests"
status=0
.venv/bin/python -m pytest -q python-tests || status=$?
if [ -n "$py_mpi" ]; then
    # Each rank runs the same tests; a rank that fails one could leave the others waiting
    # in a later collective, so each run is bounded in time.
    for n in 2 4; do
        log "pytest -m mpi under mpirun -n $n"
        timeout 600 mpirun -n "$n" .venv/bin/python -m pytest -q -p no:cacheprovider -m mpi \
            python-tests/test_mpi.py || status=$?
    done
fi
exit "$status"
