"""average_down (plain and with geometries), sum_fine_to_coarse, average_down_faces and
average_down_nodal against hand-computed values; the argument order is pyAMReX's
(src/Base/MultiFabUtil.cpp, tests/test_multifabutil.py in AMReX-Codes/pyamrex)."""

import math

import numpy as np
import pytest

from conftest import is_testing_build
from amr_util import at, fill, level, same, snapshot

amr = pytest.importorskip("amrex_rs")
SENTINEL = -42.0
NODE = amr.IndexType(True, True, True)
XFACE = amr.IndexType(True, False, False)


def levels(ratio=2, ncomp=1, fine_max=4):
    """Coarse 8^3 cells in one box (the sentinel); fine over coarse cells 2..5 refined
    by `ratio`, in boxes of at most `fine_max`, holding f = i + j + k + 100 n."""
    r = amr.IntVect(ratio)
    crse = level(amr, (0, 0, 0), (7, 7, 7), ncomp)
    crse.set_val(SENTINEL)
    lo, hi = amr.IntVect(2).refine(r), (amr.IntVect(6).refine(r) - 1)
    fine = level(amr, lo, hi, ncomp, max_size=fine_max)
    fill(fine, lambda i, j, k, n: i + j + k + 100.0 * n)
    return fine, crse


def test_average_down_is_the_mean_of_the_fine_cells():
    fine, crse = levels(ncomp=2)
    amr.average_down(fine, crse, 0, 2, 2)
    # coarse cell (I, J, K) covers fine i in 2I..2I+1 (and so on): mean 2(I+J+K) + 1.5
    for I, J, K in [(2, 2, 2), (2, 3, 4), (5, 5, 5), (3, 5, 2)]:
        assert at(crse, I, J, K, 0) == 2 * (I + J + K) + 1.5
        assert at(crse, I, J, K, 1) == 2 * (I + J + K) + 1.5 + 100
    # uncovered coarse cells keep their value
    assert at(crse, 0, 0, 0) == at(crse, 6, 3, 3) == SENTINEL


def test_average_down_component_range_and_anisotropic_ratio():
    fine, crse = levels(ncomp=2)
    amr.average_down(fine, crse, 1, 1, amr.IntVect(2, 2, 2))
    assert at(crse, 2, 3, 4, 0) == SENTINEL
    assert at(crse, 2, 3, 4, 1) == 19.5 + 100
    # ratio (2, 2, 1): z is not refined
    crse = level(amr, (0, 0, 0), (7, 7, 7))
    fine = level(amr, (4, 4, 2), (11, 11, 5), max_size=4)
    fill(fine, lambda i, j, k, n: i + j + k + 0.0)
    amr.average_down(fine, crse, 0, 1, (2, 2, 1))
    assert at(crse, 2, 3, 4) == 4.5 + 6.5 + 4


def test_average_down_geom_weights_rz_volumes_and_conserves():
    # r in [0, 1] by z in [0, 1], 4 x 4 coarse cells, ratio (2, 2, 1)
    rb = amr.RealBox([0, 0, 0], [1, 1, 1])
    cgeom = amr.Geometry(amr.Box((0, 0, 0), (3, 3, 0)), rb, amr.CoordType.RZ, [0, 0, 0])
    ratio = amr.IntVect(2, 2, 1)
    fgeom = cgeom.refine(ratio)
    fine = level(amr, (0, 0, 0), (7, 7, 0), max_size=4)
    fill(fine, lambda i, j, k, n: 1.0 + i * i + 0.5 * j)
    crse = level(amr, (0, 0, 0), (3, 3, 0))
    amr.average_down(fine, crse, fgeom, cgeom, 0, 1, ratio)
    # coarse cell (I, J): sum f v / sum v over its fine cells, v ~ r dr (RZ)
    for I in range(4):
        for J in range(4):
            cells = [(i, j) for i in (2 * I, 2 * I + 1) for j in (2 * J, 2 * J + 1)]
            v = [fgeom.volume((i, j, 0)) for i, j in cells]
            f = [1.0 + i * i + 0.5 * j for i, j in cells]
            assert math.isclose(at(crse, I, J, 0), np.dot(f, v) / sum(v), rel_tol=1e-14)
    # conservation: sum of f * volume is the same on both levels
    fine_mass = sum(at(fine, i, j, 0) * fgeom.volume((i, j, 0)) for i in range(8) for j in range(8))
    crse_mass = sum(at(crse, I, J, 0) * cgeom.volume((I, J, 0)) for I in range(4) for J in range(4))
    assert math.isclose(fine_mass, crse_mass, rel_tol=1e-14)
    # the plain mean differs in RZ: the test would see a missing weight
    plain = level(amr, (0, 0, 0), (3, 3, 0))
    amr.average_down(fine, plain, 0, 1, ratio)
    assert not math.isclose(at(plain, 0, 0, 0), at(crse, 0, 0, 0), rel_tol=1e-6)


