"""Benchmark: ``np.from_dlpack(x)`` on an amrex_rs vector vs on a NumPy array.

Plain ``timeit``; prints ns per call and the ratio (target: within 1.2x of NumPy's own
round trip). Also times ``amrex_rs.from_dlpack`` (our importer) on a NumPy array, and the
capsule alone (``x.__dlpack__(max_version=(1, 0))``) for both producers.

Run: ``bash scripts/build-python.sh && .venv/bin/python python-tests/bench_dlpack.py``
"""

import os
import sys
import timeit

import numpy as np

import amrex_rs


def best_ns(stmt, number, repeat=7):
    t = min(timeit.repeat(stmt, number=number, repeat=repeat))
    return t / number * 1e9


def main():
    number = int(os.environ.get("BENCH_NUMBER", "100000"))
    n = 1000
    ours = amrex_rs.PodVectorF64(n, 1.0)
    theirs = np.ones(n)
    fab = amrex_rs.FArrayBox(amrex_rs.Box((0, 0, 0), (15, 15, 15)), 2)
    fab_np = np.ones((2, 16, 16, 16))
    mat = amrex_rs.SmallMatrix_6x6_F_SI1_double.identity()
    mat_np = np.asfortranarray(np.eye(6))
    pairs = [
        ("PodVectorF64(1000)", ours, theirs),
        ("FArrayBox 16^3 x 2", fab, fab_np),
        ("SmallMatrix 6x6", mat, mat_np),
    ]
    rows = [
        ("np.from_dlpack(PodVectorF64)", lambda: np.from_dlpack(ours)),
        ("np.from_dlpack(np.ndarray)", lambda: np.from_dlpack(theirs)),
        ("PodVectorF64.__dlpack__(max_version=(1,0))",
         lambda: ours.__dlpack__(max_version=(1, 0))),
        ("np.ndarray.__dlpack__(max_version=(1,0))",
         lambda: theirs.__dlpack__(max_version=(1, 0))),
        ("amrex_rs.from_dlpack(np.ndarray)", lambda: amrex_rs.from_dlpack(theirs)),
        ("amrex_rs.from_dlpack(PodVectorF64)", lambda: amrex_rs.from_dlpack(ours)),
    ]
    results = {}
    for name, fn in rows:
        fn()
        results[name] = best_ns(fn, number)
    width = max(len(r[0]) for r in rows)
    for name, _ in rows:
        print(f"{name:<{width}}  {results[name]:8.1f} ns/call")
    ratio = results[rows[0][0]] / results[rows[1][0]]
    cap_ratio = results[rows[2][0]] / results[rows[3][0]]
    print(f"ratio np.from_dlpack(ours) / np.from_dlpack(numpy) = {ratio:.3f} (target <= 1.2)")
    print(f"ratio __dlpack__ ours / numpy                      = {cap_ratio:.3f}")
    print("np.from_dlpack per container (ours vs a NumPy array of the same shape):")
    for label, a, b in pairs:
        ta = best_ns(lambda a=a: np.from_dlpack(a), number)
        tb = best_ns(lambda b=b: np.from_dlpack(b), number)
        print(f"  {label:<20} {ta:8.1f} ns vs {tb:8.1f} ns  ratio {ta / tb:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
