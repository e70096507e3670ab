"""NumPy consumer tests for particles (amrex-aos, issue #5).

API asked for in /work/notes/requests.md (R-fab-3); tests skip with that pointer until
the classes exist. `Particle<2, 1>` in double precision is 56 bytes: pos (3 f64) at 0,
rdata (2 f64) at 24, idcpu (u64) at 40, idata (1 i32) at 48. DLPack has no struct dtype,
so an ArrayOfStructs is shared one field at a time: a rank-1 tensor whose stride is the
particle size in elements (7 for f64/u64 fields, 14 for i32), i.e. 56 bytes in NumPy.
"""

import numpy as np
import pytest

NUMPY_VERSION = tuple(int(x) for x in np.__version__.split(".")[:3] if x.isdigit())
NUMPY_READ_ONLY = NUMPY_VERSION >= (2, 2, 5)

MAX_ID = 2**39 - 1
MAX_CPU = 2**24 - 1


def need(amr, *names):
    for name in names:
        if not hasattr(amr, name):
            pytest.skip(f"amrex_rs lacks {name} (R-fab-3 in /work/notes/requests.md)")


@pytest.fixture
def aos(amr):
    need(amr, "ArrayOfStructs_2_1")
    a = amr.ArrayOfStructs_2_1()
    for p in range(6):
        a.push_back(
            pos=(p + 0.1, p + 0.2, p + 0.3),
            rdata=(10.0 * p, 20.0 * p),
            id=p + 1,
            cpu=p % 3,
            idata=(-p,),
        )
    return a


def ids_of(idcpu):
    """AMReX's id extraction, in NumPy: sign bit 63, |id| in bits 24..62."""
    idcpu = idcpu.astype(np.uint64)
    mag = ((idcpu >> np.uint64(24)) & np.uint64(MAX_ID)).astype(np.int64)
    return np.where(idcpu >> np.uint64(63) != 0, mag, -mag)


def test_id_cpu_packing(amr):
    need(amr, "make_id_cpu", "particle_id", "particle_cpu")
    for pid in (0, 1, -1, 42, -42, MAX_ID, -MAX_ID):
        for cpu in (0, 1, 12345, MAX_CPU):
            w = amr.make_id_cpu(pid, cpu)
            assert amr.particle_id(w) == pid
            assert amr.particle_cpu(w) == cpu
            assert (w >> 63) == (1 if pid >= 0 else 0)
    assert amr.make_id_cpu(MAX_ID, MAX_CPU) == 2**64 - 1
    with pytest.raises((ValueError, OverflowError)):
        amr.make_id_cpu(MAX_ID + 1, 0)
    with pytest.raises((ValueError, OverflowError)):
        amr.make_id_cpu(0, MAX_CPU + 1)


def test_layout(aos):
    assert aos.particle_size == 56
    assert aos.size() == 6
    assert aos.num_particles() == 6


def test_position_and_real_views(aos):
    for d, name in enumerate("xyz"):
        x = np.from_dlpack(aos.field(name))
        assert x.dtype == np.float64
        assert x.shape == (6,)
        assert x.strides == (56,)
        assert np.allclose(x, np.arange(6) + 0.1 * (d + 1))
    r1 = np.from_dlpack(aos.field("real_1"))
    assert r1.strides == (56,)
    assert np.array_equal(r1, 20.0 * np.arange(6))


def test_id_and_int_views(aos):
    idcpu = np.from_dlpack(aos.field("idcpu"))
    assert idcpu.dtype == np.uint64
    assert idcpu.strides == (56,)
    assert np.array_equal(ids_of(idcpu), np.arange(6) + 1)
    assert np.array_equal(idcpu & np.uint64(MAX_CPU), np.arange(6) % 3)
    i0 = np.from_dlpack(aos.field("int_0"))
    assert i0.dtype == np.int32
    assert i0.strides == (56,)
    assert np.array_equal(i0, -np.arange(6))


def test_numpy_writes_land_in_the_particles(aos):
    y = np.from_dlpack(aos.field("y"))
    y[2] = -5.5
    r0 = np.from_dlpack(aos.field("real_0"))
    r0 += 1.0
    i0 = np.from_dlpack(aos.field("int_0"))
    i0[5] = 99
    idcpu = np.from_dlpack(aos.field("idcpu"))
    idcpu[0] &= ~np.uint64(1 << 63)   # make_invalid: the id reads back negated
    p = aos.get(2)
    assert p["pos"] == pytest.approx((2.1, -5.5, 2.3))
    assert p["rdata"] == pytest.approx((21.0, 40.0))
    assert aos.get(5)["idata"] == (99,)
    q = aos.get(0)
    assert (q["id"], q["cpu"], q["valid"]) == (-1, 0, False)
    # Neighbouring fields were not touched.
    assert aos.get(2)["id"] == 3 and aos.get(5)["pos"] == pytest.approx((5.1, 5.2, 5.3))


def test_real_block_view(aos):
    blk = np.from_dlpack(aos.real_block())
    assert blk.shape == (6, 5)
    assert blk.strides == (56, 8)
    assert np.allclose(blk[:, 0], np.arange(6) + 0.1)
    assert np.array_equal(blk[:, 4], 20.0 * np.arange(6))
    blk[3, 3] = 7.0
    assert aos.get(3)["rdata"][0] == 7.0


def test_shared_views_are_read_only(aos):
    x = np.from_dlpack(aos.field("x", readonly=True))
    if NUMPY_READ_ONLY:
        assert x.flags.writeable is False
    assert x.ctypes.data == np.from_dlpack(aos.field("x")).ctypes.data


def test_neighbours(aos):
    aos.set_num_neighbors(2)
    assert aos.size() == 8
    assert aos.num_particles() == 6
    idcpu = np.from_dlpack(aos.field("idcpu"))
    assert idcpu.shape == (8,)
    assert (idcpu[6:] == 0).all()


def test_soa_component_round_trip(amr):
    need(amr, "StructOfArrays_2_1")
    s = amr.StructOfArrays_2_1()
    for p in range(5):
        s.push_back(idcpu=amr.make_id_cpu(p + 1, 7), reals=(p * 1.5, -p), ints=(p * p,))
    w = s.add_real_comp("weight")
    assert w == 2
    assert s.real_names() == [None, None, "weight"]
    r0 = np.from_dlpack(s.real(0))
    assert r0.strides == (8,)
    assert np.array_equal(r0, 1.5 * np.arange(5))
    ids = np.from_dlpack(s.idcpu())
    assert np.array_equal(ids_of(ids), np.arange(5) + 1)
    weight = np.from_dlpack(s.real(w))
    assert (weight == 0).all()
    weight[:] = np.linspace(0, 1, 5)
    assert np.array_equal(np.from_dlpack(s.real(2)), np.linspace(0, 1, 5))
    i0 = np.from_dlpack(s.int(0))
    assert i0.dtype == np.int32
    i0[4] = -1
    assert s.get_int(0, 4) == -1
