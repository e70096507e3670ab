"""pyAMReX scripts run unchanged: the habits every pyAMReX script starts with, each taken
from pyAMReX's own tests or documentation (the file is named in each test) and run
against the installed `amrex_rs`. Where a default differs the script must fail loudly,
never run on the wrong data; those refusals are tested here too."""

import itertools

import numpy as np
import pytest

import amrex_rs as amr


@pytest.fixture(autouse=True)
def amrex_init(tmp_path, monkeypatch):
    # pyAMReX tests/conftest.py: every test runs between amr.initialize([...]) and
    # amr.finalize(), with AMReX's own keys on the "command line".
    monkeypatch.chdir(tmp_path)
    amr.initialize(
        [
            "amrex.verbose=1",
            "tiny_profiler.enabled=0",
            "amrex.throw_exception=1",
            "amrex.signal_handling=0",
            "amrex.the_arena_is_managed=0",
            "amrex.the_arena_init_size=0",
        ]
    )
    yield
    amr.finalize()


@pytest.fixture
def boxarr():
    # pyAMReX tests/conftest.py: `ba = amr.BoxArray(std_box); ba.max_size(32)` chops in
    # place (64^3 into eight 32^3 boxes).
    bx = amr.Box(amr.IntVect(0, 0, 0), amr.IntVect(63, 63, 63))
    ba = amr.BoxArray(bx)
    ba.max_size(32)
    return ba


@pytest.fixture
def distmap(boxarr):
    return amr.DistributionMapping(boxarr)


@pytest.fixture(params=list(itertools.product([1, 3], [0, 1])))
def mfab(boxarr, distmap, request):
    # pyAMReX tests/conftest.py: 1 or 3 components, 0 or 1 ghost cells.
    ncomp, nghost = request.param
    mf = amr.MultiFab(boxarr, distmap, ncomp, nghost)
    mf.set_val(0.0, 0, ncomp)
    return mf


# --- 5. BoxArray.max_size chops in place ---------------------------------------------------

def test_max_size_chops_in_place(boxarr):
    assert len(boxarr) == 8 and boxarr.size() == 8
    assert all(boxarr[i].length() == amr.IntVect(32, 32, 32) for i in range(8))
    # the returned object is the same BoxArray (chained use keeps working)
    assert boxarr.max_size(16) is boxarr and len(boxarr) == 64


# --- 1. to_xp / to_numpy: whole fabs with ghost cells, F order ------------------------------

def test_mfab_to_xp_default_is_ghosts_and_f_order(mfab):
    # pyAMReX tests/test_multifab.py::test_mfab_numpy ("Compute Mfab Simple"):
    # field_list = mfab.to_xp(); field[()] = 42.0 sets every cell, ghosts included.
    ngv = mfab.n_grow_vect
    field_list = mfab.to_xp()
    assert len(field_list) == 8
    for mfi, field in zip(mfab, field_list):
        bx = mfi.tilebox().grow(ngv)
        assert field.shape == (*bx.length(), mfab.num_comp)  # (x, y, z, comp)
        assert field.flags.f_contiguous
        field[()] = 42.0
    assert mfab.min(0, mfab.n_grow_vect.max) == 42.0
    # order="C" gives (comp, z, y, x) of the same memory, zero-copy
    for f, c in zip(mfab.to_numpy(), mfab.to_numpy(order="C")):
        assert c.shape == f.shape[::-1] and np.shares_memory(f, c)
    # copy=True is a copy
    copies = mfab.to_numpy(copy=True)
    copies[0][()] = -1.0
    assert mfab.min(0) == 42.0


# --- 2. mf.array(mfi) is an Array4 -------------------------------------------------------------

