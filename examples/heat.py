"""The main example, driven from Python: the heat equation on an amrex_rs MultiFab whose
boxes NumPy reads and writes in place through DLPack (pyAMReX's `np.from_dlpack(mf.array(mfi))`).

Same problem as examples/heat.rs: du/dt = lap(u) on a periodic 64^3 grid in 32^3 boxes with
one ghost cell, forward Euler. The Rust side fills ghost cells (fill_boundary) and does the
saxpy; NumPy computes the 7-point Laplacian on each box's zero-copy view. Checked against
the closed form and against a whole-domain NumPy solver with np.roll. Then the result is
written as an AMReX plotfile, read back lazily (the Header, then only the boxes that cut
the mid-plane), and the mid-plane is saved as a PNG, whose path is printed.

Runs unchanged under `mpirun -n N` with an MPI build of the package (each rank computes
on its own boxes; the checks use collective reductions and global reads, so every rank
prints the same numbers as one process; rank 0 prints them and saves the picture).

Uses the installed package (`bash scripts/build-python.sh`); the output folder is
`AMREX_RS_HEAT_OUT` (default: target/heat-py).
"""
import os
import time
from pathlib import Path

import numpy as np

import amrex_rs as amr

N, MAX_GRID, STEPS, DT = 64, 32, 40, 0.1


def mode(i, j, k):
    w = 2.0 * np.pi / N
    return np.sin(w * i) * np.sin(w * j) * np.sin(w * k)


def local_indices(box):
    """Global (k, j, i) index grids of a box, matching the (nz, ny, nx) axes of a view."""
    (lx, ly, lz), (hx, hy, hz) = box.lo, box.hi
    return np.meshgrid(np.arange(lz, hz + 1), np.arange(ly, hy + 1), np.arange(lx, hx + 1), indexing="ij")


def main():
    amr.initialize([])
    try:
        run()
    finally:
        amr.finalize()


def run():
    # Under mpirun every rank runs this; rank 0 speaks.
    say = print if amr.ParallelDescriptor.IOProcessor() else (lambda *args, **kwargs: None)
    domain = amr.Box((0, 0, 0), (N - 1, N - 1, N - 1))
    ba = amr.BoxArray(domain, max_size=MAX_GRID)
    dm = amr.DistributionMapping(ba)
    phi = amr.MultiFab(ba, dm, 1, 1)
    lap = amr.MultiFab(ba, dm, 1, 0)
    say(f"heat equation on {N}^3 cells in {len(ba)} boxes on {amr.ParallelDescriptor.NProcs()} rank(s), "
        f"NumPy {np.__version__} kernels on zero-copy views")

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
    say(f"{STEPS} steps in {elapsed * 1e3:.1f} ms")

    # Closed form: both parts of the initial state are eigenvectors of the discrete Laplacian.
    lam = 3.0 * (2.0 * np.cos(2.0 * np.pi / N) - 2.0)
    factor = (1.0 + DT * lam) ** STEPS
    err = amr.MultiFab(ba, dm, 1, 0)
    for mfi in err:
        k, j, i = local_indices(mfi.validbox())
        np.from_dlpack(err.array(mfi))[0] = 1.0 + factor * mode(i, j, k)
    err.subtract(phi, 0, 0, 1)
    worst = err.norm0(0)  # a reduction over every rank's boxes
    say(f"1. MultiFab vs closed form: amplitude {factor:.6f}, max error {worst:.2e}")
    assert worst < 1e-12, worst
    total = phi.sum(0)
    say(f"   total heat {total:.9f} (initially {N ** 3})")
    assert abs(total - N ** 3) < 1e-8, total

    # The whole field on every rank (a collective global read), (i, j, k) -> (k, j, i),
    # against an independent whole-domain NumPy solver.
    whole = np.ascontiguousarray(phi[:, :, :, 0].T)
    k, j, i = np.meshgrid(np.arange(N), np.arange(N), np.arange(N), indexing="ij")
    u = 1.0 + mode(i, j, k)
    for _ in range(STEPS):
        l = sum(np.roll(u, s, axis=ax) for ax in range(3) for s in (1, -1)) - 6.0 * u
        u = u + DT * l
    diff = float(np.abs(whole - u).max())
    say(f"2. MultiFab vs a whole-domain np.roll solver: max difference {diff:.2e}")
    assert diff < 1e-13, diff

    out = Path(os.environ.get("AMREX_RS_HEAT_OUT", Path(__file__).resolve().parent.parent / "target" / "heat-py"))
    out.mkdir(parents=True, exist_ok=True)
    plt_dir = out / f"plt{STEPS:05d}"
    amr.write_single_level_plotfile(str(plt_dir), phi, ["phi"], prob_hi=(1.0, 1.0, 1.0), time=STEPS * DT, step=STEPS)
    # The sine mode vanishes on the mid-planes (sin(pi) = 0), so the picture shows the
    # plane k = N/4, where it peaks, half-way between the bottom and the middle.
    k = N // 4
    plane, read = plane_k(amr.Plotfile(str(plt_dir)), k)
    diff = float(np.abs(plane - whole[k].T).max())  # whole is (z, y, x); plane is [i, j]
    say(f"3. plotfile {plt_dir}: read {read} of {len(ba)} boxes for the plane k = {k}, "
        f"max difference {diff:.1e}")
    assert diff == 0.0, diff
    if amr.ParallelDescriptor.IOProcessor():
        png = save_png(plane, out / "heat_slice.png")
        say(f"   slice k = {k} (values {plane.min():.6f} .. {plane.max():.6f}, viridis, i to the "
            f"right, j up): {png}")
    say("all checks passed")


def plane_k(pf, k):
    """The plane k of variable 0 from a plotfile, reading only the boxes that cut it."""
    dom = pf.domain(0)
    nx, ny = dom.hi[0] - dom.lo[0] + 1, dom.hi[1] - dom.lo[1] + 1
    plane = np.zeros((nx, ny))
    read = 0
    for i, b in enumerate(pf.boxes(0)):
        if b.lo[2] <= k <= b.hi[2]:
            a = pf.read_box(0, i, var=pf.var_names[0])
            plane[b.lo[0]:b.hi[0] + 1, b.lo[1]:b.hi[1] + 1] = a[:, :, k - b.lo[2], 0]
            read += 1
    return plane, read


def save_png(plane, path, scale=4):
    """Saves `plane` (indexed [i, j]) as a viridis image, `scale` pixels per cell, i to the
    right and j up; the colour range is the plane's own minimum to maximum."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pixels = np.kron(plane.T[::-1], np.ones((scale, scale)))  # row 0 is the top (j max)
    plt.imsave(path, pixels, cmap="viridis", vmin=plane.min(), vmax=plane.max())
    return path

if __name__ == "__main__":
    main()
