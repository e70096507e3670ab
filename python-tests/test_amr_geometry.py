"""RealBox, CoordSys, Periodicity and Geometry with pyAMReX's names; the idioms follow
pyAMReX's tests/test_geometry.py, tests/test_realbox.py and tests/test_coordsys.py
(AMReX-Codes/pyamrex)."""

import copy
import math

import numpy as np
import pytest

amr = pytest.importorskip("amrex_rs")


@pytest.fixture
def box():
    return amr.Box(amr.IntVect(0, 0, 0), amr.IntVect(127, 127, 127))


@pytest.fixture
def real_box():
    return amr.RealBox([0, 0, 0], [1, 2, 5])


@pytest.fixture
def geometry(box, real_box):
    return amr.Geometry(box, real_box, 0, [0, 0, 1])


def test_realbox_corners_lengths_and_volume():
    rb = amr.RealBox(-1, -2, -3, 2, 4, 6)
    assert rb == amr.RealBox([-1, -2, -3], [2, 4, 6])
    assert rb.xlo == rb.lo() == [-1.0, -2.0, -3.0]
    assert rb.xhi == rb.hi() == [2.0, 4.0, 6.0]
    assert (rb.lo(1), rb.hi(2)) == (-2.0, 6.0)
    assert [rb.length(d) for d in range(3)] == [3.0, 6.0, 9.0]
    assert rb.volume() == 162.0
    assert rb.ok()


def test_realbox_contains_and_intersects():
    rb = amr.RealBox([0, 0, 0], [1, 1, 1])
    assert rb.contains([0.5, 0.5, 0.5])
    assert not rb.contains([1.0, 0.5, 0.5])  # the faces are outside with eps = 0 ...
    assert rb.contains([1.0, 0.5, 0.5], eps=1e-12)  # ... and inside with eps > 0
    assert rb.contains(amr.RealBox([0.1] * 3, [0.9] * 3))
    assert not rb.contains(amr.RealBox([0.1] * 3, [1.5] * 3))
    assert rb.intersects(amr.RealBox([0.5] * 3, [1.5] * 3))
    assert not rb.intersects(amr.RealBox([2.0] * 3, [3.0] * 3))


@pytest.mark.parametrize(
    "lo, hi, words",
    [
        ([0, 0, 0], [0, 1, 1], "direction 0"),
        ([0, 0, 0], [1, -1, 1], "direction 1"),
        ([0, 0, math.nan], [1, 1, 1], r"prob_lo\[2\] is NaN"),
        ([0, 0, 0], [1, 1, math.inf], r"prob_hi\[2\]"),
    ],
)
def test_realbox_refuses_empty_and_non_finite_extents(lo, hi, words):
    with pytest.raises(ValueError, match=words):
        amr.RealBox(lo, hi)


def test_realbox_argument_forms_are_type_errors():
    with pytest.raises(TypeError, match="six floats"):
        amr.RealBox(0, 0, 0, 1)
    with pytest.raises(TypeError, match="three floats"):
        amr.RealBox([0, 0], [1, 1])


def test_size(geometry):
    # pyAMReX test_geometry.py::test_size
    gm = geometry
    assert np.isclose(gm.ProbSize(), 10)
    assert [gm.ProbLength(d) for d in range(3)] == [1.0, 2.0, 5.0]


def test_data(geometry, box, real_box):
    # pyAMReX test_geometry.py::test_data, Cartesian here
    gd = geometry.data()
    assert gd.domain == box == gd.Domain() == geometry.Domain()
    assert gd.prob_domain == real_box == geometry.ProbDomain()
    assert np.allclose(real_box.lo(), gd.ProbLo()) and np.allclose(real_box.hi(), gd.ProbHi())
    assert gd.ProbLo(2) == 0.0 and gd.ProbHi(2) == 5.0
    assert gd.coord == gd.Coord() == 0
    assert gd.is_periodic == gd.isPeriodic() == [0, 0, 1]
    assert [gd.isPeriodic(d) for d in range(3)] == [0, 0, 1]
    assert np.allclose(gd.CellSize(), [0.0078125, 0.015625, 0.0390625])
    assert gd.dx == gd.CellSize() == geometry.CellSize()
    assert gd.CellSize(1) == 0.015625
    assert geometry.InvCellSize() == [128.0, 64.0, 25.6]