def test_mfab_loop_slow(mfab):
    # pyAMReX tests/test_multifab.py::test_mfab_loop_slow
    ngv = mfab.n_grow_vect
    for mfi in itertools.islice(mfab, 2):  # two boxes of 32^3 are enough in Python loops
        bx = mfi.tilebox().grow(ngv)
        marr = mfab.array(mfi)
        assert isinstance(marr, amr.Array4_double)
        cells = [bx.small_end, bx.big_end, bx.small_end + amr.IntVect(3, 2, 1)]
        for i, j, k in cells:
            if mfab.num_comp == 3:
                marr[i, j, k, 0] = 10.0 * i
                marr[i, j, k, 1] = 10.0 * j
                marr[i, j, k, 2] = 10.0 * k
            else:
                marr[i, j, k] = 10.0 * i
        marr_np = marr.to_numpy()  # F order, zero-copy, ghosts included
        assert marr_np[0, 0, 0, 0] == marr[bx.small_end]
        assert marr_np[-1, -1, -1, 0] == marr[bx.big_end]
        for n in range(mfab.num_comp):
            small_end_comp = list(bx.small_end) + [n]
            big_end_comp = list(bx.big_end) + [n]
            assert marr_np[0, 0, 0, n] == marr[small_end_comp]
            assert marr_np[-1, -1, -1, n] == marr[big_end_comp]
        marr_np[()] = 42.0
        assert marr_np[0, 0, 0, 0] == marr[bx.small_end]
        assert marr_np[-1, -1, -1, -1] == marr[bx.big_end]


def test_mfab_loop(mfab):
    # pyAMReX tests/test_multifab.py::test_mfab_loop
    ngv = mfab.n_grow_vect
    for mfi in mfab:
        bx = mfi.tilebox().grow(ngv)
        marr_xp = mfab.array(mfi).to_xp()
        marr_xp[()] = 10.0

        def iv2s(iv, comp):
            return tuple(iv) + (comp,)

        for n in range(mfab.num_comp):
            assert marr_xp[0, 0, 0, n] == 10.0
            assert marr_xp[-1, -1, -1, n] == marr_xp[iv2s(bx.big_end - bx.small_end, n)]
    assert mfab.max(0, ngv.max) == 10.0


# --- 3. Array4 indexing -------------------------------------------------------------------------

def test_array4_indexing_forms():
    # pyAMReX tests/test_array4.py::test_array4 and src/Base/Array4.H (__getitem__ with an
    # IntVect, std::array<int, 4> and std::array<int, 3>)
    x = np.ones((2, 3, 4))
    arr = amr.Array4_double(x)
    assert arr.nComp == 1
    x[1, 1, 1] = 42
    assert arr[1, 1, 1] == 42 and arr[1, 1, 1, 0] == 42
    assert arr[0, 0, 0] == 1 and arr[3, 2, 1] == 1
    assert arr[amr.IntVect(1, 1, 1)] == 42 and arr[[1, 1, 1, 0]] == 42 and arr[[1, 1, 1]] == 42
    arr[amr.IntVect(0, 0, 0)] = 7.0
    arr[[3, 2, 1, 0]] = 8.0
    assert x[0, 0, 0] == 7.0 and x[1, 2, 3] == 8.0
    c_arr2np = np.array(np.from_dlpack(arr), copy=True)
    assert c_arr2np.ndim == 4 and c_arr2np[0, 1, 1, 1] == 42
    # three indices on a multi-component view read component 0, as AMReX's a(i, j, k)
    two = amr.Array4_double(np.array([5.0, 6.0]).reshape(2, 1, 1, 1))
    assert two[0, 0, 0] == 5.0 and two[0, 0, 0, 1] == 6.0
    # copy constructor: a second view of the same memory
    c_arr = amr.Array4_double(arr)
    x[1, 1, 1] = 44
    assert c_arr[1, 1, 1] == 44


def test_array4_empty_and_other_element_types():
    # pyAMReX tests/test_array4.py::test_array4_empty
    empty = amr.Array4_double()
    assert empty.size == 0 and empty.nComp == 0
    emptyc = amr.Array4_double(empty)
    assert emptyc.size == 0 and emptyc.nComp == 0
    for cls, dtype in [(amr.Array4_float, np.float32), (amr.Array4_int, np.int32),
                       (amr.Array4_uint, np.uint32), (amr.Array4_long, np.int64)]:
        assert cls().size == 0
        x = np.arange(24, dtype=dtype).reshape(2, 3, 4)
        a = cls(x)
        assert a.size == 24 and a[3, 2, 1] == x[1, 2, 3]
        a[0, 0, 0] = 5
        assert x[0, 0, 0] == 5
        with pytest.raises(BufferError):  # another element type: refused, never reinterpreted
            cls(x.astype(np.float64 if dtype != np.float64 else np.int32))


