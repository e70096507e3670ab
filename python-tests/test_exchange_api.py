"""The DLPack 1.3 C exchange API (`__dlpack_c_exchange_api__`): our table as a producer
for every container type, used by tvm-ffi and by a C program; our from_dlpack as a
consumer of tvm-ffi's table."""

import ctypes
import gc
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.testing_build  # our table's address and export count

HERE = Path(__file__).resolve().parent

_name = ctypes.pythonapi.PyCapsule_GetName
_name.restype = ctypes.c_char_p
_name.argtypes = [ctypes.py_object]
_ptr = ctypes.pythonapi.PyCapsule_GetPointer
_ptr.restype = ctypes.c_void_p
_ptr.argtypes = [ctypes.py_object, ctypes.c_char_p]


def containers(amr):
    fab = amr.FArrayBox(amr.Box((0, 0, 0), (3, 2, 1)), 2)
    fab.set_val(1.5)
    aos = amr.ArrayOfStructs_2_1.from_arrays(np.ones((3, 3)))
    return [
        amr.PodVectorF64.from_list([1.0, 2.0, 3.5]),
        amr.PodVectorF32(4, 2.0),
        amr.PodVectorI32(3, 7),
        amr.PodVectorI64(2, -1),
        amr.PodVectorU64(2, 5),
        amr.SmallMatrix_6x6_F_SI1_double.identity(),
        amr.SmallMatrix_1x6_C_SI0_double.zero(),
        fab,
        fab.array(),
        fab.const_array(),
        amr.Array4(np.zeros((1, 2, 2, 2))),
        amr.from_dlpack(np.arange(4.0)),
        aos.field("x"),
        amr._DebugDeviceArray(1, 0, 3),
    ]


def test_every_container_type_publishes_the_table(amr):
    address = amr._debug_exchange_api_address()
    for c in containers(amr):
        cap = type(c).__dlpack_c_exchange_api__
        assert _name(cap) == b"dlpack_exchange_api", type(c)
        assert _ptr(cap, b"dlpack_exchange_api") == address


def test_tvm_ffi_consumes_every_container_through_the_table(amr, no_leaks):
    tvm_ffi = pytest.importorskip("tvm_ffi")
    for c in containers(amr):
        ref = np.from_dlpack(c)
        before = amr._debug_exchange_exports()
        t = tvm_ffi.from_dlpack(c)
        assert amr._debug_exchange_exports() == before + 1, type(c)  # the C path, not __dlpack__
        assert tuple(t.shape) == ref.shape
        if ref.size:
            assert t.data_ptr() == ref.ctypes.data  # zero copy
        np.testing.assert_array_equal(np.from_dlpack(t), ref)
        del t, ref
    gc.collect()


def test_tvm_ffi_view_keeps_the_container_alive_and_blocks_resizing(amr, no_leaks):
    tvm_ffi = pytest.importorskip("tvm_ffi")
    v = amr.PodVectorF64(8, 2.0)
    t = tvm_ffi.from_dlpack(v)
    assert v.num_exports == 1
    with pytest.raises(BufferError):
        v.push_back(1.0)
    ptr = v.data_ptr()
    del v
    gc.collect()
    assert t.data_ptr() == ptr and np.from_dlpack(t).sum() == 16.0
    del t


def test_from_dlpack_consumes_tvm_ffi_through_its_table(amr, no_leaks):
    core = pytest.importorskip("tvm_ffi.core")
    tvm_ffi = pytest.importorskip("tvm_ffi")

    class OnlyTheTable(core.DLTensorTestWrapper):
        def __dlpack__(self, *args, **kwargs):
            raise AssertionError("from_dlpack must use the exchange API, not __dlpack__")

    src = np.arange(6.0).reshape(2, 3)
    w = OnlyTheTable(tvm_ffi.from_dlpack(src))
    t = amr.from_dlpack(w)
    assert t.data_ptr() == src.ctypes.data and t.shape == (2, 3) and t.versioned
    np.testing.assert_array_equal(np.from_dlpack(t), src)
    del t


def test_our_consumer_uses_our_own_table(amr, no_leaks):
    v = amr.PodVectorF64(3, 1.0)
    before = amr._debug_exchange_exports()
    t = amr.from_dlpack(v)
    assert amr._debug_exchange_exports() == before + 1
    assert t.data_ptr() == v.data_ptr() and t.read_only is False
    ro = amr.from_dlpack(amr.FArrayBox(amr.Box((0, 0, 0), (1, 1, 1))).const_array())
    assert ro.read_only
    del t, ro


