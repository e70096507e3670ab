"""amrex_rs under mpirun: each distributed operation against the one-process result of the
same script.

scripts/test-python.sh runs this file under `mpirun -n 2` and `mpirun -n 4` (`-m mpi`);
the plain pytest run takes it on one rank, where the distributed and the one-process
MultiFabs are alike. Every rank computes the one-process answer itself, on
`Communicator.single()`, and compares its own boxes (or, for the collective reads and
reductions, the whole answer) with it: results must agree bit for bit.

Needs an MPI build (`amr.Config.have_mpi`; scripts/test-python.sh installs one) and
mpi4py built against the same MPI (scripts/setup.sh).
"""

import os
import shutil
import tempfile

import numpy as np
import pytest

import amrex_rs as amr
from amr_util import fill

pytestmark = [
    pytest.mark.mpi,
    pytest.mark.skipif(not amr.Config.have_mpi, reason="amrex_rs was built without MPI"),
]
MPI = pytest.importorskip("mpi4py.MPI") if amr.Config.have_mpi else None

SINGLE = amr.Communicator.single()


@pytest.fixture(scope="module")
def world():
    return amr.Communicator.world()


def layout(lo=(0, 0, 0), hi=(31, 23, 15), max_size=8):
    ba = amr.BoxArray(amr.Box(lo, hi))
    ba.max_size(max_size)
    return ba


def values(i, j, k, n):
    # Distinct, irrational-looking values, the same on every rank.
    return np.sin(0.37 * i + 1.3 * j + 2.1 * k + 0.5 * n) + 0.001 * (i + 40 * j + 1600 * k)


def pair(ba, ncomp=2, ngrow=2, comm=None, ghosts=False):
    """The same MultiFab on `comm` (the world by default) and on one process, filled
    with `values` (ghost cells too when `ghosts`; otherwise they hold NaN)."""
    out = []
    for c in (comm, SINGLE):
        dm = amr.DistributionMapping(ba) if c is None else amr.DistributionMapping(ba, comm=c)
        mf = amr.MultiFab(ba, dm, ncomp, ngrow)
        mf.set_val(np.nan)
        fill(mf, values, ghosts=ghosts)
        out.append(mf)
    return out


def assert_same_boxes(dist, single):
    """Every local box of `dist` equals the same box of `single`, ghost cells included."""
    ref = {mfi.index: a for mfi, a in zip(single, single.to_numpy(order="C"))}
    for mfi, a in zip(dist, dist.to_numpy(order="C")):
        np.testing.assert_array_equal(a, ref[mfi.index], err_msg=f"box {mfi.index}")


def assert_still_in_step(dist, single, comp):
    """A periodic exchange and a reduction give the one-process result: the ranks of
    `dist`'s communicator are in step (after independent work, or after errors)."""
    dist.fill_boundary((True, True, True))
    single.fill_boundary((True, True, True))
    assert_same_boxes(dist, single)
    assert dist.sum(comp) == single.sum(comp)


def test_world_and_parallel_descriptor(world):
    assert world == amr.Communicator.world()
    assert (world.rank, world.size) == (MPI.COMM_WORLD.rank, MPI.COMM_WORLD.size)
    assert amr.ParallelDescriptor.MyProc() == world.rank
    assert amr.ParallelDescriptor.NProcs() == world.size
    assert amr.ParallelDescriptor.IOProcessor() == (world.rank == 0)
    assert "MPI" in repr(world) and "single" in repr(SINGLE)
    world.barrier()


def test_distribution_and_mfiter_are_local(world):
    ba = layout()
    dm = amr.DistributionMapping(ba)
    assert dm.communicator == world and dm.nranks == world.size
    pmap = dm.ProcessorMap()
    assert pmap == amr.DistributionMapping(ba, nranks=world.size).ProcessorMap()
    mine = [i for i, r in enumerate(pmap) if r == world.rank]
    assert dm.local_indices() == mine
    mf = amr.MultiFab(ba, dm, 1, 1)
    assert [mfi.index for mfi in mf] == mine and len(mf) == len(mine)
    # Every box belongs to exactly one rank.
    owners = MPI.COMM_WORLD.allgather(mine)
    assert sorted(sum(owners, [])) == list(range(len(ba)))


