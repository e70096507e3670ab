"""BCType, BCRec and the physical-boundary fill; the idioms follow pyAMReX's
tests/test_bcrec.py and tests/test_fill_domain_boundary.py (AMReX-Codes/pyamrex)."""

import numpy as np
import pytest

from conftest import is_testing_build
from amr_util import at, fill, same, snapshot

amr = pytest.importorskip("amrex_rs")
T = amr.BCType
SENTINEL = -42.0


def test_bctype_values():
    # the codes of AMReX_BC_TYPES.H
    codes = {T.reflect_odd: -1, T.int_dir: 0, T.reflect_even: 1, T.foextrap: 2,
             T.ext_dir: 3, T.hoextrap: 4, T.hoextrapcc: 5}
    for t, code in codes.items():
        assert int(t) == code and t == code
    assert len(set(codes)) == 7


def test_bcrec_default_lo_hi_and_set():
    # pyAMReX test_bcrec.py; BCRec() here is int_dir everywhere (AMReX's bogus is not built)
    bcr = amr.BCRec()
    assert bcr.lo() == bcr.hi() == [T.int_dir] * 3
    bcr = amr.BCRec(lo=[T.int_dir] * 3, hi=[T.foextrap] * 3)
    assert bcr.lo() == [T.int_dir] * 3 and bcr.hi() == [T.foextrap] * 3
    assert all(bcr.lo(d) == T.int_dir and bcr.hi(d) == T.foextrap for d in range(3))
    assert bcr.vect() == [T.int_dir] * 3 + [T.foextrap] * 3 == [0, 0, 0, 2, 2, 2]
    assert bcr.data() == bcr.vect()
    for d in range(3):
        bcr.set_lo(d, T.reflect_even)
        bcr.set_hi(d, 3)  # an int code works as well
    assert bcr.lo() == [T.reflect_even] * 3 and bcr.hi() == [T.ext_dir] * 3
    assert amr.BCRec([3, -1, -1], [2, -1, 2]).vect() == [3, -1, -1, 2, -1, 2]


def test_bcrec_equality():
    a = amr.BCRec(lo=[T.int_dir] * 3, hi=[T.int_dir] * 3)
    b = amr.BCRec(lo=[0, 0, 0], hi=[0, 0, 0])
    c = amr.BCRec(lo=[T.foextrap] * 3, hi=[T.int_dir] * 3)
    assert a == b and a != c


def test_bcrec_from_box_and_set_bc():
    # pyAMReX test_bcrec.py::test_bcrec_from_box / test_set_bc
    domain = amr.Box((0, 0, 0), (15, 15, 15))
    bc_domain = amr.BCRec(lo=[T.foextrap] * 3, hi=[T.ext_dir] * 3)
    lo_box = amr.Box((0, 0, 0), (7, 7, 7))
    for bcr in (amr.BCRec(lo_box, domain, bc_domain), amr.setBC(lo_box, domain, bc_domain)):
        assert bcr.lo() == [T.foextrap] * 3 and bcr.hi() == [T.int_dir] * 3
    inner = amr.BCRec(amr.Box((8, 8, 8), (14, 15, 14)), domain, bc_domain)
    assert inner.lo() == [T.int_dir] * 3 and inner.hi() == [T.int_dir, T.ext_dir, T.int_dir]


def test_bcrec_refusals():
    with pytest.raises(ValueError, match="ext_dir_cc"):
        amr.BCRec([6, 0, 0], [0, 0, 0])
    with pytest.raises(ValueError, match="three boundary types"):
        amr.BCRec([0, 0], [0, 0, 0])
    with pytest.raises(TypeError, match="BCType"):
        amr.BCRec(["x", 0, 0], [0, 0, 0])
    bcr = amr.BCRec()
    with pytest.raises(ValueError, match="got 9"):
        bcr.set_lo(0, 9)
    with pytest.raises(IndexError):
        bcr.set_hi(3, T.foextrap)
    assert bcr == amr.BCRec()  # unchanged


