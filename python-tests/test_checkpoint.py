"""Checkpoints from Python: `write_checkpoint`, `read_checkpoint_header`,
`read_checkpoint_multifab` and `AmrMesh.restore_grids` (round trips, and each refusal
raised before anything is written or changed); and the Python port of AMReX's
Advection_AmrCore tutorial (examples/advection_amr.py) writing and restarting from
checkpoints: its checkpoints byte for byte the Rust port's (AMReX's format), and a
restart from AMReX's own chk00020 against AMReX's restart run."""
import filecmp
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from test_amr_core import PORT, ROOT, compare_plotfiles, exe_of, printed, run_port

amr = pytest.importorskip("amrex_rs")
# AMReX's run with checkpoints every 10 steps, and its restart from chk00020 (restart/).
CHK = ROOT.parent / "shared" / "data" / "amrex-checkpoint"
# The 32x32x8 case: a few steps take seconds.
SMALL = ROOT.parent / "shared" / "data" / "amrex-advection-more" / "phierr2"


def level(lo, hi, max_size, ncomp, ngrow, offset):
    ba = amr.BoxArray(amr.Box(lo, hi), max_size=max_size)
    mf = amr.MultiFab(ba, amr.DistributionMapping(ba), ncomp, ngrow)
    mf.fill_cell_index_pattern()
    mf.plus(offset)
    return mf


def two_levels(ncomp=1, ngrow=0, offset=0.0):
    """Level 0 on 16^3 in 8^3 boxes, level 1 on its refined middle in two boxes."""
    return [level((0, 0, 0), (15, 15, 15), 8, ncomp, ngrow, offset),
            level((8, 8, 8), (23, 23, 15), 8, ncomp, ngrow, offset + 0.5)]


def boxes(ba):
    return [(ba[i].lo, ba[i].hi) for i in range(len(ba))]


def same_values(a, b):
    assert boxes(a.box_array()) == boxes(b.box_array())
    assert (a.ncomp, tuple(a.n_grow)) == (b.ncomp, tuple(b.n_grow))
    for mfi in a:
        np.testing.assert_array_equal(np.from_dlpack(b.array(mfi)), np.from_dlpack(a.array(mfi)))


def write_sample(d):
    phi, vel = two_levels(), two_levels(ncomp=3, ngrow=1, offset=100.0)
    amr.write_checkpoint(str(d), {"phi": phi, "vel": vel}, [[20, 40], [0.1, 0.2], [1, 2.5]], title="A test")
    return phi, vel


# ---- the bindings ------------------------------------------------------------------------


def test_round_trip_with_two_fields_and_lines(tmp_path):
    d = tmp_path / "chk00020"
    phi, vel = write_sample(d)
    assert sorted(p.name for p in d.iterdir()) == ["Header", "Level_0", "Level_1"]
    assert sorted(p.name for p in (d / "Level_1").iterdir()) == ["phi_D_00000", "phi_H", "vel_D_00000", "vel_H"]
    assert not list(tmp_path.glob("*.partial"))
    text = (d / "Header").read_text()
    # AMReX's layout: title, finest level, the lines (ints as ints, each value followed by
    # a space; a line with a float all reals, 17 digits), then each level's BoxArray.
    assert text.startswith("A test\n1\n20 40 \n0.10000000000000001 0.20000000000000001 \n1 2.5 \n(8 0\n((0,0,0) (7,7,7) (0,0,0))\n")
    h = amr.read_checkpoint_header(str(d))
    assert h.title == "A test" and h.finest_level == 1
    assert h.lines == ["20 40 ", "0.10000000000000001 0.20000000000000001 ", "1 2.5 "]
    assert h.ints(0) == [20, 40] and h.reals(1) == [0.1, 0.2] and h.reals(2) == [1.0, 2.5]
    assert h.to_text() == text
    assert [boxes(g) for g in h.grids] == [boxes(m.box_array()) for m in phi]
    assert "finest_level=1" in repr(h)
    for lev, ba in enumerate(h.grids):
        dm = amr.DistributionMapping(ba)
        same_values(phi[lev], amr.read_checkpoint_multifab(str(d), lev, "phi", ba, dm))
        same_values(vel[lev], amr.read_checkpoint_multifab(d, lev, "vel", ba, dm))  # ghost cells too
    with pytest.raises(ValueError, match="an integer"):
        h.ints(1)
    with pytest.raises(ValueError, match="found 3 lines"):
        h.reals(3)


