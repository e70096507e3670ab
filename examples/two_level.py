"""A fixed two-level AMR hierarchy driven from Python: a Gaussian advected and diffused
across a coarse/fine interface, the fine level subcycled and refluxed.

Same problem, sizes and steps as examples/two_level.rs: dphi/dt + u.grad(phi) = D lap(phi)
on the unit cube, 64^3 coarse cells in 32^3 boxes, periodic in y and z and closed by
walls in x (foextrap: zero gradient, so no flux leaves). Level 1 refines the middle half
of the domain (coarse cells 16..47 in every direction) by 2, in boxes of 32^3 fine
cells. NumPy computes the face fluxes (first-order upwind for u plus centred differences
for D, times face area and time step, into face MultiFabs) and the conservative updates
on each local box's zero-copy view; the package does the rest, as AMReX's subcycled loop:

1. level 0: fill_patch_single_level (periodic images and walls), fluxes, update, and
   FluxRegister.crse_init with the coarse fluxes;
2. level 1, twice with half the step: fill_patch_two_levels (fine neighbours where they
   exist, else the coarse level interpolated in time between the old and new coarse
   states and in space by cell_cons_interp), fluxes, update, FluxRegister.fine_add;
3. reflux into the coarse cells beside the interface, then average_down.

It prints the initial mass sum(phi V) of the coarse level, the mass every 10 steps, and its
relative change at the end, and exits non-zero if that exceeds 1e-13. Then it writes a
two-level plotfile, reads it back and prints its path. The masses and maxima it prints are
the Rust example's to every digit; the relative changes, a few ulps of the mass, may differ
by one ulp: np.exp differs from the C library's exp (which Rust calls) by one ulp at a few
per cent of the initial points. With the C library's exp the two programs' states are equal
bit for bit.

Uses the installed package (`bash scripts/build-python.sh`). Environment:
AMREX_RS_TWO_LEVEL_STEPS (coarse steps, default 40) and TWO_LEVEL_PLOTFILE (the plotfile
folder, default target/two-level-py/plt_two_level).
"""
import os
import sys
from pathlib import Path

import numpy as np

import amrex_rs as amr

N, MAX_GRID, RATIO = 64, 32, 2
STEPS = int(os.environ.get("AMREX_RS_TWO_LEVEL_STEPS", "40"))
U = (0.0, 1.0, 0.5)  # advection velocity: none across the walls (x), diagonal in y and z
D = 2e-3  # diffusion coefficient
MAX_DRIFT = 1e-13
PROB_LO, PROB_HI = (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)  # the unit cube


def gaussian(x, y, z):
    """The initial state: a Gaussian centred below the fine region in y, so that it is
    carried into it."""
    c = (0.45, 0.2, 0.4)
    r2 = (x - c[0]) ** 2 + (y - c[1]) ** 2 + (z - c[2]) ** 2
    return np.exp(-r2 / (2.0 * (0.06 * 0.06)))


def face_boxes(ba, d):
    """The boxes of `ba` converted to faces normal to direction `d`."""
    t = amr.IndexType(*(e == d for e in range(3)))
    return amr.BoxArray([ba[i].convert(t) for i in range(len(ba))])


def along(d, s, other=slice(None)):
    """Index of a box view's (z, y, x) axes: `s` along direction d, `other` along the rest."""
    return tuple(s if e == d else other for e in (2, 1, 0))


class Level:
    """One level: its geometry, boundary conditions, face layouts and state."""

    def __init__(self, geom, ba):
        self.geom = geom
        t = amr.BCType
        walls_in_x = [t.foextrap, t.int_dir, t.int_dir]
        self.bc = amr.PhysBCFunct(geom, [amr.BCRec(lo=walls_in_x, hi=walls_in_x)])
        self.faces = [face_boxes(ba, d) for d in range(3)]
        self.state = amr.MultiFab(ba, amr.DistributionMapping(ba), 1, 0)
        lo, dx = geom.ProbLo(), geom.CellSize()
        for mfi in self.state:
            b = mfi.validbox()
            # Cell centres lo + dx (i + 1/2), broadcast to the (z, y, x) axes of the view.
            x, y, z = (lo[d] + dx[d] * (0.5 + np.arange(b.lo[d], b.hi[d] + 1)) for d in range(3))
            np.from_dlpack(self.state.array(mfi))[0] = gaussian(x, y[:, None], z[:, None, None])

    def with_ghosts(self):
        """A MultiFab on this level's layout with one ghost cell, for a filled state."""
        return amr.MultiFab(self.state.box_array(), self.state.dm(), 1, 1)

    def mass(self):
        dx = self.geom.CellSize()
        return self.state.sum(0) * dx[0] * dx[1] * dx[2]


def fluxes(q, level, d, dt):
    """The face fluxes of `q` (one ghost cell, filled) in direction d, times the face area
    and dt: what crosses each face during the step."""
    f = amr.MultiFab(level.faces[d], q.dm(), 1, 0)
    dx = level.geom.CellSize()
    area = 1.0
    for e in range(3):
        if e != d:
            area *= dx[e]
    u, k = U[d], D / dx[d]
    # The cells below and above each face (q has one ghost cell; the faces, none).
    left, right = along(d, slice(0, -1), slice(1, -1)), along(d, slice(1, None), slice(1, -1))
    for mfi in q:
        qa = np.from_dlpack(q.array(mfi))[0]
        lv, rv = qa[left], qa[right]
        upwind = lv if u >= 0.0 else rv
        np.from_dlpack(f.array(mfi))[0] = (u * upwind - k * (rv - lv)) * area * dt
    return f


