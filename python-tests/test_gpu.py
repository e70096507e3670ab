"""amrex_rs on a real NVIDIA GPU: device MultiFabs, CuPy and PyTorch both ways, streams,
device kernels against the host implementation, host copies, managed and pinned memory.

The whole module skips (with the reason) where `amrex_rs.The_Device_Arena()` fails or
does not exist; single tests skip when CuPy or a CUDA build of PyTorch is missing.
`scripts/gpu-check.sh` installs both and runs this file.
"""
import numpy as np
import pytest

amr = pytest.importorskip("amrex_rs")
try:
    DEVICE = amr.The_Device_Arena()
except AttributeError as e:
    pytest.skip(f"this amrex_rs build has no GPU support ({e})", allow_module_level=True)
except RuntimeError as e:
    pytest.skip(f"no device arena: {e}", allow_module_level=True)
if DEVICE.backend != "cuda":
    pytest.skip(f"the device arena is {DEVICE.backend!r}; these tests need CUDA",
                allow_module_level=True)

# The PodVector of `float64` (pyAMReX's PODVector_real_std), whichever spelling exists.
PodVector = getattr(amr, "PodVector_real_std", None) or amr.PODVector_real_std
KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 2, 3, 13
BIG = 256  # a 256^3 box: 128 MiB, so queued kernels take long enough to race a consumer


@pytest.fixture
def cp():
    try:
        import cupy
    except ImportError as e:
        pytest.skip(f"cupy is not importable: {e}")
    try:
        float(cupy.arange(4.0).sum())  # CuPy compiles this kernel with NVRTC
    except Exception as e:  # noqa: BLE001 - any failure here is CuPy's setup, not ours
        pytest.skip(f"cupy cannot run a kernel here: {e!r}")
    return cupy


@pytest.fixture
def torch():
    try:
        import torch
    except ImportError as e:
        pytest.skip(f"torch is not importable: {e}")
    if not torch.cuda.is_available():
        pytest.skip(f"torch.cuda.is_available() is False (torch {torch.__version__})")
    return torch


def make_mf(arena, n=32, max_size=16, ncomp=2, ngrow=1):
    domain = amr.Box((0, 0, 0), (n - 1, n - 1, n - 1))
    ba = amr.BoxArray(domain, max_size=max_size)
    return amr.MultiFab(ba, amr.DistributionMapping(ba), ncomp, ngrow, arena=arena)


def by_index(mf):
    return {mfi.index: mfi for mfi in mf}


def valid(mfi):
    """The (k, j, i) slices of the valid box inside the local array of `mf.array(mfi)`."""
    f, v = mfi.fabbox(), mfi.validbox()
    return tuple(slice(v.lo[d] - f.lo[d], v.hi[d] - f.lo[d] + 1) for d in (2, 1, 0))


def device_arrays(cp, mf):
    """index -> a NumPy copy of each box (ghosts included), read through CuPy."""
    return {i: cp.asnumpy(cp.from_dlpack(mf.array(m))) for i, m in by_index(mf).items()}


# --- a. the seed loop ------------------------------------------------------------------

def seeded(mfi):
    want = np.zeros((2, 18, 18, 18))
    want[0, 1, 3, 2] = 5.0
    want[1, 4, 5, 6] = 100.0 + mfi.index
    return want


def test_seed_loop_is_zero_copy(cp):
    mf = make_mf("device")
    assert (mf.arena.kind, mf.arena.backend, mf.arena.dl_device) == ("device", "cuda", (KDL_CUDA, 0))
    mf.set_val(0.0, 0, 2, 1)
    assert len(list(mf)) == 8
    for mfi in mf:
        t = mf.array(mfi)
        assert t.__dlpack_device__() == (KDL_CUDA, 0)
        a = cp.from_dlpack(t)
        assert a.shape == (2, 18, 18, 18) and a.device.id == 0
        assert a.data.ptr == t.data_ptr() == cp.from_dlpack(mf.array(mfi)).data.ptr
        a[0, 1, 3, 2] = 5.0
        a[1, 4, 5, 6] = 100.0 + mfi.index
    for mfi in mf:  # fresh exports see the writes
        np.testing.assert_array_equal(cp.asnumpy(cp.from_dlpack(mf.array(mfi))), seeded(mfi))
    host = mf.to_host()
    assert host.arena.kind == "host"
    for mfi in host:
        np.testing.assert_array_equal(np.from_dlpack(host.array(mfi)), seeded(mfi))
    assert mf.sum(0) == 5.0 * 8
    assert mf.sum(1) == sum(100.0 + i for i in range(8))
    xs = mf.to_xp(order="C", ghosts=True)
    assert all(isinstance(x, cp.ndarray) for x in xs)
    assert {x.data.ptr for x in xs} == {cp.from_dlpack(mf.array(m)).data.ptr for m in mf}


# --- b. PyTorch both ways --------------------------------------------------------------

