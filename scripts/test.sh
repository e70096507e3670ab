#!/usr/bin/env bash
# Runs every test of the workspace, installing what it needs first (scripts/setup.sh).
# This is the README's test command and exactly what CI (.ci/run) runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --miri

log() { printf '\n==> [%s] %s\n' "$(date +%T)" "$*"; }
export CARGO_TERM_COLOR=never
export RUSTDOCFLAGS="-D warnings"
# Required, not optional, here: the C interop test must find the official dlpack.h.
export AMREX_REQUIRE_C_TESTS=1
export PATH="$PWD/.venv/bin:$PATH"
# NVRTC from the venv's wheel, so the CUDA kernels' source is compiled (for sm_75/80/90)
# by the arena's tests on this GPU-less machine too.
nvrtc=$(ls .venv/lib/python3*/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.1[0-9] 2>/dev/null | head -n 1 || true)
if [ -n "$nvrtc" ] && [ -z "${AMREX_NVRTC_LIBRARY:-}" ]; then
    export AMREX_NVRTC_LIBRARY="$PWD/$nvrtc"
fi
# ...and the kernels' compile test must not skip where that wheel exists (Linux x86-64
# and aarch64: scripts/requirements.txt).
if [ -n "$nvrtc" ]; then
    export AMREX_REQUIRE_NVRTC=1
fi
# ptxas from the venv's nvcc wheel checks the PTX the library ships.
ptxas=$(ls .venv/lib/python3*/site-packages/nvidia/cuda_nvcc/bin/ptxas 2>/dev/null | head -n 1 || true)
if [ -n "$ptxas" ] && [ -z "${AMREX_PTXAS:-}" ]; then
    export AMREX_PTXAS="$PWD/$ptxas"
fi
# Optional features that build on every machine (GPU backends load their runtimes lazily).
# Not --all-features: the single-precision switches change the element types on purpose.
FEATURES="amrex/ndarray,amrex-smallmatrix/approx,amrex-dlpack-core/half,amrex-dlpack-core/num-complex,amrex-arena/cuda,amrex-arena/hip,amrex-arena/level-zero,amrex-podvector/cuda,amrex-podvector/hip,amrex-podvector/level-zero,amrex-podvector/ndarray,amrex-basefab/cuda,amrex-basefab/hip,amrex-basefab/level-zero,amrex-aos/cuda,amrex-aos/hip,amrex-aos/level-zero,amrex-multifab/cuda,amrex-multifab/hip,amrex-multifab/level-zero,amrex-python/cuda,amrex-python/hip,amrex-python/level-zero"

log "cargo fmt --check"
cargo fmt --all --check

log "cargo clippy (all targets, all features that build everywhere, -D warnings)"
cargo clippy --workspace --all-targets -- -D warnings
cargo clippy --workspace --all-targets --features "$FEATURES" -- -D warnings

log "cargo test --workspace"
cargo test --workspace --features "$FEATURES"

log "MPI: clippy with feature mpi, then each MPI test under mpirun -n 1, 2 and 4 (scripts/test-mpi.sh)"
cargo clippy --workspace --all-targets --features "amrex/mpi,amrex/ndarray,amrex-plotfile/mpi,amrex-benches/mpi" -- -D warnings
bash scripts/test-mpi.sh

log "AMReX's Advection_AmrCore tutorial: the port against AMReX's own plotfiles and log, on 1 process and under mpirun -n 2 and -n 4 (scripts/test-advection.sh)"
bash scripts/test-advection.sh

log "cargo test: the single-precision builds (lib and integration tests; doctests assume f64)"
cargo test -p amrex-basefab --features single-precision --lib --tests
cargo test -p amrex-aos --features single-precision-particles --lib --tests
cargo test -p amrex-particles --features amrex-aos/single-precision-particles --lib --test precision

log "cargo doc (warnings are errors)"
cargo doc --workspace --no-deps --features "$FEATURES" -q
rm -rf target/package-check "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/{amrex,level-zero}-*; CARGO_TARGET_DIR=target/package-check cargo package -q --allow-dirty --workspace --exclude amrex --exclude amrex-python --exclude amrex-benches  # each publishable crate packaged and built from its tarball alone (no upload), ~15 s; fresh dirs because cargo reuses unpacked copies and builds of a same-version crate from earlier runs

