"""FArrayBox, the PodVector classes and the particle containers on any arena, and the
import of device tensors, without a GPU.

On the test arena (`amr._debug_fake_device_arena()`: host memory behind pointers that
fault if the host dereferences them, reported as CUDA device 0) every device path runs:
kernels for the fab operations, the arena's copies for element access and host copies,
exports with the device. Results must agree with the same operations on host containers
exactly (the values are chosen so that sums are exact in any order). The test arena's
kernels are the host loops, so this checks the plumbing, not device arithmetic: no GPU
has run these paths yet."""

import numpy as np
import pytest

import amrex_rs as amr
from dlpack_ctypes import IS_COPIED, Info

pytestmark = pytest.mark.testing_build

KDLCPU, KDLCUDA, KDLROCM, KDLCUDAMANAGED = 1, 2, 10, 13


@pytest.fixture
def fake():
    return amr._debug_fake_device_arena()


def gpu_available():
    # A build without GPU backends gives host memory for The_Device_Arena(), as AMReX's
    # CPU builds do; a GPU build without a device raises.
    try:
        return amr.The_Device_Arena().kind == "device"
    except RuntimeError:
        return False


BOX = amr.Box((-1, 0, 2), (4, 3, 5))  # 6 x 4 x 4 cells


def both(fake, ncomp=3):
    return amr.FArrayBox(BOX, ncomp), amr.FArrayBox(BOX, ncomp, arena=fake)


def host_copy(x):
    return np.from_dlpack(x, device="cpu", copy=True)


# --- FArrayBox -------------------------------------------------------------------------

def test_fab_reports_its_arena_and_device(fake, no_leaks):
    f = amr.FArrayBox(BOX, 2, arena=fake)
    assert f.arena.kind == "device" and f.arena.backend == "fake"
    assert f.arena.dl_device == (KDLCUDA, 0) == f.__dlpack_device__()
    assert f.array().__dlpack_device__() == (KDLCUDA, 0)
    assert f.const_array(1, 1).__dlpack_device__() == (KDLCUDA, 0)
    assert "device=kDLCUDA:0" in repr(f)
    for h in (amr.FArrayBox(BOX), amr.FArrayBox(BOX, arena="host"),
              amr.FArrayBox(BOX, arena=amr.The_Arena())):
        assert h.arena.kind == "host" and h.__dlpack_device__() == (KDLCPU, 0)


def test_numpy_gets_no_view_of_device_memory(fake, no_leaks):
    f = amr.FArrayBox(BOX, 2, arena=fake)
    with pytest.raises((BufferError, RuntimeError)):  # NumPy's refusal of a CUDA tensor
        np.from_dlpack(f)
    with pytest.raises(BufferError, match="to_numpy\\(copy=True\\)"):
        f.to_numpy()
    with pytest.raises(BufferError):
        f.__dlpack__(dl_device=(KDLCPU, 0), copy=False)


def test_fab_ops_agree_with_the_host(fake, no_leaks):
    h, d = both(fake)
    sub = amr.Box((0, 1, 3), (2, 3, 4))
    for f in (h, d):
        f.set_val(1.5)
        f.set_val(-2.25, sub, 1, 2)
        f.plus(0.5, None, 2)
        f.plus(-3.0, sub, 0, 1)
        f.mult(4.0, amr.Box((-1, 0, 2), (1, 1, 5)), 1)
    expected = h.to_numpy()
    np.testing.assert_array_equal(d.to_numpy(copy=True), expected)
    np.testing.assert_array_equal(d.to_numpy(copy=True, order="C"), h.to_numpy(order="C"))
    np.testing.assert_array_equal(host_copy(d), np.from_dlpack(h))
    np.testing.assert_array_equal(d.to_host().to_numpy(), expected)
    info = Info(d.__dlpack__(dl_device=(KDLCPU, 0), copy=True, max_version=(1, 3)))
    assert info.device == (KDLCPU, 0) and info.flags & IS_COPIED
    for comp in range(3):
        for bx in (None, sub):
            for op in ("sum", "min", "max", "norm0", "norm1", "norm2"):
                assert getattr(d, op)(comp, bx) == getattr(h, op)(comp, bx), (op, comp, bx)
    for ijkn in ((-1, 0, 2, 0), (4, 3, 5, 2), (1, 2, 3, 1), (0, 1, 4, 1)):
        assert d.get(*ijkn) == h.get(*ijkn)
    # Sub-box and component views copy the right elements.
    np.testing.assert_array_equal(host_copy(d.array(1, 2, sub)), np.from_dlpack(h.array(1, 2, sub)))


