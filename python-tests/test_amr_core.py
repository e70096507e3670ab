"""Regridding from Python: `AmrInfo`, `AmrMesh`, `TagBoxArray` and an `AmrCore` subclass
whose callbacks the package's regrid calls in AMReX's order; and the Python port of
AMReX's Advection_AmrCore tutorial (examples/advection_amr.py) against AMReX's own runs
(the shipped inputs; without subcycling; a small base grid with two thresholds) and
against the Rust port (examples/advection_amr.rs, itself bit for bit AMReX's run) on a
short run with regrids from both levels. Its checkpoints and restarts: test_checkpoint.py."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

amr = pytest.importorskip("amrex_rs")
ROOT = Path(__file__).resolve().parent.parent
REF = Path(os.environ.get("AMREX_ADVECTION_REF", ROOT.parent / "shared" / "data" / "amrex-advection"))
# AMReX's runs without subcycling (nosubcycle/) and on a 32x32x8 base grid (phierr2/).
MORE = ROOT.parent / "shared" / "data" / "amrex-advection-more"
PORT = ROOT / "examples" / "advection_amr.py"


def geom(n=(32, 32, 32), periodic=(0, 0, 0)):
    dom = amr.Box((0, 0, 0), tuple(x - 1 for x in n))
    return amr.Geometry(dom, amr.RealBox((0, 0, 0), (1, 1, 1)), amr.CoordSys.CoordType.cartesian, list(periodic))


def info(max_level=2, bf=4, mgs=16):
    i = amr.AmrInfo()
    i.max_level = max_level
    i.blocking_factor = [bf]
    i.max_grid_size = [mgs]
    return i


def test_amr_info_defaults_and_fields():
    i = amr.AmrInfo()
    assert (i.max_level, i.grid_eff, i.n_proper, i.check_input, i.refine_grid_layout) == (0, 0.7, 1, True, True)
    assert [tuple(v) for v in i.blocking_factor] == [(8, 8, 8)]
    i.ref_ratio = [2, (4, 4, 2)]
    assert [tuple(v) for v in i.ref_ratio] == [(2, 2, 2), (4, 4, 2)]
    with pytest.raises(TypeError):
        i.ref_ratio = ["two"]


def test_check_input_rules_raise_value_error():
    # AMReX's checkInput: each rule its own message.
    with pytest.raises(ValueError, match="domain size not divisible by the blocking factor"):
        amr.AmrMesh(geom((30, 32, 32)), info(1, bf=4))
    bad = info(1, bf=4)
    bad.blocking_factor = [4, 16]
    with pytest.raises(ValueError, match="blocking factors vary too much"):
        amr.AmrMesh(geom(), bad)
    bad = info(1, bf=4, mgs=10)
    with pytest.raises(ValueError, match="max_grid_size not divisible"):
        amr.AmrMesh(geom(), bad)
    bad = info(1)
    bad.blocking_factor = [6]
    with pytest.raises(ValueError, match="power of 2"):
        amr.AmrMesh(geom(), bad)
    with pytest.raises(ValueError, match="either no arguments"):
        amr.AmrMesh(geom())


def test_amr_mesh_from_the_inputs_table():
    amr.initialize(["amr.n_cell=64 64 8", "amr.max_level=1", "amr.max_grid_size=16",
                    "geometry.prob_lo=0 0 0", "geometry.prob_hi=1 1 0.125", "geometry.is_periodic=1 1 1"])
    try:
        m = amr.AmrMesh()
        assert m.max_level == 1 and m.finest_level == -1
        assert m.geom(1).Domain().hi == (127, 127, 15)
        ba = m.make_base_grids()
        assert len(ba) == 16 and ba[0].hi == (15, 15, 7)
        with pytest.raises(IndexError):
            m.box_array(0)
    finally:
        amr.finalize()


class Ball(amr.AmrCore):
    """Tags a ball that moves with time; records every callback."""

    def __init__(self, g, i, fail=None):
        super().__init__(g, i)
        self.calls, self.fail, self.kept = [], fail, None
        self.centre = 0.3

    def error_est(self, lev, tags, time, ngrow):
        self.calls.append(("error_est", lev))
        if self.fail == "raise":
            raise KeyError("error_est refuses")
        self.kept = tags
        g = self.geom(lev)
        lo, dx = g.ProbLo(), g.CellSize()
        ng = tags.n_grow
        ba = self.box_array(lev)
        mf = amr.MultiFab(ba, self.distribution_map(lev), 1, 0)
        for mfi in mf:
            b = mfi.validbox()
            t = np.from_dlpack(tags.array(mfi))[0]
            x, y, z = (lo[d] + dx[d] * (0.5 + np.arange(b.lo[d], b.hi[d] + 1)) for d in range(3))
            r2 = (x - self.centre) ** 2 + (y[:, None] - 0.5) ** 2 + (z[:, None, None] - 0.5) ** 2
            inner = t[ng[2]:t.shape[0] - ng[2], ng[1]:t.shape[1] - ng[1], ng[0]:t.shape[2] - ng[0]]
            inner[r2 < 0.02] = amr.TagBoxArray.SET

    def make_new_level_from_scratch(self, lev, time, ba, dm):
        self.calls.append(("scratch", lev, len(ba)))

    def make_new_level_from_coarse(self, lev, time, ba, dm):
        self.calls.append(("coarse", lev, len(ba)))

    def remake_level(self, lev, time, ba, dm):
        # The mesh still has the old grids of lev while its data is remade.
        self.calls.append(("remake", lev, self.box_array(lev) == ba))

    def clear_level(self, lev):
        self.calls.append(("clear", lev))


def check_grids(core):
    """Every level above 0: inside the domain, aligned to and a multiple of the blocking
    factor (4), at most max_grid_size (16) long. (Proper nesting is checked on the Rust
    side, tests/amr_mesh.rs, on the same driver.)"""
    for lev in range(1, core.finest_level + 1):
        ba = core.box_array(lev)
        dom = core.geom(lev).Domain()
        for i in range(len(ba)):
            b = ba[i]
            assert all(dom.lo[d] <= b.lo[d] and b.hi[d] <= dom.hi[d] for d in range(3)), b
            assert all(b.lo[d] % 4 == 0 and (b.hi[d] + 1) % 4 == 0 for d in range(3)), b
            assert all(b.hi[d] - b.lo[d] + 1 <= 16 for d in range(3)), b


def test_subclass_builds_and_regrids_the_hierarchy():
    core = Ball(geom(), info())
    assert core.finest_level == -1
    core.init_from_scratch(0.0)
    assert core.finest_level == 2
    assert core.calls[0] == ("scratch", 0, len(core.box_array(0)))
    assert ("error_est", 0) in core.calls and ("scratch", 2, len(core.box_array(2))) in core.calls
    check_grids(core)
    # The tags object is taken back when error_est returns.
    with pytest.raises(RuntimeError, match="handed back"):
        core.kept.num_tags_local()
    core.calls.clear()
    core.centre = 0.6
    core.regrid(0, 0.1)
    kinds = [c[0] for c in core.calls]
    assert kinds[0] == "error_est" and "remake" in kinds, core.calls
    assert all(c[2] is False for c in core.calls if c[0] == "remake")
    check_grids(core)
    # The ball's centre cell on level 0 is refined.
    r = core.ref_ratio(0)
    fine = core.box_array(1)
    centre = amr.IntVect(19 * r[0], 16 * r[1], 16 * r[2])
    assert any(fine[i].contains(centre) for i in range(len(fine)))
    # Nothing tagged: the fine levels are cleared.
    core.centre = 10.0
    core.calls.clear()
    core.regrid(0, 0.2)
    assert core.finest_level == 0 and ("clear", 1) in core.calls and ("clear", 2) in core.calls


def test_a_python_exception_in_a_callback_is_raised_again():
    core = Ball(geom(), info(), fail="raise")
    with pytest.raises(KeyError, match="error_est refuses"):
        core.init_from_scratch(0.0)
    assert core.finest_level == 0

    class Missing(amr.AmrCore):
        pass

    with pytest.raises(NotImplementedError, match="make_new_level_from_scratch"):
        Missing(geom(), info()).init_from_scratch(0.0)


def exe_of(example, features=()):
    cmd = ["cargo", "build", "-q", "--release", "--example", example, "--message-format=json"]
    if features:
        cmd += ["--features", ",".join(features)]
    out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = json.loads(line)
        if m.get("reason") == "compiler-artifact" and m["target"]["name"] == example and m.get("executable"):
            return m["executable"]
    raise RuntimeError(f"no executable for {example}")


def compare_plotfiles(a_dir, b_dir, rtol=1e-12):
    a, b = amr.Plotfile(str(a_dir)), amr.Plotfile(str(b_dir))
    assert a.nlevels == b.nlevels
    for lev in range(a.nlevels):
        ma, mb = a.read_level(lev), b.read_level(lev)
        boxes = lambda ba: [(ba[i].lo, ba[i].hi) for i in range(len(ba))]
        assert boxes(ma.box_array()) == boxes(mb.box_array()), (a_dir, lev)
        for mfi in ma:
            x, y = np.from_dlpack(ma.array(mfi)), np.from_dlpack(mb.array(mfi))
            np.testing.assert_allclose(y, x, rtol=rtol, atol=0, err_msg=f"{b_dir} level {lev}")


def printed(text):
    """The lines AMReX (and both ports) print, without blank lines, AMReX's own start-up
    and closing lines (MPI's too, from an MPI build) and the Rust port's timing report."""
    skip = ("timing", "  ", "Initializing AMReX", "MPI initialized", "OMP initialized", "AMReX (", "Total Time")
    return [line for line in text.splitlines() if line and not line.startswith(skip)]


@pytest.mark.skipif(not (REF / "inputs").exists(), reason=f"no tutorial inputs at {REF}")
def test_python_port_matches_amrex(tmp_path):
    """Ten coarse steps of the tutorial's own inputs (regrids from level 0 and level 1):
    every line AMReX printed up to there, and plt00010 to 1e-12."""
    args = [str(REF / "inputs"), "max_step=10"]
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "advection_amr.py")] + args, cwd=tmp_path,
                         check=True, capture_output=True, text=True, timeout=600).stdout
    ref = printed((REF / "stdout.txt").read_text())
    got = printed(out)
    end = ref.index("Writing plotfile plt00010") + 1
    assert got == ref[:end]
    for step in ("plt00000", "plt00010"):
        compare_plotfiles(REF / step, tmp_path / step)


@pytest.mark.skipif(not (REF / "inputs").exists(), reason=f"no tutorial inputs at {REF}")
def test_python_port_matches_the_rust_port(tmp_path):
    """Two coarse steps with a regrid every step (so from level 1 in the first and from
    level 0 in the second): the Python port prints the Rust port's lines and writes its
    plotfiles to 1e-12 (the same grids, values equal)."""
    args = [str(REF / "inputs"), "max_step=2", "amr.regrid_int=1", "amr.plot_int=1"]
    rust_dir, py_dir = tmp_path / "rust", tmp_path / "py"
    rust_dir.mkdir()
    py_dir.mkdir()
    rust = subprocess.run([exe_of("advection_amr")] + args, cwd=rust_dir, check=True, capture_output=True,
                          text=True, timeout=300).stdout
    py = subprocess.run([sys.executable, str(ROOT / "examples" / "advection_amr.py")] + args, cwd=py_dir,
                        check=True, capture_output=True, text=True, timeout=600).stdout
    assert printed(py) == printed(rust)
    for step in ("plt00000", "plt00001", "plt00002"):
        compare_plotfiles(rust_dir / step, py_dir / step)


def run_port(args, cwd, timeout=600):
    """The Python port's stdout, run in `cwd`."""
    return subprocess.run([sys.executable, str(PORT)] + [str(a) for a in args], cwd=cwd, check=True,
                          capture_output=True, text=True, timeout=timeout).stdout


@pytest.mark.parametrize("case, args, plots", [
    # adv.do_subcycle = 0: every level one step of the coarse dt, the fine fluxes averaged
    # onto the coarse faces with the coarse level's periodicity (average_down_faces with a
    # Geometry), the velocities of the middle of the step; regrids at steps 1, 3, ...
    ("nosubcycle", ["max_step=10"], ["plt00000", "plt00010"]),
    # 32x32x8 cells, phierr 1.05 1.25: level 2's grids reach across the periodic edges.
    ("phierr2", [], ["plt00000", "plt00005", "plt00010"]),
])
def test_python_port_matches_amrex_on_more_cases(case, args, plots, tmp_path):
    """Ten coarse steps of AMReX's other two runs: every line AMReX printed up to the last
    plotfile compared, and those plotfiles to 1e-12."""
    ref_dir = MORE / case
    if not (ref_dir / "inputs").exists():
        pytest.skip(f"no AMReX reference run at {ref_dir}")
    out = run_port([ref_dir / "inputs"] + args, tmp_path)
    ref = printed((ref_dir / "stdout.txt").read_text())
    end = ref.index(f"Writing plotfile {plots[-1]}") + 1
    assert printed(out) == ref[:end]
    for plt in plots:
        compare_plotfiles(ref_dir / plt, tmp_path / plt)


def test_average_down_faces_with_the_coarse_geometry():
    """pyAMReX's `average_down_faces(fine, crse, ratio, geom)`: the means of the
    `ngcrse` form, and on a periodic domain the faces on its low and high sides (one
    face) get one value, whichever side's mean the copy lands last."""
    cdom = amr.Box((0, 0, 0), (15, 15, 15))
    cgeom = amr.Geometry(cdom, amr.RealBox((0, 0, 0), (1, 1, 1)), amr.CoordSys.CoordType.cartesian, [1, 1, 1])
    xface = amr.IndexType(True, False, False)

    def faces_of(ba):
        return amr.BoxArray([ba[i].convert(xface) for i in range(len(ba))])

    cba = amr.BoxArray(cdom, max_size=8)
    fba = amr.BoxArray(amr.Box((0, 0, 0), (31, 31, 31)), max_size=16)
    fine = amr.MultiFab(faces_of(fba), amr.DistributionMapping(fba), 1, 0)
    for mfi in fine:
        a = np.from_dlpack(fine.array(mfi))[0]
        lo = mfi.validbox().lo
        a[...] = (lo[0] + np.arange(a.shape[2]))[None, None, :].astype(float)  # the face's i
    plain = amr.MultiFab(faces_of(cba), amr.DistributionMapping(cba), 1, 0)
    periodic = amr.MultiFab(faces_of(cba), amr.DistributionMapping(cba), 1, 0)
    by_keyword = amr.MultiFab(faces_of(cba), amr.DistributionMapping(cba), 1, 0)
    for mf in (plain, periodic, by_keyword):
        mf.set_val(-1.0)
    amr.average_down_faces(fine, plain, 2)
    amr.average_down_faces(fine, periodic, 2, cgeom)
    amr.average_down_faces(fine, by_keyword, amr.IntVect(2, 2, 2), crse_geom=cgeom)
    for i in range(17):
        for j, k in ((0, 0), (7, 3), (15, 15)):
            assert plain.value_at((i, j, k), 0) == 2.0 * i
            want = 2.0 * i if 0 < i < 16 else periodic.value_at((0, j, k), 0)
            assert periodic.value_at((i, j, k), 0) == want
            assert by_keyword.value_at((i, j, k), 0) == want
    # The low and high faces of the domain are one face, holding one side's mean.
    assert periodic.value_at((0, 0, 0), 0) in (0.0, 32.0)
    assert periodic.value_at((16, 0, 0), 0) == periodic.value_at((0, 0, 0), 0)
    with pytest.raises(TypeError, match="not both"):
        amr.average_down_faces(fine, periodic, 2, 1, crse_geom=cgeom)
    with pytest.raises(ValueError):
        amr.average_down_faces(fine, periodic, 3, cgeom)  # 32 fine faces are not 3 x 16
