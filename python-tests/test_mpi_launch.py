"""Whole programs under `mpirun`, started from this (one-process) test run: the examples
print what one process prints, MPI starts and ends whichever of mpi4py and amrex_rs
comes first, an uncaught exception on one rank ends the job instead of leaving the
others waiting, and a build without MPI says so under mpirun.

Needs `mpirun` and an MPI build of amrex_rs (scripts/test-python.sh installs one);
the test of the build without MPI needs the default wheel named by
AMREX_PY_DEFAULT_WHEEL (scripts/test-python.sh builds it).
"""

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import amrex_rs as amr
from test_amr_core import REF, compare_plotfiles, printed

ROOT = Path(__file__).resolve().parent.parent
MPIRUN = shutil.which("mpirun")
needs_mpi = pytest.mark.skipif(
    not (amr.Config.have_mpi and MPIRUN), reason="needs mpirun and an MPI build of amrex_rs"
)


def mpirun(n, args, timeout=180, env=None, check=True, **kw):
    """`mpirun -n n python args...`, bounded in time."""
    cmd = [MPIRUN, "-n", str(n), sys.executable] + [str(a) for a in args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, **kw)
    if check and out.returncode != 0:
        raise AssertionError(f"{cmd} exited {out.returncode}:\n{out.stdout}\n{out.stderr}")
    return out


def heat_lines(text, out_dir):
    """heat.py's lines without the timing, the rank count and the output folder."""
    lines = []
    for line in text.splitlines():
        if re.match(r"\d+ steps in ", line):
            continue
        line = re.sub(r" on \d+ rank\(s\)", "", line).replace(str(out_dir), "OUT")
        lines.append(line)
    return lines


