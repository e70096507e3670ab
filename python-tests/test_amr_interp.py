"""The interpolater objects (pyAMReX's module attributes, src/AmrCore/Interpolater.cpp
and tests/test_interpolater.py in AMReX-Codes/pyamrex): constants survive pc_interp,
linear functions the linear interpolaters, and every refusal leaves the data alone."""

import numpy as np
import pytest

from conftest import is_testing_build
from amr_util import at, fill, level, same, snapshot

amr = pytest.importorskip("amrex_rs")
NODE = amr.IndexType(True, True, True)
XFACE = amr.IndexType(True, False, False)
NAMES = ["pc_interp", "cell_cons_interp", "lincc_interp", "cell_bilinear_interp",
         "node_bilinear_interp", "face_linear_interp"]


def test_module_attributes_are_interpolaters():
    objs = [getattr(amr, n) for n in NAMES]
    assert all(isinstance(o, amr.Interpolater) for o in objs)
    assert [o.name for o in objs] == ["PcInterp", "CellConsLinear", "CellConsLinear",
                                      "CellBilinear", "NodeBilinear", "FaceLinear"]
    assert "lincc_interp" in repr(amr.lincc_interp)


def test_coarse_box():
    fine = amr.Box((0, 0, 0), (7, 7, 7))
    assert amr.pc_interp.CoarseBox(fine, 2) == amr.Box((0, 0, 0), (3, 3, 3))
    # the linear ones read one coarse cell more on each side for their slopes
    assert amr.cell_cons_interp.CoarseBox(fine, 2) == amr.Box((-1, -1, -1), (4, 4, 4))
    with pytest.raises(ValueError, match="at least 1"):
        amr.pc_interp.CoarseBox(fine, 0)


def two_levels(typ=None, cghost=1, f=None):
    """Coarse 8^3 cells (or nodes/faces) with `cghost` ghost layers holding f over valid
    and ghost cells; an empty fine level over coarse cells 2..5 refined by 2."""
    crse = level(amr, (0, 0, 0), (7, 7, 7), ngrow=cghost, max_size=4, typ=typ)
    fill(crse, f, ghosts=True)
    fine = level(amr, (4, 4, 4), (11, 11, 11), max_size=4, typ=typ)
    fine.set_val(-1.0)
    return crse, fine


def fine_points(fine):
    """Every valid fine index of the (single-component) fine level, with its value."""
    for a, (lo, hi) in zip(fine.to_numpy(order="C", ghosts=False), fine.boxes()):
        for (k, j, i), v in np.ndenumerate(a[0]):
            yield i + lo[0], j + lo[1], k + lo[2], v


def test_pc_interp_copies_the_coarse_value():
    crse, fine = two_levels(cghost=0, f=lambda i, j, k, n: i + 10.0 * j + 100 * k)
    amr.pc_interp.interp(crse, fine, 2)
    for i, j, k, v in fine_points(fine):
        assert v == i // 2 + 10 * (j // 2) + 100 * (k // 2)


# A linear function of the position in coarse cell units: cell I is centred at I + 1/2,
# fine cell i at (i + 1/2) / 2; nodes and faces sit at I and i / 2.
def lin(x, y, z):
    return 1.0 + x + 2.0 * y - 3.0 * z


@pytest.mark.parametrize("name", ["cell_cons_interp", "lincc_interp", "cell_bilinear_interp"])
def test_cell_interpolaters_keep_linear_functions(name):
    crse, fine = two_levels(f=lambda i, j, k, n: lin(i + 0.5, j + 0.5, k + 0.5))
    getattr(amr, name).interp(crse, fine, 2)
    for i, j, k, v in fine_points(fine):
        assert abs(v - lin((i + 0.5) / 2, (j + 0.5) / 2, (k + 0.5) / 2)) < 1e-12


def test_node_bilinear_keeps_linear_functions():
    crse, fine = two_levels(typ=NODE, cghost=0, f=lambda i, j, k, n: lin(i, j, k))
    amr.node_bilinear_interp.interp(crse, fine, 2)
    for i, j, k, v in fine_points(fine):
        assert abs(v - lin(i / 2, j / 2, k / 2)) < 1e-12


def test_face_linear_is_linear_along_the_normal():
    crse, fine = two_levels(typ=XFACE, cghost=0, f=lambda i, j, k, n: 1.0 + i + 0.0 * j)
    amr.face_linear_interp.interp(crse, fine, 2)
    for i, j, k, v in fine_points(fine):
        assert abs(v - (1.0 + i / 2)) < 1e-12


def test_components_and_ghost_cells():
    crse = level(amr, (0, 0, 0), (7, 7, 7), ncomp=2, ngrow=1)
    fill(crse, lambda i, j, k, n: 5.0 + n, ghosts=True)
    fine = level(amr, (4, 4, 4), (11, 11, 11), ncomp=3, ngrow=1, max_size=4)
    fine.set_val(-1.0, ncomp=3, ngrow=1)
    amr.pc_interp.interp(crse, fine, 2, crse_comp=1, fine_comp=2, ncomp=1, ngrow=1)
    assert at(fine, 3, 4, 4, 2) == 6.0  # a fine ghost cell, filled
    assert at(fine, 6, 6, 6, 2) == 6.0
    assert at(fine, 6, 6, 6, 0) == at(fine, 6, 6, 6, 1) == -1.0


def test_refusals_change_nothing():
    crse, fine = two_levels(cghost=0, f=lambda i, j, k, n: 1.0 + 0 * i)
    before = snapshot(fine)
    with pytest.raises(ValueError, match="at least 1"):
        amr.pc_interp.interp(crse, fine, (2, 0, 2))
    with pytest.raises(ValueError, match="no coarse fab holds"):
        amr.cell_cons_interp.interp(crse, fine, 2)  # needs a coarse ghost cell
    with pytest.raises(ValueError, match="nodal"):
        amr.node_bilinear_interp.interp(crse, fine, 2)  # cell data
    with pytest.raises(ValueError, match="face-centred"):
        amr.face_linear_interp.interp(crse, fine, 2)
    with pytest.raises(IndexError, match="component"):
        amr.pc_interp.interp(crse, fine, 2, ncomp=2)
    with pytest.raises(ValueError, match="ghost"):
        amr.pc_interp.interp(crse, fine, 2, ngrow=1)
    with pytest.raises(ValueError, match="same object"):
        amr.pc_interp.interp(fine, fine, 2)
    assert same(before, fine)


@pytest.mark.testing_build
def test_device_memory_is_not_implemented():
    if not is_testing_build(amr):
        pytest.skip("needs the fake device arena of a testing build")
    crse, _ = two_levels(cghost=0, f=lambda i, j, k, n: 1.0 + 0 * i)
    ba = amr.BoxArray(amr.Box((4, 4, 4), (11, 11, 11)))
    dev = amr.MultiFab(ba, amr.DistributionMapping(ba), 1, 0, arena=amr._debug_fake_device_arena())
    with pytest.raises(NotImplementedError, match="to_host"):
        amr.pc_interp.interp(crse, dev, 2)
