"""Every refusal of amrex_rs.from_dlpack says what it received, and no two read alike."""

import ctypes

import numpy as np
import pytest

_new = ctypes.pythonapi.PyCapsule_New
_new.restype = ctypes.py_object
_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def capsule(name):
    """A capsule around a dummy pointer (no destructor) with `name` (None: no name)."""
    return _new(0x1000, name, None)


class Returns:
    """A producer whose __dlpack__ returns `value`."""

    def __init__(self, value):
        self.value = value

    def __dlpack__(self, **kwargs):
        return self.value


def refusal(amr, obj, exc):
    with pytest.raises(exc) as info:
        amr.from_dlpack(obj)
    return str(info.value)


def test_non_producers_name_their_type(amr):
    assert "got int" in refusal(amr, 5, TypeError)
    assert "got str" in refusal(amr, "abc", TypeError)
    assert "got NoneType" in refusal(amr, None, TypeError)
    assert "got list" in refusal(amr, [1.0], TypeError)


def test_capsule_with_a_wrong_name_says_its_name(amr):
    msg = refusal(amr, capsule(b"not_a_tensor"), ValueError)
    assert "'not_a_tensor'" in msg and "the argument" in msg


def test_nameless_capsule(amr):
    assert "without a name" in refusal(amr, capsule(None), ValueError)


def test_consumed_capsule_says_it_was_consumed(amr):
    c = np.arange(3.0).__dlpack__()
    t = amr.from_dlpack(c)
    msg = refusal(amr, c, ValueError)
    assert "already consumed" in msg and "'used_dltensor'" in msg
    versioned = np.arange(3.0).__dlpack__(max_version=(1, 0))
    t2 = amr.from_dlpack(versioned)
    assert "'used_dltensor_versioned'" in refusal(amr, versioned, ValueError)
    del t, t2


def test_producer_returning_garbage_names_producer_and_type(amr):
    msg = refusal(amr, Returns(7), TypeError)
    assert "Returns.__dlpack__()" in msg and "of type int" in msg
    msg = refusal(amr, Returns(capsule(b"other")), ValueError)
    assert "Returns.__dlpack__()" in msg and "'other'" in msg


def test_producer_errors_propagate_unchanged(amr):
    class Broken:
        def __dlpack__(self, **kwargs):
            raise RuntimeError("producer broke")

    with pytest.raises(RuntimeError, match="producer broke"):
        amr.from_dlpack(Broken())


def test_every_refusal_reads_distinctly(amr):
    c = np.arange(3.0).__dlpack__()
    keep = amr.from_dlpack(c)
    messages = [
        refusal(amr, 5, TypeError),
        refusal(amr, "abc", TypeError),
        refusal(amr, capsule(b"not_a_tensor"), ValueError),
        refusal(amr, capsule(None), ValueError),
        refusal(amr, c, ValueError),
        refusal(amr, Returns(7), TypeError),
        refusal(amr, Returns(capsule(b"other")), ValueError),
        refusal(amr, Returns(capsule(b"used_dltensor")), ValueError),
    ]
    assert len(set(messages)) == len(messages), messages
    del keep


def test_one_bad_component_range_raises_one_exception_everywhere(amr):
    """Components 0..2 of one-component data: an IndexError from the MultiFab methods,
    the module functions, the AMR level operations and the flux register alike (one
    mapping from the library's errors to Python's exceptions)."""
    dom = amr.Box((0, 0, 0), (7, 7, 7))
    ba = amr.BoxArray(dom)
    ba.max_size(4)
    dm = amr.DistributionMapping(ba)
    mf = amr.MultiFab(ba, dm, 1, 0)
    other = amr.MultiFab(ba, dm, 1, 0)
    fine_ba = amr.BoxArray(amr.Box((0, 0, 0), (15, 15, 15)))
    fine = amr.MultiFab(fine_ba, amr.DistributionMapping(fine_ba), 1, 0)
    calls = {
        "MultiFab.set_val": lambda: mf.set_val(1.0, 0, 2),
        "MultiFab.plus": lambda: mf.plus(1.0, 0, 2),
        "MultiFab.sum": lambda: mf.sum(1),
        "MultiFab.add": lambda: mf.add(other, 0, 0, 2),
        "MultiFab.saxpy": lambda: mf.saxpy(2.0, other, 0, 0, 2),
        "copy_mfab": lambda: amr.copy_mfab(mf, other, 0, 0, 2, 0),
        "average_down": lambda: amr.average_down(fine, mf, 0, 2, 2),
    }
    for name, call in calls.items():
        with pytest.raises(IndexError, match="component") as info:
            call()
        assert "2" in str(info.value), f"{name}: {info.value}"
