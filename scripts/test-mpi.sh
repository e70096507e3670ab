#!/usr/bin/env bash
# Builds the MPI test binaries (feature `mpi`) and runs each under `mpirun -n 1`, `-n 2`
# and `-n 4`, every run bounded by `timeout`, so a hang FAILS instead of waiting forever.
# Prints which run failed and exits non-zero if any did. scripts/test.sh runs it; it
# needs what scripts/setup.sh installs (an MPI library and libclang-dev).
#
# Adding a test binary: one line in TESTS below, "package:test-target", for a
# `[[test]]` of that package declared with `harness = false` and
# `required-features = ["mpi"]` (see crates/amrex-multifab/Cargo.toml).
#
# Writing one: libtest runs each #[test] on its own thread in an order of its choosing,
# which differs between ranks, so collectives would be entered in different orders and
# hang. An MPI test is therefore a plain `fn main()` that calls `amrex_runtime::init()`
# and runs named checks one after the other, the same list in the same order on every
# rank (a barrier after each keeps them in step), and panics with a clear message when a
# check fails. `Communicator::world()` (which init() calls) installs a panic hook that
# calls MPI_Abort when there is more than one rank, so a panic on one rank ends every
# rank instead of leaving them in the next collective; the timeout here catches whatever
# else hangs. See crates/amrex-runtime/tests/mpi_comm.rs.
#
# Environment: CARGO_TARGET_DIR (default: target), AMREX_MPI_RANKS (default: "1 2 4"),
# AMREX_MPI_TIMEOUT (seconds per run, default: 120), AMREX_MPI_CARGO_FLAGS (extra cargo
# flags, e.g. --release).
set -euo pipefail
cd "$(dirname "$0")/.."

TESTS=(
    "amrex-runtime:mpi_comm"
    "amrex-multifab:mpi_multifab"
    "amrex-plotfile:mpi_plotfile"
    # The AMR level operations, with ranks that pass mismatched arguments (each gets an
    # error, none hangs).
    "amrex-amr:mpi_amr"
    # Particle redistribute and deposition against a single-process run of the same grids.
    "amrex-particles:mpi_particles"
)
# Tests that also check that a panic on one rank ends the job fast (not a timeout): the
# binary panics on rank $AMREX_MPI_TEST_PANIC_RANK when that variable is set.
PANIC_TESTS=(
    "amrex-runtime:mpi_comm"
)

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
read -r -a RANKS <<<"${AMREX_MPI_RANKS:-1 2 4}"
TIMEOUT="${AMREX_MPI_TIMEOUT:-120}"
read -r -a CARGO_FLAGS <<<"${AMREX_MPI_CARGO_FLAGS:-}"

log() { printf '\n==> [%s] %s\n' "$(date +%T)" "$*"; }

if ! command -v mpirun >/dev/null 2>&1; then
    echo "test-mpi.sh: no mpirun on PATH; run scripts/setup.sh (it installs MPICH and libclang-dev)" >&2
    exit 1
fi
MPIRUN=(mpirun)
if mpirun --version 2>&1 | grep -qi 'open mpi\|open-mpi\|openrte'; then
    # Open MPI: allow root (CI runs as root) and more ranks than cores (CI has 2).
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    MPIRUN+=(--oversubscribe)
fi
echo "MPI: $(mpirun --version 2>&1 | grep -m1 -iE 'version|open mpi' | tr -s ' ')"

# Builds package:test and prints the path of its executable.
build() {
    local pkg="${1%%:*}" name="${1#*:}"
    cargo test --no-run -q "${CARGO_FLAGS[@]}" -p "$pkg" --features mpi --test "$name" \
        --message-format=json |
        python3 -c '
import json, sys
name = sys.argv[1]
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == name and m.get("executable"):
        print(m["executable"])
' "$name"
}

