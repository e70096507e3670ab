#!/usr/bin/env bash
# The tutorial's run (examples/advection_amr.rs on the reference inputs, 40 coarse steps
# on 3 levels) timed per coarse step and split into advance, FillPatch, reflux,
# average_down and regrid, with 1 and 2 threads on one process and with 2 MPI ranks of
# one thread each. Prints each run's split (the program's own `timing:` lines, rank 0's
# wall clock). Inputs from $AMREX_ADVECTION_REF (default ../shared/data/amrex-advection),
# or the copy of the tutorial's inputs given as $1.
set -euo pipefail
cd "$(dirname "$0")/.."
INPUTS="${1:-${AMREX_ADVECTION_REF:-$PWD/../shared/data/amrex-advection}/inputs}"
INPUTS="$(realpath "$INPUTS")"
exe_of() {
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == sys.argv[1] and m.get("executable"):
        print(m["executable"])' "$1"
}
EXE="$(cargo build -q --release --example advection_amr --message-format=json | exe_of advection_amr)"
run() { # NAME CMD...: runs in a scratch directory, prints the timing lines
    local dir
    dir="$(mktemp -d)"
    echo "== $1"
    shift
    (cd "$dir" && "$@" "$INPUTS" amr.plot_int=-1 | sed -n '/^timing/,$p')
    rm -rf "$dir"
}
RAYON_NUM_THREADS=1 run "1 thread" "$EXE"
RAYON_NUM_THREADS=2 run "2 threads" "$EXE"
if command -v mpirun >/dev/null 2>&1; then
    MPI_EXE="$(cargo build -q --release --features mpi --example advection_amr --message-format=json | exe_of advection_amr)"
    RAYON_NUM_THREADS=1 run "2 ranks x 1 thread" mpirun -n 2 "$MPI_EXE"
fi
