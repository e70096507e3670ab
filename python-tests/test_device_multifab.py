"""A MultiFab in device memory, without a GPU: on the test arena (host memory behind
pointers that fault if the host dereferences them, reported as CUDA device 0) every
device operation runs through the same kernel interface a GPU uses, and must agree with
the same operation on a host MultiFab bit for bit (sums to rounding). The test arena's
kernels are the host loops, so this checks the plumbing (dispatch, regions, copies,
errors), not device arithmetic: no GPU has run these operations yet."""

import numpy as np
import pytest

import amrex_rs as amr


def layout(n=16, max_size=8):
    ba = amr.BoxArray(amr.Box((0, 0, 0), (n - 1, n - 1, n - 1)), max_size)
    return ba, amr.DistributionMapping(ba)


def host_copy(mf):
    """Every fab of `mf` (ghost cells included) as NumPy arrays, through DLPack copies."""
    return [np.from_dlpack(t, device="cpu", copy=True) for t in (mf.array(m) for m in mf.mfiter())]


def same(d, h):
    for x, y in zip(host_copy(d), h.to_numpy(order="C", ghosts=True)):
        np.testing.assert_array_equal(x, y)


@pytest.mark.testing_build
def test_reports_the_device():
    ba, dm = layout()
    d = amr.MultiFab(ba, dm, 2, 1, arena=amr._debug_fake_device_arena())
    assert d.arena.kind == "device" and d.arena.backend == "fake"
    assert d.arena.dl_device == (2, 0)
    t = d.array(next(iter(d)))
    assert t.__dlpack_device__() == (2, 0)
    with pytest.raises((BufferError, RuntimeError)):  # NumPy refuses a CUDA tensor
        np.from_dlpack(t)
    with pytest.raises(ValueError, match="stream=0"):
        t.__dlpack__(stream=0)
    t.__dlpack__(stream=1)
    t.__dlpack__(stream=-1)
    with pytest.raises(BufferError):
        d.to_numpy()
    assert amr.MultiFab(ba, dm, 1).arena.kind == "host"