def test_fab_refusals_match_the_host(fake, no_leaks):
    h, d = both(fake, 2)
    empty = amr.Box((1, 0, 0), (0, 0, 0))
    outside = amr.Box((0, 0, 0), (9, 9, 9))
    calls = [
        (lambda f: f.set_val(1.0, None, 1, 5), IndexError),
        (lambda f: f.plus(1.0, outside), IndexError),
        (lambda f: f.sum(2), IndexError),
        (lambda f: f.min(0, outside), IndexError),
        (lambda f: f.min(0, empty), ValueError),
        (lambda f: f.max(1, empty), ValueError),
        (lambda f: f.get(9, 9, 9), IndexError),
        (lambda f: f.get(0, 0, 2, 2), IndexError),
    ]
    for call, exc in calls:
        for f in (h, d):
            with pytest.raises(exc):
                call(f)
    for f in (h, d):
        assert f.sum(0, empty) == 0.0 and f.norm2(1, empty) == 0.0
        f.set_val(5.0, empty)  # nothing to do
        assert f.max(0) == 0.0


def test_zero_size_fab_on_the_device(fake, no_leaks):
    z = amr.FArrayBox(BOX, 0, arena=fake)
    assert z.ncomp == 0 and z.to_numpy(copy=True).shape == (6, 4, 4, 0)
    z.set_val(1.0)
    with pytest.raises(IndexError):
        z.sum(0)
    assert z.to_host().ncomp == 0


def test_host_only_fab_methods_say_what_to_do(fake, no_leaks):
    d = amr.FArrayBox(BOX, 1, arena=fake)
    with pytest.raises(NotImplementedError, match=r"FArrayBox\.array4.*kDLCUDA:0.*to_host\(\)"):
        d.array4()


def test_streams_follow_the_cuda_rules(fake, no_leaks):
    for x in (amr.FArrayBox(BOX, 1, arena=fake), amr.PodVectorF64(3, arena=fake)):
        with pytest.raises(ValueError, match="stream=0"):
            x.__dlpack__(stream=0)
        for s in (1, 2, -1):
            assert Info(x.__dlpack__(stream=s, max_version=(1, 3))).device == (KDLCUDA, 0)


def test_gpu_arenas_fail_cleanly_without_a_gpu(no_leaks):
    if gpu_available():
        pytest.skip("this machine has a GPU backend")
    for kind in ("pinned", "device", "managed"):
        for make in (lambda: amr.FArrayBox(BOX, 1, arena=kind),
                     lambda: amr.PodVectorF64(3, arena=kind),
                     lambda: amr.StructOfArrays_2_1(arena=kind)):
            with pytest.raises(RuntimeError, match="CUDA|not compiled"):
                make()


def test_bad_arena_arguments(no_leaks):
    with pytest.raises(ValueError, match="'host', 'pinned', 'device', 'managed'"):
        amr.FArrayBox(BOX, 1, arena="gpu")
    with pytest.raises(TypeError, match="arena must be"):
        amr.PodVectorF64(3, arena=5)


