#!/usr/bin/env bash
# Builds AMReX 24.10 and its Advection_AmrCore tutorial as the reference runs in
# ../shared/data and tests/data/advection were made, and (re)runs the tutorial on the
# cases of tests/data/advection. Not part of the test command (it needs the two source
# trees and about two minutes of a 2-core machine).
#
#   bash scripts/amrex-reference.sh build AMREX_SRC TUTORIALS_SRC [OUT]
#       AMREX_SRC: an AMReX source tree at tag 24.10; TUTORIALS_SRC: amrex-tutorials at
#       2ef516bfddccfff24a3176553fbe0fcea23a4869 (any tree with
#       ExampleCodes/Amr/Advection_AmrCore). Writes OUT/main3d.ex (default
#       build/amrex-reference). Needs cmake, g++ and an MPI compiler wrapper (mpicxx).
#   bash scripts/amrex-reference.sh run [OUT] [CASE...]
#       Runs OUT/main3d.ex on each case of tests/data/advection (default: all), one
#       process or `np` ranks, OMP_NUM_THREADS=1, and rewrites the case's stdout.txt.
#
# The configuration is the reference data's: CMake Release (-O3 -DNDEBUG), 3-D, double,
# MPI and OpenMP on, no Fortran, static library; the tutorial compiled with
# `mpicxx -std=c++17 -O2 -fopenmp -ffp-contract=off` (no fused multiply-add).
set -euo pipefail
cd "$(dirname "$0")/.."
cmd="${1:?usage: amrex-reference.sh build AMREX_SRC TUTORIALS_SRC [OUT] | run [OUT] [CASE...]}"
shift
case "$cmd" in
build)
    src="$(cd "${1:?AMREX_SRC}" && pwd)"
    tut="$(cd "${2:?TUTORIALS_SRC}" && pwd)/ExampleCodes/Amr/Advection_AmrCore"
    out="$(mkdir -p "${3:-build/amrex-reference}" && cd "${3:-build/amrex-reference}" && pwd)"
    cmake -S "$src" -B "$out/build" -DCMAKE_BUILD_TYPE=Release -DAMReX_SPACEDIM=3 \
        -DAMReX_PRECISION=DOUBLE -DAMReX_MPI=ON -DAMReX_OMP=ON -DAMReX_LINEAR_SOLVERS=OFF \
        -DAMReX_FORTRAN=OFF -DAMReX_AMRLEVEL=OFF -DAMReX_EB=OFF -DAMReX_PARTICLES=OFF \
        -DAMReX_TINY_PROFILE=OFF -DBUILD_SHARED_LIBS=OFF -DCMAKE_INSTALL_PREFIX="$out/install"
    cmake --build "$out/build" -j"$(nproc)"
    cmake --install "$out/build"
    mkdir -p "$out/obj"
    for f in "$tut"/Source/*.cpp; do
        mpicxx -std=c++17 -O2 -fopenmp -ffp-contract=off -I"$tut/Source" -I"$tut/Source/Src_K" \
            -I"$tut/Exec" -I"$out/install/include" -c "$f" -o "$out/obj/$(basename "$f" .cpp).o"
    done
    mpicxx -std=c++17 -O2 -fopenmp -ffp-contract=off "$out"/obj/*.o \
        "$out/install/lib/libamrex_3d.a" -fopenmp -o "$out/main3d.ex"
    echo "built $out/main3d.ex"
    ;;
run)
    out="$(cd "${1:-build/amrex-reference}" && pwd)"
    shift || true
    cases=("$@")
    if [ "${#cases[@]}" -eq 0 ]; then
        for d in tests/data/advection/*/; do cases+=("$(basename "$d")"); done
    fi
    for c in "${cases[@]}"; do
        d="tests/data/advection/$c"
        np=1
        [ -f "$d/np" ] && np="$(cat "$d/np")"
        tmp="$(mktemp -d)"
        if [ "$np" -eq 1 ]; then
            (cd "$tmp" && OMP_NUM_THREADS=1 "$out/main3d.ex" "$OLDPWD/$d/inputs" >stdout.txt)
        else
            (cd "$tmp" && OMP_NUM_THREADS=1 mpirun -n "$np" "$out/main3d.ex" "$OLDPWD/$d/inputs" >stdout.txt)
        fi
        cp "$tmp/stdout.txt" "$d/stdout.txt"
        rm -rf "$tmp"
        echo "$c: $(grep -c ADVANCE "$d/stdout.txt") level steps on $np rank(s)"
    done
    ;;
*)
    echo "unknown command $cmd" >&2
    exit 2
    ;;
esac
