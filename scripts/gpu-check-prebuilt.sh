#!/usr/bin/env bash
# scripts/gpu-check.sh in two halves, for a GPU machine that has no Rust toolchain and no
# network (docs/gpu-check.md, "Prebuilt"):
#
#   bash scripts/gpu-check-prebuilt.sh pack DIR   # here, with the toolchain and .venv
#   bash scripts/gpu-check-prebuilt.sh run DIR    # there, in a copy of this checkout
#
# `pack` builds, from the committed tree (HEAD), the release test executables of every
# crate with device tests (the same crates and features as gpu-check.sh: amrex-arena with
# cuda,testing; amrex-aos, amrex-basefab and amrex-multifab with cuda), without debug info,
# into DIR/bin/<crate>/, lists them in DIR/manifest.tsv, builds the Python wheel with CUDA
# into DIR/wheels/ and copies that commit's python-tests/ to DIR/python-tests/.
# `run` needs only bash, coreutils, the NVIDIA driver and a python3 with NumPy and pytest
# (CuPy and PyTorch for the tests that use them): it finds NVRTC, runs each executable as
# `cargo test` would (from its crate's folder) with `--include-ignored --nocapture` under
# its own `timeout`, installs the wheel into a temporary folder, runs
# python-tests/test_gpu.py, and ends with gpu-check.sh's summary and its `N passed, M
# failed` line, counted the same way (gpu-check.sh's functions are sourced). Without a GPU
# it runs everything anyway: the device tests then print `skipped ...` and are counted as
# not run. Logs go to $GPU_CHECK_LOG_DIR, else $OUT, else build/gpu-check-prebuilt: one
# file per crate, one for pytest, one for the environment (few files, flat).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/gpu-check.sh
source "$ROOT/scripts/gpu-check.sh"   # say, count_cargo, count_pytest, print_summary, probe_gpu

# crate, features, per-executable time limit (s)
SPECS=("amrex-arena cuda,testing 90" "amrex-aos cuda 60" "amrex-basefab cuda 60"
    "amrex-multifab cuda 120")

pack() {
    local dir="$1" spec crate features json exe kind name src commit
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    rm -rf "$dir/bin" "$dir/wheels" "$dir/manifest.tsv"
    mkdir -p "$dir/bin"
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target/gpu}"
    export CARGO_PROFILE_RELEASE_DEBUG=false CARGO_TERM_COLOR=never
    # Built from the committed tree (HEAD), not the working tree: what ran is then exactly
    # a commit, whatever is being edited beside it.
    commit="$(git -C "$ROOT" rev-parse HEAD)" || return 1
    src="${PACK_SRC:-/tmp/amrex-rs-pack}"
    rm -rf "$src"
    mkdir -p "$src"
    git -C "$ROOT" archive HEAD | tar -x -C "$src" || return 1
    ln -s "$ROOT/.venv" "$src/.venv"
    cd "$src" || return 1
    say "building commit $commit in $src"
    for spec in "${SPECS[@]}"; do
        # shellcheck disable=SC2086 # three words
        set -- $spec
        crate="$1" features="$2"
        json="$(mktemp)"
        say "building the test executables of $crate (--features $features)"
        if ! cargo test --release -p "$crate" --features "$features" --tests --no-run \
            --message-format=json >"$json"; then
            say "build of $crate failed"
            rm -f "$json"
            return 1
        fi
        mkdir -p "$dir/bin/$crate"
        while IFS=$'\t' read -r kind name exe; do
            objcopy --strip-debug "$exe" "$dir/bin/$crate/$kind-$name"
            printf '%s\t%s\t%s\n' "$crate" "$features" "bin/$crate/$kind-$name" >>"$dir/manifest.tsv"
        done < <(jq -r --arg m "$src/crates/$crate/Cargo.toml" \
            'select(.reason == "compiler-artifact" and .executable != null
                and .profile.test and .manifest_path == $m)
             | [.target.kind[0], .target.name, .executable] | @tsv' "$json" | sort)
        rm -f "$json"
    done
    say "building the Python wheel with CUDA"
    AMREX_PY_FEATURES=cuda bash scripts/build-python.sh --no-install --out "$dir/wheels" || return 1
    # The Python tests of the same commit as the wheel (the working tree may be ahead).
    rm -rf "$dir/python-tests"
    cp -r python-tests "$dir/python-tests"
    {
        echo "commit: $commit"
        echo "built: $(date -u +%FT%TZ) on $(uname -m), $(rustc -V)"
    } >"$dir/BUILD_INFO"
    say "packed into $dir ($(du -sh "$dir" | cut -f1)):"
    sed 's/^/    /' "$dir/manifest.tsv"
    ls -l "$dir/wheels" | sed 's/^/    /'
}

