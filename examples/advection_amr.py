"""AMReX's Advection_AmrCore tutorial ("AMR101") driven from Python: a subclass of
`amrex_rs.AmrCore` whose callbacks (error_est, make_new_level_from_scratch, ...) and
whose time step are written with NumPy on zero-copy views, and whose grids the package's
regrid makes. The same numerics as examples/advection_amr.rs, operation for operation.

    python examples/advection_amr.py INPUTS [key=value ...]

reads the tutorial's inputs file (through `amr.initialize` and `ParmParse`), prints what
the tutorial prints at `amr.v = 1`, and writes the `plt*` plotfiles (and, with
`amr.chk_int > 0`, the `chk*` checkpoints) into the current directory. Walls (foextrap)
where `geometry.is_periodic` is 0. `adv.do_subcycle = 0` advances every level with the
coarse time step (the fine fluxes averaged onto the coarse faces beneath them, as the
tutorial's `AdvancePhiAllLevels`). Checkpoints are the tutorial's, byte for byte the
Rust port's and AMReX's: one right after the initial data and one every `amr.chk_int`
coarse steps; `amr.restart = chkNNNNN` starts from one (AMReX's, either port's) and goes
on as the run that wrote it would have. python-tests/test_amr_core.py and
python-tests/test_checkpoint.py run it against AMReX's output and the Rust port's.

The stream function and the initial Gaussian use Python's `math` (the C library's sin,
cos and exp, as the Rust port and AMReX), so the two ports compute the same numbers.
"""
import math
import sys

import numpy as np

import amrex_rs as amr

NUM_GROW = 3


def box_slices(lo, box, shift=(0, 0, 0)):
    """The (k, j, i) slices of the cells of `box` (a (lo, hi) pair of tuples), shifted by
    `shift`, in an array whose first cell is `lo` (i, j, k)."""
    blo, bhi = box
    return tuple(slice(blo[d] + shift[d] - lo[d], bhi[d] + shift[d] - lo[d] + 1) for d in (2, 1, 0))


class Field:
    """A NumPy array over a box: `a[k, j, i]` is cell (i, j, k) of the box from `lo`."""

    def __init__(self, lo, a):
        self.lo, self.a = tuple(lo), a

    def at(self, box, shift=(0, 0, 0)):
        return self.a[box_slices(self.lo, box, shift)]


def grow_dir(box, d, n):
    lo, hi = list(box[0]), list(box[1])
    lo[d] -= n
    hi[d] += n
    return (tuple(lo), tuple(hi))


def grow(box, n):
    return (tuple(x - n for x in box[0]), tuple(x + n for x in box[1]))


def faces(box, d):
    lo, hi = box[0], list(box[1])
    hi[d] += 1
    return (lo, tuple(hi))


def unit(d, s=1):
    return tuple(s if e == d else 0 for e in range(3))


def add(a, b):
    return tuple(x + y for x, y in zip(a, b))


def empty(box):
    n = [box[1][d] - box[0][d] + 1 for d in range(3)]
    return Field(box[0], np.zeros((n[2], n[1], n[0])))


def slopes(q, gbx, d):
    """The tutorial's limited 2nd-order slopes on gbx grown in d, then 4th-order on gbx."""
    e, m = unit(d), unit(d, -1)

    def limiter(b):
        dlft = q.at(b) - q.at(b, m)
        drgt = q.at(b, e) - q.at(b)
        dcen = 0.5 * (dlft + drgt)
        dsgn = np.copysign(1.0, dcen)
        dslop = 2.0 * np.where(np.abs(dlft) < np.abs(drgt), np.abs(dlft), np.abs(drgt))
        dlim = np.where(dlft * drgt >= 0.0, dslop, 0.0)
        return dcen, dsgn, dlim

    s2box = grow_dir(gbx, d, 1)
    dcen, dsgn, dlim = limiter(s2box)
    s2 = Field(s2box[0], dsgn * np.minimum(dlim, np.abs(dcen)))
    dcen, dsgn, dlim = limiter(gbx)
    dq1 = 4.0 / 3.0 * dcen - (1.0 / 6.0) * (s2.at(gbx, e) + s2.at(gbx, m))
    return Field(gbx[0], dsgn * np.minimum(dlim, np.abs(dq1)))