# --- 4. set_val(v) fills ghost cells ------------------------------------------------------

def test_set_val_fills_the_whole_fab(boxarr, distmap):
    # pyAMReX src/Base/FabArray.cpp: set_val(val) is "Set all components in the entire
    # region of each FAB to val"; set_val(val, comp, num_comp, nghost=0) the valid region.
    mf = amr.MultiFab(boxarr, distmap, 2, 1)
    mf.set_val(3.0)
    assert all((a == 3.0).all() for a in mf.to_numpy())
    mf.set_val(1.0, 0, 1)  # valid cells only, component 0
    assert mf.min(0, 1) == 1.0 and mf.max(0, 1) == 3.0 and mf.min(1, 1) == 3.0


def test_scalar_ops_positional_forms(boxarr, distmap):
    # pyAMReX src/Base/MultiFab.H: plus(val, nghost=0), plus(val, comp, num_comp, nghost=0);
    # mult and negate alike; invert(numerator, nghost).
    mf = amr.MultiFab(boxarr, distmap, 2, 1)
    mf.set_val(1.0)
    mf.plus(1.0, 1)  # every component, ghost cells too
    assert mf.min(0, 1) == mf.min(1, 1) == 2.0
    mf.mult(3.0, 1, 1)  # component 1, valid cells
    assert mf.max(1) == 6.0 and mf.min(1, 1) == 2.0 and mf.max(0) == 2.0
    mf.negate(0)
    assert mf.max(0) == -2.0 and mf.max(0, 1) == 2.0
    mf.invert(1.0, 0, 1, 1)
    assert mf.max(0, 1) == pytest.approx(0.5)
    with pytest.raises(TypeError, match="not both"):
        mf.plus(1.0, 1, ngrow=1)
    with pytest.raises(TypeError):
        mf.set_val(1.0, 1)  # pyAMReX has no set_val(val, nghost)


def test_mfab_simple(mfab):
    # pyAMReX tests/test_multifab.py::test_mfab_simple
    for i in range(mfab.num_comp):
        mfab.set_val(-10 * (i + 1), i, 1)
    mfab.abs(0, mfab.num_comp)
    for i in range(mfab.num_comp):
        assert mfab.max(i) == (10 * (i + 1))
        assert mfab.min(i) == (10 * (i + 1))
    mfab.plus(20.0, 0, mfab.num_comp)
    mfab.mult(10.0, 0, mfab.num_comp)
    mfab.invert(10.0, 0, mfab.num_comp)
    for i in range(mfab.num_comp):
        np.testing.assert_allclose(mfab.max(i), 1.0 / (20.0 + (10 * (i + 1))))
        np.testing.assert_allclose(mfab.min(i), 1.0 / (20.0 + (10 * (i + 1))))


# --- 6. instance-method arithmetic, deep copy ------------------------------------------------

@pytest.mark.parametrize("nghost", [0, 1])
def test_mfab_ops(boxarr, distmap, nghost):
    # pyAMReX tests/test_multifab.py::test_mfab_ops
    src = amr.MultiFab(boxarr, distmap, 3, nghost)
    dst = amr.MultiFab(boxarr, distmap, 1, nghost)
    src.set_val(10.0, 0, 1)
    src.set_val(20.0, 1, 1)
    src.set_val(30.0, 2, 1)
    dst.set_val(0.0, 0, 1)
    dst.add(src, 2, 0, 1, nghost)
    dst.subtract(src, 1, 0, 1, nghost)
    dst.multiply(src, 0, 0, 1, nghost)
    dst.divide(src, 1, 0, 1, nghost)
    np.testing.assert_allclose(dst.min(0), 5.0)
    np.testing.assert_allclose(dst.max(0), 5.0)
    dst.xpay(2.0, src, 0, 0, 1, nghost)
    dst.saxpy(2.0, src, 1, 0, 1, nghost)
    np.testing.assert_allclose(dst.min(0), 60.0)
    dst.lin_comb(6.0, src, 1, 1.0, src, 2, 0, 1, nghost)
    np.testing.assert_allclose(dst.min(0), 150.0)
    np.testing.assert_allclose(dst.max(0), 150.0)
    # the static spelling of the older bindings is the same call
    amr.MultiFab.saxpy(dst, 1.0, src, 0, 0, 1, nghost)
    assert dst.max(0) == 160.0


