"""The Python DLPack protocol as amrex_rs containers implement it: `__dlpack__` with
`max_version`, `copy`, `dl_device` and `stream`, `__dlpack_device__`, versioned and
legacy capsules, READ_ONLY, the keep-alive of the producer, and the exceptions each
refusal raises. Each test says in its name and docstring which rule it checks.
"""

import gc
import subprocess
import sys
import threading

import numpy as np
import pytest

import dlpack_ctypes as dl
from dlpack_ctypes import IS_COPIED, KDLCPU, KDLCUDA, READ_ONLY, Info, Producer

DTYPES = [
    ("PodVectorF64", np.float64, (2, 64, 1)),
    ("PodVectorF32", np.float32, (2, 32, 1)),
    ("PodVectorI32", np.int32, (0, 32, 1)),
    ("PodVectorI64", np.int64, (0, 64, 1)),
    ("PodVectorU64", np.uint64, (1, 64, 1)),
]


def vec(amr, n=4):
    v = amr.PodVectorF64(n)
    for i in range(n):
        v[i] = float(i)
    return v


# --- 11: capsule names and versions by max_version ------------------------------------

@pytest.mark.parametrize(
    "max_version, name",
    [
        (None, "dltensor"),
        ((0, 8), "dltensor"),
        ((1, 0), "dltensor_versioned"),
        ((1, 3), "dltensor_versioned"),
        ((2, 0), "dltensor_versioned"),
    ],
)
def test_capsule_name_by_max_version(amr, no_leaks, max_version, name):
    v = vec(amr)
    kwargs = {} if max_version is None else {"max_version": max_version}
    cap = v.__dlpack__(**kwargs)
    info = Info(cap)
    assert info.name == name
    if name == "dltensor_versioned":
        assert info.version == (1, 3)  # always our own version
    del cap


def test_default_call_is_legacy(amr, no_leaks):
    assert dl.capsule_name(vec(amr).__dlpack__()) == "dltensor"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_version": 1},
        {"max_version": (1,)},
        {"max_version": (1, 2, 3)},
        {"max_version": ("1", "0")},
        {"max_version": [1, 0]},
        {"max_version": (1.0, 0)},
        {"dl_device": "cpu"},
        {"dl_device": (1,)},
        {"dl_device": (1, 0, 0)},
        {"dl_device": ("cpu", 0)},
        {"copy": "yes"},
        {"copy": 1},
        {"stream": "default"},
        {"stream": 1.5},
    ],
)
def test_malformed_arguments_raise_type_error(amr, no_leaks, kwargs):
    with pytest.raises(TypeError):
        vec(amr).__dlpack__(**kwargs)


# --- 12: unknown or positional arguments ------------------------------------------------

def test_unknown_keyword_raises_type_error(amr, no_leaks):
    v = vec(amr)
    with pytest.raises(TypeError):
        v.__dlpack__(foo=1)
    with pytest.raises(TypeError):
        v.__dlpack__(None)  # keyword-only


# --- 26: stream validation per device -----------------------------------------------------

@pytest.mark.parametrize("stream", [0, 1, 2, -1, 12345])
def test_stream_on_cpu_is_value_error(amr, no_leaks, stream):
    with pytest.raises(ValueError):
        vec(amr).__dlpack__(stream=stream)


def test_stream_none_on_cpu_is_fine(amr, no_leaks):
    assert Info(vec(amr).__dlpack__(stream=None, max_version=(1, 0))).device == (KDLCPU, 0)


@pytest.mark.parametrize("stream, ok", [(None, True), (1, True), (2, True), (-1, True),
                                        (0xDEADBEEF, True), (0, False)])
def test_stream_rules_cuda(amr, no_leaks, stream, ok):
    d = amr._DebugDeviceArray(KDLCUDA, 0, 3)
    if ok:
        cap = d.__dlpack__(stream=stream, max_version=(1, 3))
        assert Info(cap).device == (KDLCUDA, 0)
    else:
        with pytest.raises(ValueError):
            d.__dlpack__(stream=stream, max_version=(1, 3))


