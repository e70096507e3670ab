#!/usr/bin/env bash
# Runs examples/advection_amr.rs (AMReX's Advection_AmrCore tutorial) on the inputs of
# AMReX's own reference run and compares what it writes with what AMReX 24.10 wrote:
# every plotfile (grids on every level, Header metadata, every value to 1e-12 relative:
# examples/plotfile_compare.rs) and every line AMReX printed (time steps, cell counts,
# Sum(Phi), the regrids' "Creating new distribution map" lines), on one process and,
# when an MPI library is installed, under `mpirun -n 2` and `-n 4` (each bounded by
# `timeout`). Ends with one `N passed, M failed` line; exits non-zero if any failed.
#
# The reference is read from $AMREX_ADVECTION_REF (default: ../shared/data/amrex-advection
# beside the checkout). Without it the script says so and exits 0, running nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
REF="${AMREX_ADVECTION_REF:-$PWD/../shared/data/amrex-advection}"
RANKS="${AMREX_ADVECTION_RANKS:-2 4}"
TIMEOUT="${AMREX_ADVECTION_TIMEOUT:-300}"
export CARGO_TERM_COLOR=never
if [ ! -f "$REF/inputs" ]; then
    echo "test-advection.sh: no reference run at $REF; nothing was run"
    echo "0 passed, 0 failed"
    exit 0
fi
REF="$(cd "$REF" && pwd)"
passed=0
failed=0
failures=()

exe_of() { # the executable of example $1 from cargo's JSON messages on stdin
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == sys.argv[1] and m.get("executable"):
        print(m["executable"])' "$1"
}
json="$(cargo build -q --release --example advection_amr --example plotfile_compare --message-format=json)" || exit 1
# Copies of the executables: cargo puts every feature set's build of an example at the
# same path (target/release/examples/NAME), so a later build would replace them.
BIN="$(mktemp -d)"
trap 'rm -rf "$BIN"' EXIT
cp "$(exe_of plotfile_compare <<<"$json")" "$BIN/plotfile_compare"
cp "$(exe_of advection_amr <<<"$json")" "$BIN/advection_amr"
CMP="$BIN/plotfile_compare"
EXE="$BIN/advection_amr"

# check NAME EXE [launcher...]: runs the port in a fresh directory and compares.
check() {
    local name="$1" exe="$2"
    shift 2
    local dir
    dir="$(mktemp -d)"
    echo "== $name"
    if ! (cd "$dir" && timeout "$TIMEOUT" "$@" "$exe" "$REF/inputs" >stdout.txt 2>stderr.txt); then
        echo "   FAILED: the run did not finish (see $dir)"
        tail -n 5 "$dir/stderr.txt" "$dir/stdout.txt" | sed 's/^/   | /'
        failed=$((failed + 1)); failures+=("$name: run"); return
    fi
    # AMReX's own start-up and closing lines are not the tutorial's.
    if diff <(grep -vE '^(Initializing AMReX|OMP initialized|AMReX \(|Total Time)' "$REF/stdout.txt" | sed '/^$/d') \
        <(grep -vE '^(timing|  )' "$dir/stdout.txt" | sed '/^$/d') >"$dir/stdout.diff"; then
        echo "   stdout: every line AMReX printed is the same ($(grep -c ADVANCE "$dir/stdout.txt") level steps)"
        passed=$((passed + 1))
    else
        echo "   FAILED: stdout differs from AMReX's (first lines of the diff):"
        head -n 10 "$dir/stdout.diff" | sed 's/^/   | /'
        failed=$((failed + 1)); failures+=("$name: stdout")
    fi
    local p
    for p in "$REF"/plt*; do
        p="$(basename "$p")"
        if "$CMP" "$REF/$p" "$dir/$p" 1e-12 >"$dir/$p.cmp" 2>&1; then
            passed=$((passed + 1))
            echo "   $p: same grids, $(grep -o 'largest relative difference [^ ]*' "$dir/$p.cmp" | awk '{print $4}' | sort -g | tail -n1) largest relative difference"
        else
            echo "   FAILED: $p"
            sed 's/^/   | /' "$dir/$p.cmp" | head -n 12
            failed=$((failed + 1)); failures+=("$name: $p")
        fi
    done
    rm -rf "$dir"
}

check "one process" "$EXE"

if command -v mpirun >/dev/null 2>&1; then
    # The executable's hashed path: target/release/examples/advection_amr is whichever
    # feature set was built last.
    mpi_exe="$(cargo build -q --release --features mpi --example advection_amr --message-format=json | exe_of advection_amr)"
    if [ -n "$mpi_exe" ] && cp "$mpi_exe" "$BIN/advection_amr_mpi"; then
        mpi_exe="$BIN/advection_amr_mpi"
        MPIRUN=(mpirun)
        if mpirun --version 2>&1 | grep -qi 'open mpi\|open-mpi\|openrte'; then
            export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
            MPIRUN+=(--oversubscribe)
        fi
        for n in $RANKS; do
            # One thread per rank: the ranks share the machine's cores.
            RAYON_NUM_THREADS=1 check "mpirun -n $n" "$mpi_exe" "${MPIRUN[@]}" -n "$n"
        done
    else
        failed=$((failed + 1)); failures+=("build with feature mpi")
    fi
else
    echo "== no mpirun on PATH: the MPI comparisons were not run (scripts/setup.sh installs MPICH)"
fi

for f in "${failures[@]}"; do echo "failed: $f"; done
echo "advection: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