def test_mfab_copy_is_deep(boxarr, distmap):
    # pyAMReX src/amrex/extensions/MultiFab.py copy_multifab: mf.copy() is a new MultiFab
    # with the same layout, ghost cells copied.
    mf = amr.MultiFab(boxarr, distmap, 2, 1)
    mf.set_val(4.0)
    c = mf.copy()
    assert isinstance(c, amr.MultiFab) and c.n_grow_vect == mf.n_grow_vect
    mf.set_val(0.0)
    assert c.min(0, 1) == c.max(1, 1) == 4.0
    c.copymf(mf, 1, 0, 1, 0)  # valid cells of component 0 from mf's component 1
    assert c.max(0) == 0.0 and c.max(0, 1) == 4.0
    amr.copy_mfab(dst=c, src=mf, srccomp=0, dstcomp=1, numcomp=1, nghost=1)
    assert c.max(1, 1) == 0.0
    with pytest.raises(TypeError, match="deep copy"):
        c.copy(mf)


# --- initialize / Config / ParmParse -------------------------------------------------------

def test_parmparse(tmp_path):
    # pyAMReX tests/test_parmparse.py with tests/parmparse_inputs
    (tmp_path / "parmparse_inputs").write_text(
        "param.dt = 1.e-5\nparam.ncell = 100\nparam.do_pml = 1\n"
    )
    pp = amr.ParmParse("")
    pp.addfile(str(tmp_path / "parmparse_inputs"))
    pp_param = amr.ParmParse("param")
    (_, ncell) = pp_param.query_int("ncell")
    dt = pp_param.get_real("dt")
    dopml = pp_param.get_bool("do_pml")
    assert dopml is True and dt == 1.0e-5 and ncell == 100
    # the keys initialize() read are in the same table
    assert amr.ParmParse("amrex").get_int("verbose") == 1
    assert amr.initialized()


def test_initialize_reads_an_inputs_file_and_overrides(tmp_path):
    # AMReX's start-up: `./main3d.ex inputs amr.n_cell="32 32 32"`; the command line wins.
    (tmp_path / "inputs").write_text(
        "amr.n_cell = 64 64 64   # cells\nmax_step = 10\nprob.title = \"run #3\"\n"
    )
    amr.initialize([str(tmp_path / "inputs"), "max_step=20", "amr.n_cell=32 32 16"])
    try:
        pp = amr.ParmParse("amr")
        assert pp.getarr("n_cell", int) == [32, 32, 16]
        assert pp.get_int("n_cell", 2) == 16
        top = amr.ParmParse()
        assert top.get_int("max_step") == 20
        assert top.get_string("prob.title") == "run #3"
        assert top.query("plot_int", -1) == -1 and top.query("max_step", 0) == 20
        assert top.queryarr("nothing", float) == (False, [])
        pp.add("max_level", 2)
        pp.addarr("ref_ratio", [2, 4])
        d = top.to_dict()
        assert d["amr"]["n_cell"] == [32, 32, 16] and d["amr"]["max_level"] == 2
        assert d["amr"]["ref_ratio"] == [2, 4] and d["max_step"] == 20
        with pytest.raises(KeyError, match="amr.blocking_factor"):
            pp.get_int("blocking_factor")
        with pytest.raises(ValueError, match="not an integer"):
            top.get_int("prob.title")
    finally:
        amr.finalize()
    assert amr.ParmParse().contains("max_step")  # the outer initialize is still open


def test_finalize_clears_the_table():
    amr.ParmParse().add("only_here", 1)
    amr.finalize()
    assert not amr.initialized() and "only_here" not in amr.ParmParse()
    amr.initialize([])  # the fixture's finalize() pairs with this one


