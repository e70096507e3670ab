"""pytest setup for the amrex_rs consumer tests.

The module is built by ``bash scripts/build-python.sh`` into ``build/python``; this file
puts that folder (and this one, for the ``dlpack_ctypes`` helper) on ``sys.path``.
"""

import gc
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.environ.get("AMREX_RS_BUILD_DIR", os.path.join(ROOT, "build", "python"))
for path in (BUILD, HERE):
    if path not in sys.path:
        sys.path.insert(0, path)


@pytest.fixture
def amr():
    """The amrex_rs module (fails loudly when it was not built)."""
    import amrex_rs

    return amrex_rs


@pytest.fixture
def no_leaks():
    """Asserts that a test leaves no DLPack export alive."""
    import amrex_rs

    gc.collect()
    before = amrex_rs._debug_live_exports()
    yield
    gc.collect()
    assert amrex_rs._debug_live_exports() == before