# The NVRTC to use: $AMREX_NVRTC_LIBRARY if set, else the libnvrtc.so.<N> found under
# python3's sys.path (the nvidia-cuda-nvrtc wheels) or the CUDA toolkit's lib64, preferring
# N = the driver's CUDA major version. All candidates are listed in the environment log.
find_device_nvrtc() {
    local py="$1" envlog="$2" major="$3" dirs=() d cands
    if [ -n "${AMREX_NVRTC_LIBRARY:-}" ]; then
        echo "$AMREX_NVRTC_LIBRARY"
        return 0
    fi
    while IFS= read -r d; do
        [ -d "$d/nvidia" ] && dirs+=("$d/nvidia")
    done < <("$py" -c 'import sys; print("\n".join(p for p in sys.path if p))' 2>/dev/null)
    for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
        [ -d "$d" ] && dirs+=("$d")
    done
    [ "${#dirs[@]}" -gt 0 ] || return 1
    cands="$(find "${dirs[@]}" -maxdepth 3 -name 'libnvrtc.so.*' ! -name '*builtins*' \
        ! -name '*.alt.*' 2>/dev/null | sort -u)"
    { echo "NVRTC candidates (driver CUDA major: ${major:-unknown}):"; sed 's/^/  /' <<<"$cands"; } >>"$envlog"
    [ -n "$cands" ] || return 1
    if [ -n "$major" ] && grep -m1 -E "/libnvrtc\.so\.$major(\.|$)" <<<"$cands"; then
        return 0
    fi
    head -n1 <<<"$cands"
}

# run_bin CRATE EXE CAP LOG [FILTER]: runs one test executable (only the tests whose
# names contain FILTER, if given) from its crate's folder, appending to LOG, under
# `timeout` with CAP cut to what is left of the budget. Sets BIN_RC.
run_bin() {
    local crate="$1" exe="$2" cap="$3" log="$4" left start took
    local filter=("${@:5}")
    left=$((DEADLINE - $(date +%s)))
    if [ "$left" -lt 20 ]; then
        say "[$(date +%T)] $exe: not started, the ${BUDGET_S} s budget is spent"
        echo "=== $exe: not started (budget spent)" >>"$log"
        FAILED=$((FAILED + 1))
        FAILURES+=("$crate: $exe not started (time budget of ${BUDGET_S} s spent)")
        TIMINGS+=("$exe: not started")
        BIN_RC=125
        return
    fi
    [ "$left" -lt "$cap" ] && cap="$left"
    say "[$(date +%T)] $exe ${filter[*]} --include-ignored --nocapture (limit ${cap} s)"
    echo "=== $exe ${filter[*]} --include-ignored --nocapture (from crates/$crate)" >>"$log"
    start=$(date +%s)
    (cd "crates/$crate" && timeout --kill-after=10 "$cap" "$DIR/$exe" "${filter[@]}" \
        --include-ignored --nocapture) >>"$log" 2>&1 </dev/null
    BIN_RC=$?
    took=$(($(date +%s) - start))
    TIMINGS+=("$exe: ${took} s (rc $BIN_RC)")
    echo "=== $exe: rc $BIN_RC in ${took} s" >>"$log"
    if [ "$BIN_RC" -eq 124 ] || [ "$BIN_RC" -eq 137 ]; then
        say "[$(date +%T)] $exe: TIMED OUT after ${took} s"
        BIN_RC=124
    else
        say "[$(date +%T)] $exe: rc $BIN_RC in ${took} s"
    fi
}