@pytest.mark.parametrize("stream, ok", [(None, True), (0, True), (-1, True), (0xBEEF, True),
                                        (1, False), (2, False)])
def test_stream_rules_rocm(amr, no_leaks, stream, ok):
    d = amr._DebugDeviceArray(dl.KDLROCM, 1, 3)
    if ok:
        assert Info(d.__dlpack__(stream=stream)).device == (dl.KDLROCM, 1)
    else:
        with pytest.raises(ValueError):
            d.__dlpack__(stream=stream)


@pytest.mark.parametrize("stream", [0, 1, 2, -1])
def test_stream_rules_oneapi(amr, no_leaks, stream):
    d = amr._DebugDeviceArray(dl.KDLONEAPI, 0, 3)
    with pytest.raises(ValueError):
        d.__dlpack__(stream=stream)
    assert Info(d.__dlpack__()).device == (dl.KDLONEAPI, 0)


# --- 25: dl_device --------------------------------------------------------------------

def test_dl_device_own_device_is_zero_copy(amr, no_leaks):
    v = vec(amr)
    info = Info(v.__dlpack__(dl_device=(KDLCPU, 0), max_version=(1, 3)))
    assert info.data == v.data_ptr()
    assert info.flags & IS_COPIED == 0


@pytest.mark.parametrize("device", [(KDLCUDA, 0), (KDLCPU, 1), (dl.KDLONEAPI, 0), (99, 0)])
def test_dl_device_other_device_is_buffer_error(amr, no_leaks, device):
    with pytest.raises(BufferError):
        vec(amr).__dlpack__(dl_device=device, max_version=(1, 3))


@pytest.mark.parametrize("device_type", [dl.KDLCUDAHOST, dl.KDLCUDAMANAGED, dl.KDLROCMHOST])
def test_dl_device_cpu_for_host_accessible_is_rebadged(amr, no_leaks, device_type):
    d = amr._DebugDeviceArray(device_type, 0, 5)
    assert d.__dlpack_device__() == (device_type, 0)
    info = Info(d.__dlpack__(dl_device=(KDLCPU, 0), max_version=(1, 3), copy=False))
    assert info.device == (KDLCPU, 0)
    assert info.data == d.data_ptr()
    assert info.flags & IS_COPIED == 0
    a = np.from_dlpack(d, device="cpu")
    assert a.__array_interface__["data"][0] == d.data_ptr()


def test_dl_device_cpu_for_device_memory_copies(amr, no_leaks):
    d = amr._DebugDeviceArray(KDLCUDA, 0, 5)
    info = Info(d.__dlpack__(dl_device=(KDLCPU, 0), max_version=(1, 3)))
    assert info.device == (KDLCPU, 0)
    assert info.flags & IS_COPIED
    assert info.data != d.data_ptr()
    a = np.from_dlpack(d, device="cpu")
    np.testing.assert_array_equal(a, np.arange(5.0))
    assert a.__array_interface__["data"][0] != d.data_ptr()


def test_dl_device_cpu_copy_false_for_device_memory_is_buffer_error(amr, no_leaks):
    d = amr._DebugDeviceArray(KDLCUDA, 0, 5)
    with pytest.raises(BufferError):
        d.__dlpack__(dl_device=(KDLCPU, 0), copy=False, max_version=(1, 3))
    with pytest.raises(BufferError):
        d.to_numpy(False)
    np.testing.assert_array_equal(d.to_numpy(True), np.arange(5.0))


def test_dlpack_device_equals_capsule_device(amr, no_leaks):
    for obj in (vec(amr), amr._DebugDeviceArray(KDLCUDA, 3, 2),
                amr._DebugDeviceArray(dl.KDLROCM, 1, 2)):
        assert Info(obj.__dlpack__(max_version=(1, 3))).device == obj.__dlpack_device__()
        assert Info(obj.__dlpack__()).device == obj.__dlpack_device__()


# --- 24: copy ---------------------------------------------------------------------------