def test_config():
    # pyAMReX tests/test_array4.py skips on `amr.Config.gpu_backend != "CUDA"`;
    # src/amrex/extensions/MultiFab.py reads `amr.Config.have_gpu`.
    assert amr.Config.spacedim == 3 and amr.Config.precision == "DOUBLE"
    assert amr.Config.have_gpu == (amr.Config.gpu_backend is not None)
    # have_mpi: the MPI build (scripts/test-python.sh installs one where MPI exists),
    # whose world is an MPI communicator even on one process.
    assert amr.Config.have_mpi == ("MPI" in repr(amr.Communicator.world()))
    d = amr.Config.to_dict()
    assert d["spacedim"] == 3 and d["have_gpu"] == amr.Config.have_gpu
    assert d["have_mpi"] == amr.Config.have_mpi


def test_arenas_on_a_cpu_build(boxarr, distmap):
    # pyAMReX tests/test_multifab.py::test_mfab_dtoh_copy asks The_Pinned_Arena() for
    # host memory; an AMReX CPU build gives the CPU arena for every The_*_Arena().
    if amr.Config.have_gpu:
        pytest.skip("a GPU build: the arenas are the GPU's (test_gpu.py)")
    for f in (amr.The_Arena, amr.The_Pinned_Arena, amr.The_Managed_Arena,
              amr.The_Device_Arena, amr.The_Async_Arena, amr.The_Comms_Arena, amr.The_Cpu_Arena):
        assert f().kind == "host"
    mf = amr.MultiFab(boxarr, distmap, 1, 0, arena=amr.The_Pinned_Arena())
    mf.set_val(1.0)
    assert mf.sum(0) == 64**3


# --- element types: iMultiFab, float32, IArrayBox ------------------------------------------

@pytest.fixture(params=list(itertools.product([1, 3], [0, 1])))
def imfab(boxarr, distmap, request):
    # pyAMReX tests/conftest.py::imfab
    ncomp, nghost = request.param
    mf = amr.iMultiFab(boxarr, distmap, ncomp, nghost)
    mf.set_val(0, 0, ncomp)
    return mf


@pytest.mark.parametrize("kind", ["iMultiFab", "MultiFab_float"])
def test_typed_fill_boundary_takes_what_multifab_takes(boxarr, distmap, kind):
    # Three bools or ints, a Periodicity or a Geometry, as MultiFab.fill_boundary; each fab is
    # filled with its index so that every ghost cell says where it came from.
    geom = amr.Geometry(boxarr.minimal_box(), amr.RealBox([0, 0, 0], [1, 1, 1]), 0, [1, 0, 1])
    results = []
    for periodic in [(True, False, True), geom.periodicity(), geom, [1, 0, 1], None]:
        mf = getattr(amr, kind)(boxarr, distmap, 1, 1)
        mf.set_val(-1)
        for mfi, a in zip(mf, mf.to_xp()):
            a[1:-1, 1:-1, 1:-1, :] = mfi.index + 1
        if periodic is None:
            mf.fill_boundary()
        else:
            mf.fill_boundary(periodic)
        results.append([a.copy() for a in mf.to_xp()])
    for r in results[1:4]:
        assert all(np.array_equal(a, b) for a, b in zip(results[0], r))
    # Without periodicity the ghosts on the domain's faces keep -1; with it they do not.
    assert min(int(a.min()) for a in results[4]) == -1
    assert sum(int((a == -1).sum()) for a in results[0]) < sum(int((a == -1).sum()) for a in results[4])
    with pytest.raises(TypeError, match="three bools \\(or ints\\), a Periodicity or a Geometry"):
        getattr(amr, kind)(boxarr, distmap, 1, 1).fill_boundary("periodic")


def test_imfab_loop(imfab):
    # pyAMReX tests/test_imultifab.py::test_imfab_loop
    ngv = imfab.n_grow_vect
    for mfi in imfab:
        bx = mfi.tilebox().grow(ngv)
        marr = imfab.array(mfi)
        assert isinstance(marr, amr.Array4_int)
        marr_xp = marr.to_xp()
        assert marr_xp.dtype == np.int32
        marr_xp[()] = 10

        def iv2s(iv, comp):
            return tuple(iv) + (comp,)

        for n in range(imfab.num_comp):
            assert marr_xp[0, 0, 0, n] == 10
            assert marr_xp[-1, -1, -1, n] == marr_xp[iv2s(bx.big_end - bx.small_end, n)]
        marr[bx.small_end] = 7
        assert marr_xp[0, 0, 0, 0] == 7