log "no_std: each core crate for thumbv7em-none-eabihf, one package at a time"
for spec in \
    "amrex-dlpack-core" "amrex-dlpack-core --features alloc" \
    "amrex-box" \
    "amrex-runtime" \
    "amrex-array4" "amrex-array4 --features alloc" "amrex-array4 --features ndarray" \
    "amrex-smallmatrix" "amrex-smallmatrix --features alloc,approx" \
    "amrex-arena" \
    "amrex-podvector" \
    "amrex-aos" \
    "amrex-basefab" \
    "amrex-geometry" \
    "amrex-multifab" \
    "amrex-particles" \
    "amrex-amr"; do
    echo "  $spec"
    # shellcheck disable=SC2086
    cargo build -q -p $spec --target thumbv7em-none-eabihf --no-default-features
done

log "Miri (strict provenance) over the crates with unsafe code"
# amrex-multifab runs its parallel loops on scoped threads under Miri (rayon's
# crossbeam-epoch casts integers to pointers, which strict provenance refuses).
# Miri interprets on one core, so two halves run side by side, each in its own target
# directory (cargo holds a target directory's lock while its tests run): amrex-multifab,
# about half of the work, and the seven other crates (then amrex-runtime without std).
miri() {
    MIRIFLAGS="-Zmiri-strict-provenance" cargo "+${MIRI_TOOLCHAIN:-nightly-2026-10-29}" miri test -q "$@"
}
miri_log=$(mktemp)
CARGO_TARGET_DIR=target/miri-multifab miri -p amrex-multifab >"$miri_log" 2>&1 &
miri_pid=$!
miri_status=0
miri -p amrex-dlpack-core -p amrex-array4 -p amrex-smallmatrix -p amrex-podvector \
    -p amrex-aos -p amrex-basefab -p amrex-arena \
    --features amrex-dlpack-core/ndarray,amrex-array4/ndarray || miri_status=$?
# amrex-runtime's unsafe code is its no_std spin lock (the std build locks a Mutex).
miri -p amrex-runtime --no-default-features || miri_status=$?
wait "$miri_pid" || miri_status=$?
echo "--- Miri, amrex-multifab:"
cat "$miri_log"
rm -f "$miri_log"
[ "$miri_status" = 0 ] || { echo "Miri failed" >&2; exit 1; }

# The hostile-input regression suites: the importer and plotfile tests once more in a
# release build (where integer overflow wraps instead of panicking), then under
# AddressSanitizer (nightly; its own target directory), then each fuzz target for 20 s
# (the corpus in fuzz/corpus is replayed first, so each run starts from the coverage the
# seeds reach; longer campaigns: scripts/fuzz.sh TARGET SECONDS).
HOSTILE_PKGS="-p amrex-dlpack-core -p amrex-array4 -p amrex-basefab -p amrex-podvector -p amrex-smallmatrix -p amrex-multifab -p amrex-plotfile -p amrex"
HOSTILE_TESTS="--test bad_input --test hostile --test ownership --test dlpack --test plotfile --test hostile_input --test bounded_alloc"
log "importer and plotfile tests, release build"
# shellcheck disable=SC2086
cargo test -q --release $HOSTILE_PKGS --features amrex-dlpack-core/ndarray $HOSTILE_TESTS

log "importer and plotfile tests, release build under AddressSanitizer"
# allocator_may_return_null: the tests ask for absurd sizes on purpose and expect Err.
# bounded_alloc installs its own global allocator, which ASan's interceptors bypass.
# shellcheck disable=SC2086
ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 RUSTFLAGS="-Zsanitizer=address" \
    CARGO_TARGET_DIR=target/asan cargo "+${MIRI_TOOLCHAIN:-nightly-2026-10-29}" test -q \
    --release --target x86_64-unknown-linux-gnu $HOSTILE_PKGS \
    --features amrex-dlpack-core/ndarray ${HOSTILE_TESTS/--test bounded_alloc/}

log "fuzz targets, 20 s each (scripts/fuzz.sh)"
bash scripts/fuzz.sh all 20

log "Python package, the main example and the Python consumer tests"
bash scripts/test-python.sh

log "all checks passed"