def test_fab_adopts_device_memory_zero_copy(fake, no_leaks):
    d = amr.FArrayBox(BOX, 2, arena=fake)
    d.set_val(2.0)
    a = amr.FArrayBox.from_dlpack(d, lo=BOX.lo, arena=fake)
    assert a.arena.backend == "fake" and a.__dlpack_device__() == (KDLCUDA, 0)
    assert a.array().data_ptr() == d.array().data_ptr()
    assert a.box.lo == BOX.lo and a.ncomp == 2
    a.set_val(7.0, None, 1)
    assert d.sum(1) == 7.0 * 96 and a.sum(0) == 2.0 * 96
    d.plus(1.0, None, 0, 1)
    assert a.get(0, 1, 3, 0) == 3.0
    np.testing.assert_array_equal(a.to_numpy(copy=True), d.to_numpy(copy=True))
    # A read-only device view gives a read-only fab, refused as on the host.
    r = amr.FArrayBox.from_dlpack(d.const_array(), arena=fake)
    assert r.read_only
    with pytest.raises(ValueError, match="read-only"):
        r.set_val(1.0)
    # The arena must be the tensor's device's.
    with pytest.raises(ValueError, match="kDLCUDA:0"):
        amr.FArrayBox.from_dlpack(d, arena="host")


def test_device_import_needs_the_backend(fake, no_leaks):
    if gpu_available():
        pytest.skip("this machine has a GPU backend")
    d = amr.FArrayBox(BOX, 1, arena=fake)
    v = amr.PodVectorF64(4, arena=fake)
    with pytest.raises(RuntimeError, match="cannot adopt memory on kDLCUDA:0.*(CUDA|not compiled)"):
        amr.FArrayBox.from_dlpack(d)
    with pytest.raises(RuntimeError, match="cannot adopt memory on kDLCUDA:0"):
        amr.PodVectorF64.from_dlpack(v)
    # The plain importer needs no arena: a Tensor of the CUDA memory.
    t = amr.from_dlpack(v)
    assert t.__dlpack_device__() == (KDLCUDA, 0) and t.data_ptr() == v.data_ptr()


# --- PodVector -------------------------------------------------------------------------

@pytest.mark.parametrize("cls,values", [
    (amr.PodVectorF64, [1.5, -2.0, 3.25]),
    (amr.PodVectorF32, [0.5, 4.0, -8.0]),
    (amr.PodVectorI32, [1, -2, 3]),
    (amr.PodVectorI64, [2**40, -5, 7]),
    (amr.PodVectorU64, [2**63, 1, 0]),
])
def test_vector_on_the_device_behaves_as_on_the_host(fake, no_leaks, cls, values):
    h = cls.from_list(values)
    d = cls.from_list(values, arena=fake)
    assert d.arena.kind == "device" and d.__dlpack_device__() == (KDLCUDA, 0)
    assert h.arena.kind == "host"
    for v in (h, d):
        v[1] = values[0]
        v[-1] = values[1]
        v.push_back(values[2])
        v.append(values[0])
        v.resize(7)
        v.resize(8, values[1])
        assert v.pop() == values[1]
        v.pop_back()
        v.reserve(32)
        v.shrink_to_fit()
    assert d.to_list() == h.to_list() and list(d) == list(h)
    assert len(d) == len(h) == d.size() == 6 and d.capacity() == 6
    assert [d[i] for i in range(-6, 6)] == [h[i] for i in range(-6, 6)]
    np.testing.assert_array_equal(d.to_numpy(copy=True), h.to_numpy())
    np.testing.assert_array_equal(host_copy(d), np.from_dlpack(h))
    assert d.to_host().to_list() == h.to_list() and d.to_host().arena.kind == "host"
    assert host_copy(d).dtype == np.dtype(d.dtype)
    with pytest.raises(IndexError):
        d[6]
    with pytest.raises(IndexError):
        d[-7] = values[0]
    with pytest.raises(BufferError):
        d.to_numpy()
    with pytest.raises(BufferError):
        np.asarray(d)
    d.clear()
    assert len(d) == 0 and d.empty()


def test_device_vector_construction_and_empty(fake, no_leaks):
    v = amr.PodVectorF64(5, 2.5, arena=fake)
    assert v.to_list() == [2.5] * 5
    assert amr.PodVectorI32(4, arena=fake).to_list() == [0] * 4
    e = amr.PodVectorF64(arena=fake)
    assert len(e) == 0 and e.to_list() == [] and e.data_ptr() == 0
    assert e.__dlpack_device__() == (KDLCUDA, 0)
    assert e.to_numpy(copy=True).shape == (0,)
    with pytest.raises(IndexError, match="empty"):
        e.pop()
    assert "device=kDLCUDA:0" in repr(v)


