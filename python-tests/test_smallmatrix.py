"""NumPy consumer tests for the SmallMatrix classes (amrex-smallmatrix, issue #3).

Classes `SmallMatrix_{R}x{C}_{F|C}_SI{0|1}_double` for 6x6, 6x1 and 1x6, column-major (F)
and row-major (C), indices starting at 0 or 1. Through DLPack NumPy sees shape (R, C) with
strides (1, R) (F) or (C, 1) (C) in elements, so `a[i, j]` is element `(i + START, j + START)`.

Tests that need R-sm-1 (`readonly()`) or R-sm-2 (`view_get`/`view_set`) from
/work/notes/requests.md skip with that reason until the module has them.
"""

import gc

import numpy as np
import pytest

SHAPES = [(6, 6), (6, 1), (1, 6)]
ORDERS = ["F", "C"]
STARTS = [0, 1]
NUMPY_VERSION = tuple(int(x) for x in np.__version__.split(".")[:3] if x.isdigit())
# NumPy honours the DLPack READ_ONLY flag since 2.2.5.
NUMPY_READ_ONLY = NUMPY_VERSION >= (2, 2, 5)

LAYOUTS = [
    pytest.param((r, c, o, s), id=f"{r}x{c}_{o}_SI{s}")
    for (r, c) in SHAPES
    for o in ORDERS
    for s in STARTS
]


def coded_rows(rows, cols, start):
    """rows[i][j] encodes the START based position (i + start, j + start)."""
    return [
        [100.0 * (i + start) + (j + start) + 0.5 for j in range(cols)] for i in range(rows)
    ]


def element_strides(rows, cols, order):
    """Strides in elements the Rust side exports."""
    return (1, rows) if order == "F" else (cols, 1)


@pytest.fixture(params=LAYOUTS)
def layout(request, amr):
    rows, cols, order, start = request.param
    cls = getattr(amr, f"SmallMatrix_{rows}x{cols}_{order}_SI{start}_double")
    return cls, rows, cols, order, start


def need(cls, name, request_id):
    if not hasattr(cls, name):
        pytest.skip(f"amrex_rs lacks {name} ({request_id} in /work/notes/requests.md)")


def test_class_describes_itself(layout):
    cls, rows, cols, order, start = layout
    m = cls.from_rows(coded_rows(rows, cols, start))
    assert (m.row_size, m.column_size) == (rows, cols)
    assert m.order == order
    assert m.starting_index == start
    for i in range(rows):
        for j in range(cols):
            assert m[i + start, j + start] == 100.0 * (i + start) + (j + start) + 0.5


def test_from_rows_and_from_cols_agree(layout):
    cls, rows, cols, order, start = layout
    rows_list = coded_rows(rows, cols, start)
    cols_list = [[rows_list[i][j] for i in range(rows)] for j in range(cols)]
    assert cls.from_rows(rows_list) == cls.from_cols(cols_list)


def test_out_of_range_index_raises(layout):
    cls, rows, cols, order, start = layout
    m = cls.zero()
    with pytest.raises(IndexError):
        m[start + rows, start]
    with pytest.raises(IndexError):
        m[start, start + cols]
    if start == 1:
        # pyAMReX raises on index 0 with StartIndex 1.
        with pytest.raises(IndexError):
            m[0, 1]
        with pytest.raises(IndexError):
            m[1, 0] = 1.0


def test_numpy_view_shape_values_and_strides(layout, no_leaks):
    cls, rows, cols, order, start = layout
    m = cls.from_rows(coded_rows(rows, cols, start))
    a = np.from_dlpack(m)
    assert a.shape == (rows, cols)
    assert a.dtype == np.float64
    assert a.ctypes.data == m.data_ptr()
    for i in range(rows):
        for j in range(cols):
            assert a[i, j] == m[i + start, j + start]
            assert a[i, j] == 100.0 * (i + start) + (j + start) + 0.5
    want = element_strides(rows, cols, order)
    for axis, extent in enumerate((rows, cols)):
        if extent > 1:  # NumPy may normalise the stride of an extent-1 axis
            assert a.strides[axis] == want[axis] * 8
    if rows > 1 and cols > 1:
        assert a.flags.f_contiguous == (order == "F")
        assert a.flags.c_contiguous == (order == "C")
    assert m.__dlpack_device__() == (1, 0)
    del a


def test_numpy_view_writes_through_both_ways(layout, no_leaks):
    cls, rows, cols, order, start = layout
    m = cls.zero()
    a = np.from_dlpack(m)
    assert a.flags.writeable
    a[rows - 1, cols - 1] = 7.0
    assert m[rows - 1 + start, cols - 1 + start] == 7.0
    m[start, start] = -3.0
    assert a[0, 0] == -3.0
    a[...] = np.arange(rows * cols, dtype=np.float64).reshape(rows, cols)
    for i in range(rows):
        for j in range(cols):
            assert m[i + start, j + start] == i * cols + j
    del a


def test_numpy_view_keeps_matrix_alive(layout, no_leaks):
    cls, rows, cols, order, start = layout
    m = cls.from_rows(coded_rows(rows, cols, start))
    a = np.from_dlpack(m)
    del m
    gc.collect()
    assert a[rows - 1, cols - 1] == 100.0 * (rows - 1 + start) + (cols - 1 + start) + 0.5
    del a