def test_copy_true_copies_and_flags(amr, no_leaks):
    v = vec(amr)
    info = Info(v.__dlpack__(copy=True, max_version=(1, 3)))
    assert info.flags & IS_COPIED
    assert info.flags & READ_ONLY == 0
    assert info.data != v.data_ptr()
    a = np.from_dlpack(v, copy=True)
    a[0] = 42.0
    assert v[0] == 0.0
    assert a.flags.writeable


def test_copy_false_and_none_share(amr, no_leaks):
    v = vec(amr)
    for copy in (False, None):
        info = Info(v.__dlpack__(copy=copy, max_version=(1, 3)))
        assert info.data == v.data_ptr()
        assert info.flags & IS_COPIED == 0


def test_copy_stays_valid_after_producer_is_gone(amr, no_leaks):
    v = vec(amr, 1000)
    c = np.from_dlpack(v, copy=True)
    del v
    gc.collect()
    np.testing.assert_array_equal(c, np.arange(1000.0))
    del c


# --- 4, 5, 10: keep-alive and deleter exactly once ----------------------------------------

def test_refcount_rises_while_view_lives(amr, no_leaks):
    v = vec(amr)
    base = sys.getrefcount(v)
    a = np.from_dlpack(v)
    assert sys.getrefcount(v) == base + 1
    b = np.from_dlpack(v)
    assert sys.getrefcount(v) == base + 2
    del a
    assert sys.getrefcount(v) == base + 1
    del b
    assert sys.getrefcount(v) == base


def test_memory_outlives_producer_object(amr, no_leaks):
    v = vec(amr, 10)
    a = np.from_dlpack(v)
    del v
    gc.collect()
    np.testing.assert_array_equal(a, np.arange(10.0))
    a[3] = -1.0  # still our memory, still writable
    assert a[3] == -1.0


@pytest.mark.testing_build  # counts live exports
def test_unconsumed_capsule_frees_once(amr):
    gc.collect()
    before = amr._debug_live_exports()
    v = vec(amr)
    base = sys.getrefcount(v)
    cap = v.__dlpack__(max_version=(1, 3))
    assert amr._debug_live_exports() == before + 1
    assert sys.getrefcount(v) == base + 1
    del cap
    assert amr._debug_live_exports() == before
    assert sys.getrefcount(v) == base
    cap = v.__dlpack__()  # legacy too
    assert amr._debug_live_exports() == before + 1
    del cap
    assert amr._debug_live_exports() == before


@pytest.mark.testing_build  # counts live exports
def test_consumed_capsule_frees_when_consumer_dies(amr):
    gc.collect()
    before = amr._debug_live_exports()
    v = vec(amr)
    cap = v.__dlpack__(max_version=(1, 3))
    t = amr.from_dlpack(cap)
    assert dl.capsule_name(cap) == "used_dltensor_versioned"
    del cap  # renamed: the capsule must not free
    assert amr._debug_live_exports() == before + 1
    del t
    assert amr._debug_live_exports() == before


def test_consuming_a_used_capsule_fails_and_frees_nothing(amr, no_leaks):
    v = vec(amr)
    cap = v.__dlpack__(max_version=(1, 3))
    t = amr.from_dlpack(cap)
    live = amr._debug_live_exports()
    with pytest.raises(ValueError):
        amr.from_dlpack(cap)
    assert amr._debug_live_exports() == live
    legacy = v.__dlpack__()
    t2 = amr.from_dlpack(legacy)
    assert dl.capsule_name(legacy) == "used_dltensor"
    with pytest.raises(ValueError):
        amr.from_dlpack(legacy)
    np.testing.assert_array_equal(np.from_dlpack(t), np.from_dlpack(t2))
    del t, t2


def test_deleter_runs_on_another_thread(amr, no_leaks):
    v = vec(amr)
    box = [np.from_dlpack(v)]
    base = sys.getrefcount(v)

    def drop():
        box.clear()

    th = threading.Thread(target=drop)
    th.start()
    th.join()
    assert sys.getrefcount(v) == base - 1