def test_periodic_queries(geometry):
    # pyAMReX test_geometry.py::test_periodic_queries (setPeriodicity returns a new one)
    gm = geometry
    assert gm.isAnyPeriodic() and not gm.isAllPeriodic()
    assert gm.isPeriodic() == [0, 0, 1]
    assert not gm.isPeriodic(0) and gm.isPeriodic(2)
    assert gm.is_periodic == [False, False, True]
    assert not gm.setPeriodicity([0, 0, 0]).isAnyPeriodic()
    assert gm.setPeriodicity([1, 1, 1]).isAllPeriodic()
    assert gm.isPeriodic() == [0, 0, 1]  # unchanged


def test_periodicity(geometry):
    # pyAMReX test_geometry.py::test_periodicity
    gm = geometry
    for d in (0, 1):
        with pytest.raises(ValueError, match=f"not periodic in direction {d}"):
            gm.period(d)
    assert gm.period(2) == gm.Domain().length()[2] == 128
    assert gm.periodicity() == amr.Periodicity(amr.IntVect(0, 0, 128))
    bx = amr.Box(amr.IntVect(0, 0, 0), amr.IntVect(9, 19, 29))
    assert gm.periodicity(bx) == amr.Periodicity(amr.IntVect(0, 0, 30))
    p = gm.periodicity()
    assert p.intVect() == amr.IntVect(0, 0, 128)
    assert p.isAnyPeriodic() and not p.isAllPeriodic() and p.isPeriodic(2)
    # the zero shift and one image on each side in z
    assert sorted(tuple(s) for s in p.shiftIntVect()) == [(0, 0, -128), (0, 0, 0), (0, 0, 128)]
    assert amr.Periodicity.NonPeriodic() == amr.Periodicity((0, 0, 0))
    with pytest.raises(ValueError, match="0 or more"):
        amr.Periodicity((0, -1, 0))


def test_grow(geometry):
    # pyAMReX test_geometry.py::test_grow
    gm = geometry
    pd = gm.growPeriodicDomain(2)
    assert pd.small_end == amr.IntVect(0, 0, -2) and pd.big_end == amr.IntVect(127, 127, 129)
    npd = gm.growNonPeriodicDomain(3)
    assert npd.small_end == amr.IntVect(-3, -3, 0) and npd.big_end == amr.IntVect(130, 130, 127)


def test_coarsen_refine_return_new_geometries():
    # pyAMReX test_geometry.py::test_coarsen_refine (which changes the geometry in place)
    bx = amr.Box(amr.IntVect(-2, -2, -3), amr.IntVect(5, 5, 6))
    rb = amr.RealBox(-1, -2, -3, 2, 4, 6)
    gm = amr.Geometry(bx, rb, 0, [0, 0, 1])
    c = gm.coarsen(amr.IntVect(2, 2, 1))
    assert c.Domain().small_end == amr.IntVect(-1, -1, -3)
    assert c.Domain().big_end == amr.IntVect(2, 2, 6)
    assert c.ProbDomain() == rb and c.isPeriodic() == [0, 0, 1]
    r = gm.refine(amr.IntVect(2, 2, 3))
    assert r.Domain().small_end == amr.IntVect(-4, -4, -9)
    assert r.Domain().big_end == amr.IntVect(11, 11, 20)
    assert c.refine(amr.IntVect(2, 2, 1)) == gm
    assert gm.Domain() == bx  # unchanged
    with pytest.raises(ValueError, match="ratio"):
        gm.refine(0)
    with pytest.raises(ValueError, match="coarsen"):
        gm.coarsen(3)


