"""Plotfiles from Python: header, lazy per-box reads, whole levels, single- and
multi-level writes (AMReX HyperCLaw-V1.1)."""

import numpy as np
import pytest

N = 16


def make_mf(amr, lo=0, n=N, ncomp=2, max_size=8, offset=0.0):
    ba = amr.BoxArray(amr.Box((lo,) * 3, (lo + n - 1,) * 3), max_size=max_size)
    mf = amr.MultiFab(ba, amr.DistributionMapping(ba), ncomp, 1)
    mf.fill_cell_index_pattern()
    if offset:
        mf.plus(offset)
    return mf


def test_single_level_round_trip(amr, tmp_path):
    mf = make_mf(amr)
    d = tmp_path / "plt00010"
    amr.write_single_level_plotfile(str(d), mf, ["rho", "phi"], prob_hi=(2.0, 2.0, 2.0), time=0.25, step=10)
    assert (d / "Header").is_file() and (d / "Level_0" / "Cell_H").is_file()
    pf = amr.Plotfile(str(d))
    assert pf.var_names == ["rho", "phi"]
    assert pf.time == 0.25 and pf.level_steps == [10] and pf.nlevels == 1
    assert pf.domain(0).lo == (0, 0, 0) and pf.domain(0).hi == (N - 1,) * 3
    assert pf.cell_size(0) == (2.0 / N,) * 3 and pf.prob_hi == (2.0, 2.0, 2.0)
    back = pf.read_level(0)
    np.testing.assert_array_equal(back[...], mf[...])
    assert pf.num_boxes(0) == 8


def test_read_box_matches_the_multifab(amr, tmp_path):
    mf = make_mf(amr)
    amr.write_single_level_plotfile(str(tmp_path / "plt"), mf, ["a", "b"])
    pf = amr.Plotfile(str(tmp_path / "plt"))
    for i, b in enumerate(pf.boxes(0)):
        (lo, hi) = b.lo, b.hi
        arr = pf.read_box(0, i)
        assert arr.shape == (8, 8, 8, 2)
        np.testing.assert_array_equal(arr, mf[lo[0]:hi[0] + 1, lo[1]:hi[1] + 1, lo[2]:hi[2] + 1])
    np.testing.assert_array_equal(pf.read_box(0, 3, var="b")[..., 0], pf.read_box(0, 3)[..., 1])
    np.testing.assert_array_equal(pf.read_box(0, 3, var=["b", 0]), pf.read_box(0, 3)[..., ::-1])
    with pytest.raises(KeyError, match='no variable "c"'):
        pf.read_box(0, 0, var="c")
    with pytest.raises(IndexError, match="box 8 out of range"):
        pf.read_box(0, 8)
    with pytest.raises(IndexError, match="level 1 out of range"):
        pf.read_box(1, 0)


def test_read_box_reads_only_its_own_bytes(amr, tmp_path):
    mf = make_mf(amr)
    d = tmp_path / "plt"
    amr.write_single_level_plotfile(str(d), mf, ["a", "b"])
    pf = amr.Plotfile(str(d))
    good = pf.read_box(0, 0)
    # Overwrite every byte after FAB 0 (FAB 1's header and data and all later FABs) with
    # garbage: box 0 still reads, box 1 and the whole level are refused.
    data = d / "Level_0" / "Cell_D_00000"
    raw = bytearray(data.read_bytes())
    end0 = raw.index(b"FAB ", 10)
    raw[end0:] = b"\xff" * (len(raw) - end0)
    data.write_bytes(bytes(raw))
    np.testing.assert_array_equal(amr.Plotfile(str(d)).read_box(0, 0), good)
    with pytest.raises(ValueError, match="FAB 1"):
        amr.Plotfile(str(d)).read_box(0, 1)
    with pytest.raises(ValueError):
        amr.Plotfile(str(d)).read_level(0)


def test_header_only_until_asked(amr, tmp_path):
    mf = make_mf(amr)
    d = tmp_path / "plt"
    amr.write_single_level_plotfile(str(d), mf, ["a", "b"])
    (d / "Level_0" / "Cell_H").unlink()
    pf = amr.Plotfile(str(d))  # reads Header only
    assert pf.var_names == ["a", "b"]
    with pytest.raises(OSError, match="Cell_H"):
        pf.boxes(0)
    with pytest.raises(OSError):
        amr.Plotfile(str(tmp_path / "missing"))


def test_multi_level_round_trip(amr, tmp_path):
    coarse = make_mf(amr)
    fine = make_mf(amr, lo=8, n=16, offset=0.5)  # a refined patch of cells 4..11
    d = tmp_path / "plt_ml"
    amr.write_multi_level_plotfile(str(d), [coarse, fine], ["a", "b"], [2], time=1.5, steps=[3, 6])
    pf = amr.Plotfile(str(d))
    assert pf.nlevels == 2 and pf.finest_level == 1
    assert pf.ref_ratio == [2] and pf.level_steps == [3, 6]
    assert pf.domain(1).hi == (2 * N - 1,) * 3
    assert pf.cell_size(1) == tuple(c / 2 for c in pf.cell_size(0))
    np.testing.assert_array_equal(pf.read_level(1)[...], fine[...])
    np.testing.assert_array_equal(pf.read_level(0)[...], coarse[...])
    b = pf.boxes(1)[0]
    np.testing.assert_array_equal(pf.read_box(1, 0), fine[b.lo[0]:b.hi[0] + 1, b.lo[1]:b.hi[1] + 1, b.lo[2]:b.hi[2] + 1])
    with pytest.raises(ValueError, match="refinement ratios"):
        amr.write_multi_level_plotfile(str(d), [coarse, fine], ["a", "b"], [])


def test_writer_refusals(amr, tmp_path):
    mf = make_mf(amr)
    with pytest.raises(ValueError, match="whitespace"):
        amr.write_single_level_plotfile(str(tmp_path / "p"), mf, ["a b", "c"])
    with pytest.raises(ValueError):
        amr.write_single_level_plotfile(str(tmp_path / "p"), mf, ["only_one"])