def test_imfab_simple(imfab):
    # pyAMReX tests/test_imultifab.py::test_imfab_simple
    for i in range(imfab.num_comp):
        imfab.set_val(-10 * (i + 1), i, 1)
    imfab.abs(0, imfab.num_comp)
    for i in range(imfab.num_comp):
        assert imfab.max(i) == (10 * (i + 1))
        assert imfab.min(i) == (10 * (i + 1))
    imfab.plus(20, 0, imfab.num_comp)
    imfab.mult(10, 0, imfab.num_comp)
    imfab.negate(0, imfab.num_comp)
    for i in range(imfab.num_comp):
        assert imfab.max(i) == -10 * (20 + (10 * (i + 1)))
    assert len(imfab) == 8


def test_imfab_copy_and_numpy(imfab):
    # pyAMReX tests/test_imultifab.py::test_imfab_copy and test_imfab_numpy
    imfab.set_val(42)
    new_imfab = imfab.copy()
    imfab.set_val(0)
    for i in range(imfab.num_comp):
        assert new_imfab.max(i) == 42 and new_imfab.min(i, new_imfab.n_grow_vect) == 42
    for field in imfab.to_xp():
        field[()] = 42
    assert imfab.sum(0) == 42 * 64**3
    with pytest.raises(TypeError):
        imfab.set_val(1.5)  # an int MultiFab refuses a float instead of truncating it


def test_float32_multifab_and_fabs(boxarr, distmap):
    mf = amr.MultiFab_float(boxarr, distmap, 2, 1)
    mf.set_val(1.5)
    assert mf.to_numpy()[0].dtype == np.float32 and mf.min(1, 1) == 1.5
    other = mf.copy()
    mf.divide(other, 0, 0, 2, 1)
    assert mf.max(0, 1) == 1.0
    for mfi in mf:
        assert isinstance(mf.array(mfi), amr.Array4_float)
    bx = amr.Box((-1, 0, 2), (4, 3, 5))
    for cls, value, dtype in [(amr.IArrayBox, 3, np.int32), (amr.FArrayBox_float, 0.25, np.float32)]:
        fab = cls(bx, 2)
        fab.set_val(value)
        a = fab.array()
        assert a[bx.small_end] == value and a[(4, 3, 5, 1)] == value
        a[-1, 0, 2, 1] = 2 * value
        f = fab.to_numpy()
        assert f.dtype == dtype and f.shape == (6, 4, 4, 2) and f[0, 0, 0, 1] == 2 * value
        assert fab.get(-1, 0, 2, 1) == 2 * value and fab.max(1) == 2 * value
        with pytest.raises(NotImplementedError, match="whole fab"):
            fab.set_val(value, amr.Box((0, 0, 2), (1, 1, 3)))


def test_aos_pop_back():
    # pyAMReX tests/test_aos.py::test_aos_push_pop: pop_back removes the last particle
    aos = amr.ArrayOfStructs_2_1()
    for i in range(3):
        aos.push_back([i, 0.0, 0.0], [1.5, 2.2], i + 1, 0, [3])
    aos.pop_back()
    assert aos.size() == aos.num_particles() == 2 and aos.get(1)["id"] == 2
    # with neighbours AMReX keeps the neighbour count and drops a real particle: refused
    aos.set_num_neighbors(5)
    with pytest.raises(NotImplementedError, match="neighbour"):
        aos.pop_back()
    aos.set_num_neighbors(0)
    aos.pop_back()
    aos.pop_back()
    with pytest.raises(IndexError):
        aos.pop_back()


# --- particle layouts of WarpX and ImpactX, and the runtime-sized form ----------------------

@pytest.mark.parametrize("cls, nreal", [(amr.StructOfArrays_7_0_idcpu_default, 7),
                                        (amr.StructOfArrays_8_0_idcpu_default, 8)])