def test_cell_locations():
    gm = amr.Geometry(amr.Box((0, 0, 0), (7, 3, 1)), amr.RealBox([0, 0, 0], [1, 1, 1]))
    assert gm.cell_centre((0, 0, 0)) == [1 / 16, 1 / 8, 1 / 4]
    assert gm.cell_centre((7, 3, 1)) == [15 / 16, 7 / 8, 3 / 4]
    assert gm.node_location((8, 4, 2)) == [1.0, 1.0, 1.0]
    assert gm.node_location((-1, 0, 0)) == [-1 / 8, 0.0, 0.0]  # ghost nodes too
    assert (gm.LoEdge(3, 0), gm.HiEdge(3, 0)) == (3 / 8, 4 / 8)
    assert gm.cell_index([0.5, 0.3, 0.9]) == amr.IntVect(4, 1, 1)
    assert gm.cell_index([1.5, 0.3, 0.9]) == amr.IntVect(12, 1, 1)  # a ghost index
    assert gm.cell_index([math.nan, 0.3, 0.9]) is None
    assert gm.volume((2, 2, 1)) == 1 / 64
    assert gm.face_area((2, 2, 1), 2) == 1 / 32


def test_roundoff_domain():
    # pyAMReX test_geometry.py::test_roundoff_domain, Cartesian here
    bx = amr.Box(amr.IntVect(-1, -2, -3), amr.IntVect(4, 5, 6))
    rb = amr.RealBox(0, 1.0002, 0.00105, 2, 4.2, 5)
    gm = amr.Geometry(bx, rb, 0, [0, 0, 1])
    assert gm.outsideRoundOffDomain(-1.0, 1, 2)
    assert not gm.outsideRoundOffDomain(1.00, 2.0, 2)
    assert not gm.insideRoundOffDomain(-1.0, 1, 2)
    assert gm.insideRoundOffDomain(1.00, 2.0, 2)


def test_coord_sys():
    # pyAMReX test_coordsys.py: CoordSys and its CoordType
    CType = amr.CoordSys.CoordType
    assert CType is amr.CoordType
    assert [int(t) for t in (CType.cartesian, CType.RZ, CType.SPHERICAL)] == [0, 1, 2]
    cs = amr.CoordSys()
    assert cs.ok() and cs.IsCartesian() and cs.Coord() == CType.cartesian and cs.CoordInt() == 0
    assert amr.CoordSys(CType.RZ).IsRZ() and amr.CoordSys(1) == amr.CoordSys(CType.RZ)
    assert amr.CoordSys(2).IsSPHERICAL() and not amr.CoordSys(2).IsRZ()
    with pytest.raises(ValueError, match="7"):
        amr.CoordSys(7)
    with pytest.raises(TypeError, match="CoordType"):
        amr.CoordSys("RZ")


def test_rz_geometry_volumes_add_up_to_the_cylinder():
    # r in [0, 1] by z in [0, 2], the azimuth integrated: the volumes sum to pi r^2 h
    gm = amr.Geometry(amr.Box((0, 0, 0), (15, 31, 0)), amr.RealBox([0, 0, 0], [1, 2, 1]),
                      amr.CoordSys.CoordType.RZ, [0, 0, 0])
    assert gm.Coord() == amr.CoordType.RZ and gm.IsRZ() and gm.CoordInt() == 1
    total = sum(gm.volume((i, j, 0)) for i in range(16) for j in range(32))
    assert math.isclose(total, 2 * math.pi, rel_tol=1e-12)
    assert amr.Geometry(gm.Domain(), gm.ProbDomain(), amr.CoordSys(1)) == gm


def test_geometry_refusals(box, real_box):
    with pytest.raises(ValueError, match="cell-centred"):
        # a copy: Box.convert changes the box itself, as in pyAMReX
        amr.Geometry(copy.copy(box).convert(amr.IndexType(True, False, False)), real_box, 0, [0, 0, 0])
    with pytest.raises(ValueError, match="z|third"):
        amr.Geometry(box, real_box, 1, [0, 0, 0])  # RZ with 128 cells in z
    with pytest.raises(ValueError, match="empty|domain"):
        amr.Geometry(amr.Box((0, 0, 0), (-1, 3, 3)), real_box)
    with pytest.raises(TypeError, match="three bools"):
        amr.Geometry(box, real_box, 0, [0, 1])
    with pytest.raises(IndexError):
        amr.Geometry(box, real_box).ProbLength(3)
    with pytest.raises(IndexError):
        real_box.lo(3)