def test_torch_writes_are_seen_by_cupy_and_sum(cp, torch):
    mf = make_mf("device", ncomp=1)
    mf.set_val(0.0, ngrow=1)
    for mfi in mf:
        x = torch.from_dlpack(mf.array(mfi))
        assert x.device == torch.device("cuda", 0)
        assert x.data_ptr() == mf.array(mfi).data_ptr()
        x[(0, *valid(mfi))] = float(mfi.index + 1)
    for i, mfi in by_index(mf).items():
        a = cp.from_dlpack(mf.array(mfi))
        assert float(a[(0, *valid(mfi))].min()) == float(a.max()) == i + 1.0
        assert float(a.sum()) == (i + 1.0) * 16**3  # and the ghost cells are still 0
    assert mf.sum(0) == 16**3 * sum(range(1, 9))


def test_torch_tensors_are_adopted_zero_copy(cp, torch):
    t = torch.arange(2 * 4 * 3 * 5, dtype=torch.float64, device="cuda").reshape(2, 4, 3, 5)
    fab = amr.FArrayBox.from_dlpack(t)
    assert (fab.arena.kind, fab.arena.dl_device) == ("device", (KDL_CUDA, 0))
    assert fab.ncomp == 2 and fab.box.hi == (4, 2, 3)
    assert torch.from_dlpack(fab.array()).data_ptr() == t.data_ptr()
    t[1, 2, 1, 3] = -7.0
    a = cp.from_dlpack(fab.array())
    assert a.data.ptr == t.data_ptr()
    assert float(a[1, 2, 1, 3]) == -7.0 and float(a[0, 0, 0, 1]) == 1.0

    u = torch.linspace(0.0, 1.0, 1000, dtype=torch.float64, device="cuda")
    v = PodVector.from_dlpack(u)
    assert (v.arena.kind, v.arena.dl_device) == ("device", (KDL_CUDA, 0))
    assert len(v) == 1000 and v.data_ptr() == u.data_ptr()
    u[10] = 42.0
    back = torch.from_dlpack(v)
    assert back.data_ptr() == u.data_ptr() and float(back[10]) == 42.0
    assert float(cp.from_dlpack(v)[10]) == 42.0


# --- c. streams ------------------------------------------------------------------------

def test_consumer_stream_waits_for_queued_work(cp):
    mf = make_mf("device", n=BIG, max_size=BIG, ncomp=1, ngrow=0)
    (mfi,) = list(mf)
    mf.set_val(3.0)
    for _ in range(20):
        mf.plus(1.0)  # a queue of kernels on the legacy default stream
    side = cp.cuda.Stream(non_blocking=True)  # no implicit ordering with the legacy stream
    with side:  # CuPy hands side.ptr to __dlpack__(stream=...): side must wait for the queue
        total = cp.from_dlpack(mf.array(mfi)).sum()
    side.synchronize()
    assert float(total) == 23.0 * BIG**3
    with pytest.raises(ValueError):
        mf.array(mfi).__dlpack__(stream=0)  # 0 is ambiguous for CUDA and forbidden


def test_import_waits_for_the_producers_stream(cp, torch):
    t = torch.empty((1, BIG, BIG, BIG), dtype=torch.float64, device="cuda")
    side = torch.cuda.Stream()  # PyTorch's streams are non-blocking
    with torch.cuda.stream(side):
        t.fill_(0.0)
        for _ in range(20):
            t.add_(1.0)
        fab = amr.FArrayBox.from_dlpack(t)  # asks torch for stream=1: legacy waits for side
    a = cp.from_dlpack(fab.array())  # read on the legacy stream
    assert a.data.ptr == t.data_ptr()
    assert float(a.sum()) == 20.0 * BIG**3


# --- d. device kernels against the host implementation -------------------------------

def twins(cp, seed):
    """The same random data (ghosts included) on a host and a device MultiFab."""
    host, dev = make_mf("host"), make_mf("device")
    rng = np.random.default_rng(seed)
    dmfis = by_index(dev)
    for i, mfi in by_index(host).items():
        a = np.from_dlpack(host.array(mfi))
        a[...] = rng.standard_normal(a.shape)
        cp.from_dlpack(dev.array(dmfis[i]))[...] = cp.asarray(a)
    return host, dev


def assert_same(cp, host, dev):
    got = device_arrays(cp, dev)
    for i, mfi in by_index(host).items():
        np.testing.assert_array_equal(got[i], np.from_dlpack(host.array(mfi)), err_msg=f"box {i}")
    for c in range(host.ncomp):
        scale = host.norm1(c)
        assert dev.sum(c) == pytest.approx(host.sum(c), rel=1e-12, abs=1e-12 * scale)
        assert dev.norm2(c) == pytest.approx(host.norm2(c), rel=1e-12)


