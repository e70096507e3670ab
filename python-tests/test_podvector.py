"""NumPy consumer tests for the PodVector classes (amrex-podvector, issue #4).

Zero-copy export that NumPy can write through, isolated copies, NumPy arrays imported
through DLPack, and the empty vector both ways.
"""

import numpy as np
import pytest

NUMPY_COPY_KW = tuple(int(x) for x in np.__version__.split(".")[:2]) >= (2, 1)


@pytest.fixture(params=[("PodVectorF64", np.float64), ("PodVectorI32", np.int32)])
def kind(request, amr):
    name, dtype = request.param
    return getattr(amr, name), dtype


def test_from_dlpack_is_zero_copy_and_writable(kind, no_leaks):
    cls, dtype = kind
    v = cls.from_list([1, 2, 3])
    a = np.from_dlpack(v)
    assert a.dtype == dtype
    assert a.shape == (3,)
    assert a.ctypes.data == v.data_ptr()
    assert a.flags.writeable
    a[0] = 10
    assert v[0] == 10
    v[2] = 30
    assert a[2] == 30
    del a


def test_dlpack_device_is_host(kind):
    cls, _ = kind
    assert cls.from_list([1]).__dlpack_device__() == (1, 0)
    assert cls().__dlpack_device__() == (1, 0)


@pytest.mark.skipif(not NUMPY_COPY_KW, reason="np.from_dlpack(copy=) needs NumPy >= 2.1")
def test_copy_semantics_are_isolated(kind, no_leaks):
    cls, _ = kind
    v = cls.from_list([1, 2, 3])
    b = np.from_dlpack(v, copy=True)
    assert b.ctypes.data != v.data_ptr()
    b[1] = 99
    assert v[1] == 2
    v[0] = 7
    assert b[0] == 1


def test_to_numpy_copy_is_isolated(kind, no_leaks):
    cls, _ = kind
    v = cls.from_list([4, 5])
    c = v.to_numpy(copy=True)
    c[0] = 0
    assert v.to_list() == [4, 5]
    view = v.to_numpy(copy=False)
    view[1] = 6
    assert v.to_list() == [4, 6]
    del view


def test_numpy_array_imports(kind, no_leaks):
    cls, dtype = kind
    arr = np.arange(5, dtype=dtype)
    v = cls.from_dlpack(arr)
    assert len(v) == 5
    assert v.to_list() == list(range(5))
    # Adoption is zero-copy: writes are visible both ways.
    assert v.data_ptr() == arr.ctypes.data
    v[0] = 42
    assert arr[0] == 42
    arr[4] = -1
    assert v[4] == -1


def test_numpy_import_refusals(kind):
    cls, dtype = kind
    with pytest.raises(BufferError):
        cls.from_dlpack(np.zeros((2, 2), dtype=dtype))  # rank 2
    other = np.float32 if dtype != np.float32 else np.float64
    with pytest.raises(BufferError):
        cls.from_dlpack(np.zeros(3, dtype=other))  # dtype mismatch
    with pytest.raises(BufferError):
        cls.from_dlpack(np.arange(10, dtype=dtype)[::2])  # not unit stride


def test_empty_vector_exports_and_imports(kind, no_leaks):
    cls, dtype = kind
    e = cls()
    a = np.from_dlpack(e)
    assert a.shape == (0,)
    assert a.dtype == dtype
    back = cls.from_dlpack(np.empty(0, dtype=dtype))
    assert len(back) == 0
    assert back.to_list() == []
    round_trip = cls.from_dlpack(e)
    assert len(round_trip) == 0


def test_round_trip_through_numpy_matches(kind, no_leaks):
    cls, dtype = kind
    values = list(range(-50, 50, 3))
    v = cls.from_list(values)
    w = cls.from_dlpack(np.from_dlpack(v).copy())
    assert w.to_list() == values