def test_views_are_zero_copy_per_local_box(world):
    ba = layout()
    mf = amr.MultiFab(ba, amr.DistributionMapping(ba), 1, 1)
    mf.set_val(0.0)
    for mfi, a in zip(mf, mf.to_xp()):
        a[...] = mfi.index + 1.0  # F order, ghosts included
        assert np.from_dlpack(mf.array(mfi)).min() == mfi.index + 1.0
    for mfi in mf:
        arr = mf.array(mfi)
        lo = mfi.validbox().lo
        arr[lo[0], lo[1], lo[2], 0] = -1.0
        assert mf.to_numpy()[[m.index for m in mf].index(mfi.index)][1, 1, 1, 0] == -1.0


@pytest.mark.parametrize("periodic", [(False, False, False), (True, True, True), (True, False, True)])
def test_fill_boundary(world, periodic):
    dist, single = pair(layout())
    dist.fill_boundary(periodic)
    single.fill_boundary(periodic)
    assert_same_boxes(dist, single)


def test_fill_boundary_nowait_finish(world):
    dist, single = pair(layout())
    dist.fill_boundary_nowait((True, True, True))
    # Work on valid cells may go in between.
    dist.fill_boundary_finish()
    dist.fill_boundary_finish()  # nothing in flight: no error
    single.fill_boundary((True, True, True))
    assert_same_boxes(dist, single)


def test_fill_boundary_with_a_geometry(world):
    ba = layout()
    geom = amr.Geometry(ba.minimal_box(), amr.RealBox([0, 0, 0], [1, 1, 1]), 0, [1, 1, 1])
    dist, single = pair(ba)
    dist.fill_boundary(geom.periodicity())
    single.fill_boundary(geom)
    assert_same_boxes(dist, single)


def test_sum_boundary(world):
    dist, single = pair(layout(), ghosts=True)
    dist.sum_boundary((True, True, False))
    single.sum_boundary((True, True, False))
    assert_same_boxes(dist, single)


def test_parallel_copy(world):
    src, src1 = pair(layout(max_size=8), ngrow=0)
    dst_ba = layout(lo=(-4, 2, 0), hi=(35, 20, 19), max_size=12)
    dst, dst1 = pair(dst_ba, ngrow=1)
    dst.parallel_copy(src, (True, False, False))
    dst1.parallel_copy(src1, (True, False, False))
    assert_same_boxes(dst, dst1)


def test_reductions_are_reproducible(world):
    dist, single = pair(layout(), ngrow=1)
    for comp in (0, 1):
        for name in ("sum", "min", "max", "norm0", "norm1", "norm2"):
            got, want = getattr(dist, name)(comp), getattr(single, name)(comp)
            assert got == want, (name, comp, got, want)
    assert dist.dot(0, dist, 1, 1) == single.dot(0, single, 1, 1)
    # Every rank has the same answer.
    assert len(set(MPI.COMM_WORLD.allgather(dist.sum(0)))) == 1


def test_global_indexing(world):
    dist, single = pair(layout())
    np.testing.assert_array_equal(dist[...], single[...])
    np.testing.assert_array_equal(dist[3:17, 5, 2:9, 1], single[3:17, 5, 2:9, 1])
    assert dist[31, 23, 15, 0] == single[31, 23, 15, 0]
    patch = np.arange(6 * 4 * 3, dtype=float).reshape(6, 4, 3)
    dist[10:16, 8:12, 4:7, 0] = patch
    single[10:16, 8:12, 4:7, 0] = patch
    np.testing.assert_array_equal(dist[...], single[...])
    assert_same_boxes(dist, single)


def test_arithmetic_on_local_boxes(world):
    a, a1 = pair(layout(), ngrow=0)
    b, b1 = pair(layout(), ngrow=0)
    for x, y in ((a, b), (a1, b1)):
        x.saxpy(0.5, y, 1, 0, 1)
        x.mult(3.0)
    assert_same_boxes(a, a1)
    assert a.sum(0) == a1.sum(0)


