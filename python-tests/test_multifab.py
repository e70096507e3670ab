"""NumPy consumer tests for amrex-multifab (API requested in notes/requests.md).

Every per-box tensor of a MultiFab, with and without ghost cells, must read the values
the Rust side wrote, and writes through NumPy must land in the MultiFab.
"""
import numpy as np
import pytest

amrex_rs = pytest.importorskip("amrex_rs")
if not hasattr(amrex_rs, "MultiFab"):
    pytest.skip("amrex_rs has no MultiFab yet", allow_module_level=True)


def f(i, j, k, n):
    return i + 100.0 * j + 10000.0 * k + 1e6 * n


def make(ngrow=(1, 2, 1), ncomp=2):
    domain = amrex_rs.Box((0, 0, 0), (15, 11, 7))
    ba = amrex_rs.BoxArray(domain, max_size=8)
    dm = amrex_rs.DistributionMapping(ba)
    mf = amrex_rs.MultiFab(ba, dm, ncomp, ngrow)
    mf.fill_cell_index_pattern()  # valid cells = f(i, j, k, n)
    mf.fill_boundary(periodic=(True, True, True))
    return domain, mf


def wrapped(p, lo, hi):
    return tuple(lo[d] + (p[d] - lo[d]) % (hi[d] - lo[d] + 1) for d in range(3))


@pytest.mark.parametrize("ghosts", [False, True])
def test_every_box_tensor_reads_right_values(ghosts):
    domain, mf = make()
    arrays = mf.to_xp(order="C", ghosts=ghosts)
    boxes = mf.boxes(ghosts=ghosts)
    assert len(arrays) == len(boxes) == mf.num_local_boxes()
    lo, hi = domain.lo, domain.hi
    for a, (blo, bhi) in zip(arrays, boxes):
        nz, ny, nx = (bhi[2] - blo[2] + 1, bhi[1] - blo[1] + 1, bhi[0] - blo[0] + 1)
        assert a.shape == (mf.ncomp, nz, ny, nx)
        n, k, j, i = np.meshgrid(
            np.arange(mf.ncomp), np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij"
        )
        gi, gj, gk = i + blo[0], j + blo[1], k + blo[2]
        wi = lo[0] + (gi - lo[0]) % (hi[0] - lo[0] + 1)
        wj = lo[1] + (gj - lo[1]) % (hi[1] - lo[1] + 1)
        wk = lo[2] + (gk - lo[2]) % (hi[2] - lo[2] + 1)
        np.testing.assert_array_equal(a, f(wi, wj, wk, n))


def test_writes_through_numpy_land_in_the_multifab():
    _, mf = make()
    arrays = mf.to_xp(order="C", ghosts=False)
    for a in arrays:
        a[1, ...] = 3.0
    assert mf.min(comp=1) == 3.0 and mf.max(comp=1) == 3.0


def test_tensor_outlives_the_multifab():
    _, mf = make()
    a = mf.to_xp(order="C", ghosts=True)[0]
    first = a.copy()
    del mf
    np.testing.assert_array_equal(a, first)