@pytest.mark.skipif(not NUMPY_READ_ONLY, reason="NumPy honours READ_ONLY since 2.2.5")
def test_shared_export_is_read_only(layout, no_leaks):
    cls, rows, cols, order, start = layout
    need(cls, "readonly", "R-sm-1")
    m = cls.from_rows(coded_rows(rows, cols, start))
    r = np.from_dlpack(m.readonly())
    assert r.flags.writeable is False
    assert r.ctypes.data == m.data_ptr()
    assert r[rows - 1, 0] == m[rows - 1 + start, start]
    with pytest.raises(ValueError):
        r[0, 0] = 1.0
    # The matrix itself stays writable, and the shared view sees the write.
    m[start, start] = 11.0
    assert r[0, 0] == 11.0
    del r


def numpy_inputs(rows, cols):
    """NumPy arrays of shape (rows, cols) with value 10*i + j, in several layouts."""
    base = np.fromfunction(lambda i, j: 10.0 * i + j, (rows, cols))
    big = np.zeros((2 * rows, 3 * cols))
    big[::2, ::3] = base
    reversed_ = np.ascontiguousarray(base[::-1, ::-1])[::-1, ::-1]  # negative strides
    return {
        "c_order": np.ascontiguousarray(base),
        "f_order": np.asfortranarray(base),
        "strided": big[::2, ::3],
        "negative_strides": reversed_,
    }


def test_numpy_arrays_import_by_copy(layout, no_leaks):
    cls, rows, cols, order, start = layout
    for name, arr in numpy_inputs(rows, cols).items():
        m = cls.from_dlpack(arr)
        for i in range(rows):
            for j in range(cols):
                assert m[i + start, j + start] == arr[i, j], name
        # It is a copy: later writes to the array do not reach the matrix.
        before = m[start, start]
        arr[0, 0] += 1000.0
        assert m[start, start] == before, name


def test_numpy_import_refusals_are_specific(layout):
    cls, rows, cols, order, start = layout
    with pytest.raises(BufferError, match="dimensions"):
        cls.from_dlpack(np.zeros(rows * cols))
    with pytest.raises(BufferError, match="extent"):
        cls.from_dlpack(np.zeros((rows + 1, cols)))
    with pytest.raises(BufferError, match="extent"):
        cls.from_dlpack(np.zeros((rows, cols + 1)))
    with pytest.raises(BufferError, match="dtype"):
        cls.from_dlpack(np.zeros((rows, cols), dtype=np.float32))


def test_round_trip_through_numpy(layout, no_leaks):
    cls, rows, cols, order, start = layout
    m = cls.from_rows(coded_rows(rows, cols, start))
    back = cls.from_dlpack(np.from_dlpack(m).copy())
    assert back == m
    # And a copy into the other order keeps the values at the same [i, j].
    other = "C" if order == "F" else "F"
    amr = __import__("amrex_rs")
    ocls = getattr(amr, f"SmallMatrix_{rows}x{cols}_{other}_SI{start}_double")
    o = ocls.from_dlpack(m)
    assert o.to_list() == m.to_list()


def matching_array(rows, cols, order):
    base = np.fromfunction(lambda i, j: 10.0 * i + j, (rows, cols))
    return np.asfortranarray(base) if order == "F" else np.ascontiguousarray(base)


def test_zero_copy_view_import(layout, no_leaks):
    cls, rows, cols, order, start = layout
    need(cls, "view_get", "R-sm-2")
    arr = matching_array(rows, cols, order)
    for i in range(rows):
        for j in range(cols):
            assert cls.view_get(arr, i + start, j + start) == arr[i, j]
    cls.view_set(arr, rows - 1 + start, cols - 1 + start, -5.0)
    assert arr[rows - 1, cols - 1] == -5.0  # written in place: no copy


def test_zero_copy_view_refusals(layout):
    cls, rows, cols, order, start = layout
    need(cls, "view_get", "R-sm-2")
    if rows > 1 and cols > 1:
        other = np.ascontiguousarray if order == "F" else np.asfortranarray
        wrong = other(np.zeros((rows, cols)))
        with pytest.raises(BufferError, match="stride"):
            cls.view_get(wrong, start, start)
    padded = np.zeros((2 * rows, 2 * cols))[::2, ::2]
    with pytest.raises(BufferError, match="stride|contiguous"):
        cls.view_get(padded, start, start)
    with pytest.raises(BufferError, match="extent"):
        cls.view_get(np.zeros((rows + 1, cols + 1)), start, start)
    if NUMPY_READ_ONLY:
        ro = matching_array(rows, cols, order)
        ro.flags.writeable = False
        assert cls.view_get(ro, start, start) == 0.0
        with pytest.raises(BufferError, match="READ_ONLY"):
            cls.view_set(ro, start, start, 1.0)
        assert ro[0, 0] == 0.0


def test_square_operations(amr):
    for order in ORDERS:
        for start in STARTS:
            cls = getattr(amr, f"SmallMatrix_6x6_{order}_SI{start}_double")
            ident = cls.identity()
            assert ident.trace() == 6.0
            a = np.from_dlpack(ident)
            assert np.array_equal(a, np.eye(6))
            m = cls.from_rows(coded_rows(6, 6, start))
            t = m.T
            assert np.array_equal(np.from_dlpack(t), np.from_dlpack(m).T)
            del a
