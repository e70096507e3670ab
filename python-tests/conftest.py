"""pytest setup for the amrex_rs consumer tests.

The tests import the *installed* package: ``bash scripts/build-python.sh --testing``
builds the wheel with the test stand-ins and installs it into ``.venv``. Nothing from the
checkout is put on ``sys.path`` except this folder (for the ``dlpack_ctypes`` helper).

The test stand-ins (``amrex_rs._debug_*``: export counters, the fake device arena, Rust
exports; ``amrex_rs._DebugDeviceArray``) exist only in a build with the cargo feature
``testing``, never in the wheel users install. Tests that need them are marked
``testing_build`` (or use the ``no_leaks`` fixture) and skip, saying why, on a default
build.
"""

import gc
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if HERE not in sys.path:
    sys.path.insert(0, HERE)


TESTING_BUILD_REASON = (
    "needs the test stand-ins (amrex_rs._debug_*, _DebugDeviceArray) of a build with the "
    "cargo feature `testing`; the installed amrex_rs is a default build (bash "
    "scripts/build-python.sh --testing installs one)"
)


def is_testing_build(amrex_rs):
    """Whether `amrex_rs` was built with the test stand-ins (cargo feature `testing`)."""
    return hasattr(amrex_rs, "_debug_live_exports")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "testing_build: needs the test stand-ins of a `testing` build of amrex_rs"
    )
    config.addinivalue_line(
        "markers",
        "mpi: runs under mpirun too (scripts/test-python.sh: `mpirun -n 2|4 python -m pytest -m mpi`)",
    )


def pytest_collection_modifyitems(config, items):
    try:
        import amrex_rs
    except ImportError:
        return  # every test then fails loudly on its import
    if is_testing_build(amrex_rs):
        return
    skip = pytest.mark.skip(reason=TESTING_BUILD_REASON)
    for item in items:
        if item.get_closest_marker("testing_build") or "no_leaks" in getattr(
            item, "fixturenames", ()
        ):
            item.add_marker(skip)


@pytest.fixture
def amr():
    """The installed amrex_rs package (fails loudly when it was not installed)."""
    import amrex_rs

    return amrex_rs


@pytest.fixture
def no_leaks():
    """Asserts that a test leaves no DLPack export alive."""
    import amrex_rs

    if not is_testing_build(amrex_rs):
        pytest.skip(TESTING_BUILD_REASON)
    gc.collect()
    before = amrex_rs._debug_live_exports()
    yield
    gc.collect()
    assert amrex_rs._debug_live_exports() == before
