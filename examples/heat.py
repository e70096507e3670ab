"""The main example, driven from Python: the heat equation on an amrex_rs MultiFab whose
boxes NumPy reads and writes in place through DLPack (pyAMReX's `np.from_dlpack(mf.array(mfi))`).

Same problem as examples/heat.rs: du/dt = lap(u) on a periodic 64^3 grid in 32^3 boxes with
one ghost cell, forward Euler. The Rust side fills ghost cells (fill_boundary) and does the
saxpy; NumPy computes the 7-point Laplacian on each box's zero-copy view. Checked against
the closed form and against a whole-domain NumPy solver with np.roll.
"""
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "build" / "python"))
import amrex_rs as amr  # noqa: E402

N, MAX_GRID, STEPS, DT = 64, 32, 40, 0.1


def mode(i, j, k):
    w = 2.0 * np.pi / N
    return np.sin(w * i) * np.sin(w * j) * np.sin(w * k)


def local_indices(box):
    """Global (k, j, i) index grids of a box, matching the (nz, ny, nx) axes of a view."""
    (lx, ly, lz), (hx, hy, hz) = box.lo, box.hi
    return np.meshgrid(np.arange(lz, hz + 1), np.arange(ly, hy + 1), np.arange(lx, hx + 1), indexing="ij")


def main():
    domain = amr.Box((0, 0, 0), (N - 1, N - 1, N - 1))
    ba = amr.BoxArray(domain, max_size=MAX_GRID)
    dm = amr.DistributionMapping(ba)
    phi = amr.MultiFab(ba, dm, 1, 1)
    lap = amr.MultiFab(ba, dm, 1, 0)
    print(f"heat equation on {N}^3 cells in {len(ba)} boxes, NumPy {np.__version__} kernels on zero-copy views")

    for mfi in phi:
        a = np.from_dlpack(phi.array(mfi))  # (ncomp, nz, ny, nx), ghost cells included
        k, j, i = local_indices(mfi.validbox())
        a[0, 1:-1, 1:-1, 1:-1] = 1.0 + mode(i, j, k)

    start = time.perf_counter()
    for _ in range(STEPS):
        phi.fill_boundary(periodic=(True, True, True))
        for mfi in phi:
            p = np.from_dlpack(phi.array(mfi))[0]
            out = np.from_dlpack(lap.array(mfi))[0]
            c = p[1:-1, 1:-1, 1:-1]
            out[...] = (p[2:, 1:-1, 1:-1] + p[:-2, 1:-1, 1:-1] + p[1:-1, 2:, 1:-1] + p[1:-1, :-2, 1:-1]
                        + p[1:-1, 1:-1, 2:] + p[1:-1, 1:-1, :-2] - 6.0 * c)
        amr.MultiFab.saxpy(phi, DT, lap, 0, 0, 1)
    elapsed = time.perf_counter() - start
    print(f"{STEPS} steps in {elapsed * 1e3:.1f} ms")

    # Closed form: both parts of the initial state are eigenvectors of the discrete Laplacian.
    lam = 3.0 * (2.0 * np.cos(2.0 * np.pi / N) - 2.0)
    factor = (1.0 + DT * lam) ** STEPS
    whole = np.empty((N, N, N))
    worst = 0.0
    for mfi in phi:
        a = np.from_dlpack(phi.array(mfi))[0, 1:-1, 1:-1, 1:-1]
        k, j, i = local_indices(mfi.validbox())
        worst = max(worst, float(np.abs(a - (1.0 + factor * mode(i, j, k))).max()))
        (lx, ly, lz), (hx, hy, hz) = mfi.validbox().lo, mfi.validbox().hi
        whole[lz:hz + 1, ly:hy + 1, lx:hx + 1] = a
    print(f"1. MultiFab vs closed form: amplitude {factor:.6f}, max error {worst:.2e}")
    assert worst < 1e-12, worst
    total = phi.sum(0)
    print(f"   total heat {total:.9f} (initially {N ** 3})")
    assert abs(total - N ** 3) < 1e-8, total

    # An independent whole-domain NumPy solver.
    k, j, i = np.meshgrid(np.arange(N), np.arange(N), np.arange(N), indexing="ij")
    u = 1.0 + mode(i, j, k)
    for _ in range(STEPS):
        l = sum(np.roll(u, s, axis=ax) for ax in range(3) for s in (1, -1)) - 6.0 * u
        u = u + DT * l
    diff = float(np.abs(whole - u).max())
    print(f"2. MultiFab vs a whole-domain np.roll solver: max difference {diff:.2e}")
    assert diff < 1e-13, diff
    print("all checks passed")


if __name__ == "__main__":
    main()
