#!/usr/bin/env bash
# Runs one fuzz target for a number of seconds:  bash scripts/fuzz.sh TARGET SECONDS
#   TARGET: dlpack_core | dlpack_containers | plotfile | checkpoint | parm_parse | all
# Installs cargo-fuzz on the dated nightly if needed, (re)writes the seed corpus from
# fuzz/seeds/make_corpus.py, then runs libFuzzer under AddressSanitizer with a memory
# limit, so an allocation the input does not justify is a finding too. A crash leaves its
# input in fuzz/artifacts/TARGET/ and makes this script fail.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:?usage: scripts/fuzz.sh TARGET SECONDS}"
secs="${2:?usage: scripts/fuzz.sh TARGET SECONDS}"
NIGHTLY="${MIRI_TOOLCHAIN:-nightly-2026-10-29}"
rustup toolchain list | grep -q "^$NIGHTLY" \
    || rustup toolchain install "$NIGHTLY" --profile minimal >/dev/null
if ! cargo "+$NIGHTLY" fuzz --version >/dev/null 2>&1; then
    cargo "+$NIGHTLY" install cargo-fuzz --locked --quiet
fi
python3 fuzz/seeds/make_corpus.py fuzz/corpus
if [ "$target" = all ]; then
    targets="dlpack_core dlpack_containers plotfile checkpoint parm_parse"
else
    targets="$target"
fi
for t in $targets; do
    max_len=4096
    case "$t" in plotfile | checkpoint) max_len=65536 ;; esac
    echo "==> fuzz $t for ${secs}s"
    # -rss_limit_mb: the harness allocates at most a few MiB per input; 2 GiB means the
    # code under test allocated far beyond what the input's bytes justify.
    log="fuzz/artifacts/$t.log"
    mkdir -p fuzz/artifacts
    status=0
    cargo "+$NIGHTLY" fuzz run -O "$t" "fuzz/corpus/$t" -- \
        -max_total_time="$secs" -max_len="$max_len" -rss_limit_mb=2048 \
        -malloc_limit_mb=1024 -print_final_stats=1 -timeout=10 >"$log" 2>&1 || status=$?
    # The summary: corpus and coverage at start and end, the final statistics, findings.
    grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::|ERROR|SUMMARY|panicked|deleter ran' "$log" || true
    if [ "$status" -ne 0 ]; then
        tail -n 60 "$log" >&2
        echo "fuzz $t: FAILED (input saved under fuzz/artifacts/$t/, log $log)" >&2
        exit 1
    fi
done