def setup(ncomp=1, periodic=(0, 1, 1)):
    """4^3 cells over [0, 1]^3 in two boxes split in x, two ghost cells that start as the
    sentinel, valid cells q = i + 10 j + 100 k + 1000 n, periodic ghosts filled."""
    domain = amr.Box((0, 0, 0), (3, 3, 3))
    geom = amr.Geometry(domain, amr.RealBox([0, 0, 0], [1, 1, 1]), 0, list(periodic))
    ba = amr.BoxArray([amr.Box((0, 0, 0), (1, 3, 3)), amr.Box((2, 0, 0), (3, 3, 3))])
    mf = amr.MultiFab(ba, amr.DistributionMapping(ba), ncomp, 2)
    mf.set_val(SENTINEL, ngrow=2)
    fill(mf, lambda i, j, k, n: i + 10.0 * j + 100.0 * k + 1000.0 * n)
    mf.fill_boundary(periodic=tuple(bool(p) for p in periodic))
    return geom, mf


def q(i, j, k, n=0):
    return i + 10.0 * j + 100.0 * k + 1000.0 * n


# Ghost values beyond the low x face at (j, k) = (1, 2), layers i = -1 and -2, for data
# linear in i (q0 = q(0), q1 = q(1)).
LOW_X = {
    T.reflect_even: (q(0, 1, 2), q(1, 1, 2)),          # mirror through the face
    T.reflect_odd: (-q(0, 1, 2), -q(1, 1, 2)),         # antisymmetric mirror
    T.foextrap: (q(0, 1, 2), q(0, 1, 2)),              # the last interior value
    T.hoextrap: (q(0, 1, 2) - 0.5, q(0, 1, 2)),        # the face value, then the last value
    T.hoextrapcc: (q(-1, 1, 2), q(-1, 1, 2)),          # 2 q0 - q1 in every layer
    T.int_dir: (SENTINEL, SENTINEL),                   # left alone
}


@pytest.mark.parametrize("t", list(LOW_X), ids=lambda t: str(t))
def test_each_bctype_fills_the_low_x_ghosts(t):
    geom, mf = setup()
    bc = amr.BCRec(lo=[t, T.int_dir, T.int_dir], hi=[T.foextrap] * 3)
    amr.fill_physical_boundary(mf, geom, [bc])
    assert (at(mf, -1, 1, 2, 0), at(mf, -2, 1, 2, 0)) == LOW_X[t]
    # the high x face: foextrap, the last interior value in both layers
    assert at(mf, 4, 1, 2, 0) == at(mf, 5, 1, 2, 0) == q(3, 1, 2)
    # valid cells are never written
    assert at(mf, 0, 1, 2, 0) == q(0, 1, 2)


def test_ext_dir_takes_the_function_at_the_cell_centres():
    geom, mf = setup(ncomp=2)
    calls = []

    def wall(x, time, comp):
        calls.append((tuple(x), time, comp))
        return 1000.0 * x[0] + time + comp

    bc = [amr.BCRec(lo=[T.ext_dir, 0, 0], hi=[T.foextrap, 0, 0]),
          amr.BCRec(lo=[T.reflect_odd, 0, 0], hi=[T.ext_dir, 0, 0])]
    amr.fill_physical_boundary(mf, geom, bc, 0, 2, time=0.5, ext_dir=wall)
    # component 0 beyond the low face: x = -1/8 and -3/8 (cells of 1/4)
    assert at(mf, -1, 2, 3, 0) == -125.0 + 0.5
    assert at(mf, -2, 2, 3, 0) == -375.0 + 0.5
    # component 1: mirrored below, the function above (x = 9/8)
    assert at(mf, -1, 2, 3, 1) == -q(0, 2, 3, 1)
    assert at(mf, 4, 2, 3, 1) == 1125.0 + 0.5 + 1
    # the function saw only ghost points beyond ext_dir faces, with the time
    assert calls and all(t == 0.5 for _, t, _ in calls)
    assert all(x[0] < 0 for x, _, n in calls if n == 0) and all(x[0] > 1 for x, _, n in calls if n == 1)