passed=0
failures=()
declare -A EXE
for t in "${TESTS[@]}" "${PANIC_TESTS[@]}"; do
    [ -n "${EXE[$t]:-}" ] && continue
    log "build $t (feature mpi)"
    exe="$(build "$t")"
    if [ -z "$exe" ] || [ ! -x "$exe" ]; then
        echo "test-mpi.sh: no executable for $t" >&2
        exit 1
    fi
    EXE[$t]="$exe"
done

for t in "${TESTS[@]}"; do
    for n in "${RANKS[@]}"; do
        log "$t: mpirun -n $n (timeout ${TIMEOUT}s)"
        rc=0
        timeout --kill-after=10 "$TIMEOUT" "${MPIRUN[@]}" -n "$n" "${EXE[$t]}" || rc=$?
        if [ "$rc" = 0 ]; then
            passed=$((passed + 1))
        elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
            failures+=("$t -n $n: TIMED OUT after ${TIMEOUT}s (a hang)")
            echo "FAILED: ${failures[-1]}" >&2
        else
            failures+=("$t -n $n: exit $rc")
            echo "FAILED: ${failures[-1]}" >&2
        fi
    done
done

for t in "${PANIC_TESTS[@]}"; do
    for n in "${RANKS[@]}"; do
        [ "$n" -gt 1 ] || continue
        victim=$((n - 1))
        log "$t: rank $victim panics under mpirun -n $n; the job must end fast, with an error"
        rc=0
        AMREX_MPI_TEST_PANIC_RANK=$victim RUST_BACKTRACE=0 \
            timeout --kill-after=5 30 "${MPIRUN[@]}" -n "$n" "${EXE[$t]}" >/dev/null 2>&1 || rc=$?
        if [ "$rc" = 0 ]; then
            failures+=("$t -n $n with a panicking rank: exited 0")
        elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
            failures+=("$t -n $n with a panicking rank: HUNG (timed out after 30 s)")
        else
            echo "ended with exit $rc, as it should"
            passed=$((passed + 1))
            continue
        fi
        echo "FAILED: ${failures[-1]}" >&2
    done
done

# The examples run unchanged on 1, 2 and 4 ranks and print what one process prints (all
# but the lines that name the rank count or the timing, which the filter drops).
# same_as_one_process EXAMPLE FEATURES FILTER-REGEX
same_as_one_process() {
    local ex="$1" features="$2" drop="$3" reference rc out n
    log "examples/$ex.rs: one process (no MPI), then mpirun -n ${RANKS[*]}"
    cargo build -q --release ${features:+--features "$features"} --example "$ex"
    reference="$("$CARGO_TARGET_DIR/release/examples/$ex" | grep -v -E "$drop")"
    echo "$reference"
    cargo build -q --release --features "${features:+$features,}mpi" --example "$ex"
    for n in "${RANKS[@]}"; do
        rc=0
        out="$(timeout --kill-after=10 "$TIMEOUT" "${MPIRUN[@]}" -n "$n" "$CARGO_TARGET_DIR/release/examples/$ex")" || rc=$?
        if [ "$rc" != 0 ]; then
            failures+=("examples/$ex -n $n: exit $rc")
        elif [ "$(echo "$out" | grep -v -E "$drop")" != "$reference" ]; then
            failures+=("examples/$ex -n $n: printed other numbers than one process")
            echo "$out"
        else
            echo "$ex -n $n: the same numbers ($(echo "$out" | grep -c .) lines)"
            passed=$((passed + 1))
            continue
        fi
        echo "FAILED: ${failures[-1]}" >&2
    done
}
same_as_one_process heat ndarray ' steps in |^heat equation on '
same_as_one_process two_level "" 'rank\(s\)'
same_as_one_process particles_pic "" 'rank\(s\)'
same_as_one_process amr_minimal "" '^$'

log "MPI test runs"
for f in "${failures[@]}"; do
    echo "FAILED: $f"
done
echo "mpi: $passed passed, ${#failures[@]} failed"
[ "${#failures[@]}" = 0 ]
