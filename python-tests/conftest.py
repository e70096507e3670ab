"""pytest setup for the amrex_rs consumer tests.

The tests import the *installed* package: ``bash scripts/build-python.sh`` builds the
wheel and installs it into ``.venv``. Nothing from the checkout is put on ``sys.path``
except this folder (for the ``dlpack_ctypes`` helper).
"""

import gc
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if HERE not in sys.path:
    sys.path.insert(0, HERE)


@pytest.fixture
def amr():
    """The installed amrex_rs package (fails loudly when it was not installed)."""
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
