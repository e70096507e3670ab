"""The wheel users install (`pip install ./crates/amrex-python`: no cargo features) carries
none of the test stand-ins (`_debug_*`, `_DebugDeviceArray`, the fake device arena), and
the typed stubs agree with it as they agree with the test build.

scripts/test-python.sh builds that default wheel into build/wheels-default (without
installing it) and names it in AMREX_PY_DEFAULT_WHEEL; the test unpacks it and imports it
in a subprocess, where it comes first on sys.path. When the installed amrex_rs is itself a
default build, that one is checked instead.
"""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

STAND_INS = ("_debug_", "_Debug")
# Names the test build's binary holds (pyo3's method tables, the arena's backend name)
# and a default build's must not.
MARKERS = (b"_debug_fake_device_arena", b"_DebugDeviceArray", b"_debug_live_exports")

REPORT = r"""
import json, amrex_rs, amrex_rs._core as core
print(json.dumps({
    "file": amrex_rs.__file__,
    "core": core.__file__,
    "stand_ins": sorted(n for n in {*dir(amrex_rs), *dir(core)} if n.startswith(%r)),
    "in_all": sorted(n for n in core.__all__ if n.startswith(%r)),
    "have_mpi": amrex_rs.Config.have_mpi,
    "world": repr(amrex_rs.Communicator.world()),
}))
""" % (STAND_INS, STAND_INS)


def _default_build(amr, tmp_path):
    """A folder that puts a default build first on sys.path, or None when the installed
    package is one."""
    if not hasattr(amr, "_debug_live_exports"):
        return None
    wheel = os.environ.get("AMREX_PY_DEFAULT_WHEEL")
    if not wheel:
        pytest.skip(
            "the installed amrex_rs is a testing build and AMREX_PY_DEFAULT_WHEEL names no "
            "default wheel (scripts/test-python.sh builds one and sets it)"
        )
    assert Path(wheel).is_file(), f"AMREX_PY_DEFAULT_WHEEL={wheel} does not exist"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(tmp_path)
    return tmp_path


def _env(path):
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = str(path)
        env["MYPYPATH"] = str(path)  # the wheel's own stubs
    return env


def test_the_default_build_has_no_test_stand_ins(amr, tmp_path):
    path = _default_build(amr, tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", REPORT], capture_output=True, text=True, env=_env(path),
        check=True, cwd=tmp_path,
    )
    report = json.loads(out.stdout)
    if path is not None:
        assert Path(report["file"]).resolve().is_relative_to(path.resolve()), report
    assert report["stand_ins"] == [] and report["in_all"] == [], report
    # No MPI either: one process, however the test run itself was built.
    assert report["have_mpi"] is False and report["world"] == "Communicator(rank=0, size=1, single)", report
    # Not compiled in at all, not just unregistered: the binary lacks their names, which
    # the test build's binary (the positive control) has.
    binary = Path(report["core"]).read_bytes()
    assert [m for m in MARKERS if m in binary] == []
    if path is not None:
        installed = Path(amr._core.__file__).read_bytes()
        assert [m for m in MARKERS if m not in installed] == []


def test_stubtest_passes_on_the_default_build(amr, tmp_path):
    path = _default_build(amr, tmp_path)
    out = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "amrex_rs", "--mypy-config-file", os.devnull],
        capture_output=True, text=True, env=_env(path), check=False, cwd=tmp_path,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Success" in out.stdout