run() {
    DIR="$(cd "$1" && pwd)" || { say "no folder $1"; exit 2; }
    cd "$ROOT" || exit 1
    [ -r "$DIR/manifest.tsv" ] || { say "$DIR/manifest.tsv missing: run 'pack' first"; exit 2; }
    LOG_DIR="${GPU_CHECK_LOG_DIR:-${OUT:-$ROOT/build/gpu-check-prebuilt}}"
    mkdir -p "$LOG_DIR"
    # The Rust executables share BUDGET_S; pytest may run until TOTAL_S after the start.
    BUDGET_S="${GPU_CHECK_BUDGET_S:-250}"
    local total_s="${GPU_CHECK_TOTAL_S:-385}"
    local py="${PYTHON:-python3}" envlog="$LOG_DIR/env.log" t0 major nvrtc ptxas
    t0=$(date +%s)
    DEADLINE=$((t0 + BUDGET_S))
    export RUST_BACKTRACE=1
    : >"$envlog"
    {
        echo "date: $(date -u +%FT%TZ)"
        cat "$DIR/BUILD_INFO" 2>/dev/null
        echo "host: $(uname -srm)"
        echo "--- nvidia-smi"
        timeout 30 nvidia-smi 2>&1 || echo "(nvidia-smi failed or absent)"
        echo "--- $py"
        timeout 60 "$py" -c 'import sys; print(sys.version)
for m in ("numpy", "pytest", "cupy", "torch"):
    try:
        mod = __import__(m)
        print(m, mod.__version__, getattr(getattr(mod, "version", None), "cuda", ""))
    except Exception as e:
        print(m, "not importable:", e)' 2>&1
    } >>"$envlog"

    probe_gpu
    if [ -n "$GPU_EVIDENCE" ]; then
        say "GPU: $GPU_EVIDENCE"
    else
        say "no NVIDIA GPU or driver found ($GPU_CHECKED); running anyway: the device tests will skip"
    fi
    timeout 30 nvidia-smi -L 2>/dev/null | sed 's/^/    /'
    major="$(timeout 30 nvidia-smi 2>/dev/null | sed -nE 's/.*CUDA Version: ([0-9]+)\..*/\1/p' | head -n1)"
    say "driver: $(timeout 30 nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n1) (CUDA ${major:-?})"
    if nvrtc="$(find_device_nvrtc "$py" "$envlog" "$major")"; then
        export AMREX_NVRTC_LIBRARY="$nvrtc"
        LD_LIBRARY_PATH="$(dirname "$nvrtc")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        export LD_LIBRARY_PATH
        say "AMREX_NVRTC_LIBRARY=$AMREX_NVRTC_LIBRARY"
    else
        say "no NVRTC found: the kernels fall back to the PTX shipped with the library"
    fi
    if [ -z "${AMREX_PTXAS:-}" ]; then
        ptxas="$(command -v ptxas || ls /usr/local/cuda/bin/ptxas 2>/dev/null)" &&
            export AMREX_PTXAS="$ptxas"
    fi
    say "AMREX_PTXAS=${AMREX_PTXAS:-(unset)}"
    echo "AMREX_NVRTC_LIBRARY=${AMREX_NVRTC_LIBRARY:-} AMREX_PTXAS=${AMREX_PTXAS:-} LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}" >>"$envlog"

    # Rust: each crate's executables, in the manifest's order, into one log per crate.
    local spec crate cap log rc exe
    for spec in "${SPECS[@]}"; do
        # shellcheck disable=SC2086 # three words
        set -- $spec
        crate="$1" cap="$3"
        log="$LOG_DIR/cargo-$crate.log"
        : >"$log"
        rc=0
        while IFS=$'\t' read -r _ _ exe; do
            run_bin "$crate" "$exe" "$cap" "$log"
            [ "$BIN_RC" -eq 125 ] && continue
            [ "$BIN_RC" -eq 0 ] || rc="$BIN_RC"
        done < <(awk -F'\t' -v c="$crate" '$1 == c' "$DIR/manifest.tsv")
        count_cargo "$crate" "$log" "$rc"
    done

    # Python: the wheel into a temporary folder (the device's python3 keeps its packages).
    local site wheel probe tests=python-tests
    # pack's copy of the tests of the wheel's commit; else this checkout's.
    [ -r "$DIR/python-tests/test_gpu.py" ] && tests="$DIR/python-tests"
    site="$(mktemp -d)"
    wheel="$(ls "$DIR"/wheels/amrex_rs-*.whl 2>/dev/null | head -n1)"
    log="$LOG_DIR/pytest-gpu.log"
    if [ -z "$wheel" ]; then
        FAILED=$((FAILED + 1))
        FAILURES+=("no wheel in $DIR/wheels")
    elif ! "$py" -m pip install -q --no-index --no-deps --disable-pip-version-check \
        --target "$site" "$wheel" >>"$envlog" 2>&1 &&
        ! "$py" -m zipfile -e "$wheel" "$site" >>"$envlog" 2>&1; then
        FAILED=$((FAILED + 1))
        FAILURES+=("could not install $wheel (see $envlog)")
    else
        export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
        probe="$(timeout 60 "$py" -c 'import amrex_rs as a; print(a.The_Device_Arena())' 2>&1 | tail -n1)"
        say "python: The_Device_Arena() -> $probe"
        grep -q 'backend="cuda"' <<<"$probe" ||
            SUSPICIOUS+=("python: The_Device_Arena() gives $probe")
        # What `import amrex_rs` finds by itself when AMREX_NVRTC_LIBRARY is unset.
        echo "import amrex_rs without AMREX_NVRTC_LIBRARY sets it to: $(timeout 60 env -u AMREX_NVRTC_LIBRARY "$py" -c \
            'import os, amrex_rs; print(os.environ.get("AMREX_NVRTC_LIBRARY"))' 2>&1 | tail -n1)" >>"$envlog"
        local opts=(-q -rsfE -p no:cacheprovider)
        "$py" -c 'import pytest_timeout' >/dev/null 2>&1 && opts+=(--timeout=60)
        local left=$((t0 + total_s - $(date +%s)))
        [ "$left" -gt 200 ] && left=200
        [ "$left" -lt 30 ] && left=30
        say "[$(date +%T)] pytest $tests/test_gpu.py and test_nvrtc_lookup.py (limit ${left} s, log $log)"
        local start=$(($(date +%s)))
        local files=("$tests/test_gpu.py")
        [ -r "$tests/test_nvrtc_lookup.py" ] && files+=("$tests/test_nvrtc_lookup.py")
        # Without AMREX_NVRTC_LIBRARY: `import amrex_rs` finds NVRTC itself, as for users.
        timeout --kill-after=10 "$left" env -u AMREX_NVRTC_LIBRARY "$py" -m pytest "${opts[@]}" \
            "${files[@]}" >"$log" 2>&1 </dev/null
        rc=$?
        TIMINGS+=("pytest ${files[*]##*/}: $(($(date +%s) - start)) s (rc $rc)")
        say "[$(date +%T)] pytest: rc $rc"
        count_pytest "pytest" "$log" "$rc"
    fi
    rm -rf "$site"

    # The PTX shipped for machines without NVRTC, compiled by the driver: the CUDA tests
    # of amrex-arena's backends and amrex-multifab's device operations again, with
    # AMREX_CUDA_EMBEDDED_PTX=1, if time is left.
    log="$LOG_DIR/cargo-embedded-ptx.log"
    : >"$log"
    DEADLINE=$((t0 + total_s))
    if [ $((DEADLINE - $(date +%s))) -ge 40 ]; then
        rc=0
        while IFS=$'\t' read -r crate _ exe; do
            AMREX_CUDA_EMBEDDED_PTX=1 run_bin "$crate" "$exe" 60 "$log" cuda_
            [ "$BIN_RC" -eq 125 ] && continue
            [ "$BIN_RC" -eq 0 ] || rc="$BIN_RC"
        done < <(grep -E '/(test-backends|test-device_ops)$' "$DIR/manifest.tsv")
        count_cargo "embedded PTX (AMREX_CUDA_EMBEDDED_PTX=1)" "$log" "$rc"
    else
        NOT_RUN+=("embedded PTX (AMREX_CUDA_EMBEDDED_PTX=1): no time left")
    fi
    TIMINGS+=("total: $(($(date +%s) - t0)) s")
    print_summary
    [ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]
}

case "${1:-}" in
    pack) [ $# -eq 2 ] || { echo "usage: $0 pack DIR" >&2; exit 2; }; pack "$2" ;;
    run) [ $# -eq 2 ] || { echo "usage: $0 run DIR" >&2; exit 2; }; run "$2" ;;
    *) echo "usage: $0 pack DIR | run DIR" >&2; exit 2 ;;
esac
