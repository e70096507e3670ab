"""Zero-copy round trips of the amrex_rs containers with NumPy: fabs with lo != 0,
component slices and sub-boxes, Array4 over NumPy arrays, MultiFab boxes with ghost
cells, geometry classes, and the views' keep-alive and resize rules."""

import gc
import sys

import numpy as np
import pytest

from dlpack_ctypes import READ_ONLY, Info


def pattern(i, j, k, n):
    return i + 100.0 * j + 10000.0 * k + 1e6 * n


def patterned_fab(amr, lo, hi, ncomp):
    fab = amr.FArrayBox(amr.Box(lo, hi), ncomp)
    a = np.from_dlpack(fab.array())
    n, k, j, i = np.meshgrid(*(np.arange(s) for s in a.shape), indexing="ij")
    a[...] = pattern(i + lo[0], j + lo[1], k + lo[2], n)
    return fab


# --- geometry -----------------------------------------------------------------------------

def test_intvect_and_box(amr):
    iv = amr.IntVect(1, 2, 3)
    assert tuple(iv) == (1, 2, 3) and iv[2] == 3 and iv[-1] == 3 and len(iv) == 3
    assert iv + 1 == amr.IntVect(2, 3, 4) and 2 * iv == amr.IntVect(2, 4, 6)
    assert amr.IntVect(-3, 0, 5).coarsen(2) == amr.IntVect(-2, 0, 2)
    b = amr.Box((-1, 0, 2), (4, 5, 9))
    assert b.lo == (-1, 0, 2) and b.hi == (4, 5, 9)
    assert b.num_pts == 6 * 6 * 8 and len(b) == b.num_pts
    assert (0, 0, 2) in b and (5, 0, 2) not in b
    g = amr.Box(b.small_end, b.big_end)
    assert g.grow(1).lo == (-2, -1, 1) and g.lo == (-2, -1, 1)  # grows in place, as pyAMReX
    assert b.intersection(amr.Box((3, 3, 3), (10, 10, 10))) == amr.Box((3, 3, 3), (4, 5, 9))
    assert b.intersection(amr.Box((30, 3, 3), (40, 10, 10))) is None
    n = amr.Box(b.small_end, b.big_end)
    assert n.surrounding_nodes().enclosed_cells() == b
    assert b.coarsen(2).refine(2).contains(b)
    with pytest.raises(TypeError):
        amr.IntVect(1, 2)


# --- FArrayBox ------------------------------------------------------------------------------

def test_fab_with_negative_lo_round_trip(amr, no_leaks):
    lo, hi = (-2, 3, -5), (4, 7, 0)
    fab = patterned_fab(amr, lo, hi, 3)
    a = np.from_dlpack(fab.const_array())
    assert a.shape == (3, 6, 5, 7)
    assert a.strides == (8 * 7 * 5 * 6, 8 * 7 * 5, 8 * 7, 8)
    assert fab.get(-2, 3, -5, 0) == a[0, 0, 0, 0] == pattern(-2, 3, -5, 0)
    assert fab.get(4, 7, 0, 2) == pattern(4, 7, 0, 2)
    f = fab.to_numpy()  # order="F": (i, j, k, n)
    assert f.shape == (7, 5, 6, 3) and f[1, 2, 3, 1] == pattern(-1, 5, -2, 1)
    assert f.ctypes.data == a.ctypes.data


def test_fab_component_slice_and_sub_box(amr, no_leaks):
    fab = patterned_fab(amr, (1, 1, 1), (8, 6, 4), 4)
    full = np.from_dlpack(fab.array())
    comp = np.from_dlpack(fab.array(start_comp=2, num_comps=1))
    assert comp.shape == (1, 4, 6, 8)
    assert comp.ctypes.data == full[2:3].ctypes.data
    np.testing.assert_array_equal(comp, full[2:3])
    sub = amr.Box((3, 2, 2), (5, 4, 3))
    view = np.from_dlpack(fab.array(start_comp=1, num_comps=2, box=sub))
    assert view.shape == (2, 2, 3, 3)
    assert view.strides == full.strides  # a true view: the fab's strides
    np.testing.assert_array_equal(view, full[1:3, 1:3, 1:4, 2:5])
    view[1, 0, 0, 0] = -1.0
    assert fab.get(3, 2, 2, 2) == -1.0
    info = Info(fab.const_array(box=sub).__dlpack__(max_version=(1, 3)))
    assert info.flags & READ_ONLY and info.strides == (8 * 6 * 4, 8 * 6, 8, 1)
    with pytest.raises(IndexError):
        fab.array(box=amr.Box((0, 0, 0), (2, 2, 2)))
    with pytest.raises(IndexError):
        fab.array(start_comp=3, num_comps=2)


