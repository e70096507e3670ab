"""Global indexing of a MultiFab (pyAMReX / WarpX fields.py semantics)."""

import numpy as np
import pytest

N, NG, NC = 16, 2, 2


def pattern(i, j, k, n):
    """What fill_cell_index_pattern writes (periodic images for ghost cells)."""
    i, j, k = np.asarray(i) % N, np.asarray(j) % N, np.asarray(k) % N
    return i + 100.0 * j + 10000.0 * k + 1e6 * np.asarray(n)


@pytest.fixture
def mf(amr):
    ba = amr.BoxArray(amr.Box((0, 0, 0), (N - 1, N - 1, N - 1)), max_size=8)
    m = amr.MultiFab(ba, amr.DistributionMapping(ba), NC, NG)
    m.fill_cell_index_pattern()
    m.fill_boundary(periodic=(True, True, True))
    return m


def grid(*axes):
    return np.meshgrid(*axes, indexing="ij")


def test_ellipsis_is_every_valid_cell(mf):
    a = mf[...]
    assert isinstance(a, np.ndarray) and a.shape == (N, N, N, NC)
    i, j, k, n = grid(range(N), range(N), range(N), range(NC))
    np.testing.assert_array_equal(a, pattern(i, j, k, n))
    assert mf.shape == (N, N, N, NC)
    assert mf.shape_with_ghosts == (N + 2 * NG,) * 3 + (NC,)


def test_lines_points_and_the_component_last(mf):
    line = mf[:, 5, 6]
    assert line.shape == (N, NC)
    np.testing.assert_array_equal(line, pattern(*grid(range(N), [5], [6], range(NC))).reshape(N, NC))
    np.testing.assert_array_equal(mf[:, 5, 6, 1], pattern(np.arange(N), 5, 6, 1))
    v = mf[3, 4, 5, 1]
    assert np.ndim(v) == 0 and v == pattern(3, 4, 5, 1)
    assert mf[-1, 0, 0, 0] == pattern(N - 1, 0, 0, 0)
    np.testing.assert_array_equal(mf[2:5, 7, 7, 0], pattern(np.arange(2, 5), 7, 7, 0))
    assert mf[1:3, 2:4, 9].shape == (2, 2, NC)


def test_imaginary_indices_reach_ghost_cells(mf):
    low = mf[-1j:, 0, 0, 0]
    assert low.shape == (N + 1,)
    np.testing.assert_array_equal(low, pattern(np.arange(-1, N), 0, 0, 0))
    high = mf[:2j, 3, 3, 1]  # stop 2j = last valid + 2 (exclusive): one upper ghost
    np.testing.assert_array_equal(high, pattern(np.arange(0, N + 1), 3, 3, 1))
    assert mf[-2j, 0, 0, 0] == pattern(-2, 0, 0, 0)
    assert mf[1j, 1j, 1j, 0] == pattern(N, N, N, 0)


def test_empty_tuple_means_with_ghosts(mf):
    everything = mf[()]
    assert everything.shape == (N + 2 * NG,) * 3 + (NC,)
    r = range(-NG, N + NG)
    np.testing.assert_array_equal(everything, pattern(*grid(r, r, r, range(NC))))
    np.testing.assert_array_equal(mf[(), 3, 3, 0], pattern(np.arange(-NG, N + NG), 3, 3, 0))


def test_regions_not_covered_by_any_box_read_zero(amr):
    ba = amr.BoxArray([amr.Box((0, 0, 0), (3, 3, 3)), amr.Box((8, 0, 0), (11, 3, 3))])
    m = amr.MultiFab(ba, amr.DistributionMapping(ba), 1, 0)
    m.set_val(2.0)
    row = m[:, 1, 1]
    assert row.shape == (12,)
    np.testing.assert_array_equal(row, [2.0] * 4 + [0.0] * 4 + [2.0] * 4)


def test_refusals(mf):
    with pytest.raises(IndexError, match="step"):
        mf[::2]
    with pytest.raises(IndexError, match="too many indices"):
        mf[0, 0, 0, 0, 0]
    with pytest.raises(IndexError, match="outside"):
        mf[N + NG, 0, 0]
    with pytest.raises(IndexError, match="components"):
        mf[:, :, :, 0:3]
    with pytest.raises(IndexError, match="purely imaginary"):
        mf[1 + 1j]
    with pytest.raises(TypeError, match="got str"):
        mf["a"]
    with pytest.raises(IndexError, match="single ellipsis"):
        mf[..., 0, ...]


def test_set_scalar_reaches_valid_and_ghost_cells(amr, mf):
    mf[8, 0, 0, 0] = -3.0
    assert mf[8, 0, 0, 0] == -3.0
    # The box 0..7 holds i = 8 as a ghost cell: pyAMReX writes ghosts too.
    seen = 0
    for arr, (lo, hi) in zip(mf.to_numpy(ghosts=True, order="F"), mf.boxes(ghosts=True)):
        if lo[0] <= 8 <= hi[0] and lo[1] <= 0 <= hi[1] and lo[2] <= 0 <= hi[2]:
            assert arr[8 - lo[0], -lo[1], -lo[2], 0] == -3.0
            seen += 1
    assert seen >= 2
    mf[2:4, :, 7] = 5.0
    assert (mf[2:4, :, 7] == 5.0).all()
    assert mf[1, 0, 7, 0] == pattern(1, 0, 7, 0)
    mf[...] = 1.5
    assert mf.sum(0) == 1.5 * N**3


