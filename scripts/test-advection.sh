#!/usr/bin/env bash
# Runs examples/advection_amr.rs (AMReX's Advection_AmrCore tutorial) on the inputs of
# AMReX's own reference runs and compares what it writes with what AMReX 24.10 wrote:
# every plotfile (grids on every level, Header metadata, every value to 1e-12 relative:
# examples/plotfile_compare.rs) and every line AMReX printed (time steps, cell counts,
# Sum(Phi), the regrids' "Creating new distribution map" lines), on one process and,
# when an MPI library is installed, under `mpirun -n 2` and `-n 4` (each bounded by
# `timeout`). Ends with one `N passed, M failed` line; exits non-zero if any failed.
#
# The cases: ../shared/data/amrex-advection (the shipped inputs) and the two of
# ../shared/data/amrex-advection-more (nosubcycle: adv.do_subcycle = 0; phierr2: a
# 32x32x8 base grid and two tagging thresholds), with their plotfiles; the checkpoint
# run of ../shared/data/amrex-checkpoint (below); and AMReX's runs on inputs of our own
# in tests/data/advection (stdout only). $AMREX_ADVECTION_REF names another folder of
# shared-style cases (each a folder with `inputs`, `stdout.txt` and plotfiles; the folder
# itself may be one). Without reference data the shared cases are skipped.
set -uo pipefail
cd "$(dirname "$0")/.."
RANKS="${AMREX_ADVECTION_RANKS:-2 4}"
TIMEOUT="${AMREX_ADVECTION_TIMEOUT:-300}"
export CARGO_TERM_COLOR=never
CASES=()
add_cases() { # every folder at or one below $1 that holds an AMReX run
    local d
    for d in "$1" "$1"/*/; do
        d="${d%/}"
        if [ -f "$d/inputs" ] && [ -f "$d/stdout.txt" ]; then CASES+=("$(cd "$d" && pwd)"); fi
    done
}
if [ -n "${AMREX_ADVECTION_REF:-}" ]; then
    add_cases "$AMREX_ADVECTION_REF"
else
    add_cases "$PWD/../shared/data/amrex-advection"
    add_cases "$PWD/../shared/data/amrex-advection-more"
fi
# The project's own AMReX runs (tests/data/advection/README.md): stdout only, on one
# process, or on the ranks its `np` file names. The test command runs the ten that
# found differences or reach furthest from the shipped inputs; AMREX_ADVECTION_OWN=all
# runs all 23 (two more minutes).
OWN_DEFAULT="newchop maxlev0 maxlev3 walls101 ratio4 nosub_walls cfl03_stop mgsxyz mpi2_mgs64 mpi4_mgs64"
OWN=()
for d in tests/data/advection/*/; do
    c="$(basename "$d")"
    if [ "${AMREX_ADVECTION_OWN:-}" = all ] || [[ " $OWN_DEFAULT " == *" $c "* ]]; then
        [ -f "$d/inputs" ] && OWN+=("$(cd "$d" && pwd)")
    fi
done
if [ "${#CASES[@]}" -eq 0 ] && [ "${#OWN[@]}" -eq 0 ]; then
    echo "test-advection.sh: no reference runs found; nothing was run"
    echo "0 passed, 0 failed"
    exit 0
fi
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

# check NAME REF EXE [launcher...]: runs the port on REF's inputs in a fresh directory
# and compares with REF. With KEEP=1 the directory stays, named by LAST_DIR (empty if the
# run did not finish).
LAST_DIR=""
check() {
    local name="$1" REF="$2" exe="$3"
    shift 3
    local dir
    dir="$(mktemp -d)"
    echo "== $name"
    if ! (cd "$dir" && timeout "$TIMEOUT" "$@" "$exe" "$REF/inputs" >stdout.txt 2>stderr.txt); then
        echo "   FAILED: the run did not finish (see $dir)"
        tail -n 5 "$dir/stderr.txt" "$dir/stdout.txt" | sed 's/^/   | /'
        failed=$((failed + 1)); failures+=("$name: run"); LAST_DIR=""; return
    fi
    # AMReX's own start-up and closing lines are not the tutorial's; the port's timing
    # lines (after a `timing` line, indented) are its own. The unused-inputs lines
    # (`  [TOP]::...`) are compared.
    if diff <(grep -vE '^(Initializing AMReX|MPI initialized|OMP initialized|AMReX \(|Total Time)' "$REF/stdout.txt" | sed '/^$/d') \
        <(grep -vE '^(timing|  [^[])' "$dir/stdout.txt" | sed '/^$/d') >"$dir/stdout.diff"; then
        echo "   stdout: every line AMReX printed is the same ($(grep -c ADVANCE "$dir/stdout.txt") level steps)"
        passed=$((passed + 1))
    else
        echo "   FAILED: stdout differs from AMReX's (first lines of the diff):"
        head -n 10 "$dir/stdout.diff" | sed 's/^/   | /'
        failed=$((failed + 1)); failures+=("$name: stdout")
    fi
    local p
    for p in "$REF"/plt*; do
        [ -d "$p" ] || continue
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
    LAST_DIR="$dir"
    [ -n "${KEEP:-}" ] || rm -rf "$dir"
}

# The checkpoint case (../shared/data/amrex-checkpoint): run 1 writes chk00000..chk00040
# every 10 steps; run 2 restarts from chk00020. Checked: the port's own run as any case,
# its chk00020 and chk00040 against AMReX's (byte for byte on one process, same boxes and
# values on many); a restart from AMReX's chk00020 against AMReX's restart (plt00040,
# chk00040, every line printed from step 21 on); on many ranks also a restart from a
# checkpoint written by one process.
CHK="${AMREX_CHECKPOINT_REF:-$PWD/../shared/data/amrex-checkpoint}"
# check_checkpoint NAME EXE [launcher...]
check_checkpoint() {
    local name="$1" exe="$2"
    shift 2
    [ -f "$CHK/restart/inputs" ] || return 0
    local dir c
    # The run that writes the checkpoints is compared as any case, and kept.
    KEEP=1 check "checkpoint, $name" "$CHK" "$exe" "$@"
    dir="$LAST_DIR"
    echo "== checkpoint files and restart, $name"
    if [ -n "$dir" ]; then
        for c in chk00020 chk00040; do
            if [ $# -eq 0 ] && diff -r "$CHK/$c" "$dir/$c" >/dev/null; then
                echo "   $c: byte for byte AMReX's"; passed=$((passed + 1))
            elif [ $# -gt 0 ] && "$CMP" "$CHK/$c" "$dir/$c" 1e-12 >"$dir/$c.cmp" 2>&1; then
                echo "   $c: AMReX's grids and values"; passed=$((passed + 1))
            else
                echo "   FAILED: $c differs from AMReX's"; failed=$((failed + 1)); failures+=("$name: $c")
            fi
        done
    else
        echo "   FAILED: no checkpoints (the run did not finish)"; failed=$((failed + 1)); failures+=("$name: checkpoint run")
    fi
    # Restarts: from AMReX's checkpoint, and (on many ranks) from the one-process run's.
    local from rdir
    for from in "$CHK/chk00020" ${ONE_PROC_CHK:+"$ONE_PROC_CHK"}; do
        rdir="$(mktemp -d)"
        cp -r "$from" "$rdir/chk00020"
        if ! (cd "$rdir" && timeout "$TIMEOUT" "$@" "$exe" "$CHK/restart/inputs" >stdout.txt 2>stderr.txt); then
            echo "   FAILED: the restart from $from did not finish (see $rdir)"
            tail -n 5 "$rdir/stderr.txt" | sed 's/^/   | /'
            failed=$((failed + 1)); failures+=("$name: restart from $from"); continue
        fi
        local ok=1
        "$CMP" "$CHK/restart/plt00040" "$rdir/plt00040" 1e-12 >"$rdir/plt.cmp" 2>&1 || ok=0
        if [ $# -eq 0 ]; then
            diff -r "$CHK/restart/chk00040" "$rdir/chk00040" >/dev/null || ok=0
        else
            "$CMP" "$CHK/restart/chk00040" "$rdir/chk00040" 1e-12 >"$rdir/chk.cmp" 2>&1 || ok=0
        fi
        diff <(sed -n '/^Coarse STEP 21 starts/,$p' "$CHK/restart/stdout.txt" | grep -vE '^(Total Time|AMReX \()' | sed '/^$/d') \
            <(sed -n '/^Coarse STEP 21 starts/,$p' "$rdir/stdout.txt" | grep -vE '^(timing|  [^[])' | sed '/^$/d') >"$rdir/stdout.diff" || ok=0
        if [ "$ok" -eq 1 ]; then
            echo "   restart from $(basename "$(dirname "$from")")/$(basename "$from"): AMReX's plt00040, chk00040 and stdout from step 21"
            passed=$((passed + 1))
            rm -rf "$rdir"
        else
            echo "   FAILED: the restart from $from differs from AMReX's (see $rdir)"
            cat "$rdir"/*.cmp "$rdir/stdout.diff" 2>/dev/null | grep -E 'DIFFERENT|^[<>]' | head -n 5 | sed 's/^/   | /'
            failed=$((failed + 1)); failures+=("$name: restart from $from")
        fi
    done
    if [ $# -eq 0 ] && [ -n "$dir" ] && [ -d "$dir/chk00020" ]; then
        ONE_PROC_CHK="$BIN/chk00020"
        rm -rf "$ONE_PROC_CHK"
        cp -r "$dir/chk00020" "$ONE_PROC_CHK"
    fi
    [ -n "$dir" ] && rm -rf "$dir"
}

ONE_PROC_CHK=""
for c in "${CASES[@]}"; do
    check "$(basename "$c"): one process" "$c" "$EXE"
done
check_checkpoint "one process" "$EXE"
for c in "${OWN[@]}"; do
    [ -f "$c/np" ] || check "$(basename "$c"): one process" "$c" "$EXE"
done

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
        for c in "${CASES[@]}"; do
            for n in $RANKS; do
                # One thread per rank: the ranks share the machine's cores.
                RAYON_NUM_THREADS=1 check "$(basename "$c"): mpirun -n $n" "$c" "$mpi_exe" "${MPIRUN[@]}" -n "$n"
            done
        done
        for n in $RANKS; do
            RAYON_NUM_THREADS=1 check_checkpoint "mpirun -n $n" "$mpi_exe" "${MPIRUN[@]}" -n "$n"
        done
        for c in "${OWN[@]}"; do
            if [ -f "$c/np" ]; then
                n="$(cat "$c/np")"
                RAYON_NUM_THREADS=1 check "$(basename "$c"): mpirun -n $n" "$c" "$mpi_exe" "${MPIRUN[@]}" -n "$n"
            fi
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
