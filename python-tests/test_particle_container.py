"""ParticleContainer (amrex-particles) from Python, under pyAMReX's names: add_particles
in one call from NumPy arrays, redistribute, number_of_particles_at_level, to_df, and
tiles whose components are zero-copy DLPack views; bad input refused by name."""

import numpy as np
import pytest


@pytest.fixture(params=["soa", "aos"])
def pc(amr, request):
    dom = amr.Box([0, 0, 0], [15, 15, 15])
    geom = amr.Geometry(dom, amr.RealBox([0, 0, 0], [1, 1, 1]), 0, [1, 1, 0])
    ba = amr.BoxArray(dom, 8)
    dm = amr.DistributionMapping(ba)
    return amr.ParticleContainer(geom, ba, dm, real_comps=["w"], int_comps=["species"], layout=request.param)


def test_add_redistribute_and_count(pc):
    x = np.array([0.1, 0.6, 1.2, 0.5])
    y = np.array([0.1, 0.5, 0.3, 0.5])
    z = np.array([0.2, 0.9, 0.3, 1.5])  # the last leaves the non-periodic z side
    w = np.array([1.0, 2.0, 3.0, 4.0])
    r = pc.add_particles(x, y, z, reals={"w": w}, ints={"species": np.array([1, 2, 3, 4], dtype=np.int32)})
    # x = 1.2 wraps (periodic x) into a local tile at once; z = 1.5 is held.
    assert r == {"added": 4, "placed": 3, "pending": 1, "outside_domain": 1}
    # The held particle is at no level until redistribute removes it.
    assert pc.total_number_of_particles(only_valid=False) == 3
    r = pc.redistribute()
    assert r["removed_outside"] == 1 and r["kept"] == 3
    assert pc.number_of_particles_at_level(0) == 3
    assert pc.real_comp_names == ["x", "y", "z", "w"]
    df = pc.to_df()
    cols = {k: np.asarray(df[k]) for k in ["x", "w", "id", "species"]}
    order = np.argsort(cols["id"])
    assert list(cols["id"][order]) == [1, 2, 3]
    assert np.allclose(cols["x"][order], [0.1, 0.6, 0.2])  # 1.2 wrapped to 0.2
    assert list(cols["w"][order]) == [1.0, 2.0, 3.0]
    assert list(cols["species"][order]) == [1, 2, 3]


def test_tiles_are_zero_copy_views(pc):
    pc.init_random(1000, 5)
    n = 0
    for t in pc.tiles(0):
        x = np.from_dlpack(t.real("x"))
        ids = np.from_dlpack(t.idcpu())
        assert x.dtype == np.float64 and ids.dtype == np.uint64 and len(x) == len(t)
        # AoS: fields of 32-byte structs (stride 32 bytes); SoA: compact vectors.
        assert x.strides == ((32,) if pc_layout(pc) == "aos" else (8,))
        if len(x):
            assert ((ids >> np.uint64(63)) == 1).all()  # valid particles
            x[0] = x[0]  # writable
        n += len(t)
        views = t.soa()
        assert set(views) == {"x", "y", "z", "w", "species", "idcpu"}
        w = np.from_dlpack(views["w"])
        w[:] = 7.0  # writes land in the particles
        s = np.from_dlpack(t.int("species"))
        assert s.dtype == np.int32
        del x, ids, views, w, s
    assert n == 1000
    assert np.all(np.asarray(pc.to_df()["w"]) == 7.0)
    # While a view is alive the container refuses to move particles.
    t = pc.tiles(0)[0]
    v = np.from_dlpack(t.real("x"))
    with pytest.raises(BufferError):
        pc.redistribute()
    del v
    import gc

    gc.collect()
    pc.redistribute()


def pc_layout(pc):
    return "aos" if "layout=aos" in repr(pc) else "soa"


def test_unknown_layout_is_refused(amr):
    dom = amr.Box([0, 0, 0], [7, 7, 7])
    ba = amr.BoxArray(dom, 8)
    geom = amr.Geometry(dom, amr.RealBox([0, 0, 0], [1, 1, 1]), 0, [1, 1, 1])
    with pytest.raises(ValueError, match='layout must be "soa" or "aos", got "soaa"'):
        amr.ParticleContainer(geom, ba, amr.DistributionMapping(ba), layout="soaa")


def test_bad_input_is_refused_by_name_and_adds_nothing(pc):
    ok = np.array([0.5, 0.5])
    with pytest.raises(TypeError, match="x: expected float64, got int64"):
        pc.add_particles(np.array([0, 1]), ok, ok)
    with pytest.raises(TypeError, match="species: expected int32, got int64"):
        pc.add_particles(ok, ok, ok, ints={"species": np.array([1, 2])})
    with pytest.raises(ValueError, match="y positions has 3 entries, but the positions have 2"):
        pc.add_particles(ok, np.array([0.1, 0.2, 0.3]), ok)
    with pytest.raises(ValueError, match="non-finite position"):
        pc.add_particles(np.array([0.5, np.nan]), ok, ok)
    with pytest.raises(ValueError, match='no real component "q"'):
        pc.add_particles(ok, ok, ok, reals={"q": ok})
    assert pc.total_number_of_particles(only_valid=False) == 0
    with pytest.raises(IndexError, match="does not exist"):
        pc.tile(0, 99)


def test_plotfile_round_trip(pc, amr, tmp_path):
    pc.init_random(300, 9)
    pc.write_plotfile(str(tmp_path), "particles")
    assert (tmp_path / "particles" / "Header").read_text().startswith("Version_Two_Dot_Zero_double\n3\n1\nw\n1\nspecies\n")
    dom = amr.Box([0, 0, 0], [15, 15, 15])
    geom = amr.Geometry(dom, amr.RealBox([0, 0, 0], [1, 1, 1]), 0, [1, 1, 0])
    ba = amr.BoxArray(dom, 4)
    back = amr.ParticleContainer(geom, ba, amr.DistributionMapping(ba), ["w"], ["species"], layout="aos")
    assert back.read_plotfile(str(tmp_path)) == 300
    a, b = pc.to_df(), back.to_df()
    oa, ob = np.argsort(np.asarray(a["id"])), np.argsort(np.asarray(b["id"]))
    assert np.array_equal(np.asarray(a["x"])[oa], np.asarray(b["x"])[ob])