def fab_fluxes(q, vel, bx, dtdx):
    """The face fluxes u*phi of one fab over bx (the tutorial's CTU scheme), per direction."""
    gbx = grow(bx, 1)
    ph = []
    for d in range(3):
        s = slopes(q, gbx, d)
        fb = faces(grow_dir(gbx, d, -1), d)
        m = unit(d, -1)
        u = vel[d].at(fb)
        neg = q.at(fb) - s.at(fb) * (0.5 + 0.5 * dtdx[d] * u)
        pos = q.at(fb, m) + s.at(fb, m) * (0.5 - 0.5 * dtdx[d] * u)
        ph.append(Field(fb[0], np.where(u < 0.0, neg, pos)))

    def trans(d, t):
        third = 3 - d - t
        fb = faces(grow_dir(bx, third, 1), d)
        md, et = unit(d, -1), unit(t)
        vd, vt = vel[d], vel[t]

        def branch(c):
            return ph[d].at(fb) - dtdx[t] / 3.0 * (
                0.5 * (vt.at(fb, add(c, et)) + vt.at(fb, c)) * (ph[t].at(fb, add(c, et)) - ph[t].at(fb, c)))

        return Field(fb[0], np.where(vd.at(fb) < 0.0, branch((0, 0, 0)), branch(md)))

    tr = {(d, t): trans(d, t) for d in range(3) for t in range(3) if d != t}
    out = []
    for d in range(3):
        a, b = [e for e in range(3) if e != d]
        pa, pb = tr[(a, b)], tr[(b, a)]
        fb = faces(bx, d)
        md, ea, eb = unit(d, -1), unit(a), unit(b)
        u = vel[d].at(fb)

        def branch(c):
            return u * (ph[d].at(fb)
                        - 0.5 * dtdx[a] * (0.5 * (vel[a].at(fb, add(c, ea)) + vel[a].at(fb, c))
                                           * (pa.at(fb, add(c, ea)) - pa.at(fb, c)))
                        - 0.5 * dtdx[b] * (0.5 * (vel[b].at(fb, add(c, eb)) + vel[b].at(fb, c))
                                           * (pb.at(fb, add(c, eb)) - pb.at(fb, c))))

        out.append(Field(fb[0], np.where(u < 0.0, branch((0, 0, 0)), branch(md))))
    return out


def conservative(q, fl, bx, dtdx):
    """phi_new over bx from phi_old and the face fluxes (the tutorial's `conservative`)."""
    return q.at(bx) + ((fl[0].at(bx) - fl[0].at(bx, unit(0))) * dtdx[0]
                       + (fl[1].at(bx) - fl[1].at(bx, unit(1))) * dtdx[1]
                       + (fl[2].at(bx) - fl[2].at(bx, unit(2))) * dtdx[2])


def g10(x):
    """C++'s default stream output at 10 significant digits, as AMReX prints."""
    return f"{x:.10g}"


def view(mf, mfi):
    """The (k, j, i) NumPy view of component 0 of mf's fab (ghost cells included)."""
    ng, lo = mf.n_grow, mfi.validbox().lo
    return Field(tuple(lo[d] - ng[d] for d in range(3)), np.from_dlpack(mf.array(mfi))[0])


def box_of(mfi):
    b = mfi.validbox()
    return (tuple(b.lo), tuple(b.hi))


def face_boxes(ba, d):
    """The boxes of `ba` converted to faces normal to direction `d`."""
    t = amr.IndexType(*(e == d for e in range(3)))
    return amr.BoxArray([ba[i].convert(t) for i in range(len(ba))])


