#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU and driver: installs what is missing
# (scripts/setup.sh, then CuPy, PyTorch and NVRTC into .venv), runs the Rust tests of every
# crate that has device tests (amrex-arena, amrex-aos, amrex-basefab, amrex-multifab) with
# the `cuda` feature, the device tests that a plain `cargo test` reports as ignored
# included (`--tests -- --include-ignored`), builds the Python wheel with CUDA and runs
# python-tests/test_gpu.py. It ends with one line, `N passed, M failed`; the lines before
# it say what was not run and why, and which skips are suspicious on a machine that has a
# GPU. A Rust test that printed `skipped ...` (it returned without checking anything) is
# counted as not run, not as passed. Exit status 0 iff nothing failed and something ran.
# Without a GPU it runs nothing, says so, and exits 0 (see docs/gpu-check.md).
#
# The full output of every step is kept in $GPU_CHECK_LOG_DIR (default build/gpu-check).
set -uo pipefail

BUDGET_S=450          # wall-clock seconds for the build-and-test steps together
PASSED=0
FAILED=0
NOT_RUN=()            # "what: why"
SUSPICIOUS=()         # skips that should not happen on a machine with a GPU
FAILURES=()           # what failed
TIMINGS=()            # "step: seconds (rc)"
PIP_MISSING=()        # packages that could not be installed
DEADLINE=0

say() { printf 'gpu-check: %s\n' "$*"; }

# --- 1. is there an NVIDIA GPU? -------------------------------------------------------
# Sets GPU_EVIDENCE (empty if none) and GPU_CHECKED (what was looked at, for the message).
probe_gpu() {
    GPU_EVIDENCE=""
    local checked=() out n
    if command -v nvidia-smi >/dev/null 2>&1; then
        out="$(timeout 30 nvidia-smi -L 2>&1)"
        n="$(grep -c '^GPU [0-9]' <<<"$out")"
        if [ "$n" -gt 0 ]; then
            GPU_EVIDENCE="nvidia-smi -L lists $n GPU(s): $(grep -m1 '^GPU [0-9]' <<<"$out")"
        else
            checked+=("nvidia-smi -L lists no GPU: $(head -c 200 <<<"$out" | tr '\n' ' ')")
        fi
    else
        checked+=("nvidia-smi: not installed")
    fi
    if [ -r /proc/driver/nvidia/version ]; then
        [ -n "$GPU_EVIDENCE" ] || GPU_EVIDENCE="driver: $(head -n1 /proc/driver/nvidia/version)"
    else
        checked+=("/proc/driver/nvidia/version: absent")
    fi
    if command -v python3 >/dev/null 2>&1; then
        # libcuda.so.1 loadable, cuInit(0) succeeds and cuDeviceGetCount reports a device.
        if out="$(timeout 60 python3 - 2>&1 <<'EOF'
import ctypes, sys
try:
    lib = ctypes.CDLL("libcuda.so.1")
except OSError:
    print("libcuda.so.1: not loadable"); sys.exit(1)
rc = lib.cuInit(0)
if rc != 0:
    print(f"libcuda.so.1: loadable, cuInit failed ({rc})"); sys.exit(1)
n = ctypes.c_int(0)
rc = lib.cuDeviceGetCount(ctypes.byref(n))
if rc != 0 or n.value < 1:
    print(f"libcuda.so.1: loadable, cuDeviceGetCount gives {n.value} (rc {rc})"); sys.exit(1)
print(f"libcuda.so.1: cuInit ok, {n.value} device(s)")
EOF
)"; then
            [ -n "$GPU_EVIDENCE" ] || GPU_EVIDENCE="$out"
        else
            checked+=("$(tail -n1 <<<"$out")")
        fi
    else
        checked+=("libcuda.so.1: not probed (no python3)")
    fi
    GPU_CHECKED="$(IFS=';'; printf '%s' "${checked[*]}" | sed 's/;/; /g')"
}

# --- steps ----------------------------------------------------------------------------
# run_step install|budget NAME CAP_S LOG CMD...: runs CMD under `timeout` with its output
# in LOG; "budget" steps share BUDGET_S (a step that finds it spent is not started and
# counts as one failure). Records the timing; returns the command's status (124: timed
# out, 125: not started).
run_step() {
    local mode="$1" name="$2" cap="$3" log="$4"
    shift 4
    local limit="$cap" start rc left
    if [ "$mode" = budget ]; then
        left=$((DEADLINE - $(date +%s)))
        if [ "$left" -lt 20 ]; then
            say "[$(date +%T)] $name: not started, the ${BUDGET_S} s budget is spent"
            FAILED=$((FAILED + 1))
            FAILURES+=("$name: not started (time budget of ${BUDGET_S} s spent)")
            TIMINGS+=("$name: not started")
            return 125
        fi
        [ "$left" -lt "$limit" ] && limit="$left"
    fi
    say "[$(date +%T)] $name (limit ${limit} s, log $log)"
    start=$(date +%s)
    timeout --kill-after=15 "$limit" "$@" >"$log" 2>&1 </dev/null
    rc=$?
    local took=$(($(date +%s) - start))
    TIMINGS+=("$name: ${took} s (rc $rc)")
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        say "[$(date +%T)] $name: TIMED OUT after ${took} s"
        rc=124
    else
        say "[$(date +%T)] $name: rc $rc in ${took} s"
    fi
    return "$rc"
}

