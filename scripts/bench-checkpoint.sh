#!/usr/bin/env bash
# Checkpoint write and read against a plain write and read of the same bytes
# (benches/benches/checkpoint.rs), on one rank and under `mpirun -n 2`, in one sitting.
# Environment: N (cells per direction of each level, default 256), REPS (default 5),
# SCRATCH (the directory written, default target/bench-checkpoint).
set -euo pipefail
cd "$(dirname "$0")/.."
MPIRUN=(mpirun)
if mpirun --version 2>&1 | grep -qi 'open mpi\|open-mpi\|openrte'; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    MPIRUN+=(--oversubscribe)
fi
exe="$(cargo bench --no-run -q -p amrex-benches --features mpi --bench checkpoint --message-format=json |
    python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "checkpoint" and m.get("executable"):
        print(m["executable"])
')"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
RAYON_NUM_THREADS=2 "$exe"
RAYON_NUM_THREADS=1 "${MPIRUN[@]}" -n 2 "$exe"
