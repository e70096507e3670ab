"""FillPatch: fill_patch_single_level, fill_patch_two_levels, interp_from_coarse_level
and PhysBCFunct; the cases follow pyAMReX's tests/test_fillpatch.py
(AMReX-Codes/pyamrex), with PhysBCFunct(geom, bcrecs, ext_dir) for its functors."""

import numpy as np
import pytest

from amr_util import at, fill, same, snapshot

amr = pytest.importorskip("amrex_rs")
SENTINEL = -42.0


def make_geom(n, periodic=True):
    box = amr.Box((0, 0, 0), (n - 1,) * 3)
    return amr.Geometry(box, amr.RealBox([0.0] * 3, [1.0] * 3), 0, [int(periodic)] * 3)


def noop(geom):
    """pyAMReX's PhysBCFunctNoOp: int_dir everywhere."""
    return amr.PhysBCFunct(geom, [amr.BCRec()])


def mfab(box, ngrow=0, max_size=None, value=None):
    ba = amr.BoxArray(box, max_size=max_size) if max_size else amr.BoxArray(box)
    mf = amr.MultiFab(ba, amr.DistributionMapping(ba), 1, ngrow)
    if value is not None:
        mf.set_val(value, ngrow=ngrow)
    return mf


def test_fill_patch_single_level_periodic():
    n = 16
    geom = make_geom(n)
    src = mfab(geom.Domain(), max_size=8)
    fill(src, lambda i, j, k, c: i + 0.0)
    dst = mfab(geom.Domain(), ngrow=1, max_size=8, value=SENTINEL)
    amr.fill_patch_single_level(dst, 0.0, [src], [0.0], 0, 0, 1, geom, noop(geom), 0)
    for a, (lo, hi) in zip(dst.to_numpy(order="C", ghosts=True), dst.boxes(ghosts=True)):
        i = np.arange(lo[0], hi[0] + 1)
        assert np.array_equal(a[0], np.broadcast_to(i % n, a[0].shape))


def test_fill_patch_single_level_time_interp():
    geom = make_geom(8)
    old, new = mfab(geom.Domain(), value=1.0), mfab(geom.Domain(), value=3.0)
    dst = mfab(geom.Domain(), ngrow=1, value=SENTINEL)
    amr.fill_patch_single_level(dst, 0.5, [old, new], [0.0, 1.0], 0, 0, 1, geom, noop(geom), 0)
    assert dst.min(0, ngrow=1) == dst.max(0, ngrow=1) == 2.0


def test_fill_patch_calls_ext_dir_beyond_the_walls():
    geom = make_geom(8, periodic=False)
    src, dst = mfab(geom.Domain(), value=1.0), mfab(geom.Domain(), ngrow=1, value=SENTINEL)
    called = []

    def wall(x, time, comp):
        called.append((time, comp))
        return 99.0

    ext = amr.BCType.ext_dir
    bc = amr.PhysBCFunct(geom, [amr.BCRec([ext] * 3, [ext] * 3)], wall)
    assert bc.geom == geom and bc.bcrecs == [amr.BCRec([ext] * 3, [ext] * 3)]
    amr.fill_patch_single_level(dst, 0.25, [src], [0.0], 0, 0, 1, geom, bc, 0)
    assert called and set(called) == {(0.25, 0)}
    assert at(dst, 0, 0, 0) == 1.0 and at(dst, -1, 3, 3) == 99.0 and at(dst, 8, 8, 8) == 99.0
    # the functor fills a MultiFab directly too
    dst.set_val(SENTINEL, ngrow=1)
    bc.fill(dst, time=0.5)
    assert at(dst, -1, 3, 3) == 99.0 and at(dst, 3, 3, 3) == SENTINEL