def test_fab_views_keep_the_fab_alive(amr, no_leaks):
    fab = patterned_fab(amr, (0, 0, 0), (3, 3, 3), 1)
    view = fab.array()
    base = sys.getrefcount(fab)
    a = np.from_dlpack(view)
    del view
    assert sys.getrefcount(fab) == base  # the view object holds the fab, the array the view
    del fab
    gc.collect()
    assert a[0, 3, 3, 3] == pattern(3, 3, 3, 0)


def test_fab_dlpack_and_array4(amr, no_leaks):
    fab = patterned_fab(amr, (-1, -1, -1), (2, 2, 2), 2)
    a = np.from_dlpack(fab)  # the fab itself is a producer
    assert a.shape == (2, 4, 4, 4) and a.flags.writeable
    a4 = fab.array4()
    assert a4.begin == (-1, -1, -1) and a4.end == (3, 3, 3) and a4.ncomp == 2
    assert a4[(2, -1, 0, 1)] == pattern(2, -1, 0, 1)
    a4[(0, 0, 0, 0)] = 5.0
    assert fab.get(0, 0, 0, 0) == 5.0


# --- Array4 over NumPy ------------------------------------------------------------------------

def test_array4_over_numpy(amr, no_leaks):
    arr = np.zeros((2, 3, 4, 5))  # (ncomp, nz, ny, nx)
    a4 = amr.Array4(arr, begin=(10, 20, 30))
    assert a4.begin == (10, 20, 30) and a4.end == (15, 24, 33)
    assert (a4.jstride, a4.kstride, a4.nstride) == (5, 20, 60)
    a4.set(14, 23, 32, 1, 7.0)
    assert arr[1, 2, 3, 4] == 7.0
    arr[0, 0, 0, 0] = 3.0
    assert a4.get(10, 20, 30, 0) == 3.0
    back = np.from_dlpack(a4)
    assert back.ctypes.data == arr.ctypes.data and back.shape == arr.shape
    with pytest.raises(IndexError):
        a4.get(9, 20, 30, 0)
    a4.fill(1.0)
    assert (arr == 1.0).all()
    # lower ranks are (nx,), (ny, nx), (nz, ny, nx)
    v = amr.Array4(np.arange(6.0))
    assert v.end == (6, 1, 1) and v.get(5, 0, 0) == 5.0


@pytest.mark.parametrize(
    "make, what",
    [
        (lambda: np.asfortranarray(np.zeros((2, 3, 4, 5))), "stride"),
        (lambda: np.zeros((3, 4))[:, ::-1], "stride"),
        (lambda: np.zeros((3, 4), dtype=np.float32), "dtype"),
        (lambda: np.zeros((1, 1, 1, 1, 2)), "dimensions"),
    ],
)
def test_array4_refusals(amr, no_leaks, make, what):
    with pytest.raises(BufferError, match=what):
        amr.Array4(make())


def test_array4_read_only_numpy(amr, no_leaks):
    arr = np.zeros((4, 4))
    arr.flags.writeable = False
    a4 = amr.Array4(arr)
    assert a4.read_only and a4.get(0, 0, 0) == 0.0
    with pytest.raises(BufferError, match="READ_ONLY"):
        a4.set(0, 0, 0, 0, 1.0)
    with pytest.raises(BufferError, match="READ_ONLY"):
        amr.array4_from_dlpack_mut(arr)
    assert not np.from_dlpack(a4).flags.writeable


# --- MultiFab -----------------------------------------------------------------------------

def make_mf(amr, ncomp=2, ngrow=2):
    domain = amr.Box((0, 0, 0), (15, 7, 7))
    ba = amr.BoxArray(domain, max_size=8)
    dm = amr.DistributionMapping(ba)
    return amr.MultiFab(ba, dm, ncomp, ngrow)


