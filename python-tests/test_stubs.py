"""The typed stubs agree with the module (mypy's stubtest), and every public callable
has a docstring."""

import inspect
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def _stubtest(env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "amrex_rs", "--mypy-config-file", os.devnull],
        capture_output=True, text=True, env=env, check=False, cwd=os.path.dirname(__file__),
    )


def test_stubtest_passes_on_the_installed_stubs():
    out = _stubtest()
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Success" in out.stdout


def test_stubtest_catches_a_wrong_signature(amr, tmp_path):
    # The same stubs with one parameter renamed, found first through MYPYPATH: the check
    # must fail and name the method, or it could not catch a real drift either.
    stub = Path(amr.__file__).with_name("__init__.pyi").read_text()
    bad = stub.replace("def norm2(self, comp: int = 0,", "def norm2(self, component: int = 0,", 1)
    assert bad != stub
    (tmp_path / "amrex_rs").mkdir()
    (tmp_path / "amrex_rs" / "__init__.pyi").write_text(bad)
    shutil.copy(Path(amr.__file__).with_name("py.typed"), tmp_path / "amrex_rs" / "py.typed")
    out = _stubtest({"MYPYPATH": str(tmp_path)})
    assert out.returncode != 0
    assert "MultiFab.norm2" in out.stdout


def _public_callables(amr):
    seen = set()
    # The test stand-in class of a `testing` build is not in __all__, but documented too.
    extra = [n for n in ("_DebugDeviceArray",) if hasattr(amr, n)]
    for name in [*amr.__all__, *extra]:
        obj = getattr(amr, name)
        if id(obj) in seen or name.startswith("_") and name != "_DebugDeviceArray":
            continue
        seen.add(id(obj))
        if inspect.isclass(obj):
            yield name, obj
            for attr, member in vars(obj).items():
                if attr.startswith("__") and attr not in ("__dlpack__", "__dlpack_device__", "__getitem__", "__setitem__", "__dlpack_c_exchange_api__"):
                    continue
                if attr.startswith("_") and not attr.startswith("__"):
                    continue
                if member is None:  # a class constant such as Config.gpu_backend
                    continue
                yield f"{name}.{attr}", member
        elif callable(obj):
            yield name, obj


def test_every_public_callable_has_a_docstring(amr):
    missing = [
        name for name, obj in _public_callables(amr)
        if not (getattr(obj, "__doc__", None) or "").strip()
    ]
    assert missing == []


def test_help_reads_well(amr):
    text = inspect.getdoc(amr.MultiFab)
    assert text and "MultiFab" in text
    assert inspect.signature(amr.MultiFab.sum).parameters.keys() >= {"comp", "ngrow"}
    assert inspect.getdoc(amr.MultiFab.sum).strip()
    assert inspect.getdoc(amr) and "DLPack" in inspect.getdoc(amr)


def test_stub_file_and_marker_are_installed(amr):
    pkg = Path(amr.__file__).resolve().parent
    assert (pkg / "py.typed").is_file()
    assert (pkg / "__init__.pyi").is_file()


def _mypy(*paths):
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--check-untyped-defs",
         "--config-file", os.devnull, *map(str, paths)],
        capture_output=True, text=True, check=False,
    )


def test_the_main_example_type_checks_against_the_stubs():
    out = _mypy(Path(__file__).resolve().parent.parent / "examples" / "heat.py")
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_stubs_carry_types(tmp_path):
    good = tmp_path / "good.py"
    good.write_text(
        "import amrex_rs as amr\n"
        "ba = amr.BoxArray(amr.Box((0, 0, 0), (7, 7, 7)), max_size=4)\n"
        "mf = amr.MultiFab(ba, amr.DistributionMapping(ba), 2, 1)\n"
        "total: float = mf.sum(0)\n"
        "names: list[str] = amr.Plotfile('p').var_names\n"
    )
    assert _mypy(good).returncode == 0
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import amrex_rs as amr\n"
        "ba = amr.BoxArray(amr.Box((0, 0, 0), (7, 7, 7)))\n"
        "mf = amr.MultiFab(ba, amr.DistributionMapping(ba))\n"
        "s: str = mf.sum(0)\n"
        "mf.fill_boundary(periodic=True)\n"
    )
    out = _mypy(bad)
    assert out.returncode != 0
    assert 'Incompatible types in assignment (expression has type "float"' in out.stdout
    assert '"fill_boundary" of "MultiFab" has incompatible type "bool"' in out.stdout
