#!/usr/bin/env bash
# FillBoundary and sum on 2 ranks x 1 thread vs 1 rank x 2 threads, in one run
# (benches/benches/mpi.rs): builds the bench with the `mpi` feature and starts it under
# `mpirun -n 2`. Arguments: N (cells per direction, default 256) and REPS (default 10).
set -euo pipefail
cd "$(dirname "$0")/.."
MPIRUN=(mpirun)
if mpirun --version 2>&1 | grep -qi 'open mpi\|open-mpi\|openrte'; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    MPIRUN+=(--oversubscribe)
fi
exe="$(cargo bench --no-run -q -p amrex-benches --features mpi --bench mpi --message-format=json |
    python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "mpi" and m.get("executable"):
        print(m["executable"])
')"
"${MPIRUN[@]}" -n 2 "$exe" "$@"