@pytest.mark.testing_build
def test_device_ops_match_the_host():
    ba, dm = layout()
    h = amr.MultiFab(ba, dm, 3, 2)
    d = amr.MultiFab(ba, dm, 3, 2, arena=amr._debug_fake_device_arena())
    x_h = amr.MultiFab(ba, dm, 3, 2)
    x_d = amr.MultiFab(ba, dm, 3, 2, arena=amr._debug_fake_device_arena())
    for mf in (h, d):
        mf.set_val(0.5, 0, 1, 2)
        mf.set_val(-1.25, 1, 2, 1)
        mf.plus(3.0, 2, 1, 0)
        mf.mult(0.1, 0, 3, 2)
    for x in (x_h, x_d):
        x.set_val(2.0, 0, 3, 2)
        x.plus(0.3, 1, 1, 1)
    same(d, h)
    amr.MultiFab.saxpy(h, 0.7, x_h, 0, 1, 2, 1)
    amr.MultiFab.saxpy(d, 0.7, x_d, 0, 1, 2, 1)
    amr.MultiFab.xpay(h, 1.3, x_h, 1, 0, 1, 0)
    amr.MultiFab.xpay(d, 1.3, x_d, 1, 0, 1, 0)
    amr.MultiFab.copy(h, x_h, 2, 2, 1, 2)
    amr.MultiFab.copy(d, x_d, 2, 2, 1, 2)
    amr.MultiFab.add(h, x_h, 0, 0, 3, 0)
    amr.MultiFab.add(d, x_d, 0, 0, 3, 0)
    same(d, h)
    # Ghost cells from the neighbours (periodic), from the same plan.
    h.set_val(7.0, 0, 3, 2)
    d.set_val(7.0, 0, 3, 2)
    h.fill_boundary((True, True, True))
    d.fill_boundary((True, True, True))
    same(d, h)
    for comp in range(3):
        assert d.sum(comp) == pytest.approx(h.sum(comp), rel=1e-12)
        assert d.norm2(comp) == pytest.approx(h.norm2(comp), rel=1e-12)
        assert d.norm1(comp) == pytest.approx(h.norm1(comp), rel=1e-12)
        assert d.norm0(comp) == h.norm0(comp)
        assert d.min(comp) == h.min(comp) and d.max(comp) == h.max(comp)
        assert d.dot(comp, x_d, comp, 1) == pytest.approx(h.dot(comp, x_h, comp, 1), rel=1e-12)
    # ParallelCopy onto another BoxArray, as on the host.
    ba2 = amr.BoxArray(amr.Box((0, 0, 0), (15, 15, 15)), 6)
    dm2 = amr.DistributionMapping(ba2)
    h2 = amr.MultiFab(ba2, dm2, 3, 1)
    d2 = amr.MultiFab(ba2, dm2, 3, 1, arena=amr._debug_fake_device_arena())
    h2.parallel_copy(h, (True, True, True))
    d2.parallel_copy(d, (True, True, True))
    same(d2, h2)
    back = d.to_host()
    assert back.arena.kind == "host"
    for a, b in zip(back.to_numpy(order="C", ghosts=True), h.to_numpy(order="C", ghosts=True)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.testing_build
def test_host_only_operations_say_so():
    ba, dm = layout()
    d = amr.MultiFab(ba, dm, 1, 1, arena=amr._debug_fake_device_arena())
    d.set_val(2.0, 0, 1, 1)
    d[3, 4, 5, 0] = 7.5  # through a host copy, as pyAMReX does on GPUs
    assert d[3, 4, 5, 0] == 7.5 and d[0, 0, 0, 0] == 2.0
    assert float(np.sum(d[:, :, :, 0])) == pytest.approx(2.0 * 16**3 + 5.5)
    with pytest.raises(NotImplementedError, match="device memory.*to_host"):
        d.abs()
    h = amr.MultiFab(ba, dm, 1, 1)
    d2 = amr.MultiFab(ba, dm, 1, 1, arena=amr._debug_fake_device_arena())
    with pytest.raises(NotImplementedError, match="subtract"):
        amr.MultiFab.subtract(d, d2, 0, 0, 1)
    with pytest.raises(ValueError, match="same kind of memory"):
        amr.MultiFab.copy(d, h, 0, 0, 1)
    with pytest.raises(IndexError):
        d.set_val(1.0, 1, 1)
    with pytest.raises(ValueError):
        d.plus(1.0, 0, 1, 2)


def test_gpu_arenas_fail_cleanly_without_a_gpu():
    ba, dm = layout()
    try:
        dev = amr.The_Device_Arena()
    except RuntimeError as e:  # a GPU build without a usable device
        msg = str(e)
        assert "CUDA" in msg or "not compiled" in msg, msg
        with pytest.raises(RuntimeError):
            amr.MultiFab(ba, dm, 1, 0, arena="device")
    else:
        if dev.kind == "device":
            pytest.skip("this machine has a GPU: test_gpu.py covers it")
        # A build without GPU backends: The_Device_Arena() is host memory (AMReX's CPU
        # builds), but asking for arena="device" by name still fails loudly.
        assert dev.kind == "host" and not amr.Config.have_gpu
        with pytest.raises(RuntimeError, match="not compiled"):
            amr.MultiFab(ba, dm, 1, 0, arena="device")
    with pytest.raises(ValueError, match="arena must be"):
        amr.MultiFab(ba, dm, 1, 0, arena="gpu")


def test_nvrtc_is_found_in_the_wheel():
    """The CUDA kernels are compiled by NVRTC; its wheel's folder is not on the loader's
    path, so importing the package points the extension at it."""
    import importlib.util
    import os
    import subprocess
    import sys

    if importlib.util.find_spec("nvidia") is None:
        pytest.skip("the nvidia-cuda-nvrtc-cu12 wheel is not installed")
    env = {k: v for k, v in os.environ.items() if k != "AMREX_NVRTC_LIBRARY"}
    out = subprocess.run(
        [sys.executable, "-c", "import os, amrex_rs; print(os.environ['AMREX_NVRTC_LIBRARY'])"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()
    assert os.path.basename(out).startswith("libnvrtc.so.") and os.path.exists(out), out