@needs_mpi
def test_heat_example_prints_the_same_on_two_ranks(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    env1 = dict(os.environ, AMREX_RS_HEAT_OUT=str(one))
    env2 = dict(os.environ, AMREX_RS_HEAT_OUT=str(two))
    ref = subprocess.run([sys.executable, ROOT / "examples" / "heat.py"], capture_output=True, text=True,
                         timeout=180, env=env1, check=True).stdout
    got = mpirun(2, [ROOT / "examples" / "heat.py"], env=env2).stdout
    assert "on 2 rank(s)" in got and "all checks passed" in got
    assert heat_lines(got, two) == heat_lines(ref, one)
    compare_plotfiles(one / "plt00040", two / "plt00040", rtol=0)


@needs_mpi
@pytest.mark.skipif(not (REF / "inputs").exists(), reason=f"no tutorial inputs at {REF}")
@pytest.mark.parametrize("n", [2, 4])
def test_python_amr_tutorial_matches_amrex_under_mpirun(tmp_path, n):
    """The Python AmrCore port (regrids, FillPatch, reflux, average_down on distributed
    levels) on n ranks: every line AMReX printed up to step 10, and plt00010 equal."""
    out = mpirun(n, [ROOT / "examples" / "advection_amr.py", REF / "inputs", "max_step=10"],
                 timeout=600, cwd=tmp_path).stdout
    ref = printed((REF / "stdout.txt").read_text())
    end = ref.index("Writing plotfile plt00010") + 1
    assert printed(out) == ref[:end]
    for step in ("plt00000", "plt00010"):
        compare_plotfiles(REF / step, tmp_path / step)


ORDER = r"""
import sys
first = sys.argv[1]
if first == "mpi4py":
    from mpi4py import MPI
    import amrex_rs as amr
    amr.initialize([])
else:
    import amrex_rs as amr
    amr.initialize([])
    from mpi4py import MPI
w = amr.Communicator.world()
assert (w.rank, w.size) == (MPI.COMM_WORLD.rank, MPI.COMM_WORLD.size), (w, MPI.COMM_WORLD.size)
ba = amr.BoxArray(amr.Box((0, 0, 0), (15, 15, 15)), max_size=8)
mf = amr.MultiFab(ba, amr.DistributionMapping(ba), 1, 1)
mf.set_val(1.0)
mf.fill_boundary((True, True, True))
total = MPI.COMM_WORLD.allreduce(sum(float(a.sum()) for a in mf.to_numpy()))
assert total == 8 * 10 ** 3, total
amr.finalize()
amr.initialize([])  # again, as pytest fixtures do: MPI stays up until exit
assert mf.sum(0) == 4096.0
amr.finalize()
# One line from rank 0: mpirun interleaves the ranks' output at any byte.
ranks = MPI.COMM_WORLD.gather(w.rank, root=0)
if w.rank == 0:
    print("ok", ranks, flush=True)
"""


@needs_mpi
@pytest.mark.parametrize("first", ["mpi4py", "amrex_rs"])
def test_mpi4py_and_amrex_rs_start_in_either_order(tmp_path, first):
    pytest.importorskip("mpi4py")
    script = tmp_path / "order.py"
    script.write_text(ORDER)
    out = mpirun(2, [script, first], timeout=120)
    assert out.stdout.strip() == "ok [0, 1]", out.stdout + out.stderr


UNCAUGHT = r"""
import amrex_rs as amr
amr.initialize([])
w = amr.Communicator.world()
if w.rank == 1:
    raise KeyError("rank 1 gives up before the collective")
w.barrier()  # rank 0 would wait here forever
print("rank 0 passed the barrier", flush=True)
"""


@needs_mpi
def test_uncaught_exception_on_one_rank_ends_the_job(tmp_path):
    script = tmp_path / "uncaught.py"
    script.write_text(UNCAUGHT)
    out = mpirun(2, [script], timeout=120, check=False)
    assert out.returncode != 0
    assert "KeyError: 'rank 1 gives up before the collective'" in out.stderr
    assert "rank 1 of 2 ended with an uncaught exception; MPI_Abort" in out.stderr
    assert "passed the barrier" not in out.stdout


NOWAIT_AT_EXIT = r"""
import sys
if sys.argv[1] == "mpi4py":
    from mpi4py import MPI  # mpi4py starts (and will end) MPI
import amrex_rs as amr
amr.initialize([])
ba = amr.BoxArray(amr.Box(amr.IntVect(0, 0, 0), amr.IntVect(31, 31, 31)))
ba.max_size(8)
done = amr.MultiFab(ba, amr.DistributionMapping(ba), 1, 1)
done.set_val(1.0)
done.fill_boundary_nowait((True, True, True))
done.fill_boundary_finish()
left = amr.MultiFab(ba, amr.DistributionMapping(ba), 1, 1)
left.set_val(2.0)
left.fill_boundary_nowait((True, True, True))
print("posted", flush=True)
# No fill_boundary_finish: the interpreter exits with the exchange in flight.
"""


@needs_mpi
@pytest.mark.parametrize("first", ["mpi4py", "amrex_rs"])
def test_an_exchange_left_in_flight_is_finished_before_mpi_ends(tmp_path, first):
    # Before, the exchange's requests were tested after MPI_Finalize when the MultiFab
    # was freed: MPICH stopped the process ("... after finalizing MPICH", exit 1); with
    # mpi4py owning MPI, nothing finished the exchange (UCX: "was not returned").
    script = tmp_path / "nowait_at_exit.py"
    script.write_text(NOWAIT_AT_EXIT)
    out = mpirun(2, [script, first], timeout=120)
    assert out.stdout.count("posted") == 2
    assert "after finalizing" not in out.stderr, out.stderr
    assert "was not returned" not in out.stderr, out.stderr  # UCX: a request left over


@pytest.mark.skipif(not MPIRUN, reason="needs mpirun")
def test_a_build_without_mpi_says_so_under_mpirun(tmp_path):
    if amr.Config.have_mpi:
        wheel = os.environ.get("AMREX_PY_DEFAULT_WHEEL")
        if not wheel:
            pytest.skip("the installed amrex_rs has MPI and AMREX_PY_DEFAULT_WHEEL names no default wheel")
        with zipfile.ZipFile(wheel) as z:
            z.extractall(tmp_path / "default")
        env = dict(os.environ, PYTHONPATH=str(tmp_path / "default"))
    else:
        env = None
    # Each rank writes its own file: mpirun interleaves the ranks' output at any byte.
    script = tmp_path / "world.py"
    script.write_text(
        "import os, sys\n"
        "import amrex_rs as amr\n"
        "assert not amr.Config.have_mpi\n"
        "lines = []\n"
        "try:\n"
        "    amr.Communicator.world()\n"
        "except RuntimeError as e:\n"
        "    lines.append(f'refused: {e}')\n"
        "try:\n"
        "    amr.Communicator.from_mpi4py(None)\n"
        "except RuntimeError as e:\n"
        "    lines.append(f'refused: {e}')\n"
        "rank = os.environ.get('PMI_RANK') or os.environ.get('OMPI_COMM_WORLD_RANK')\n"
        "open(os.path.join(sys.argv[1], f'rank{rank}.txt'), 'w').write('\\n'.join(lines))\n"
    )
    mpirun(2, [script, tmp_path], timeout=120, env=env)
    lines = [line for r in (0, 1) for line in (tmp_path / f"rank{r}.txt").read_text().splitlines()]
    assert len(lines) == 4, lines
    assert sum("mpirun started 2 ranks, but this amrex_rs was built without MPI" in line for line in lines) == 2
    assert sum("from_mpi4py: this amrex_rs was built without MPI" in line for line in lines) == 2