show_tail() { # LOG: the end of a failed step's output
    echo "    --- last 25 lines of $1 ---"
    tail -n 25 "$1" | sed 's/^/    | /'
}

# count_cargo NAME LOG RC: adds a `cargo test` run's results to the totals. Each
# `skipped ...` line is a test that returned early and that cargo counted as passed: it
# is moved from "passed" to "not run".
count_cargo() {
    local name="$1" log="$2" rc="$3" p=0 f=0 ig=0 lines=0 a b c s
    while read -r a b c; do
        p=$((p + a)); f=$((f + b)); ig=$((ig + c)); lines=$((lines + 1))
    done < <(grep -oE 'test result: [A-Za-z]+\. [0-9]+ passed; [0-9]+ failed; [0-9]+ ignored' "$log" |
        sed -E 's/.* ([0-9]+) passed; ([0-9]+) failed; ([0-9]+) ignored/\1 \2 \3/')
    local skipped=()
    while IFS= read -r s; do
        [ -n "$s" ] && skipped+=("$s")
    done < <(sed -nE 's/^(test .* \.\.\. )?(skipped.*)$/\2/p' "$log" |
        sed -E 's/test [^ ]+ \.\.\. .*$//')  # stderr and stdout interleave mid-line
    local sk=${#skipped[@]}
    [ "$sk" -le "$p" ] || sk=$p
    p=$((p - sk))
    PASSED=$((PASSED + p))
    FAILED=$((FAILED + f))
    local ran
    ran="$(grep -oE 'ran on [A-Za-z_]+:[0-9]+' "$log" | sort | uniq -c | awk '{printf "%s%s x%s", sep, $4, $1; sep=", "}')"
    echo "    $name: $p passed, $f failed, $ig ignored, $sk skipped (${lines} test binaries); ran on: ${ran:-nothing}"
    [ "$ig" -eq 0 ] || NOT_RUN+=("$name: $ig ignored test(s)")
    [ -n "$ran" ] || [ "$lines" -eq 0 ] || SUSPICIOUS+=("$name: no test said 'ran on <device>'")
    for s in "${skipped[@]}"; do
        NOT_RUN+=("$name: $s")
        # On an NVIDIA machine the other backends and the no-library checks skip by design.
        if ! grep -qiE 'hip|rocm|level.?zero|oneapi|a CUDA driver library is present' <<<"$s"; then
            SUSPICIOUS+=("$name: $s")
        fi
    done
    while IFS= read -r t; do
        [ -n "$t" ] && FAILURES+=("$name: test $t")
    done < <(sed -nE 's/^test (.*) \.\.\. FAILED$/\1/p' "$log" | sort -u)
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        # A build error, a crash or a timeout: no test reported the failure.
        FAILED=$((FAILED + 1))
        local why="cargo exited with status $rc"
        [ "$rc" -eq 124 ] && why="timed out"
        FAILURES+=("$name: $why (see $log)")
        show_tail "$log"
    elif [ "$rc" -ne 0 ]; then
        show_tail "$log"
    elif [ "$lines" -eq 0 ]; then
        NOT_RUN+=("$name: cargo reported no test results")
    fi
}

# count_pytest NAME LOG RC: adds a pytest run (-q -rsfE) to the totals.
count_pytest() {
    local name="$1" log="$2" rc="$3" summary p f e s
    summary="$(grep -E '^=* *([0-9]+ (passed|failed|skipped|errors?|xfailed|xpassed|deselected|warnings?)(, )?)+.* in [0-9.]+s' "$log" | tail -n1)"
    num() { grep -oE "[0-9]+ $1" <<<"$summary" | grep -oE '^[0-9]+' || echo 0; }
    p=$(num passed); f=$(num failed); e=$(num 'errors?'); s=$(num skipped)
    PASSED=$((PASSED + p))
    FAILED=$((FAILED + f + e))
    echo "    $name: $p passed, $f failed, $e errors, $s skipped"
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        NOT_RUN+=("$name: $line")
        if grep -qE 'not importable' <<<"$line" && [ "${#PIP_MISSING[@]}" -gt 0 ]; then
            : # a package pip could not install: expected, listed as not run
        else
            SUSPICIOUS+=("$name: $line")
        fi
    done < <(sed -nE 's/^SKIPPED \[([0-9]+)\] ([^ ]+): (.*)$/\1 skipped at \2: \3/p' "$log")
    while IFS= read -r line; do
        [ -n "$line" ] && FAILURES+=("$name: $line")
    done < <(grep -E '^(FAILED|ERROR) ' "$log")
    # 0: all passed, 1: some failed, 5: nothing collected (a module-level skip).
    if [ -z "$summary" ] || { [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ] && [ "$rc" -ne 5 ]; } ||
        { [ "$rc" -eq 1 ] && [ $((f + e)) -eq 0 ]; }; then
        FAILED=$((FAILED + 1))
        local why="pytest exited with status $rc"
        [ "$rc" -eq 124 ] && why="timed out"
        [ -z "$summary" ] && why="$why, no summary line"
        FAILURES+=("$name: $why (see $log)")
        show_tail "$log"
    elif [ $((f + e)) -gt 0 ]; then
        show_tail "$log"
    fi
}

print_summary() {
    echo
    say "summary"
    local x
    echo "  step timings:"
    for x in "${TIMINGS[@]}"; do echo "    $x"; done
    if [ "${#NOT_RUN[@]}" -gt 0 ]; then
        echo "  not run (${#NOT_RUN[@]}):"
        for x in "${NOT_RUN[@]}"; do echo "    $x"; done
    fi
    if [ "${#SUSPICIOUS[@]}" -gt 0 ]; then
        echo "  SUSPICIOUS on a machine with a GPU (${#SUSPICIOUS[@]}):"
        for x in "${SUSPICIOUS[@]}"; do echo "    $x"; done
    fi
    if [ "${#FAILURES[@]}" -gt 0 ]; then
        echo "  failed (${#FAILURES[@]}):"
        for x in "${FAILURES[@]}"; do echo "    $x"; done
    fi
    [ "$PASSED" -gt 0 ] || echo "  nothing passed: the check did not run"
    echo "$PASSED passed, $FAILED failed"
}

# --- 3. CuPy, PyTorch, NVRTC into .venv -----------------------------------------------
site_packages() {
    local d
    for d in "$PWD"/.venv/lib/python3*/site-packages; do
        [ -d "$d" ] && { echo "$d"; return 0; }
    done
    return 1
}

find_nvrtc() { # the wheel's libnvrtc.so.12 (or, failing that, any NVRTC in site-packages)
    local sp
    sp="$(site_packages)"
    [ -n "$sp" ] || return 1
    ls "$sp"/nvidia/cuda_nvrtc/lib/libnvrtc.so.12 2>/dev/null && return 0
    find "$sp/nvidia" -name 'libnvrtc.so.1[0-9]*' ! -name '*builtins*' ! -name '*alt*' 2>/dev/null |
        sort | head -n1 | grep .
}

install_python_gpu_packages() {
    local py=.venv/bin/python pkg check offline=0 log
    if [ ! -x "$py" ]; then
        PIP_MISSING=(torch cupy-cuda12x nvidia-cuda-nvrtc-cu12)
        NOT_RUN+=("pip: no .venv/bin/python (setup.sh failed), nothing installed")
        return
    fi
    for pkg in torch cupy-cuda12x nvidia-cuda-nvrtc-cu12; do
        case "$pkg" in
            torch) check="$py -c 'import torch'" ;;
            cupy-cuda12x) check="$py -c 'import cupy'" ;;
            *) check="find_nvrtc" ;;
        esac
        if eval "$check" >/dev/null 2>&1; then
            echo "    $pkg: already installed"
            continue
        fi
        if [ "$offline" = 1 ]; then
            PIP_MISSING+=("$pkg")
            NOT_RUN+=("pip: $pkg not tried (pip could not reach the network for an earlier package)")
            continue
        fi
        log="$LOG_DIR/pip-$pkg.log"
        if run_step install "pip install $pkg" 1200 "$log" \
            "$py" -m pip install -q --disable-pip-version-check --retries 1 --timeout 30 "$pkg"; then
            continue
        fi
        PIP_MISSING+=("$pkg")
        NOT_RUN+=("pip: $pkg could not be installed (see $log); the tests that need it skip")
        say "pip could not install $pkg; going on without it"
        tail -n 3 "$log" | sed 's/^/    | /'
        if grep -qiE 'connection|network is unreachable|name resolution|name or service|timed out' "$log"; then
            offline=1
        fi
    done
}