def test_sum_fine_to_coarse_adds_the_fine_mean():
    cgeom = amr.Geometry(amr.Box((0, 0, 0), (7, 7, 7)), amr.RealBox([0, 0, 0], [1, 1, 1]))
    fine, crse = levels()
    fine.set_val(4.0)
    crse.set_val(1.0)
    amr.sum_fine_to_coarse(fine, crse, 0, 1, 2, cgeom, cgeom.refine(2))
    assert at(crse, 2, 2, 2) == at(crse, 5, 3, 4) == 5.0
    assert at(crse, 0, 0, 0) == 1.0
    before = snapshot(crse)
    with pytest.raises(ValueError, match="fgeom .* is not cgeom .* refined"):
        amr.sum_fine_to_coarse(fine, crse, 0, 1, 2, cgeom, cgeom.refine(4))
    assert same(before, crse)


def test_average_down_nodal_injects():
    fine = level(amr, (0, 0, 0), (7, 7, 7), max_size=4, typ=NODE)
    fill(fine, lambda i, j, k, n: 100.0 * i + 10 * j + k)
    crse = level(amr, (0, 0, 0), (3, 3, 1), typ=NODE)
    amr.average_down_nodal(fine, crse, amr.IntVect(2, 2, 4))
    assert at(crse, 3, 1, 2) == 628.0  # fine node (6, 2, 8)
    assert at(crse, 0, 4, 0) == 80.0  # fine node (0, 8, 0)
    # the plain form injects nodal data too (AMReX's average_down on nodes)
    crse2 = level(amr, (0, 0, 0), (3, 3, 1), typ=NODE)
    amr.average_down(fine, crse2, 0, 1, (2, 2, 4))
    assert same(snapshot(crse), crse2)


def test_average_down_faces_means_the_fine_faces_on_each_coarse_face():
    fine = level(amr, (0, 0, 0), (7, 7, 7), max_size=8, typ=XFACE)
    fill(fine, lambda i, j, k, n: i + j + k + 0.0)
    crse = level(amr, (0, 0, 0), (3, 3, 3), typ=XFACE)
    amr.average_down_faces(fine, crse, 2)
    # coarse x-face (I, J, K) is fine x-face 2I with j, k in 2J..2J+1, 2K..2K+1
    for I, J, K in [(0, 0, 0), (1, 1, 1), (4, 3, 2)]:
        assert at(crse, I, J, K) == 2 * I + 2 * J + 0.5 + 2 * K + 0.5


def test_refusals_change_nothing():
    fine, crse = levels()
    before = snapshot(crse)
    with pytest.raises(ValueError, match="refinement ratio of at least 1"):
        amr.average_down(fine, crse, 0, 1, (2, 0, 2))
    with pytest.raises(IndexError, match="component"):
        amr.average_down(fine, crse, 0, 2, 2)
    with pytest.raises(ValueError, match="same object"):
        amr.average_down(crse, crse, 0, 1, 2)
    with pytest.raises(ValueError, match="does not coarsen by"):
        amr.average_down(fine, crse, 0, 1, 3)  # fine boxes are not multiples of 3
    with pytest.raises(TypeError, match="takes"):
        amr.average_down(fine, crse, 0, 1)
    with pytest.raises(ValueError, match="nodal"):
        amr.average_down_nodal(fine, crse, 2)
    with pytest.raises(ValueError, match="face"):
        amr.average_down_faces(fine, crse, 2)
    cgeom = amr.Geometry(amr.Box((0, 0, 0), (7, 7, 7)), amr.RealBox([0, 0, 0], [1, 1, 1]))
    with pytest.raises(ValueError, match="refined"):
        amr.average_down(fine, crse, cgeom, cgeom, 0, 1, 2)  # fgeom must be cgeom refined
    assert same(before, crse)

    ffine = level(amr, (0, 0, 0), (7, 7, 7), typ=XFACE)
    fcrse = level(amr, (0, 0, 0), (3, 3, 3), typ=XFACE)
    fbefore = snapshot(fcrse)
    with pytest.raises(ValueError, match="ghost"):
        amr.average_down_faces(ffine, fcrse, 2, 1)  # the coarse MultiFab has no ghosts
    assert same(fbefore, fcrse)


@pytest.mark.testing_build
def test_device_memory_is_not_implemented():
    if not is_testing_build(amr):
        pytest.skip("needs the fake device arena of a testing build")
    fine, _ = levels()
    ba = amr.BoxArray(amr.Box((0, 0, 0), (7, 7, 7)))
    dev = amr.MultiFab(ba, amr.DistributionMapping(ba), 1, 0, arena=amr._debug_fake_device_arena())
    with pytest.raises(NotImplementedError, match="to_host"):
        amr.average_down(fine, dev, 0, 1, 2)