OPS = {
    "set_val": lambda mf, src: mf.set_val(2.5, comp=1, ncomp=1, ngrow=0),
    "set_val_ghosts": lambda mf, src: mf.set_val(-1.25, 0, 2, 1),
    "plus": lambda mf, src: mf.plus(0.1, comp=0, ncomp=2, ngrow=1),
    "mult": lambda mf, src: mf.mult(-0.3, comp=1),
    "copy": lambda mf, src: amr.MultiFab.copy(mf, src, 0, 1, 1, 1),
    "saxpy": lambda mf, src: amr.MultiFab.saxpy(mf, 0.7, src, 1, 0, 1, 0),
    "saxpy_ghosts": lambda mf, src: amr.MultiFab.saxpy(mf, -1.9, src, 0, 0, 2, 1),
    "fill_boundary": lambda mf, src: mf.fill_boundary((False, False, False)),
    "fill_boundary_periodic": lambda mf, src: mf.fill_boundary((True, True, True)),
    "fill_boundary_mixed": lambda mf, src: mf.fill_boundary((True, False, True)),
}


@pytest.mark.parametrize("name", list(OPS))
def test_device_op_matches_host(cp, name):
    host, dev = twins(cp, seed=1)
    hsrc, dsrc = twins(cp, seed=2)
    assert_same(cp, host, dev)
    OPS[name](host, hsrc)
    OPS[name](dev, dsrc)
    assert_same(cp, host, dev)


def test_chain_of_device_ops_matches_host(cp):
    host, dev = twins(cp, seed=3)
    hsrc, dsrc = twins(cp, seed=4)
    for name in OPS:
        OPS[name](host, hsrc)
        OPS[name](dev, dsrc)
    assert_same(cp, host, dev)


# --- e. host copies --------------------------------------------------------------------

def test_host_copies_of_device_memory(cp):
    mf = make_mf("device", ncomp=1, ngrow=0)
    mf.set_val(4.0)
    mfi = next(iter(mf))
    t = mf.array(mfi)
    with pytest.raises((BufferError, RuntimeError)):  # NumPy cannot read device memory
        np.from_dlpack(t)
    copies = [
        np.from_dlpack(t, device="cpu"),  # NumPy asks for dl_device=(1, 0)
        np.from_dlpack(t, device="cpu", copy=True),
        np.from_dlpack(amr.from_dlpack(t.__dlpack__(dl_device=(1, 0), copy=True))),
    ]
    for h in copies:
        assert h.shape == (1, 16, 16, 16)
        assert (h == 4.0).all()
        assert h.ctypes.data != t.data_ptr()
    copies[0][...] = -1.0  # a copy: the device memory keeps its values
    assert float(cp.from_dlpack(mf.array(mfi)).min()) == 4.0


# --- f. managed and pinned memory, and the other containers ----------------------------

def test_managed_arena_is_read_by_cupy(cp):
    mf = make_mf("managed", ncomp=1, ngrow=0)
    assert (mf.arena.kind, mf.arena.dl_device) == ("managed", (KDL_CUDA_MANAGED, 0))
    mf.set_val(6.0)
    for mfi in mf:
        t = mf.array(mfi)
        assert t.__dlpack_device__() == (KDL_CUDA_MANAGED, 0)
        a = cp.from_dlpack(t)
        assert a.data.ptr == t.data_ptr()
        assert float(a.sum()) == 6.0 * a.size


def test_pinned_arena_is_numpy_zero_copy():
    mf = make_mf("pinned", ncomp=1, ngrow=0)
    assert (mf.arena.kind, mf.arena.dl_device) == ("pinned", (KDL_CUDA_HOST, 0))
    mf.set_val(7.0)
    mf.arena.synchronize()  # the host reads next: wait for the kernel, as in AMReX
    for mfi in mf:
        t = mf.array(mfi)
        assert t.__dlpack_device__() == (KDL_CUDA_HOST, 0)
        a = np.from_dlpack(t)
        assert a.ctypes.data == t.data_ptr()
        assert (a == 7.0).all()
        a[0, 0, 0, 0] = 107.0
    assert mf.sum(0) == 7.0 * 32**3 + 100.0 * 8


def test_podvector_and_fab_on_gpu_arenas(cp):
    v = PodVector(size=1000, value=1.5, arena=DEVICE)
    assert v.arena.kind == "device" and v.__dlpack_device__() == (KDL_CUDA, 0)
    x = cp.from_dlpack(v)
    assert x.data.ptr == v.data_ptr() and float(x.sum()) == 1500.0
    x[3] = 8.0
    assert float(cp.from_dlpack(v)[3]) == 8.0

    fab = amr.FArrayBox(amr.Box((0, 0, 0), (7, 5, 3)), ncomp=2, arena="managed")
    assert (fab.arena.kind, fab.arena.dl_device) == ("managed", (KDL_CUDA_MANAGED, 0))
    y = cp.from_dlpack(fab.array())
    assert y.shape == (2, 4, 6, 8)
    y[...] = 2.0
    y[1, 3, 5, 7] = 9.0
    z = cp.from_dlpack(fab.array())
    assert float(z.sum()) == 2.0 * 2 * 4 * 6 * 8 + 7.0 and float(z[1, 3, 5, 7]) == 9.0