@pytest.fixture
def shared_dir(world):
    """A folder every rank sees (made by rank 0, its name broadcast), removed after."""
    path = tempfile.mkdtemp(prefix="amrex-rs-mpi-") if world.rank == 0 else None
    path = MPI.COMM_WORLD.bcast(path, root=0)
    yield path
    MPI.COMM_WORLD.Barrier()
    if world.rank == 0:
        shutil.rmtree(path, ignore_errors=True)


def test_plotfile_written_on_all_ranks_read_on_fewer(world, shared_dir):
    dist, single = pair(layout(), ngrow=1)
    plt = os.path.join(shared_dir, "plt00007")
    amr.write_single_level_plotfile(plt, dist, ["a", "b"], time=0.25, step=7)
    full = single[:, :, :, :]
    pf = amr.Plotfile(plt)
    assert pf.var_names == ["a", "b"] and pf.level_steps == [7]
    # On all ranks (the default), on one process, and on half of the ranks.
    readers = [None, SINGLE]
    if world.size >= 2:
        half = MPI.COMM_WORLD.Split(world.rank % 2, world.rank)
        readers.append(amr.Communicator.from_mpi4py(half))
    for comm in readers:
        back = pf.read_level(0) if comm is None else pf.read_level(0, comm=comm)
        expect = world if comm is None else comm
        assert back.communicator == expect
        np.testing.assert_array_equal(back[:, :, :, :], full)
        assert back.sum(1) == single.sum(1)
    if world.size >= 2:
        # A read on one rank against a reduction on the others: an error everywhere.
        with pytest.raises(Exception, match="disagree"):
            pf.read_level(0) if world.rank == 0 else dist.sum(0)
        world.barrier()


def test_split_communicator_from_mpi4py(world):
    if world.size < 2:
        pytest.skip("needs at least 2 ranks")
    sub = MPI.COMM_WORLD.Split(world.rank % 2, world.rank)
    comm = amr.Communicator.from_mpi4py(sub)
    assert (comm.rank, comm.size) == (sub.rank, sub.size)
    assert comm != world and comm != SINGLE
    # The caller keeps its own communicator: freeing it leaves ours working.
    sub.Free()
    dist, single = pair(layout(), comm=comm)
    assert dist.communicator == comm
    assert_still_in_step(dist, single, comp=1)
    # The two halves ran independently; the world is still in step.
    world.barrier()


def test_from_mpi4py_refuses_what_it_cannot_use(world):
    with pytest.raises(TypeError, match="intra-communicator"):
        amr.Communicator.from_mpi4py(42)
    with pytest.raises(TypeError, match="intra-communicator"):
        amr.Communicator.from_mpi4py(MPI.COMM_WORLD.Get_group())
    with pytest.raises(ValueError, match="MPI_COMM_NULL"):
        amr.Communicator.from_mpi4py(MPI.COMM_NULL)
    dup = amr.Communicator.from_mpi4py(MPI.COMM_WORLD)
    assert (dup.rank, dup.size) == (world.rank, world.size) and dup != world


def test_mismatched_operations_raise_on_every_rank(world):
    if world.size < 2:
        pytest.skip("needs at least 2 ranks")
    dist, single = pair(layout(), comm=world)
    with pytest.raises(ValueError, match="disagree"):
        if world.rank == 0:
            dist.fill_boundary((True, True, True))
        else:
            dist.sum_boundary((True, True, True))
    # Different periodicity is another operation too.
    with pytest.raises(ValueError, match="disagree"):
        dist.fill_boundary((world.rank == 0, False, False))
    # Different layouts: each rank made its own BoxArray.
    ba = layout(max_size=8 if world.rank == 0 else 4)
    own = amr.MultiFab(ba, amr.DistributionMapping(ba), 1, 1)
    with pytest.raises(ValueError, match="disagree"):
        own.fill_boundary()
    # A reduction against an exchange, a global read against a reduction: every
    # collective of a MultiFab starts by comparing the operation, so these are caught too.
    with pytest.raises(ValueError, match="disagree"):
        dist.sum(0) if world.rank == 0 else dist.fill_boundary()
    with pytest.raises(ValueError, match="disagree"):
        dist[0, 0, 0, 0] if world.rank == 0 else dist.max(1)
    with pytest.raises(ValueError, match="disagree"):
        dist.sum(0) if world.rank == 0 else dist.sum(1)
    # Global reads of the same cells but different components.
    with pytest.raises(ValueError, match="disagree"):
        dist[:, :, :, 0] if world.rank == 0 else dist[:, :, :, 1]
    # And the ranks are still in step afterwards.
    assert_still_in_step(dist, single, comp=0)
    world.barrier()