def test_without_ext_dir_function_those_ghosts_keep_their_values():
    # pyAMReX's fill_domain_boundary leaves ext_dir ghost cells alone
    geom, mf = setup()
    bc = amr.BCRec(lo=[T.ext_dir, 0, 0], hi=[T.foextrap, 0, 0])
    amr.fill_physical_boundary(mf, geom, [bc])
    assert at(mf, -1, 1, 2, 0) == SENTINEL
    assert at(mf, 4, 1, 2, 0) == q(3, 1, 2)
    geom, mf2 = setup()
    amr.fill_domain_boundary(mf2, geom, [bc])
    assert same(snapshot(mf), mf2)


def test_foextrap_of_a_constant_fills_every_ghost():
    # pyAMReX test_fill_domain_boundary.py::test_fill_domain_boundary_foextrap: faces,
    # edges and corners of a non-periodic domain
    geom, mf = setup(periodic=(0, 0, 0))
    fill(mf, lambda i, j, k, n: 7.0 + 0 * i)
    mf.fill_boundary()
    amr.fill_domain_boundary(mf, geom, [amr.BCRec(lo=[T.foextrap] * 3, hi=[T.foextrap] * 3)])
    assert all(np.all(a == 7.0) for a in mf.to_numpy(ghosts=True))


def test_component_range():
    geom, mf = setup(ncomp=2)
    bcs = [amr.BCRec(lo=[T.foextrap] * 3, hi=[T.foextrap] * 3)] * 2
    amr.fill_physical_boundary(mf, geom, bcs, scomp=1, ncomp=1)
    assert at(mf, -1, 1, 2, 0) == SENTINEL
    assert at(mf, -1, 1, 2, 1) == q(0, 1, 2, 1)


def test_refusals_change_nothing():
    geom, mf = setup(ncomp=2)
    before = snapshot(mf)
    fo = amr.BCRec(lo=[T.foextrap] * 3, hi=[T.foextrap] * 3)
    with pytest.raises(ValueError, match="needs 2 boundary records"):
        amr.fill_physical_boundary(mf, geom, [fo])
    with pytest.raises(IndexError, match="components 1..3"):
        amr.fill_physical_boundary(mf, geom, [fo] * 3, scomp=1, ncomp=2)
    small = amr.Geometry(amr.Box((0, 0, 0), (2, 3, 3)), amr.RealBox([0, 0, 0], [1, 1, 1]))
    with pytest.raises(ValueError, match="is not inside the domain"):
        amr.fill_physical_boundary(mf, small, [fo] * 2)
    with pytest.raises(TypeError):
        amr.fill_physical_boundary(mf, geom, [fo, "foextrap"])
    assert same(before, mf)

    faces = amr.BoxArray([amr.Box((0, 0, 0), (3, 3, 3), amr.IndexType(True, False, False))])
    fmf = amr.MultiFab(faces, amr.DistributionMapping(faces), 1, 1)
    fmf.set_val(1.0, ngrow=1)
    with pytest.raises(ValueError, match="cell-centred or nodal"):
        amr.fill_physical_boundary(fmf, geom, [fo])
    assert fmf.min(0, ngrow=1) == fmf.max(0, ngrow=1) == 1.0


def test_an_exception_in_ext_dir_propagates_and_valid_cells_stay():
    geom, mf = setup()
    bc = amr.BCRec(lo=[T.ext_dir, 0, 0], hi=[T.foextrap, 0, 0])
    calls = []

    def bad(x, t, n):
        calls.append(x)
        raise RuntimeError("no wall value")

    with pytest.raises(RuntimeError, match="no wall value"):
        amr.fill_physical_boundary(mf, geom, [bc], ext_dir=bad)
    assert len(calls) == 1  # not called again after the first exception
    with pytest.raises(TypeError):
        amr.fill_physical_boundary(mf, geom, [bc], ext_dir=lambda x, t, n: "hot")
    assert all(at(mf, i, 1, 2) == q(i, 1, 2) for i in range(4))


@pytest.mark.testing_build
def test_device_memory_is_not_implemented():
    if not is_testing_build(amr):
        pytest.skip("needs the fake device arena of a testing build")
    geom, _ = setup()
    ba = amr.BoxArray(geom.Domain())
    dev = amr.MultiFab(ba, amr.DistributionMapping(ba), 1, 1, arena=amr._debug_fake_device_arena())
    with pytest.raises(NotImplementedError, match="to_host"):
        amr.fill_physical_boundary(dev, geom, [amr.BCRec()])