def test_device_vector_refuses_to_move_while_exported(fake, no_leaks):
    v = amr.PodVectorF64(3, 1.0, arena=fake)
    cap = v.__dlpack__(max_version=(1, 3))
    assert v.num_exports == 1
    with pytest.raises(BufferError, match="cannot resize"):
        v.push_back(2.0)
    v[0] = 4.0  # writing in place is fine
    del cap
    v.push_back(2.0)
    assert v.to_list() == [4.0, 1.0, 1.0, 2.0]


def test_vector_adopts_device_memory_zero_copy(fake, no_leaks):
    d = amr.PodVectorF64.from_list([1.0, 2.0, 3.0], arena=fake)
    a = amr.PodVectorF64.from_dlpack(d, arena=fake)
    assert a.adopted and a.data_ptr() == d.data_ptr() and a.arena.backend == "fake"
    a[0] = -1.0
    d[2] = 9.0
    assert d.to_list() == [-1.0, 2.0, 9.0] == a.to_list()
    a.push_back(4.0)  # growth copies into memory of the same arena
    assert not a.adopted and a.arena.backend == "fake" and a.__dlpack_device__() == (KDLCUDA, 0)
    assert a.to_list() == [-1.0, 2.0, 9.0, 4.0] and d.to_list() == [-1.0, 2.0, 9.0]
    with pytest.raises(BufferError, match="float64"):
        amr.PodVectorI32.from_dlpack(d, arena=fake)


# --- particles -------------------------------------------------------------------------

def test_array_of_structs_on_the_device(fake, no_leaks):
    pos = np.arange(12.0).reshape(4, 3)
    rdata = -np.arange(8.0).reshape(4, 2)
    h = amr.ArrayOfStructs_2_1.from_arrays(pos, rdata, cpu=1, idata=np.arange(4))
    d = amr.ArrayOfStructs_2_1.from_arrays(pos, rdata, cpu=1, idata=np.arange(4), arena=fake)
    for a in (h, d):
        a.push_back([1.0, 2.0, 3.0], [4.0, 5.0], 77, 2, [6])
        a.set_num_neighbors(2)
    assert d.arena.kind == "device" and d.device() == (KDLCUDA, 0) and h.device() == (KDLCPU, 0)
    assert len(d) == len(h) == 7 and d.num_neighbors() == 2 and d.num_particles() == 5
    for i in range(7):
        assert d.get(i) == h.get(i)
    with pytest.raises(IndexError):
        d.get(7)
    for name in ("x", "y", "z", "real_0", "real_1", "idcpu", "int_0"):
        view = d.field(name)
        assert view.__dlpack_device__() == (KDLCUDA, 0)
        np.testing.assert_array_equal(host_copy(view), np.from_dlpack(h.field(name)))
    np.testing.assert_array_equal(host_copy(d.real_block()), np.from_dlpack(h.real_block()))
    back = d.to_host()
    assert back.device() == (KDLCPU, 0) and back.num_neighbors() == 2
    np.testing.assert_array_equal(np.from_dlpack(back.real_block()), np.from_dlpack(h.real_block()))
    assert "device=kDLCUDA:0" in repr(d)