def test_set_from_numpy_arrays(mf):
    line = np.arange(N, dtype=np.float64) * 2.0
    mf[:, 5, 6, 0] = line
    np.testing.assert_array_equal(mf[:, 5, 6, 0], line)
    np.testing.assert_array_equal(mf[:, 5, 6, 1], pattern(np.arange(N), 5, 6, 1))
    mf[:, 9, 9] = line  # pyAMReX: a missing component axis broadcasts over components
    np.testing.assert_array_equal(mf[:, 9, 9], np.stack([line, line], axis=1))
    plane = np.random.default_rng(1).random((N, N, NC))
    mf[:, :, 3] = plane
    np.testing.assert_array_equal(mf[:, :, 3], plane)
    full = np.random.default_rng(2).random((N, N, N, NC))
    mf[...] = full
    np.testing.assert_array_equal(mf[...], full)
    mf[...] = mf[...] * 2.0
    np.testing.assert_array_equal(mf[...], full * 2.0)
    mf[:, :, :, 1] = np.ones((N, N, N), dtype=np.int32)  # converted to float64
    assert mf.sum(1) == N**3
    with pytest.raises(ValueError, match="cannot assign an array of shape"):
        mf[:, 5, 6, 0] = np.zeros(N + 1)


def test_read_returns_a_copy(mf):
    a = mf[...]
    a[...] = 0.0
    assert mf[3, 3, 3, 0] == pattern(3, 3, 3, 0)


def test_unary_ops_abs_negate_invert(amr, mf):
    mf.negate()
    assert mf[3, 4, 5, 1] == -pattern(3, 4, 5, 1)
    mf.abs(comp=1, ncomp=1)
    assert mf[3, 4, 5, 1] == pattern(3, 4, 5, 1) and mf[3, 4, 5, 0] == -pattern(3, 4, 5, 0)
    mf.set_val(4.0)
    mf.invert(2.0, comp=0, ncomp=1)
    assert mf[0, 0, 0, 0] == 0.5 and mf[0, 0, 0, 1] == 4.0
    with pytest.raises(IndexError):
        mf.abs(comp=3)


def test_lin_comb_add_product_parallel_copy(amr, mf):
    ba, dm = mf.box_array(), mf.dm()
    x = amr.MultiFab(ba, dm, NC, NG)
    y = amr.MultiFab(ba, dm, NC, NG)
    x.set_val(2.0)
    y.set_val(3.0)
    amr.MultiFab.lin_comb(mf, 0.5, x, 0, 2.0, y, 1, 1, 1)
    assert mf[1, 1, 1, 1] == 0.5 * 2.0 + 2.0 * 3.0
    assert mf[1, 1, 1, 0] == pattern(1, 1, 1, 0)
    amr.MultiFab.add_product(mf, x, 0, y, 0, 0, 1)
    assert mf[1, 1, 1, 0] == pattern(1, 1, 1, 0) + 6.0
    other = amr.BoxArray(amr.Box((0, 0, 0), (N - 1, N - 1, N - 1)), max_size=4)
    z = amr.MultiFab(other, amr.DistributionMapping(other), NC, 0)
    z.parallel_copy(mf)
    np.testing.assert_array_equal(z[...], mf[...])
    wrong = amr.MultiFab(other, amr.DistributionMapping(other), 1, 0)
    with pytest.raises(ValueError, match="components"):
        wrong.parallel_copy(mf)
    with pytest.raises(ValueError, match="different BoxArrays"):
        amr.MultiFab.lin_comb(z, 1.0, x, 0, 1.0, y, 0, 0, 1)
    assert mf.n_comp == NC and tuple(mf.n_grow_vect) == (NG, NG, NG)


def test_nan_inf_norminf_minus_swap(amr, mf):
    assert not mf.contains_nan() and not mf.contains_inf()
    mf[3, 3, 3, 1] = float("nan")
    assert mf.contains_nan() and mf.contains_nan(comp=1, ncomp=1) and not mf.contains_nan(comp=0, ncomp=1)
    mf[(), (), (), 0] = 1.0
    mf[-1j, 0, 0, 0] = float("inf")  # a ghost cell: found only with ngrow
    assert not mf.contains_inf(comp=0, ncomp=1) and mf.contains_inf(comp=0, ncomp=1, ngrow=1)
    mf[5, 5, 5, 0] = -7.0
    assert mf.norminf(0) == 7.0 == mf.norm0(0)
    other = amr.MultiFab(mf.box_array(), mf.dm(), NC, NG)
    other.set_val(0.25)
    mf.minus(other, 0, 1)
    assert mf[0, 0, 0, 0] == 0.75 and np.isnan(mf[3, 3, 3, 1])
    before_mf, before_other = mf[..., 0], other[..., 1]
    amr.MultiFab.swap(mf, other, 1, 0, 1)
    np.testing.assert_array_equal(mf[..., 0], before_other)
    np.testing.assert_array_equal(other[..., 1], before_mf)
