"""amrex_rs: AMReX's core data containers, zero-copy through DLPack.

``MultiFab``, ``FArrayBox``, ``Array4``, ``PODVector``, particles and ``SmallMatrix``
implemented in Rust (the compiled module ``amrex_rs._core``). Every container speaks
the DLPack Python protocol, so ``np.from_dlpack(x)`` (or CuPy, PyTorch, JAX) views its
memory without copying, and :func:`from_dlpack` adopts memory from any producer.

Neither NumPy, CuPy nor dpnp is imported by ``import amrex_rs``: the array module a
call needs is imported when it is first needed (``amrex_rs.xp``, ``to_xp()``).
"""

import os as _os
import sys as _sys


def _nvrtc_folders(nvidia):
    """The folders of an ``nvidia`` package directory where NVRTC's wheels put the library:
    ``cuda_nvrtc/lib`` (``nvidia-cuda-nvrtc-cu12``), then ``cu13/lib``, ``cu12/lib``, ...
    newest first (CUDA 13's ``nvidia-cuda-nvrtc``, which PyTorch's cu130 wheels depend on,
    puts ``libnvrtc.so.13`` in ``nvidia/cu13/lib``)."""
    try:
        subs = _os.listdir(nvidia)
    except OSError:
        return []
    majors = sorted((s for s in subs if s.startswith("cu") and s[2:].isdigit()),
                    key=lambda s: int(s[2:]), reverse=True)
    return [_os.path.join(nvidia, s, "lib") for s in ["cuda_nvrtc", *majors]]


def _find_nvrtc():
    """NVRTC (the CUDA run-time compiler the device kernels are built with) from NVIDIA's
    wheels, which PyTorch's CUDA wheels depend on: their library folder is not on the
    loader's path, so the extension is told where it is."""
    if "AMREX_NVRTC_LIBRARY" in _os.environ:
        return
    for base in _sys.path:
        for lib in _nvrtc_folders(_os.path.join(base or ".", "nvidia")):
            try:
                names = sorted(n for n in _os.listdir(lib) if n.startswith("libnvrtc.so."))
            except OSError:
                continue
            if names:
                _os.environ["AMREX_NVRTC_LIBRARY"] = _os.path.join(lib, names[0])
                return


_find_nvrtc()

from . import _core
from ._core import *  # noqa: F401,F403  (every class and function; _core.__all__)
from ._core import __version__

# The test stand-ins of a build with the cargo feature `testing` (`_debug_*`,
# `_DebugDeviceArray`, for python-tests/) are attributes of such a build but not part of the
# package's API: `__all__` and the typed stubs are the same for every build.
__all__ = [n for n in _core.__all__ if not n.startswith(("_debug_", "_Debug"))]


def __getattr__(name):
    # PEP 562: `amrex_rs.xp` is resolved on first access, so importing amrex_rs never
    # imports an array library.
    if name == "xp":
        return xp_for(None)
    raise AttributeError(f"module 'amrex_rs' has no attribute {name!r}")