def test_particles_redistribute_and_gathered_df(world):
    ba = layout(hi=(15, 15, 15), max_size=8)
    geom = amr.Geometry(ba.minimal_box(), amr.RealBox([0, 0, 0], [1, 1, 1]), 0, [1, 1, 1])
    out = {}
    for name, dm in (("dist", amr.DistributionMapping(ba)), ("single", amr.DistributionMapping(ba, comm=SINGLE))):
        pc = amr.ParticleContainer(geom, ba, dm, real_comps=["w"])
        pc.init_random(2000, 7)
        pc.redistribute()
        assert pc.total_number_of_particles(True, False) == 2000
        df = pc.to_df(local=False)
        out[name] = (pc, df)
    df, df1 = out["dist"][1], out["single"][1]
    if world.rank != 0:
        assert df is None
        return
    cols = ["x", "y", "z", "w", "id"]

    def table(d):
        t = np.column_stack([np.asarray(d[c], dtype=float) for c in cols])
        return t[np.argsort(t[:, -1], kind="stable")]

    np.testing.assert_array_equal(table(df), table(df1))
    assert len(np.unique(np.asarray(df["id"]))) == 2000


def test_particle_collectives_against_other_collectives(world):
    if world.size < 2:
        pytest.skip("needs at least 2 ranks")
    ba = layout(hi=(15, 15, 15), max_size=8)
    geom = amr.Geometry(ba.minimal_box(), amr.RealBox([0, 0, 0], [1, 1, 1]), 0, [1, 1, 1])
    dm = amr.DistributionMapping(ba)
    pc = amr.ParticleContainer(geom, ba, dm)
    pc.init_random(100, 3)
    with pytest.raises(ValueError, match="disagree"):
        pc.redistribute() if world.rank == 0 else pc.to_df(local=False)
    with pytest.raises(ValueError, match="disagree"):
        pc.to_df(local=False, root_rank=world.rank)
    # A root out of range on one rank only, then on all: an error everywhere, no hang.
    with pytest.raises(ValueError, match="disagree"):
        pc.to_df(local=False, root_rank=world.size + 3 if world.rank == 0 else 0)
    with pytest.raises(ValueError, match="out of range"):
        pc.to_df(local=False, root_rank=world.size)
    world.barrier()


def test_amr_core_error_est_failure_on_one_rank_raises_everywhere(world):
    if world.size < 2:
        pytest.skip("needs at least 2 ranks")
    dom = amr.Box((0, 0, 0), (15, 15, 15))
    geom = amr.Geometry(dom, amr.RealBox([0, 0, 0], [1, 1, 1]), 0, [0, 0, 0])
    info = amr.AmrInfo()
    info.max_level = 1
    info.blocking_factor = [4]
    info.max_grid_size = [8]

    class Tagger(amr.AmrCore):
        def __init__(self):
            super().__init__(geom, info)

        def error_est(self, lev, tags, time, ngrow):
            if world.rank == world.size - 1:
                raise KeyError("only the last rank refuses")

        def make_new_level_from_scratch(self, lev, time, ba, dm):
            assert dm.communicator == world

        def make_new_level_from_coarse(self, lev, time, ba, dm):
            pass

        def remake_level(self, lev, time, ba, dm):
            pass

        def clear_level(self, lev):
            pass

    core = Tagger()
    expected = KeyError if world.rank == world.size - 1 else RuntimeError
    with pytest.raises(expected):
        core.init_from_scratch(0.0)
    world.barrier()
