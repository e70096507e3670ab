"""Benchmark: ``mf[...]`` (global read of every valid cell of a MultiFab into one NumPy
array, across boxes) vs a NumPy copy of the same bytes (``np.copy`` of a C-contiguous
array of that size, the memory-bandwidth baseline) and vs gathering the per-box
zero-copy views into one array in Python (what pyAMReX's ``__getitem__`` does).

Run: ``bash scripts/build-python.sh && .venv/bin/python python-tests/bench_indexing.py [N]``
(default N = 256, a 256^3 MultiFab of 64^3 boxes, one component: 128 MiB).
"""

import sys
import time

import numpy as np

import amrex_rs as amr


def best(fn, repeat=5):
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    ba = amr.BoxArray(amr.Box((0, 0, 0), (n - 1,) * 3), max_size=64)
    mf = amr.MultiFab(ba, amr.DistributionMapping(ba), 1, 1)
    mf.fill_cell_index_pattern()
    src = np.random.default_rng(0).random((n, n, n))
    nbytes = src.nbytes

    def gather():
        out = np.empty((n, n, n, 1), order="F")
        for arr, (lo, hi) in zip(mf.to_numpy(order="F", ghosts=False), mf.boxes()):
            out[lo[0]:hi[0] + 1, lo[1]:hi[1] + 1, lo[2]:hi[2] + 1] = arr
        return out

    assert np.array_equal(gather()[..., 0], mf[...])
    rows = [
        ("mf[...]", best(lambda: mf[...])),
        ("np.copy of the same bytes", best(lambda: np.copy(src))),
        ("per-box views gathered in Python", best(gather)),
    ]
    print(f"{n}^3 MultiFab, {len(ba)} boxes, {nbytes / 2**20:.0f} MiB")
    for name, t in rows:
        print(f"  {name:<34} {t * 1e3:8.1f} ms  {nbytes / t / 1e9:6.2f} GB/s")
    print(f"ratio mf[...] / np.copy = {rows[0][1] / rows[1][1]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