class AmrCoreAdv(amr.AmrCore):
    def __init__(self):
        super().__init__()  # geometry.* and amr.* from the inputs table
        pp, amr_pp, adv = amr.ParmParse(""), amr.ParmParse("amr"), amr.ParmParse("adv")
        self.max_step = pp.query("max_step", 2**31 - 1)
        self.stop_time = pp.query("stop_time", sys.float_info.max)
        self.regrid_int = amr_pp.query("regrid_int", 2)
        self.plot_file = amr_pp.query("plot_file", "plt")
        self.plot_int = amr_pp.query("plot_int", -1)
        self.chk_file = amr_pp.query("chk_file", "chk")
        self.chk_int = amr_pp.query("chk_int", -1)
        self.restart = amr_pp.query("restart", "")
        self.verbose = amr_pp.query("v", 0)
        self.cfl = adv.query("cfl", 0.7)
        self.do_reflux = adv.query("do_reflux", 1) != 0
        self.do_subcycle = adv.query("do_subcycle", 1) != 0
        self.phierr = list(adv.queryarr("phierr", float)[1])
        nlev = self.max_level + 1
        self.nsubsteps = [1] * nlev
        if self.do_subcycle:
            self.nsubsteps = [1] + [self.max_ref_ratio(lev - 1) for lev in range(1, nlev)]
        self.istep = [0] * nlev
        self.t_new, self.t_old, self.dt = [0.0] * nlev, [-1.0e100] * nlev, [1.0e100] * nlev
        self.last_regrid_step = [0] * nlev
        self.phi_new, self.phi_old = [None] * nlev, [None] * nlev
        self.facevel, self.flux_reg = [None] * nlev, [None] * (nlev + 1)
        t = amr.BCType
        g0 = self.geom(0)
        kinds = [t.int_dir if g0.isPeriodic(d) else t.foextrap for d in range(3)]
        self.bcs = [amr.PhysBCFunct(self.geom(lev), [amr.BCRec(lo=kinds, hi=kinds)]) for lev in range(nlev)]

    def say(self, s):
        # AMReX's Print(): the I/O rank only, under mpirun.
        if amr.ParallelDescriptor.IOProcessor():
            print(s, flush=True)

    # ---- level data ------------------------------------------------------------------
    def define_level(self, lev, time, ba, dm, ng):
        self.t_new[lev], self.t_old[lev] = time, time - 1.0e200
        self.alloc_level(lev, ba, dm, ng)
        return amr.MultiFab(ba, dm, 1, ng)

    def alloc_level(self, lev, ba, dm, ng):
        """The old state, face velocities and flux register of a level on ba/dm."""
        self.phi_old[lev] = amr.MultiFab(ba, dm, 1, ng)
        self.facevel[lev] = [amr.MultiFab(face_boxes(ba, d), dm, 1, 1) for d in range(3)]
        if lev > 0 and self.do_reflux:
            self.flux_reg[lev] = amr.FluxRegister(ba, dm, self.ref_ratio(lev - 1), lev, 1)

    def get_data(self, lev, time):
        tn, to = self.t_new[lev], self.t_old[lev]
        teps = (tn - to) * 1.0e-3
        if tn - teps < time < tn + teps:
            return [self.phi_new[lev]], [tn]
        if to - teps < time < to + teps:
            return [self.phi_old[lev]], [to]
        return [self.phi_old[lev], self.phi_new[lev]], [to, tn]

    def fill_patch(self, lev, time, mf):
        if lev == 0:
            smf, st = self.get_data(0, time)
            amr.fill_patch_single_level(mf, time, smf, st, 0, 0, 1, self.geom(0), self.bcs[0], 0)
        else:
            cmf, ct = self.get_data(lev - 1, time)
            fmf, ft = self.get_data(lev, time)
            amr.fill_patch_two_levels(mf, time, cmf, ct, fmf, ft, 0, 0, 1, self.geom(lev - 1), self.geom(lev),
                                      self.bcs[lev - 1], 0, self.bcs[lev], 0, self.ref_ratio(lev - 1),
                                      amr.cell_cons_interp)

    # ---- AmrCore's callbacks ---------------------------------------------------------
    def error_est(self, lev, tags, time, ngrow):
        if lev >= len(self.phierr):
            return
        state = self.phi_new[lev]
        ng = tags.n_grow
        for mfi in state:
            bx = box_of(mfi)
            t = np.from_dlpack(tags.array(mfi))[0]
            tlo = tuple(bx[0][d] - ng[d] for d in range(3))
            view_t = t[box_slices(tlo, bx)]
            view_t[view(state, mfi).at(bx) > self.phierr[lev]] = amr.TagBoxArray.SET

    def make_new_level_from_scratch(self, lev, time, ba, dm):
        state = self.define_level(lev, time, ba, dm, 0)
        g = self.geom(lev)
        lo, dx = g.ProbLo(), g.CellSize()
        for mfi in state:
            bx = box_of(mfi)
            x = [lo[0] + (0.5 + i) * dx[0] for i in range(bx[0][0], bx[1][0] + 1)]
            y = [lo[1] + (0.5 + j) * dx[1] for j in range(bx[0][1], bx[1][1] + 1)]
            plane = np.array([[1.0 + math.exp(-(((xi - 0.5) * (xi - 0.5) + (yj - 0.75) * (yj - 0.75)) / 0.01))
                               for xi in x] for yj in y])
            view(state, mfi).at(bx)[...] = plane[None, :, :]
        self.phi_new[lev] = state

    def make_new_level_from_coarse(self, lev, time, ba, dm):
        ng = self.phi_new[lev - 1].n_grow[0]
        state = self.define_level(lev, time, ba, dm, ng)
        cmf, _ = self.get_data(lev - 1, time)
        amr.interp_from_coarse_level(state, time, cmf[0], 0, 0, 1, self.geom(lev - 1), self.geom(lev),
                                     self.bcs[lev - 1], 0, self.bcs[lev], 0, self.ref_ratio(lev - 1),
                                     amr.cell_cons_interp)
        self.phi_new[lev] = state

    def remake_level(self, lev, time, ba, dm):
        ng = self.phi_new[lev].n_grow[0]
        new_state = amr.MultiFab(ba, dm, 1, ng)
        self.fill_patch(lev, time, new_state)
        self.define_level(lev, time, ba, dm, ng)
        self.phi_new[lev] = new_state

    def clear_level(self, lev):
        self.phi_new[lev] = self.phi_old[lev] = self.flux_reg[lev] = None

    # ---- the time step ---------------------------------------------------------------
    def define_velocity(self, lev, time):
        g = self.geom(lev)
        lo, dx = g.ProbLo(), g.CellSize()
        for d, mf in enumerate(self.facevel[lev]):
            for mfi in mf:
                f = view(mf, mfi)
                nz, ny, nx = f.a.shape
                i0, j0 = f.lo[0], f.lo[1]
                ci = range(i0 - 1, i0 + nx + 1)
                cj = range(j0 - 1, j0 + ny + 1)
                sx = np.array([math.sin(math.pi * (dx[0] * (0.5 + i) + lo[0])) for i in ci])
                sy = np.array([math.sin(math.pi * (dx[1] * (0.5 + j) + lo[1])) for j in cj])
                psi = sx[None, :] * sx[None, :] * (sy[:, None] * sy[:, None]) * math.cos(math.pi * time / 2.0) * 1.0 / math.pi
                # psi[j - (j0 - 1), i - (i0 - 1)]
                if d == 0:
                    v = -((psi[2:, 1:-1] + psi[2:, :-2]) - (psi[:-2, 1:-1] + psi[:-2, :-2])) * (0.25 / dx[1])
                elif d == 1:
                    v = ((psi[1:-1, 2:] + psi[:-2, 2:]) - (psi[1:-1, :-2] + psi[:-2, :-2])) * (0.25 / dx[0])
                else:
                    v = np.zeros((ny, nx))
                f.a[...] = v[None, :, :]

    def est_time_step(self, lev, time):
        self.define_velocity(lev, time if time == 0.0 else time + 0.5 * self.dt[lev])
        dx = self.geom(lev).CellSize()
        dt_est = sys.float_info.max
        for d, v in enumerate(self.facevel[lev]):
            est = v.norminf(0, 0)
            dt_est = min(dt_est, dx[d] / est if est != 0.0 else math.inf)  # IEEE: x / 0 = inf
        return dt_est * self.cfl

    def compute_dt(self):
        finest = self.finest_level
        dt_tmp = [self.est_time_step(lev, self.t_new[lev]) for lev in range(finest + 1)]
        dt_0, n_factor = dt_tmp[0], 1
        for lev in range(finest + 1):
            dt_tmp[lev] = min(dt_tmp[lev], 1.1 * self.dt[lev])
            n_factor *= self.nsubsteps[lev]
            dt_0 = min(dt_0, n_factor * dt_tmp[lev])
        if self.t_new[0] + dt_0 > self.stop_time - 1.0e-3 * dt_0:
            dt_0 = self.stop_time - self.t_new[0]
        self.dt[0] = dt_0
        for lev in range(1, finest + 1):
            self.dt[lev] = self.dt[lev - 1] / self.nsubsteps[lev]

    def advance_phi_at_level(self, lev, time, dt_lev):
        self.phi_old[lev], self.phi_new[lev] = self.phi_new[lev], self.phi_old[lev]
        old = self.phi_old[lev]
        dx = self.geom(lev).CellSize()
        dtdx = [dt_lev / dx[d] for d in range(3)]
        sborder = amr.MultiFab(old.box_array(), old.dm(), 1, NUM_GROW)
        self.fill_patch(lev, time, sborder)
        new = amr.MultiFab(old.box_array(), old.dm(), 1, old.n_grow[0])
        fluxes = None
        reflux = self.do_reflux and (lev < self.finest_level or lev > 0)
        if reflux:
            fluxes = [amr.MultiFab(f.box_array(), old.dm(), 1, 0) for f in self.facevel[lev]]
            area = [dt_lev * dx[1] * dx[2], dt_lev * dx[0] * dx[2], dt_lev * dx[0] * dx[1]]
        for mfi in sborder:
            bx = box_of(mfi)
            q = view(sborder, mfi)
            vel = [view(v, mfi) for v in self.facevel[lev]]
            fl = fab_fluxes(q, vel, bx, dtdx)
            view(new, mfi).at(bx)[...] = conservative(q, fl, bx, dtdx)
            if reflux:
                for d in range(3):
                    fb = faces(bx, d)
                    view(fluxes[d], mfi).at(fb)[...] = fl[d].at(fb) * area[d]
        if reflux:
            if lev < self.finest_level and self.flux_reg[lev + 1] is not None:
                for d in range(3):
                    self.flux_reg[lev + 1].crse_init(fluxes[d], d, 0, 0, 1, -1.0, amr.FluxRegister.FrOp.COPY)
            if lev > 0 and self.flux_reg[lev] is not None:
                for d in range(3):
                    self.flux_reg[lev].fine_add(fluxes[d], d, 0, 0, 1, 1.0)
        self.phi_new[lev] = new

    def time_step_with_subcycling(self, lev, time):
        if (self.regrid_int > 0 and lev < self.max_level and self.istep[lev] > self.last_regrid_step[lev]
                and self.istep[lev] % self.regrid_int == 0):
            old_finest = self.finest_level
            self.regrid(lev, time)
            for k in range(lev, self.finest_level + 1):
                self.last_regrid_step[k] = self.istep[k]
            for k in range(old_finest + 1, self.finest_level + 1):
                self.dt[k] = self.dt[k - 1] / self.max_ref_ratio(k - 1)
        if self.verbose > 0:
            self.say(f"[Level {lev} step {self.istep[lev] + 1}] ADVANCE with time = {g10(self.t_new[lev])} "
                     f"dt = {g10(self.dt[lev])}")
        self.t_old[lev] = self.t_new[lev]
        self.t_new[lev] += self.dt[lev]
        self.define_velocity(lev, self.t_old[lev] + 0.5 * self.dt[lev])
        self.advance_phi_at_level(lev, time, self.dt[lev])
        self.istep[lev] += 1
        if self.verbose > 0:
            self.say(f"[Level {lev} step {self.istep[lev]}] Advanced {self.count_cells(lev)} cells")
        if lev < self.finest_level:
            for i in range(1, self.nsubsteps[lev + 1] + 1):
                self.time_step_with_subcycling(lev + 1, time + (i - 1) * self.dt[lev + 1])
            if self.do_reflux:
                self.flux_reg[lev + 1].reflux(self.phi_new[lev], 1.0, 0, 0, 1, self.geom(lev))
            self.average_down_to(lev)

    def time_step_no_subcycling(self, time):
        if self.max_level > 0 and self.regrid_int > 0 and self.istep[0] % self.regrid_int == 0:
            self.regrid(0, time)
        finest = self.finest_level
        if self.verbose > 0:
            for lev in range(finest + 1):
                self.say(f"[Level {lev} step {self.istep[lev] + 1}] ADVANCE with time = {g10(self.t_new[lev])} "
                         f"dt = {g10(self.dt[0])}")
        # The velocities at the middle of the step (the tutorial's DefineVelocityAllLevels).
        for lev in range(finest + 1):
            self.define_velocity(lev, time + 0.5 * self.dt[0])
        self.advance_phi_all_levels(time, self.dt[0])
        for lev in reversed(range(finest)):
            self.average_down_to(lev)
        for lev in range(finest + 1):
            self.istep[lev] += 1
        if self.verbose > 0:
            for lev in range(finest + 1):
                self.say(f"[Level {lev} step {self.istep[lev]}] Advanced {self.count_cells(lev)} cells")

    def advance_phi_all_levels(self, time, dt):
        """Every level one step of dt (the tutorial's AdvancePhiAllLevels): the fluxes on
        every level, the fine fluxes averaged onto the coarse faces beneath them (with the
        coarse level's periodicity), then the updates."""
        finest = self.finest_level
        all_fluxes = []
        for lev in range(finest + 1):
            self.phi_old[lev], self.phi_new[lev] = self.phi_new[lev], self.phi_old[lev]
            self.t_old[lev] = self.t_new[lev]
            self.t_new[lev] += dt
            dx = self.geom(lev).CellSize()
            dtdx = [dt / dx[d] for d in range(3)]
            old = self.phi_old[lev]
            sborder = amr.MultiFab(old.box_array(), old.dm(), 1, NUM_GROW)
            self.fill_patch(lev, time, sborder)
            fluxes = [amr.MultiFab(f.box_array(), old.dm(), 1, 0) for f in self.facevel[lev]]
            for mfi in sborder:
                bx = box_of(mfi)
                vel = [view(v, mfi) for v in self.facevel[lev]]
                fl = fab_fluxes(view(sborder, mfi), vel, bx, dtdx)
                for d in range(3):
                    fb = faces(bx, d)
                    view(fluxes[d], mfi).at(fb)[...] = fl[d].at(fb)
            all_fluxes.append(fluxes)
        for lev in reversed(range(1, finest + 1)):
            for d in range(3):
                amr.average_down_faces(all_fluxes[lev][d], all_fluxes[lev - 1][d], self.ref_ratio(lev - 1),
                                       self.geom(lev - 1))
        for lev, fl in enumerate(all_fluxes):
            dx = self.geom(lev).CellSize()
            dtdx = [dt / dx[d] for d in range(3)]
            old = self.phi_old[lev]
            new = amr.MultiFab(old.box_array(), old.dm(), 1, old.n_grow[0])
            for mfi in old:
                bx = box_of(mfi)
                view(new, mfi).at(bx)[...] = conservative(view(old, mfi), [view(f, mfi) for f in fl], bx, dtdx)
            self.phi_new[lev] = new

    def average_down_to(self, lev):
        amr.average_down(self.phi_new[lev + 1], self.phi_new[lev], self.geom(lev + 1), self.geom(lev), 0, 1,
                         self.ref_ratio(lev))

    def write_plot_file(self):
        name = f"{self.plot_file}{self.istep[0]:05d}"
        self.say(f"Writing plotfile {name}")
        finest = self.finest_level
        g = self.geom(0)
        amr.write_multi_level_plotfile(name, self.phi_new[:finest + 1], ["phi"],
                                       [self.ref_ratio(lev) for lev in range(finest)], domain=g.Domain(),
                                       prob_lo=tuple(g.ProbLo()), prob_hi=tuple(g.ProbHi()), time=self.t_new[0],
                                       steps=self.istep[:finest + 1])

    def write_checkpoint_file(self):
        """The tutorial's WriteCheckpointFile: chkNNNNN (the coarse step) with the steps,
        time steps and times of every level in its Header, and each level's phi."""
        name = f"{self.chk_file}{self.istep[0]:05d}"
        self.say(f"Writing checkpoint {name}")
        finest = self.finest_level
        amr.write_checkpoint(name, {"phi": self.phi_new[:finest + 1]}, [self.istep, self.dt, self.t_new],
                             title="Checkpoint file for AmrCoreAdv")

    def read_checkpoint_file(self):
        """The tutorial's ReadCheckpointFile: the steps, time steps and times of every level
        and the grids from the Header (each level on a new distribution map over this run's
        ranks), phi from each level's data. The old states, face velocities and flux
        registers (not saved) are made afresh."""
        name = self.restart
        self.say(f"Restart from checkpoint {name}")
        header = amr.read_checkpoint_header(name)
        nlev = self.max_level + 1
        istep, dt, t_new = header.ints(0), header.reals(1), header.reals(2)
        for what, n in (("steps", len(istep)), ("dt", len(dt)), ("t_new", len(t_new))):
            if n > nlev or n < len(header.grids):
                raise ValueError(f"{name}/Header: {n} values of {what}, expected one per level of the checkpoint "
                                 f"({len(header.grids)}) and at most one per level amr.max_level = {nlev - 1} allows")
        self.restore_grids(header.grids)
        self.istep[:len(istep)] = istep
        self.dt[:len(dt)] = [float(x) for x in dt]
        self.t_new[:len(t_new)] = [float(x) for x in t_new]
        for lev, ba in enumerate(header.grids):
            dm = self.distribution_map(lev)
            self.alloc_level(lev, ba, dm, 0)
            phi = amr.read_checkpoint_multifab(name, lev, "phi", ba, dm)
            if phi.ncomp != 1 or tuple(phi.n_grow) != (0, 0, 0):
                raise ValueError(f"{name}/Level_{lev}/phi_H: {phi.ncomp} components and {tuple(phi.n_grow)} ghost "
                                 f"cells, expected 1 and 0")
            self.phi_new[lev] = phi

    def init_data(self):
        """The tutorial's InitData: the hierarchy from scratch (then averaged down, and
        checkpointed when chk_int > 0) or from amr.restart, then a plotfile when
        plot_int > 0."""
        if not self.restart:
            self.init_from_scratch(0.0)
            for lev in reversed(range(self.finest_level)):
                self.average_down_to(lev)
            if self.chk_int > 0:
                self.write_checkpoint_file()
        else:
            self.read_checkpoint_file()
        if self.plot_int > 0:
            self.write_plot_file()

    def evolve(self):
        cur_time, last_plot = self.t_new[0], 0
        step = self.istep[0]
        while step < self.max_step and cur_time < self.stop_time:
            self.say(f"\nCoarse STEP {step + 1} starts ...")
            self.compute_dt()
            if self.do_subcycle:
                self.time_step_with_subcycling(0, cur_time)
            else:
                self.time_step_no_subcycling(cur_time)
            cur_time += self.dt[0]
            self.say(f"Coarse STEP {step + 1} ends. TIME = {g10(cur_time)} DT = {g10(self.dt[0])} "
                     f"Sum(Phi) = {g10(self.phi_new[0].sum(0))}")
            for lev in range(self.finest_level + 1):
                self.t_new[lev] = cur_time
            if self.plot_int > 0 and (step + 1) % self.plot_int == 0:
                last_plot = step + 1
                self.write_plot_file()
            if self.chk_int > 0 and (step + 1) % self.chk_int == 0:
                self.write_checkpoint_file()
            step += 1
            if cur_time >= self.stop_time - 1.0e-6 * self.dt[0]:
                break
        if self.plot_int > 0 and self.istep[0] > last_plot:
            self.write_plot_file()


def main(argv):
    if not argv:
        sys.exit("usage: advection_amr.py INPUTS [key=value ...]")
    amr.initialize(argv)
    try:
        sim = AmrCoreAdv()
        if sim.verbose > 0:
            sim.say("Successfully read inputs file ... ")
        sim.init_data()
        sim.evolve()
    finally:
        amr.finalize()


if __name__ == "__main__":
    main(sys.argv[1:])
