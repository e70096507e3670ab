"""NumPy consumer tests for FArrayBox (amrex-basefab, issue #5).

API asked for in /work/notes/requests.md (R-fab-2); every test skips with that pointer
until `amrex_rs.FArrayBox` exists. Through DLPack NumPy sees a fab as
`(ncomp, nz, ny, nx)` with element strides `(nstride, kstride, jstride, 1)` (pyAMReX's
order), so `arr[n, k, j, i]` is `fab(lo.x + i, lo.y + j, lo.z + k, n)`.
"""

import gc

import numpy as np
import pytest

NUMPY_VERSION = tuple(int(x) for x in np.__version__.split(".")[:3] if x.isdigit())
# NumPy honours the DLPack READ_ONLY flag since 2.2.5.
NUMPY_READ_ONLY = NUMPY_VERSION >= (2, 2, 5)


@pytest.fixture
def fab_api(amr):
    for name in ("FArrayBox", "Box"):
        if not hasattr(amr, name):
            pytest.skip(f"amrex_rs lacks {name} (R-fab-2 in /work/notes/requests.md)")
    return amr


def pattern(i, j, k, n):
    return i + 100.0 * j + 10000.0 * k + 1e6 * n


def filled(amr, lo, hi, ncomp):
    """A fab whose values encode their global index (written through NumPy)."""
    fab = amr.FArrayBox(amr.Box(lo, hi), ncomp)
    arr = np.from_dlpack(fab.array())
    nc, nz, ny, nx = arr.shape
    n, k, j, i = np.meshgrid(
        np.arange(nc), np.arange(nz) + lo[2], np.arange(ny) + lo[1], np.arange(nx) + lo[0],
        indexing="ij",
    )
    arr[...] = pattern(i, j, k, n)
    return fab


def test_shape_strides_and_dtype(fab_api):
    fab = fab_api.FArrayBox(fab_api.Box((0, 0, 0), (7, 7, 7)), 2)
    arr = np.from_dlpack(fab.array())
    assert arr.shape == (2, 8, 8, 8)
    assert arr.dtype == np.float64
    assert arr.strides == (8 * 512, 8 * 64, 8 * 8, 8)
    assert not arr.any(), "a new fab is zero-filled"
    assert fab.ncomp == 2
    assert fab.num_pts == 512


def test_writes_through_both_ways(fab_api):
    fab = fab_api.FArrayBox(fab_api.Box((0, 0, 0), (7, 7, 7)), 2)
    arr = np.from_dlpack(fab.array())
    arr[1, 3, 2, 1] = 42.0                    # (i, j, k, n) = (1, 2, 3, 1)
    assert fab.get(1, 2, 3, 1) == 42.0
    assert fab.sum(comp=1) == 42.0
    fab.set_val(7.0, start_comp=0, num_comps=1)
    assert (arr[0] == 7.0).all()
    assert arr[1].sum() == 42.0
    fab.plus(1.0, start_comp=0, num_comps=2)
    assert arr[0, 0, 0, 0] == 8.0 and arr[1, 3, 2, 1] == 43.0


def test_global_indices_with_ghost_cells(fab_api):
    lo, hi = (-1, 2, 3), (4, 5, 9)
    fab = filled(fab_api, lo, hi, 2)
    arr = np.from_dlpack(fab.const_array())
    assert arr.shape == (2, 7, 4, 6)
    # NumPy index 0 is the box's lo, not 0.
    assert arr[0, 0, 0, 0] == pattern(-1, 2, 3, 0)
    assert arr[1, 6, 3, 5] == pattern(4, 5, 9, 1)
    assert fab.get(-1, 2, 3, 1) == pattern(-1, 2, 3, 1)
    assert fab.max(comp=0) == pattern(4, 5, 9, 0)
    assert fab.min(comp=1) == pattern(-1, 2, 3, 1)


def test_shared_export_is_read_only(fab_api):
    fab = filled(fab_api, (0, 0, 0), (3, 3, 3), 1)
    ro = np.from_dlpack(fab.const_array())
    rw = np.from_dlpack(fab.array())
    assert ro.ctypes.data == rw.ctypes.data, "zero copy: same memory"
    if NUMPY_READ_ONLY:
        assert ro.flags.writeable is False
        with pytest.raises(ValueError):
            ro[0, 0, 0, 0] = 1.0
    assert rw.flags.writeable is True


