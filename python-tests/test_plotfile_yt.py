"""yt reads the plotfiles amrex_rs writes: a two-level hierarchy with its grids, levels,
field values and cell volumes as written (yt's AMReX frontend, `yt.load`)."""

import numpy as np
import pytest

yt = pytest.importorskip("yt")

N = 16


def level(amr, lo, n, max_size, value):
    ba = amr.BoxArray(amr.Box((lo,) * 3, (lo + n - 1,) * 3), max_size=max_size)
    mf = amr.MultiFab(ba, amr.DistributionMapping(ba), 1, 0)
    mf.fill_cell_index_pattern()
    mf.plus(value)
    return mf


def test_yt_reads_a_two_level_plotfile(amr, tmp_path):
    yt.set_log_level(40)
    coarse = level(amr, 0, N, 8, 0.0)
    fine = level(amr, 8, N, 8, 1000.0)  # refines coarse cells 4..11 by 2, in 8 boxes
    d = tmp_path / "plt_yt"
    amr.write_multi_level_plotfile(str(d), [coarse, fine], ["phi"], [2], prob_hi=(2.0, 2.0, 2.0), time=0.25, steps=[1, 2])
    ds = yt.load(str(d))
    assert ds.index.max_level == 1
    assert list(ds.domain_dimensions) == [N] * 3
    assert float(ds.current_time) == 0.25
    assert np.allclose(ds.domain_right_edge.d, 2.0)
    grids = ds.index.grids
    assert sorted(int(g.Level) for g in grids) == [0] * 8 + [1] * 8
    # Every fine grid's values are the fine MultiFab's (yt indexes them x, y, z).
    want = fine[...]
    for g in grids:
        if int(g.Level) != 1:
            continue
        lo = g.get_global_startindex()
        sl = tuple(slice(int(lo[d]) - 8, int(lo[d]) - 8 + int(g.ActiveDimensions[d])) for d in range(3))
        np.testing.assert_array_equal(g["boxlib", "phi"].d, want[sl + (0,)] if want.ndim == 4 else want[sl])
    # all_data() takes each point from the finest level holding it: the coarse cells the
    # fine level covers are left out, so the cell count and the volume-weighted sum are
    # those of the composite grid.
    ad = ds.all_data()
    assert ad["boxlib", "phi"].size == N**3 - 8**3 + 16**3
    vol = ad["index", "cell_volume"].d
    assert np.isclose(vol.sum(), 8.0)