def test_struct_of_arrays_on_the_device(fake, no_leaks):
    ids = np.array([amr.make_id_cpu(i + 1, 0) for i in range(3)], dtype=np.uint64)
    reals = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    ints = np.array([[7, 8, 9]])
    h = amr.StructOfArrays_2_1.from_arrays(ids, reals, ints)
    d = amr.StructOfArrays_2_1.from_arrays(ids, reals, ints, arena=fake)
    for s in (h, d):
        s.push_back(amr.make_id_cpu(9, 1), [0.5, 0.25], [-1])
        assert s.add_real_comp("w") == 2
        s.extend(ids, np.ones((3, 3)), np.zeros((1, 3)))
    assert d.device() == (KDLCUDA, 0) and len(d) == len(h) == 7
    assert d.real_names() == h.real_names() == [None, None, "w"]
    for c in range(3):
        for i in range(7):
            assert d.get_real(c, i) == h.get_real(c, i)
    assert [d.get_int(0, i) for i in range(7)] == [h.get_int(0, i) for i in range(7)]
    with pytest.raises(IndexError):
        d.get_real(3, 0)
    with pytest.raises(IndexError):
        d.get_int(0, 7)
    for got, want in ((d.idcpu(), h.idcpu()), (d.real(2), h.real(2)), (d.int(0), h.int(0))):
        assert got.__dlpack_device__() == (KDLCUDA, 0)
        np.testing.assert_array_equal(host_copy(got), np.from_dlpack(want))
    with pytest.raises(NotImplementedError, match=r"to_dict.*to_host\(\)\.to_dict\(\)"):
        d.to_dict()
    back = d.to_host().to_dict()
    want = h.to_dict()
    assert list(back) == list(want) == ["idcpu", "real_0", "real_1", "w", "int_0"]
    for k in want:
        np.testing.assert_array_equal(back[k], want[k])
    with pytest.raises(BufferError):  # a live view pins the device memory too
        v = d.real(0)
        d.push_back(0, [0.0, 0.0, 0.0], [0])
    del v


# --- the import's stream rule ----------------------------------------------------------

class Recorder:
    """A host producer that claims a device: records what `__dlpack__` was asked, then
    hands out a NumPy array's capsule (NumPy takes no stream, so it is not passed on)."""

    def __init__(self, device_type, a=None, legacy=False):
        self.device_type = device_type
        self.a = np.arange(6.0) if a is None else a
        self.legacy = legacy
        self.calls = []

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def __dlpack__(self, **kwargs):
        self.calls.append(kwargs)
        if self.legacy and "max_version" in kwargs:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        return self.a.__dlpack__(**{k: v for k, v in kwargs.items() if k == "max_version"})


@pytest.mark.parametrize("device_type,stream", [
    (KDLCUDA, 1), (KDLCUDAMANAGED, 1), (KDLROCM, 0), (KDLCPU, None),
])
def test_importers_pass_our_stream_to_device_producers(no_leaks, device_type, stream):
    for importer in (amr.from_dlpack, amr.PodVectorF64.from_dlpack, amr.FArrayBox.from_dlpack):
        p = Recorder(device_type)
        x = importer(p)
        assert p.calls[0].get("stream") == stream and p.calls[0]["max_version"] == (1, 3)
        assert len(p.calls) == 1
        np.testing.assert_array_equal(np.from_dlpack(x).ravel(), np.arange(6.0))
        del x


def test_legacy_device_producers_still_get_the_stream(no_leaks):
    p = Recorder(KDLCUDA, legacy=True)
    t = amr.from_dlpack(p)
    assert p.calls == [{"stream": 1, "max_version": (1, 3)}, {"stream": 1}]
    assert not t.versioned
    np.testing.assert_array_equal(np.from_dlpack(t), np.arange(6.0))


def test_exchange_api_is_not_used_for_device_memory(fake, no_leaks):
    # Our containers publish the C exchange API, whose export orders no stream: for device
    # memory the importer goes through __dlpack__(stream=1) instead and still adopts the
    # same memory (and nothing leaks from the export it gave back).
    v = amr.PodVectorF64.from_list([1.0, 2.0], arena=fake)
    t = amr.from_dlpack(v)
    assert t.__dlpack_device__() == (KDLCUDA, 0) and t.data_ptr() == v.data_ptr()
    h = amr.PodVectorF64.from_list([1.0, 2.0])
    before = amr._debug_exchange_exports()
    t2 = amr.from_dlpack(h)
    assert amr._debug_exchange_exports() == before + 1 and t2.data_ptr() == h.data_ptr()