def test_export_keeps_the_fab_alive(fab_api):
    fab = filled(fab_api, (0, 0, 0), (3, 3, 3), 2)
    arr = np.from_dlpack(fab.array())
    del fab
    gc.collect()
    assert arr[1, 3, 3, 3] == pattern(3, 3, 3, 1)


def test_reductions_match_numpy(fab_api):
    fab = filled(fab_api, (-2, -2, -2), (5, 3, 4), 3)
    arr = np.from_dlpack(fab.const_array())
    arr_rw = np.from_dlpack(fab.array())
    arr_rw[2] *= -1.0
    for n in range(3):
        a = arr[n]
        assert fab.sum(comp=n) == pytest.approx(a.sum())
        assert fab.min(comp=n) == a.min()
        assert fab.max(comp=n) == a.max()
        assert fab.norm0(comp=n) == np.abs(a).max()
        assert fab.norm1(comp=n) == pytest.approx(np.abs(a).sum())
        assert fab.norm2(comp=n) == pytest.approx(np.sqrt((a * a).sum()))


def test_numpy_array_imports_as_a_fab(fab_api):
    a = np.arange(2 * 4 * 3 * 5, dtype=np.float64).reshape(2, 4, 3, 5)
    fab = fab_api.FArrayBox.from_dlpack(a, lo=(10, 20, 30))
    assert fab.ncomp == 2
    assert fab.box.lo == (10, 20, 30)
    assert fab.box.hi == (14, 22, 33)
    assert fab.get(11, 22, 33, 1) == a[1, 3, 2, 1]
    assert fab.sum(comp=0) == a[0].sum()
    # Zero copy: fab writes land in the NumPy array.
    fab.set_val(-1.0, start_comp=1, num_comps=1)
    assert (a[1] == -1.0).all()
    assert (a[0] == np.arange(60).reshape(4, 3, 5)).all()
    # Re-export is the same memory.
    assert np.from_dlpack(fab.array()).ctypes.data == a.ctypes.data


def test_lower_rank_arrays_import(fab_api):
    for shape, ncomp, length in [((6,), 1, (6, 1, 1)), ((3, 6), 1, (6, 3, 1)), ((2, 3, 6), 1, (6, 3, 2))]:
        a = np.ones(shape)
        fab = fab_api.FArrayBox.from_dlpack(a)
        assert fab.ncomp == ncomp
        hi = fab.box.hi
        assert tuple(h + 1 for h in hi) == length
        assert fab.sum(comp=0) == a.size


def test_bad_imports_are_refused(fab_api):
    with pytest.raises((BufferError, ValueError, TypeError)):
        fab_api.FArrayBox.from_dlpack(np.ones((4, 4), dtype=np.float32))
    with pytest.raises((BufferError, ValueError)):
        fab_api.FArrayBox.from_dlpack(np.ones((4, 6))[:, ::2])     # non-unit i stride
    with pytest.raises((BufferError, ValueError)):
        fab_api.FArrayBox.from_dlpack(np.ones((4, 4))[::-1])       # negative stride
    with pytest.raises((BufferError, ValueError)):
        fab_api.FArrayBox.from_dlpack(np.ones((1, 1, 1, 1, 4)))    # rank 5


def test_read_only_numpy_import_refuses_writes(fab_api):
    a = np.ones((2, 2, 2))
    a.flags.writeable = False
    fab = fab_api.FArrayBox.from_dlpack(a)
    assert fab.sum(comp=0) == 8.0
    if NUMPY_READ_ONLY:
        with pytest.raises((BufferError, ValueError)):
            fab.set_val(0.0)


def test_array4_three_indices_read_component_zero(amr):
    a = np.arange(24.0).reshape(1, 2, 3, 4)  # (ncomp, nz, ny, nx)
    arr = amr.Array4(a, begin=(10, 20, 30))
    assert arr[13, 22, 31] == a[0, 1, 2, 3]
    arr[10, 20, 30] = -5.0
    assert a[0, 0, 0, 0] == -5.0 and arr[10, 20, 30, 0] == -5.0
    # pyAMReX (src/Base/Array4.H, __getitem__ with three ints): AMReX's a(i, j, k) is
    # component 0, also on a view with more components.
    two = amr.Array4(np.array([1.0, 2.0]).reshape(2, 1, 1, 1))
    assert two[0, 0, 0] == 1.0 and two[0, 0, 0, 1] == 2.0
    with pytest.raises(TypeError, match="got str"):
        arr["x"]
    with pytest.raises(IndexError):
        arr[14, 20, 30]
