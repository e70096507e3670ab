"""JAX (CPU) as a third consumer and producer, next to NumPy and array-api-strict."""

import gc

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
# Without x64 JAX turns every float64/int64 import into float32/int32 (a copy).
jax.config.update("jax_enable_x64", True)


def test_jax_to_ours_is_zero_copy(amr, no_leaks):
    y = jnp.arange(12.0).reshape(3, 4)
    t = amr.from_dlpack(y)
    assert t.data_ptr() == y.unsafe_buffer_pointer()
    assert t.shape == (3, 4) and t.dtype == (2, 64, 1)
    np.testing.assert_array_equal(np.from_dlpack(t), np.arange(12.0).reshape(3, 4))
    a4 = amr.Array4(jnp.ones((1, 2, 3, 4)), begin=(1, 1, 1))
    assert a4[4, 3, 2] == 1.0
    del t, a4


@pytest.mark.parametrize("make", [
    lambda amr: amr.PodVectorF64.from_list([float(i) for i in range(64)]),
    lambda amr: amr.PodVectorF32(33, 1.5),
    lambda amr: amr.PodVectorI32(7, 3),
    lambda amr: amr.PodVectorI64(5, -2),
    lambda amr: amr.SmallMatrix_6x6_F_SI1_double.identity(),
    lambda amr: amr.FArrayBox(amr.Box((0, 0, 0), (3, 4, 5)), 2),
])
def test_ours_to_jax_values_and_the_same_copy_rule_as_numpy(amr, make, no_leaks):
    src = make(amr)
    ref = np.from_dlpack(src).copy()
    x = jax.dlpack.from_dlpack(src)
    np.testing.assert_array_equal(np.asarray(x), ref)
    assert x.dtype == ref.dtype and x.shape == ref.shape
    # JAX decides on its own whether it views or copies (alignment, immutability): it must
    # treat our memory exactly as it treats a NumPy array's.
    twin = np.array(ref)
    same_numpy = jax.dlpack.from_dlpack(twin).unsafe_buffer_pointer() == twin.ctypes.data
    ptr = np.from_dlpack(src).ctypes.data
    aligned = ptr % 64 == 0 and twin.ctypes.data % 64 == 0
    if aligned:
        assert (x.unsafe_buffer_pointer() == ptr) == same_numpy
    del x
    gc.collect()


@pytest.mark.testing_build
def test_jax_refuses_what_it_cannot_express(amr):
    fab = amr.FArrayBox(amr.Box((0, 0, 0), (3, 3, 3)), 2)
    sub = fab.array(1, 1, amr.Box((1, 1, 1), (2, 2, 2)))  # strided sub-box view
    with pytest.raises(Exception, match="compact"):
        jax.dlpack.from_dlpack(sub)
    with pytest.raises(Exception, match="compact"):
        jax.dlpack.from_dlpack(amr._debug_rust_ndarray(3, 4, True))  # negative stride
    # Device memory JAX has no device for: the producer's own refusal reaches the caller.
    with pytest.raises(Exception):
        jax.dlpack.from_dlpack(amr._DebugDeviceArray(2, 0, 4))


def test_unaligned_memory_with_copy_false_is_refused_by_jax(amr):
    v = amr.PodVectorF64(17, 1.0)
    if v.data_ptr() % 64 == 0:
        v.reserve(10_000)  # move the buffer; try once more for an unaligned one
    if v.data_ptr() % 64 == 0:
        pytest.skip("the allocator returned 64-byte aligned memory twice")
    with pytest.raises(ValueError, match="aligned to 64 bytes"):
        jax.dlpack.from_dlpack(v, copy=False)
    np.testing.assert_array_equal(np.asarray(jax.dlpack.from_dlpack(v, copy=True)), np.ones(17))