def test_resize_refused_while_exported(amr, no_leaks):
    v = vec(amr)
    a = np.from_dlpack(v)
    assert v.num_exports == 1
    for op in (lambda: v.push_back(1.0), lambda: v.resize(100), v.clear, v.pop,
               v.shrink_to_fit, lambda: v.reserve(1000)):
        with pytest.raises(BufferError):
            op()
    v[0] = 5.0  # element writes are fine
    assert a[0] == 5.0
    del a
    v.push_back(1.0)
    assert len(v) == 5


# --- 16, 20: strides always present, empty tensors ------------------------------------------

def test_export_fields(amr, no_leaks):
    v = vec(amr, 7)
    info = Info(v.__dlpack__(max_version=(1, 3)))
    assert info.ndim == 1 and info.shape == (7,) and info.strides == (1,)
    assert info.byte_offset == 0 and info.dtype == (2, 64, 1) and info.has_deleter
    assert info.flags == 0
    info = Info(v.__dlpack__())
    assert info.strides == (1,) and info.version is None


@pytest.mark.parametrize("name, npdt, dt", DTYPES)
def test_empty_vector_exports_null_data(amr, no_leaks, name, npdt, dt):
    v = getattr(amr, name)()
    info = Info(v.__dlpack__(max_version=(1, 3)))
    assert info.data == 0 and info.shape == (0,) and info.strides == (1,)
    a = np.from_dlpack(v)
    assert a.shape == (0,) and a.dtype == npdt
    assert v.data_ptr() == 0


# --- 14, 23: zero-copy round trips for every dtype ----------------------------------------------

@pytest.mark.parametrize("name, npdt, dt", DTYPES)
def test_vector_round_trip_every_dtype(amr, no_leaks, name, npdt, dt):
    v = getattr(amr, name)(6)
    for i in range(6):
        v[i] = i + 1
    assert Info(v.__dlpack__(max_version=(1, 3))).dtype == dt
    a = np.from_dlpack(v)
    assert a.dtype == npdt
    assert a.__array_interface__["data"][0] == v.data_ptr()
    assert a.flags.writeable
    np.testing.assert_array_equal(a, np.arange(1, 7))
    a[2] = 40
    assert v[2] == 40
    v[4] = 50
    assert a[4] == 50
    b = v.to_numpy()
    assert b.__array_interface__["data"][0] == v.data_ptr()
    c = v.to_numpy(copy=True)
    assert c.__array_interface__["data"][0] != v.data_ptr()
    assert np.asarray(v).__array_interface__["data"][0] == v.data_ptr()
    assert v.to_xp().__array_interface__["data"][0] == v.data_ptr()
    del a, b, c


def test_legacy_import_is_read_only_in_numpy(amr, no_leaks):
    # NumPy imports legacy capsules read-only; versioned ones follow READ_ONLY.
    v = vec(amr)

    class Legacy:
        def __dlpack__(self, **kwargs):
            return v.__dlpack__()

        def __dlpack_device__(self):
            return v.__dlpack_device__()

    a = np.from_dlpack(Legacy())
    assert not a.flags.writeable
    assert a.__array_interface__["data"][0] == v.data_ptr()


# --- imports: from_dlpack adopts NumPy arrays (17, 18, 19, 23) ------------------------------------