main() {
    cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
    LOG_DIR="${GPU_CHECK_LOG_DIR:-$PWD/build/gpu-check}"

    probe_gpu
    if [ -z "$GPU_EVIDENCE" ]; then
        say "no NVIDIA GPU or driver found ($GPU_CHECKED); nothing was run"
        echo "0 passed, 0 failed (not run: no GPU)"
        exit 0
    fi
    say "GPU: $GPU_EVIDENCE"
    mkdir -p "$LOG_DIR"
    export CARGO_TERM_COLOR=never
    if ! command -v cargo >/dev/null 2>&1 && [ -d "${HOME:-/nonexistent}/.cargo/bin" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
    local t0 rc
    t0=$(date +%s)

    # 2. toolchain and venv (installs on a fresh machine, seconds on a warm one).
    if ! run_step install "scripts/setup.sh" 900 "$LOG_DIR/setup.log" bash scripts/setup.sh; then
        FAILED=$((FAILED + 1))
        FAILURES+=("scripts/setup.sh failed (see $LOG_DIR/setup.log); going on with what is there")
        show_tail "$LOG_DIR/setup.log"
    fi

    # 3. CuPy, PyTorch (PyPI's default Linux wheel is a CUDA build), NVRTC.
    install_python_gpu_packages

    # 4. NVRTC for the run-time compiled kernels; its folder also goes on the loader path
    # (for libnvrtc-builtins, and for CuPy).
    local nvrtc
    if [ -z "${AMREX_NVRTC_LIBRARY:-}" ] && nvrtc="$(find_nvrtc)"; then
        export AMREX_NVRTC_LIBRARY="$nvrtc"
    fi
    if [ -n "${AMREX_NVRTC_LIBRARY:-}" ]; then
        say "AMREX_NVRTC_LIBRARY=$AMREX_NVRTC_LIBRARY"
        LD_LIBRARY_PATH="$(dirname "$AMREX_NVRTC_LIBRARY")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        export LD_LIBRARY_PATH
    else
        say "AMREX_NVRTC_LIBRARY not set and no NVRTC in .venv: the kernels look for libnvrtc on the loader path"
    fi

    # 5. Rust device tier; 6. Python. These share the time budget. Every crate with device
    # tests (amrex-podvector has none: its device paths are run by amrex-arena's tests).
    # `--tests` leaves out the doctests, which `--include-ignored` would otherwise try to
    # compile and run even where they are marked `ignore`.
    DEADLINE=$(($(date +%s) + BUDGET_S))
    local spec name log
    for spec in "amrex-arena cuda,testing 240" "amrex-aos cuda 150" \
        "amrex-basefab cuda 150" "amrex-multifab cuda 240"; do
        # shellcheck disable=SC2086 # three words: package, features, limit
        set -- $spec
        name="cargo test -p $1 --features $2 --tests -- --include-ignored"
        log="$LOG_DIR/cargo-$1.log"
        run_step budget "$name" "$3" "$log" \
            cargo test --release -p "$1" --features "$2" --tests -- --include-ignored --nocapture
        rc=$?
        [ "$rc" -eq 125 ] || count_cargo "$1" "$log" "$rc"
    done

    log="$LOG_DIR/build-python.log"
    if run_step budget "wheel with CUDA (AMREX_PY_FEATURES=cuda scripts/build-python.sh)" 300 "$log" \
        env AMREX_PY_FEATURES=cuda bash scripts/build-python.sh; then
        local probe
        probe="$(timeout 60 .venv/bin/python -c 'import amrex_rs as a; print(a.The_Device_Arena())' 2>&1 | tail -n1)"
        say "python: The_Device_Arena() -> $probe"
        grep -q 'backend="cuda"' <<<"$probe" ||
            SUSPICIOUS+=("python: The_Device_Arena() gives $probe (was the wheel built with the cuda feature?)")
        log="$LOG_DIR/pytest-gpu.log"
        run_step budget "pytest python-tests/test_gpu.py" 240 "$log" \
            .venv/bin/python -m pytest -q -rsfE python-tests/test_gpu.py
        rc=$?
        [ "$rc" -eq 125 ] || count_pytest "pytest test_gpu.py" "$log" "$rc"
    else
        rc=$?
        if [ "$rc" -ne 125 ]; then
            FAILED=$((FAILED + 1))
            FAILURES+=("wheel build failed, rc $rc (see $log)")
            show_tail "$log"
        fi
        NOT_RUN+=("python-tests/test_gpu.py: not run, the wheel did not build")
    fi
    TIMINGS+=("total: $(($(date +%s) - t0)) s")

    print_summary
    [ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]
    exit $?
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    main "$@"
fi