def test_multifab_boxes_with_ghosts(amr, no_leaks):
    mf = make_mf(amr)
    assert mf.num_local_boxes() == len(mf) == 2 and mf.n_grow == (2, 2, 2)
    mf.fill_cell_index_pattern()
    for mfi, arr, (lo, hi) in zip(mf, mf.to_xp(order="C", ghosts=True), mf.boxes(ghosts=True)):
        vb = mfi.validbox()
        assert lo == tuple(v - 2 for v in vb.lo) and hi == tuple(v + 2 for v in vb.hi)
        assert arr.shape == (2, hi[2] - lo[2] + 1, hi[1] - lo[1] + 1, hi[0] - lo[0] + 1)
        fab = np.from_dlpack(mf.array(mfi))
        assert fab.ctypes.data == arr.ctypes.data  # same memory, zero copy
        i, j, k = vb.lo
        assert arr[1, k - lo[2], j - lo[1], i - lo[0]] == pattern(i, j, k, 1)
        assert arr[0, 0, 0, 0] == 0.0  # ghost cells untouched
    valid = mf.to_xp(order="C", ghosts=False)
    assert valid[0].shape == (2, 8, 8, 8)
    assert valid[0].ctypes.data != mf.to_xp(order="C", ghosts=True)[0].ctypes.data


def test_multifab_arithmetic_and_reductions(amr, no_leaks):
    a, b = make_mf(amr), make_mf(amr)
    a.set_val(2.0)
    b.set_val(3.0, comp=1, ncomp=1)
    amr.MultiFab.saxpy(a, 0.5, b, 1, 0, 1)  # a[0] += 0.5 * b[1]
    assert a.min(comp=0) == a.max(comp=0) == 3.5
    amr.MultiFab.add(a, b, 1, 1, 1)
    assert a.max(comp=1) == 5.0
    assert a.sum(comp=0) == pytest.approx(3.5 * 16 * 8 * 8)
    assert a.norm0(comp=1) == 5.0
    assert a.dot(0, b, 1, 1) == pytest.approx(3.5 * 3.0 * 16 * 8 * 8)
    arrs = a.to_xp(order="C", ghosts=False)
    arrs[0][0, 0, 0, 0] = -10.0
    assert a.min(comp=0) == -10.0
    with pytest.raises(IndexError):
        a.min(comp=5)
    a.mult(2.0, comp=1, ncomp=1)
    assert a.max(comp=1) == 10.0


def test_multifab_fill_boundary_fills_interior_ghosts(amr, no_leaks):
    mf = make_mf(amr, ncomp=1, ngrow=1)
    mf.fill_cell_index_pattern()
    mf.fill_boundary()
    # box 0 covers i in 0..7; its ghost at i = 8 comes from box 1's valid cell
    assert mf.value_at((8, 3, 3), 0) == pattern(8, 3, 3, 0)


# --- vectors and particles: views block reallocation ------------------------------------------------

def test_particle_views_block_resizing(amr, no_leaks):
    aos = amr.ArrayOfStructs_2_1()
    aos.push_back(pos=(1.0, 2.0, 3.0), rdata=(4.0, 5.0), id=7, cpu=1, idata=(6,))
    x = aos.field("x")
    with pytest.raises(BufferError):
        aos.push_back(pos=(0.0, 0.0, 0.0))
    a = np.from_dlpack(x)
    del x
    with pytest.raises(BufferError):
        aos.push_back(pos=(0.0, 0.0, 0.0))
    assert a[0] == 1.0
    del a
    aos.push_back(pos=(0.0, 0.0, 0.0))
    assert aos.size() == 2


def test_vector_alias_names(amr):
    assert amr.PODVector_real_std is amr.PodVectorF64
    assert amr.PODVector_int_std is amr.PodVectorI32
    v = amr.PODVector_real_std(3, 2.0)
    v.push_back(1.0)
    assert v.to_list() == [2.0, 2.0, 2.0, 1.0] and v.size() == 4 and not v.empty()
    v.pop_back()
    assert len(v) == 3 and list(v) == [2.0, 2.0, 2.0]
    with pytest.raises(IndexError):
        v[3]
