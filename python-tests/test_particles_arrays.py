"""Particles from NumPy arrays in one call, and SoA components as a dict of views."""

import numpy as np
import pytest

RNG = np.random.default_rng(7)


def test_aos_from_arrays_matches_push_back(amr):
    n = 1000
    pos = RNG.random((n, 3))
    rdata = RNG.random((n, 2))
    idata = np.arange(n, dtype=np.int64) * 3  # converted to int32
    ids = np.arange(100, 100 + n)
    aos = amr.ArrayOfStructs_2_1.from_arrays(pos, rdata, ids=ids, cpu=5, idata=idata)
    assert len(aos) == n
    ref = amr.ArrayOfStructs_2_1()
    for i in (0, 17, n - 1):
        ref.push_back(list(pos[i]), list(rdata[i]), int(ids[i]), 5, [int(idata[i])])
    for r, i in enumerate((0, 17, n - 1)):
        assert aos.get(i) == ref.get(r)
    np.testing.assert_array_equal(np.from_dlpack(aos.field("y")), pos[:, 1])
    np.testing.assert_array_equal(np.from_dlpack(aos.field("real_1")), rdata[:, 1])
    words = np.from_dlpack(aos.field("idcpu"))
    assert amr.particle_id(int(words[3])) == 103 and amr.particle_cpu(int(words[3])) == 5


def test_aos_extend_defaults_and_appends(amr):
    aos = amr.ArrayOfStructs_2_1()
    aos.push_back([9.0, 9.0, 9.0])
    aos.extend(np.zeros((4, 3)))
    assert len(aos) == 5
    ids = [amr.particle_id(int(w)) for w in np.from_dlpack(aos.field("idcpu"))]
    assert ids == [1, 2, 3, 4, 5]  # defaults continue after the particles already there
    assert (np.from_dlpack(aos.real_block())[1:] == 0.0).all()


def test_aos_refuses_wrong_shapes_and_appends_nothing(amr):
    aos = amr.ArrayOfStructs_2_1()
    with pytest.raises(ValueError, match=r"pos must have shape \(n, 3\), got \[4, 2\]"):
        aos.extend(np.zeros((4, 2)))
    with pytest.raises(ValueError, match=r"rdata must have shape \(4, 2\)"):
        aos.extend(np.zeros((4, 3)), rdata=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="ids"):
        aos.extend(np.zeros((4, 3)), ids=np.arange(5))
    assert len(aos) == 0


def test_aos_extend_refused_while_a_view_lives(amr):
    aos = amr.ArrayOfStructs_2_1.from_arrays(np.zeros((2, 3)))
    view = np.from_dlpack(aos.field("x"))
    with pytest.raises(BufferError):
        aos.extend(np.zeros((1, 3)))
    del view
    aos.extend(np.zeros((1, 3)))
    assert len(aos) == 3


def test_soa_extend_and_to_dict_zero_copy(amr):
    soa = amr.StructOfArrays_2_1()
    nr, ni = soa.num_real_comps(), soa.num_int_comps()
    n = 500
    words = np.array([amr.make_id_cpu(i + 1, 0) for i in range(n)], dtype=np.uint64)
    reals = RNG.random((nr, n))
    ints = RNG.integers(0, 100, (ni, n))
    soa.extend(words, reals, ints)
    soa.extend(words[:10], [r[:10] for r in reals], [i[:10] for i in ints])
    assert len(soa) == n + 10
    d = soa.to_dict()
    assert list(d) == ["idcpu"] + [f"real_{i}" for i in range(nr)] + [f"int_{i}" for i in range(ni)]
    np.testing.assert_array_equal(d["real_0"][:n], reals[0])
    np.testing.assert_array_equal(d["real_0"][n:], reals[0][:10])
    np.testing.assert_array_equal(d["idcpu"][:n], words)
    # Zero copy: the arrays are the components' memory.
    d["real_1"][4] = -1.0
    assert soa.get_real(1, 4) == -1.0
    assert d["int_0"].ctypes.data == np.from_dlpack(soa.int(0)).ctypes.data
    with pytest.raises(BufferError):
        soa.extend(words[:1], reals[:, :1], ints[:, :1])
    del d
    gc_collect()
    soa.extend(words[:1], reals[:, :1], ints[:, :1])


def test_soa_named_components_and_shape_errors(amr):
    soa = amr.StructOfArrays_2_1()
    soa.add_real_comp("weight")
    nr, ni = soa.num_real_comps(), soa.num_int_comps()
    with pytest.raises(ValueError, match="reals must have shape"):
        soa.extend(np.zeros(3, dtype=np.uint64), np.zeros((nr - 1, 3)), np.zeros((ni, 3)))
    assert len(soa) == 0
    soa.extend(np.zeros(3, dtype=np.uint64), np.ones((nr, 3)), np.zeros((ni, 3)))
    assert "weight" in soa.to_dict()


def gc_collect():
    import gc

    gc.collect()


def test_soa_from_arrays(amr):
    nr, ni = amr.StructOfArrays_2_1().num_real_comps(), amr.StructOfArrays_2_1().num_int_comps()
    words = np.array([amr.make_id_cpu(7, 1)] * 4, dtype=np.uint64)
    reals = np.arange(4.0 * nr).reshape(nr, 4)
    soa = amr.StructOfArrays_2_1.from_arrays(words, reals, np.zeros((ni, 4)))
    assert len(soa) == 4 and soa.get_real(nr - 1, 3) == reals[nr - 1, 3]
    assert amr.particle_id(int(soa.to_dict()["idcpu"][2])) == 7