def test_pure_soa_layouts(cls, nreal):
    # pyAMReX src/Particle/ParticleContainer_WarpX.cpp (SoAParticle<7, 0>, 3-D) and
    # ParticleContainer_ImpactX.cpp (SoAParticle<8, 0>): pure SoA with an idcpu array.
    soa = cls()
    assert soa.num_real_comps() == nreal and soa.num_int_comps() == 0
    ids = np.array([amr.make_id_cpu(i + 1, 0) for i in range(4)], dtype=np.uint64)
    soa.extend(ids, np.arange(nreal * 4.0).reshape(nreal, 4), np.zeros((0, 4), np.int32))
    d = soa.to_dict()
    assert len(soa) == 4 and list(d["real_1"]) == [4.0, 5.0, 6.0, 7.0]
    assert [amr.particle_id(w) for w in d["idcpu"]] == [1, 2, 3, 4]


def test_runtime_sized_soa():
    # HiPACE++'s 37 reals and 1 int (pyAMReX src/Particle/ParticleContainer_HiPACE.cpp)
    soa = amr.StructOfArrays_0_0.with_components(37, 1)
    assert soa.num_real_comps() == 37 and soa.num_int_comps() == 1
    soa.push_back(amr.make_id_cpu(1, 0), [float(i) for i in range(37)], [5])
    assert soa.get_real(36, 0) == 36.0 and soa.get_int(0, 0) == 5


# --- 7. IntVect and Box ----------------------------------------------------------------------

def test_iv_3d_and_ops():
    # pyAMReX tests/test_intvect.py::test_iv_3d1, test_iv_ops, test_iv_static
    obj = amr.IntVect(1, 2, 3)
    assert obj.max == 3 and obj.min == 1 and obj.sum == 6
    obj[0] = 2
    obj[1] = 3
    obj[2] = 4
    assert tuple(obj) == (2, 3, 4)
    gold = amr.IntVect(2)
    one = amr.IntVect.unit_vector()
    two = one + one
    assert two == gold and two != amr.IntVect.zero_vector()
    assert two > one and two >= gold and one < two and one <= one and not (one > two)
    assert one * gold == two and amr.IntVect(4) / gold == two
    assert amr.IntVect.zero_vector() == amr.IntVect.cell_vector()
    assert one == amr.IntVect.node_vector()
    assert amr.IntVect.max_vector().numpy().dtype == np.int32
    # AMReX's order is lexicographic with z first, not component-wise
    assert amr.IntVect(5, 0, 0) < amr.IntVect(0, 0, 1)
    assert amr.IntVect(-7, 7, 0) / 2 == amr.IntVect(-3, 3, 0)  # truncation, as C++
    iv = amr.IntVect(1, 1, 1)
    iv += 2
    assert iv == amr.IntVect(3, 3, 3)
    with pytest.raises(TypeError):
        hash(iv)  # mutable, as pyAMReX's


def test_box_mutates_as_pyamrex():
    # pyAMReX src/Base/Box.cpp: grow/shift/convert/surrounding_nodes change the box;
    # src/amrex/extensions/MultiFab.py relies on `min_box.grow(ngv)` without the result.
    bx = amr.Box(amr.IntVect(0, 0, 0), amr.IntVect(7, 7, 7))
    assert bx.ok and not bx.is_empty and bx.volume == 512 and bx.size == amr.IntVect(8, 8, 8)
    bx.grow(amr.IntVect(1, 1, 1))
    assert bx.small_end == amr.IntVect(-1, -1, -1) and bx.length(0) == 10
    bx.surrounding_nodes(0)
    assert bx.big_end == amr.IntVect(9, 8, 8) and not bx.cell_centered
    bx.enclosed_cells()
    bx.shift(amr.IntVect(1, 1, 1))
    assert bx.small_end == amr.IntVect(0, 0, 0) and bx.big_end == amr.IntVect(9, 9, 9)
    cells = list(amr.Box((0, 0, 0), (1, 1, 0)))
    assert [tuple(c) for c in cells] == [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)]
    small = bx.small_end
    small[0] = 5  # a copy, as pyAMReX's small_end
    assert bx.small_end == amr.IntVect(0, 0, 0)


def test_local_flag_is_refused(boxarr, distmap):
    # pyAMReX src/Base/MultiFab.H: sum(comp=0, local=False); here the second argument is
    # the ghost width, so a bool is refused instead of summing one layer of ghost cells.
    mf = amr.MultiFab(boxarr, distmap, 1, 1)
    mf.set_val(1.0)
    assert mf.sum(0) == 64**3
    with pytest.raises(TypeError, match="bool"):
        mf.sum(0, True)