def test_writing_again_moves_the_old_checkpoint_aside(tmp_path):
    d = tmp_path / "chk"
    amr.write_checkpoint(d, {"phi": two_levels()}, [[1]])
    amr.write_checkpoint(d, {"phi": two_levels(offset=1.0)}, [[2]])
    assert amr.read_checkpoint_header(d).ints(0) == [2]
    (old,) = tmp_path.glob("chk.old.*")
    assert amr.read_checkpoint_header(old).ints(0) == [1]
    assert amr.read_checkpoint_header(d).title == "Checkpoint file"


@pytest.mark.parametrize("fields, lines, kwargs, exc, match", [
    ({}, None, {}, ValueError, "no fields"),
    ({"phi": []}, None, {}, ValueError, "no levels"),
    ("phi", None, {}, TypeError, "Mapping"),
    ({"phi": "MF"}, None, {}, TypeError, "is one MultiFab; give a list, one per level"),
    ({"phi": [1, 2]}, None, {}, TypeError, "not a list of MultiFabs"),
    ({"a/b": "LEVELS"}, None, {}, ValueError, "plain file name"),
    ({"..": "LEVELS"}, None, {}, ValueError, "plain file name"),
    ({"phi": "LEVELS", "vel": "ONE_LEVEL"}, None, {}, ValueError, "has 1 levels, the header's grids 2"),
    ({"phi": "LEVELS", "vel": "OTHER_GRIDS"}, None, {}, ValueError, "not on the header's grids"),
    ({"phi": "LEVELS"}, [[1, float("nan")]], {}, ValueError, "finite"),
    ({"phi": "LEVELS"}, [[1, "two"]], {}, TypeError, "ints or floats"),
    ({"phi": "LEVELS"}, ["20 40"], {}, TypeError, "not a list of ints or floats"),
    ({"phi": "LEVELS"}, [[True]], {}, TypeError, "ints or floats"),
    ({"phi": "LEVELS"}, [[2**70]], {}, OverflowError, "int too big|too large|overflow"),
    ({"phi": "LEVELS"}, None, {"title": "two\nlines"}, ValueError, "not one line"),
])
def test_write_refusals_write_nothing(tmp_path, fields, lines, kwargs, exc, match):
    levels = two_levels()
    swap = {"MF": levels[0], "LEVELS": levels, "ONE_LEVEL": levels[:1],
            "OTHER_GRIDS": [levels[0], level((0, 0, 0), (15, 15, 15), 8, 1, 0, 0.0)]}
    if isinstance(fields, dict):
        fields = {k: swap.get(v, v) if isinstance(v, str) else v for k, v in fields.items()}
    with pytest.raises(exc, match=match):
        amr.write_checkpoint(tmp_path / "chk", fields, lines, **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_numpy_numbers_in_lines(tmp_path):
    amr.write_checkpoint(tmp_path / "c", {"phi": two_levels()}, [np.array([3, 4]), np.array([0.5], dtype=np.float32)])
    h = amr.read_checkpoint_header(tmp_path / "c")
    assert h.lines == ["3 4 ", "0.5 "]


def corrupt(d, old, new):
    text = (d / "Header").read_text()
    assert old in text
    (d / "Header").write_text(text.replace(old, new, 1))


@pytest.mark.parametrize("edit, match", [
    (lambda t: t[:len(t) // 2], r"Header:\d+: expected"),  # truncated in level 0's boxes
    # 9 boxes, 8 listed: line 15 is level 0's `)` where a ninth box should be.
    (lambda t: t.replace("(8 0", "(9 0", 1), r"Header:15: expected level 0's BoxArray: '\(', found '\)'"),
    # 3 boxes, 4 listed: the fourth where level 1's `)` should be.
    (lambda t: t.replace("(4 0", "(3 0", 1), r"Header:\d+: expected level 1's BoxArray: '\)', found '\('"),
    # Finest level 2, two BoxArrays.
    (lambda t: t.replace("A test\n1\n", "A test\n2\n", 1), r"Header:22: expected level 2's BoxArray: '\(', found the end of the file"),
    (lambda t: t.replace("A test\n1\n", "A test\n999\n", 1), r"Header:2: expected the finest level, an integer below 128"),
    (lambda t: t.replace("A test\n1\n", "A test\nx\n", 1), r"Header:2: expected the finest level"),
    (lambda t: t + "(1 0\n", r"Header:22: expected the end of the file after the 2 BoxArrays"),
    (lambda t: t.replace("((8,8,0) (15,15,7) (0,0,0))", "((8,8,0) (7,15,7) (0,0,0))", 1),
     r"Header:\d+: expected level 0's BoxArray: a non-empty cell-centred box"),
    (lambda t: "", r"Header:\d+: expected"),
])
def test_a_corrupt_header_is_a_value_error_naming_the_line(tmp_path, edit, match):
    d = tmp_path / "chk"
    write_sample(d)
    (d / "Header").write_text(edit((d / "Header").read_text()))
    with pytest.raises(ValueError, match=match):
        amr.read_checkpoint_header(d)


def test_missing_files_are_os_errors_naming_them(tmp_path):
    with pytest.raises(OSError, match="nowhere/Header"):
        amr.read_checkpoint_header(tmp_path / "nowhere")
    d = tmp_path / "chk"
    write_sample(d)
    h = amr.read_checkpoint_header(d)
    shutil.rmtree(d / "Level_1")
    ba = h.grids[1]
    with pytest.raises(OSError, match="Level_1/phi_H"):
        amr.read_checkpoint_multifab(d, 1, "phi", ba, amr.DistributionMapping(ba))
    with pytest.raises(OSError, match="Level_0/rho_H"):
        amr.read_checkpoint_multifab(d, 0, "rho", h.grids[0], amr.DistributionMapping(h.grids[0]))
    # Level 0's data on level 1's grids: the boxes differ.
    with pytest.raises(ValueError, match="boxes"):
        amr.read_checkpoint_multifab(d, 0, "phi", ba, amr.DistributionMapping(ba))
    with pytest.raises(ValueError, match="the map has 4 boxes, the grids 8"):
        amr.read_checkpoint_multifab(d, 0, "phi", h.grids[0], amr.DistributionMapping(ba))
    # A truncated data file.
    data = d / "Level_0" / "phi_D_00000"
    data.write_bytes(data.read_bytes()[:1000])
    with pytest.raises(ValueError, match="phi_D_00000"):
        amr.read_checkpoint_multifab(d, 0, "phi", h.grids[0], amr.DistributionMapping(h.grids[0]))


def mesh(max_level):
    g = amr.Geometry(amr.Box((0, 0, 0), (15, 15, 15)), amr.RealBox((0, 0, 0), (1, 1, 1)),
                     amr.CoordSys.CoordType.cartesian, [1, 1, 1])
    i = amr.AmrInfo()
    i.max_level = max_level
    i.blocking_factor = [4]
    i.max_grid_size = [8]
    return amr.AmrMesh(g, i)


def test_restore_grids(tmp_path):
    d = tmp_path / "chk"
    write_sample(d)
    grids = amr.read_checkpoint_header(d).grids
    m = mesh(2)
    m.restore_grids(grids)
    assert m.finest_level == 1
    assert [boxes(m.box_array(lev)) for lev in (0, 1)] == [boxes(g) for g in grids]
    assert len(m.distribution_map(1)) == 4
    phi = amr.read_checkpoint_multifab(d, 1, "phi", m.box_array(1), m.distribution_map(1))
    same_values(two_levels()[1], phi)
    # Grids that do not fit: ValueError naming the level and the problem; nothing changes.
    one_box = amr.BoxArray([amr.Box((0, 0, 0), (7, 7, 7))])
    outside = amr.BoxArray([amr.Box((24, 24, 24), (39, 39, 39))])
    for bad, match in [
        ([grids[0], grids[1], grids[1]], "finest level 2 is above amr.max_level = 1"),
        ([], "no levels"),
        ([one_box], "cover 512 of the 4096 cells"),
        ([grids[0], outside], "outside the domain"),
    ]:
        small = mesh(1)
        small.restore_grids(grids[:1])
        with pytest.raises(ValueError, match=match):
            small.restore_grids(bad)
        assert small.finest_level == 0 and boxes(small.box_array(0)) == boxes(grids[0])
    with pytest.raises(TypeError):
        m.restore_grids([grids[0], "level 1"])


# ---- the tutorial's checkpoints and restarts ----------------------------------------------


def checkpoint_files(d):
    return sorted(str(p.relative_to(d)) for p in Path(d).rglob("*") if p.is_file())


def same_checkpoint(a, b):
    """Every file of checkpoint `a` byte for byte in `b`, and no other."""
    assert checkpoint_files(a) == checkpoint_files(b), (a, b)
    for f in checkpoint_files(a):
        assert filecmp.cmp(Path(a) / f, Path(b) / f, shallow=False), f"{b}/{f} differs from {a}/{f}"


def test_python_ports_checkpoints_are_the_rust_ports(tmp_path):
    """Four coarse steps of the 32x32x8 case with a checkpoint every two: chk00000,
    chk00002 and chk00004 byte for byte the Rust port's (which are AMReX's); a restart
    of the Python port from its chk00002 prints the run's lines from step 3 on and
    writes the same chk00004; and the same, written by the Rust port, without
    subcycling."""
    if not (SMALL / "inputs").exists():
        pytest.skip(f"no AMReX reference run at {SMALL}")
    for subcycle in ("1", "0"):
        args = [SMALL / "inputs", "max_step=4", "amr.chk_int=2", "amr.plot_int=-1", f"adv.do_subcycle={subcycle}"]
        rust_dir, py_dir, again = tmp_path / f"rust{subcycle}", tmp_path / f"py{subcycle}", tmp_path / f"again{subcycle}"
        for d in (rust_dir, py_dir, again):
            d.mkdir()
        subprocess.run([exe_of("advection_amr")] + [str(a) for a in args], cwd=rust_dir, check=True,
                       capture_output=True, timeout=300)
        out = run_port(args, py_dir)
        assert [line for line in printed(out) if "checkpoint" in line] == [
            "Writing checkpoint chk00000", "Writing checkpoint chk00002", "Writing checkpoint chk00004"]
        for c in ("chk00000", "chk00002", "chk00004"):
            same_checkpoint(rust_dir / c, py_dir / c)
        shutil.copytree(rust_dir / "chk00002", again / "chk00002")
        resumed = run_port(args + ["amr.restart=chk00002"], again)
        lines = printed(out)
        assert printed(resumed) == ["Successfully read inputs file ... ", "Restart from checkpoint chk00002"] + \
            lines[lines.index("Coarse STEP 3 starts ..."):]
        same_checkpoint(py_dir / "chk00004", again / "chk00004")


@pytest.mark.skipif(not (CHK / "restart" / "inputs").exists(), reason=f"no AMReX checkpoint run at {CHK}")
def test_python_port_restarts_from_amrexs_checkpoint(tmp_path):
    """AMReX's chk00020 restarted by the Python port (AMReX's restart inputs): it prints
    what AMReX's restart printed (the regrid's new distribution maps included), and
    writes AMReX's plt00020 again, then plt00040 (to 1e-12) and chk00040 byte for byte as
    AMReX's restart did (which are those of AMReX's uninterrupted run)."""
    shutil.copytree(CHK / "chk00020", tmp_path / "chk00020")
    out = run_port([CHK / "restart" / "inputs"], tmp_path)
    assert printed(out) == printed((CHK / "restart" / "stdout.txt").read_text())
    compare_plotfiles(CHK / "plt00020", tmp_path / "plt00020")
    compare_plotfiles(CHK / "restart" / "plt00040", tmp_path / "plt00040")
    same_checkpoint(CHK / "restart" / "chk00040", tmp_path / "chk00040")
    same_checkpoint(CHK / "chk00040", tmp_path / "chk00040")
    # The checkpoint read back is AMReX's: the steps, dt and times of every level.
    h = amr.read_checkpoint_header(tmp_path / "chk00040")
    assert h.ints(0) == [40, 80, 160]
    assert h.reals(1) == [0.014743634391199875, 0.0073718171955999374, 0.0036859085977999687]
    assert h.reals(2) == [0.48068850047028266] * 3


@pytest.mark.skipif(not (CHK / "restart" / "inputs").exists(), reason=f"no AMReX checkpoint run at {CHK}")
def test_python_port_refuses_a_checkpoint_that_does_not_fit(tmp_path):
    """A restart with amr.max_level below the checkpoint's finest level, or from a
    checkpoint that is not there, stops with the binding's exception naming it."""
    shutil.copytree(CHK / "chk00020", tmp_path / "chk00020")
    for extra, msg in [(["amr.max_level=1"], "values of steps"),
                       (["amr.restart=chk99999"], "chk99999/Header")]:
        r = subprocess.run([sys.executable, str(PORT), str(CHK / "restart" / "inputs")]
                           + extra, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert r.returncode != 0 and msg in r.stderr, r.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chk00020"]