def test_from_dlpack_numpy_zero_copy(amr, no_leaks):
    a = np.arange(12.0).reshape(3, 4)
    base = sys.getrefcount(a)
    t = amr.from_dlpack(a)
    assert t.versioned and t.shape == (3, 4) and t.strides == (4, 1)
    assert t.data_ptr() == a.__array_interface__["data"][0]
    assert sys.getrefcount(a) > base  # NumPy's export keeps `a` alive
    b = np.from_dlpack(t)
    assert b.__array_interface__["data"][0] == t.data_ptr()
    b[1, 2] = -7.0
    assert a[1, 2] == -7.0
    del b, t
    assert sys.getrefcount(a) == base


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.arange(20.0)[::2],  # non-contiguous
        lambda: np.arange(20.0)[::-1],  # negative stride
        lambda: np.arange(20.0)[::-3],
        lambda: np.arange(24.0).reshape(2, 3, 4)[:, ::-1, 1:3],
        lambda: np.arange(24.0).reshape(4, 6).T,
        lambda: np.arange(20.0)[3:],  # offset into the buffer
    ],
)
def test_from_dlpack_strided_numpy_round_trip(amr, no_leaks, make):
    a = make()
    t = amr.from_dlpack(a)
    assert t.shape == a.shape
    assert t.strides == tuple(s // a.itemsize for s in a.strides)
    assert t.data_ptr() == a.__array_interface__["data"][0]
    b = np.from_dlpack(t)
    np.testing.assert_array_equal(b, a)
    assert b.strides == a.strides
    del b, t


def test_read_only_numpy_stays_read_only(amr, no_leaks):
    a = np.arange(5.0)
    a.flags.writeable = False
    t = amr.from_dlpack(a)
    assert t.read_only and t.flags & READ_ONLY
    assert Info(t.__dlpack__(max_version=(1, 3))).flags & READ_ONLY
    b = np.from_dlpack(t)
    assert not b.flags.writeable
    v = amr.PodVectorF64.from_dlpack(a)
    assert v.read_only
    with pytest.raises(BufferError):
        v[0] = 1.0
    assert not np.from_dlpack(v).flags.writeable
    del b, t, v


def test_vector_adopts_numpy_zero_copy(amr, no_leaks):
    a = np.arange(6.0)
    v = amr.PodVectorF64.from_dlpack(a)
    assert v.adopted and len(v) == 6
    assert v.data_ptr() == a.__array_interface__["data"][0]
    v[1] = 10.0
    assert a[1] == 10.0
    a[2] = 20.0
    assert v[2] == 20.0
    b = np.from_dlpack(v)
    assert b.__array_interface__["data"][0] == v.data_ptr()
    with pytest.raises(BufferError):
        v.push_back(1.0)  # b is a live view
    del b
    v.push_back(7.0)  # copies into owned storage
    assert not v.adopted and v.to_list() == [0.0, 10.0, 20.0, 3.0, 4.0, 5.0, 7.0]
    v[0] = 99.0
    assert a[0] == 0.0


@pytest.mark.parametrize(
    "make, exc",
    [
        (lambda: np.arange(10.0)[::2], BufferError),  # stride 2: a vector cannot express it
        (lambda: np.arange(10.0)[::-1], BufferError),
        (lambda: np.arange(10, dtype=np.int32), BufferError),  # dtype mismatch
        (lambda: np.zeros((2, 2)), BufferError),  # rank 2
    ],
)
def test_vector_refuses_what_it_cannot_express(amr, no_leaks, make, exc):
    a = make()
    with pytest.raises(exc) as e:
        amr.PodVectorF64.from_dlpack(a)
    assert "DLPack" in str(e.value)


def test_from_dlpack_rejects_non_producers(amr, no_leaks):
    with pytest.raises(TypeError):
        amr.from_dlpack(3)


# --- 3, 7, 8, 13, 17, 19, 21, 22: hand-made producers --------------------------------------------

def test_import_honours_byte_offset(amr, no_leaks):
    buf = dl.f64_buffer(8)
    p = Producer(buf, (3,), (1,), byte_offset=16)
    t = amr.from_dlpack(p)
    assert t.data_ptr() == buf.ctypes.data + 16
    np.testing.assert_array_equal(np.from_dlpack(t), [2.0, 3.0, 4.0])
    del t
    assert p.deleted == 1


def test_import_accepts_null_strides_as_c_order(amr, no_leaks):
    buf = dl.f64_buffer(6)
    p = Producer(buf, (2, 3), None)
    t = amr.from_dlpack(p)
    assert t.strides == (3, 1)
    np.testing.assert_array_equal(np.from_dlpack(t), buf.reshape(2, 3))
    del t
    assert p.deleted == 1


def test_import_minor_9_and_legacy_accepted(amr, no_leaks):
    buf = dl.f64_buffer(4)
    p = Producer(buf, (4,), (1,), version=(1, 9))
    t = amr.from_dlpack(p)
    del t
    assert p.deleted == 1
    p = Producer(buf, (4,), (1,), legacy=True)
    t = amr.from_dlpack(p)
    assert not t.versioned
    del t
    assert p.deleted == 1


def test_import_null_deleter_accepted(amr, no_leaks):
    buf = dl.f64_buffer(4)
    p = Producer(buf, (4,), (1,), null_deleter=True)
    t = amr.from_dlpack(p)
    np.testing.assert_array_equal(np.from_dlpack(t), buf)
    del t


@pytest.mark.parametrize(
    "kwargs",
    [
        {"version": (2, 0)},
        {"version": (0, 9)},
        {"dtype": (2, 64, 2)},  # lanes
        {"dtype": (200, 64, 1)},  # unknown dtype code
        {"dtype": (2, 12, 1)},  # bad bits
        {"device": (99, 0)},  # unknown device
        {"ndim": -1},
    ],
)
def test_refused_import_frees_exactly_once(amr, no_leaks, kwargs):
    buf = dl.f64_buffer(4)
    p = Producer(buf, (4,), (1,), **kwargs)
    with pytest.raises(BufferError):
        amr.from_dlpack(p)
    assert p.deleted == 1
    assert dl.capsule_name(p.capsule) == "used_dltensor_versioned"


def test_refused_import_negative_extent_and_overflow(amr, no_leaks):
    buf = dl.f64_buffer(4)
    for shape, strides in [((-1,), (1,)), ((2**62, 4), (1, 2**62))]:
        p = Producer(buf, shape, strides)
        with pytest.raises(BufferError):
            amr.from_dlpack(p)
        assert p.deleted == 1


# --- a second consumer: array-api-strict ---------------------------------------------------

def test_array_api_strict_consumer(amr, no_leaks):
    xp = pytest.importorskip("array_api_strict")
    v = vec(amr, 5)
    x = xp.from_dlpack(v)
    assert x.shape == (5,)
    assert x.dtype == xp.float64
    assert xp.all(x == xp.asarray([0.0, 1.0, 2.0, 3.0, 4.0]))
    y = xp.from_dlpack(amr.PodVectorI32.from_list([1, 2, 3]))
    assert y.dtype == xp.int32 and int(xp.sum(y)) == 6
    # and array-api-strict arrays are producers we can adopt
    t = amr.from_dlpack(xp.asarray([1.0, 2.0]))
    np.testing.assert_array_equal(np.from_dlpack(t), [1.0, 2.0])
    del x, y, t


# --- interpreter shutdown ----------------------------------------------------------------

def test_exports_alive_at_interpreter_shutdown(tmp_path):
    """Views, unconsumed capsules and cycles alive at exit must not crash the interpreter."""
    import os

    import amrex_rs

    script = tmp_path / "shutdown.py"
    script.write_text(
        "import sys, threading\n"
        f"sys.path.insert(0, {os.path.dirname(amrex_rs.__file__)!r})\n"
        "import numpy as np, amrex_rs\n"
        "v = amrex_rs.PodVectorF64(100, 1.0)\n"
        "a = np.from_dlpack(v)\n"
        "cap = v.__dlpack__(max_version=(1, 3))\n"
        "legacy = v.__dlpack__()\n"
        "class Cycle: pass\n"
        "c = Cycle(); c.self = c; c.view = np.from_dlpack(v); c.vec = v\n"
        "t = amrex_rs.from_dlpack(np.arange(3.0))\n"
        "def worker():\n"
        "    global w\n"
        "    w = np.from_dlpack(amrex_rs.PodVectorF64(10))\n"
        "th = threading.Thread(target=worker); th.start(); th.join()\n"
        "print('ok')\n"
    )
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