@pytest.fixture(scope="module")
def clib(tmp_path_factory):
    cc = shutil.which("gcc") or shutil.which("cc")
    cfg = Path(sys.executable).with_name("tvm-ffi-config")
    if not cc or not cfg.exists():
        pytest.skip("needs gcc and tvm-ffi-config (for the official dlpack.h)")
    inc = subprocess.run([str(cfg), "--dlpack-includedir"], capture_output=True, text=True, check=True).stdout.strip()
    out = tmp_path_factory.mktemp("exchange") / "libexchange.so"
    subprocess.run([cc, "-O2", "-Wall", "-Werror", "-shared", "-fPIC", f"-I{inc}",
                    str(HERE / "exchange_api.c"), "-o", str(out)], check=True)
    lib = ctypes.PyDLL(str(out))
    vp, i64p = ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64)
    lib.exchange_version.argtypes = [vp, ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_int)]
    lib.exchange_export_sum.argtypes = [vp, ctypes.py_object, i64p, i64p, i64p, ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_double), ctypes.POINTER(vp)]
    lib.exchange_export_keep.argtypes = [vp, ctypes.py_object]
    lib.exchange_export_keep.restype = vp
    lib.exchange_release.argtypes = [vp]
    lib.exchange_allocate.argtypes = [vp, ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(ctypes.py_object)]
    lib.exchange_stream.argtypes = [vp, ctypes.c_int, ctypes.POINTER(vp)]
    lib.exchange_last_error.restype = ctypes.c_char_p
    return lib


def test_c_program_reads_the_header(amr, clib):
    major, minor, has = ctypes.c_uint32(), ctypes.c_uint32(), ctypes.c_int()
    assert clib.exchange_version(amr._debug_exchange_api_address(), major, minor, has) == 0
    assert (major.value, minor.value) == (1, 3) and has.value == 0


def test_c_program_exports_and_releases(amr, clib, no_leaks):
    api = amr._debug_exchange_api_address()
    ndim, shape, strides = ctypes.c_int64(), (ctypes.c_int64 * 8)(), (ctypes.c_int64 * 8)()
    flags, total, data = ctypes.c_uint64(), ctypes.c_double(), ctypes.c_void_p()
    v = amr.PodVectorF64.from_list([1.0, 2.0, 3.5])
    assert clib.exchange_export_sum(api, v, ndim, shape, strides, flags, total, data) == 0
    assert (ndim.value, shape[0], strides[0], flags.value, total.value) == (1, 3, 1, 0, 6.5)
    assert data.value == v.data_ptr()
    assert v.num_exports == 0  # the C side called the deleter
    fab = amr.FArrayBox(amr.Box((0, 0, 0), (3, 2, 1)), 2)
    assert clib.exchange_export_sum(api, fab.const_array(), ndim, shape, strides, flags, total, data) == 0
    assert ndim.value == 4 and list(shape[:4]) == [2, 2, 3, 4] and list(strides[:4]) == [24, 12, 4, 1]
    assert flags.value & 1  # READ_ONLY
    # Not one of our types: -1 with a BufferError naming the type.
    with pytest.raises(BufferError, match="list is not an amrex_rs container"):
        clib.exchange_export_sum(api, [1.0], ndim, shape, strides, flags, total, data)


def test_c_program_keeps_a_tensor_past_the_container(amr, clib, no_leaks):
    api = amr._debug_exchange_api_address()
    v = amr.PodVectorF64(4, 1.0)
    t = clib.exchange_export_keep(api, v)
    assert t and v.num_exports == 1
    del v
    gc.collect()
    assert amr._debug_live_exports() >= 1
    clib.exchange_release(t)


def test_c_program_allocates_through_the_table(amr, clib, no_leaks):
    api = amr._debug_exchange_api_address()
    obj = ctypes.py_object()
    assert clib.exchange_allocate(api, 1, 3, 4, obj) == 0
    t = obj.value
    # The C side received a new reference in a ctypes slot, which ctypes never releases.
    ctypes.pythonapi.Py_DecRef.argtypes = [ctypes.py_object]
    ctypes.pythonapi.Py_DecRef(t)
    assert isinstance(t, amr.Tensor) and t.shape == (3, 4)
    np.testing.assert_array_equal(np.from_dlpack(t), 10.0 * np.arange(3)[:, None] + np.arange(4))
    del t, obj
    gc.collect()
    # Device memory: refused through SetError exactly once, with a reason.
    rc = clib.exchange_allocate(api, 2, 3, 4, ctypes.py_object())
    assert rc == -2
    assert b"host memory only" in clib.exchange_last_error()


def test_c_program_queries_the_work_stream(amr, clib):
    stream = ctypes.c_void_p()
    assert clib.exchange_stream(amr._debug_exchange_api_address(), 1, stream) == 0
    assert stream.value is None


def test_from_dlpack_falls_back_to_dlpack_when_the_table_refuses(amr, no_leaks):
    class TableForOthers:
        """Publishes amrex_rs's table (which refuses objects that are not ours with
        BufferError) but exports through __dlpack__."""

        __dlpack_c_exchange_api__ = amr.PodVectorF64.__dlpack_c_exchange_api__

        def __init__(self, arr):
            self.arr = arr

        def __dlpack__(self, **kwargs):
            return self.arr.__dlpack__(**kwargs)

    src = np.arange(3.0)
    t = amr.from_dlpack(TableForOthers(src))
    assert t.data_ptr() == src.ctypes.data
    del t
