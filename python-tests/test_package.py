"""The installed package: where it comes from, its metadata, and lazy array modules."""

import importlib.metadata
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_imported_from_site_packages_not_the_checkout(amr):
    pkg = Path(amr.__file__).resolve().parent
    assert "site-packages" in pkg.parts
    for source in (ROOT / "crates", ROOT / "build", ROOT / "python-tests"):
        assert source not in pkg.parents, pkg
    # The compiled module sits inside the package, as the wheel installed it.
    assert Path(amr._core.__file__).resolve().parent == pkg


def test_metadata_matches_version(amr):
    assert importlib.metadata.version("amrex-rs") == amr.__version__
    meta = importlib.metadata.metadata("amrex-rs")
    assert meta["Requires-Python"] == ">=3.9"
    assert "BSD-3-Clause-LBNL" in (meta["License-Expression"] or meta["License"] or "")
    assert "Typing :: Typed" in meta.get_all("Classifier")
    cargo = (ROOT / "crates" / "amrex-python" / "Cargo.toml").read_text()
    workspace = (ROOT / "Cargo.toml").read_text()
    assert "version.workspace = true" in cargo
    assert f'version = "{amr.__version__}"' in workspace


def _run(code, env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, env=env, check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_imports_no_array_library():
    out = _run("""
        import sys
        import amrex_rs
        print(sorted(m for m in ("numpy", "cupy", "dpnp", "jax", "torch") if m in sys.modules))
    """)
    assert out.strip() == "[]"


def test_xp_resolves_lazily_to_numpy_for_host_memory():
    out = _run("""
        import sys
        import amrex_rs
        assert "numpy" not in sys.modules
        xp = amrex_rs.xp
        print(xp.__name__, "numpy" in sys.modules)
    """)
    assert out.split() == ["numpy", "True"]


@pytest.mark.testing_build
def test_device_memory_imports_cupy_or_dpnp_only_when_asked(tmp_path):
    # Stand-ins named cupy and dpnp record that they were imported and provide from_dlpack.
    for name in ("cupy", "dpnp"):
        (tmp_path / f"{name}.py").write_text(
            "import numpy\nIMPORTED = True\n"
            "def from_dlpack(x):\n    return ('%s', x.__dlpack_device__())\n" % name
        )
    out = _run("""
        import sys
        import amrex_rs as amr
        cuda = amr._DebugDeviceArray(2, 0, 4)
        one = amr._DebugDeviceArray(14, 0, 4)
        assert "cupy" not in sys.modules and "dpnp" not in sys.modules
        print(amr.xp_for(cuda).__name__, "dpnp" in sys.modules)
        print(amr.xp_for(one).__name__)
        print(amr.xp_for(amr.PodVectorF64(3)).__name__)
    """, {"PYTHONPATH": str(tmp_path)})
    assert out.split() == ["cupy", "False", "dpnp", "numpy"]


def test_xp_for_refuses_non_dlpack_objects(amr):
    import pytest

    with pytest.raises(TypeError, match="got int"):
        amr.xp_for(5)
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        amr.nonexistent  # noqa: B018


@pytest.mark.testing_build
def test_missing_cupy_says_what_to_install(amr, monkeypatch):
    import pytest

    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy -> ImportError
    with pytest.raises(ImportError, match="'cupy' package"):
        amr.xp_for(amr._DebugDeviceArray(2, 0, 1))
