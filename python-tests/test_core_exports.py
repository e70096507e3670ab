"""NumPy consumes the DLPack core's own exports: a Rust Vec<f64> and an ndarray array (also
with a negative stride), zero-copy, writable, and kept alive by the consumer."""
import gc

import numpy as np
import pytest

pytestmark = pytest.mark.testing_build  # the Rust exports are amrex_rs._debug_* helpers


def test_rust_vec_into_numpy(amr):
    t = amr._debug_rust_vec(6)
    a = np.from_dlpack(t)
    assert a.dtype == np.float64 and a.shape == (6,)
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert a.flags.writeable
    a[2] = 42.0
    b = np.from_dlpack(t)  # a second view of the same memory sees the write
    assert b[2] == 42.0
    assert a.ctypes.data == b.ctypes.data


def test_rust_vec_outlives_producer(amr):
    before = amr._debug_live_exports()
    a = np.from_dlpack(amr._debug_rust_vec(1000))
    gc.collect()
    assert a.sum() == sum(range(1000))  # the producer object is gone; the Vec is not
    del a
    gc.collect()
    assert amr._debug_live_exports() == before


def test_rust_ndarray_into_numpy(amr):
    a = np.from_dlpack(amr._debug_rust_ndarray(3, 4, False))
    assert a.shape == (3, 4) and a.strides == (32, 8)
    np.testing.assert_array_equal(a, np.add.outer(10.0 * np.arange(3), np.arange(4)))


def test_rust_ndarray_negative_stride_into_numpy(amr):
    t = amr._debug_rust_ndarray(3, 4, True)
    a = np.from_dlpack(t)
    assert a.strides == (-32, 8)
    np.testing.assert_array_equal(a, np.add.outer(10.0 * np.arange(3)[::-1], np.arange(4)))
    a[0, 0] = -1.0
    assert np.from_dlpack(t)[0, 0] == -1.0


def test_empty_rust_vec(amr):
    a = np.from_dlpack(amr._debug_rust_vec(0))
    assert a.shape == (0,)