def test_interp_from_coarse_level_is_linear_and_conservative():
    n = 16
    cgeom, fgeom = make_geom(n), make_geom(2 * n)
    crse = mfab(cgeom.Domain(), ngrow=1)
    fill(crse, lambda i, j, k, c: i + 0.0, ghosts=True)
    fine = mfab(amr.Box((n // 2,) * 3, (3 * n // 2 - 1,) * 3), value=SENTINEL)
    amr.interp_from_coarse_level(fine, 0.0, crse, 0, 0, 1, cgeom, fgeom, noop(cgeom), 0,
                                 noop(fgeom), 0, amr.IntVect(2), amr.cell_cons_interp,
                                 [amr.BCRec()], 0)
    # f(i_c) = i_c is f = x - 1/2 in coarse units: fine cell i has i / 2 - 1/4
    for a, (lo, hi) in zip(fine.to_numpy(order="C", ghosts=False), fine.boxes()):
        i = np.arange(lo[0], hi[0] + 1)
        assert np.allclose(a[0], np.broadcast_to(i / 2 - 0.25, a[0].shape), rtol=0, atol=1e-13)
    back = mfab(cgeom.Domain())
    fill(back, lambda i, j, k, c: i + 0.0)
    amr.average_down(fine, back, 0, 1, 2)
    assert np.allclose(back.to_numpy(order="C", ghosts=False)[0][0], np.broadcast_to(np.arange(n), (n, n, n)), atol=1e-13)


def test_fill_patch_two_levels():
    n = 16
    cgeom, fgeom = make_geom(n), make_geom(2 * n)
    crse = mfab(cgeom.Domain(), ngrow=1, value=7.0)
    fine_box = amr.Box((n // 2,) * 3, (3 * n // 2 - 1,) * 3)
    fine_src = mfab(fine_box, value=5.0)
    dst = mfab(fine_box, ngrow=2, value=SENTINEL)
    amr.fill_patch_two_levels(dst, 0.0, [crse], [0.0], [fine_src], [0.0], 0, 0, 1, cgeom,
                              fgeom, noop(cgeom), 0, noop(fgeom), 0, amr.IntVect(2),
                              amr.cell_cons_interp, [amr.BCRec()], 0)
    # valid cells from the fine state, ghost cells from the (constant) coarse level
    assert dst.min(0) == dst.max(0) == 5.0
    assert at(dst, 7, 10, 10) == at(dst, 6, 6, 6) == at(dst, 25, 8, 8) == 7.0


def test_refusals_change_nothing():
    n = 8
    cgeom, fgeom = make_geom(n), make_geom(2 * n)
    src = mfab(cgeom.Domain(), value=1.0)
    dst = mfab(cgeom.Domain(), ngrow=1, value=SENTINEL)
    before = snapshot(dst)
    with pytest.raises(ValueError, match="not the geometry of its PhysBCFunct"):
        amr.fill_patch_single_level(dst, 0.0, [src], [0.0], 0, 0, 1, fgeom, noop(cgeom), 0)
    with pytest.raises(ValueError, match="also one of the source states"):
        amr.fill_patch_single_level(dst, 0.0, [dst], [0.0], 0, 0, 1, cgeom, noop(cgeom), 0)
    with pytest.raises(ValueError, match="one or two source states"):
        amr.fill_patch_single_level(dst, 0.0, [src], [0.0, 1.0], 0, 0, 1, cgeom, noop(cgeom), 0)
    with pytest.raises(ValueError, match="ghost"):
        amr.fill_patch_single_level(dst, 0.0, [src], [0.0], 0, 0, 1, cgeom, noop(cgeom), 0, nghost=2)
    with pytest.raises(IndexError):
        amr.fill_patch_single_level(dst, 0.0, [src], [0.0], 0, 0, 2, cgeom, noop(cgeom), 0)
    assert same(before, dst)

    # a coarse level that does not cover what the fine level needs
    crse = mfab(amr.Box((0, 0, 0), (3, 7, 7)), ngrow=1, value=7.0)
    fine = mfab(amr.Box((4, 4, 4), (11, 11, 11)), value=SENTINEL)
    fbefore = snapshot(fine)
    args = (cgeom, fgeom, noop(cgeom), 0, noop(fgeom), 0, 2, amr.cell_cons_interp)
    with pytest.raises(ValueError, match="not properly nested"):
        amr.interp_from_coarse_level(fine, 0.0, crse, 0, 0, 1, *args)
    with pytest.raises(ValueError, match="bcs needs 1 records"):
        amr.interp_from_coarse_level(fine, 0.0, crse, 0, 0, 1, *args, [])
    with pytest.raises(ValueError, match="refined"):
        amr.interp_from_coarse_level(fine, 0.0, crse, 0, 0, 1, cgeom, cgeom, noop(cgeom), 0,
                                     noop(cgeom), 0, 2, amr.cell_cons_interp)
    with pytest.raises(ValueError, match="nodal"):
        amr.interp_from_coarse_level(fine, 0.0, crse, 0, 0, 1, *args[:-1], amr.node_bilinear_interp)
    assert same(fbefore, fine)


def test_the_docs_example_runs():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "python.md").read_text()
    section = text[text.index("## AMR levels"):]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    env = {}
    exec(compile(block, "docs/python.md:AMR levels", "exec"), env)
    # the fine state's valid cells (0) won over the coarse data (2 at t = 0.5) ...
    assert env["fine"].min(0) == env["fine"].max(0) == 0.0
    # ... and the covered coarse cells are their average, the rest the time-interpolated 2
    assert at(env["crse_old"], 0, 0, 0) == 1.0
    assert at(env["crse"], 20, 20, 20) != 2.0 and at(env["crse"], 2, 2, 2) == 2.0