def update(old, flux, level):
    """new = old - sum_d (F_hi - F_lo) / V over the valid cells."""
    new = amr.MultiFab(old.box_array(), old.dm(), 1, 0)
    dx = level.geom.CellSize()
    vol = dx[0] * dx[1] * dx[2]
    for mfi in old:
        div = None
        for d in range(3):
            f = np.from_dlpack(flux[d].array(mfi))[0]
            diff = f[along(d, slice(1, None))] - f[along(d, slice(None, -1))]
            div = diff if div is None else div + diff
        np.from_dlpack(new.array(mfi))[0] = np.from_dlpack(old.array(mfi))[0] - div / vol
    return new


def main():
    domain = amr.Box((0, 0, 0), (N - 1, N - 1, N - 1))
    cgeom = amr.Geometry(domain, amr.RealBox(PROB_LO, PROB_HI), amr.CoordSys.CoordType.cartesian, [0, 1, 1])
    fgeom = cgeom.refine(RATIO)
    cba = amr.BoxArray(domain, max_size=MAX_GRID)
    fine_region = amr.Box((N // 4,) * 3, (3 * N // 4 - 1,) * 3).refine(RATIO)
    fba = amr.BoxArray(fine_region, max_size=MAX_GRID)
    crse, fine = Level(cgeom, cba), Level(fgeom, fba)
    amr.average_down(fine.state, crse.state, 0, 1, RATIO)
    print(f"two levels: {N}^3 coarse cells in {len(cba)} boxes, {fine_region.length()[0]}^3 fine cells "
          f"in {len(fba)} boxes (ratio {RATIO}), NumPy {np.__version__} kernels on zero-copy views")

    dxf = fgeom.CellSize(0)
    umax = max(abs(u) for u in U)
    dt_fine = 0.5 * min(dxf / umax, dxf * dxf / (6.0 * D))
    dt = 2.0 * dt_fine
    interp = amr.cell_cons_interp
    m0 = crse.mass()
    time = 0.0
    print(f"initial mass {m0:.15e}, coarse dt {dt:.6e}")

    for step in range(1, STEPS + 1):
        fr = amr.FluxRegister(fba, fine.state.dm(), RATIO, 1, 1)
        # Level 0.
        q = crse.with_ghosts()
        amr.fill_patch_single_level(q, time, [crse.state], [time], 0, 0, 1, cgeom, crse.bc, 0)
        cflux = [fluxes(q, crse, d, dt) for d in range(3)]
        for d, f in enumerate(cflux):
            fr.crse_init(f, d, 0, 0, 1, -1.0, amr.FluxRegister.FrOp.COPY)
        crse_new = update(crse.state, cflux, crse)

        # Level 1, subcycled: two steps of dt/2 with coarse ghost data interpolated in time
        # between the old and the new coarse states.
        for sub in range(2):
            t = time + sub * dt_fine
            q = fine.with_ghosts()
            amr.fill_patch_two_levels(q, t, [crse.state, crse_new], [time, time + dt], [fine.state], [t],
                                      0, 0, 1, cgeom, fgeom, crse.bc, 0, fine.bc, 0, RATIO, interp)
            fflux = [fluxes(q, fine, d, dt_fine) for d in range(3)]
            for d, f in enumerate(fflux):
                fr.fine_add(f, d, 0, 0, 1, 1.0)
            fine.state = update(fine.state, fflux, fine)

        # Synchronise the levels: reflux, then average the fine level down.
        crse.state = crse_new
        fr.reflux(crse.state, 1.0, 0, 0, 1, cgeom)
        amr.average_down(fine.state, crse.state, 0, 1, RATIO)
        time += dt
        if step % 10 == 0:
            m = crse.mass()
            print(f"step {step:3}  time {time:.6f}  mass {m:.15e}  relative change {(m - m0) / m0:+.3e}  "
                  f"max {crse.state.max(0):.12f}")

    drift = abs(crse.mass() - m0) / m0
    print(f"relative change of mass after {STEPS} steps: {drift:.3e} (must be <= {MAX_DRIFT:g})")
    if not drift <= MAX_DRIFT:
        sys.exit(f"mass not conserved: relative change {drift:e}")

    default = Path(__file__).resolve().parent.parent / "target" / "two-level-py" / "plt_two_level"
    out = Path(os.environ.get("TWO_LEVEL_PLOTFILE", default))
    out.parent.mkdir(parents=True, exist_ok=True)
    amr.write_multi_level_plotfile(str(out), [crse.state, fine.state], ["phi"], [RATIO], domain=domain,
                                   prob_lo=PROB_LO, prob_hi=PROB_HI, time=time,
                                   steps=[STEPS, RATIO * STEPS])
    pf = amr.Plotfile(str(out))
    print(f"two-level plotfile {out}: {pf.nlevels} levels, finest level sum {pf.read_level(1).sum(0):.15e}")


if __name__ == "__main__":
    main()
