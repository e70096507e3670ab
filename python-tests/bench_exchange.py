"""Benchmark: one tensor exchange through the DLPack C exchange API vs through
``__dlpack__`` (capsule), in ns per exchange.

Rows (best of 7 ``timeit`` repeats; the C row is one call looping in C):
- C consumer: ``managed_tensor_from_py_object_no_sync`` + deleter, called from C
  (python-tests/exchange_api.c), i.e. the table's own cost;
- tvm-ffi: ``tvm_ffi.from_dlpack(ours)`` (tvm-ffi takes the table) vs
  ``tvm_ffi.from_dlpack(ours.__dlpack__())`` (capsule path);
- amrex_rs: ``amrex_rs.from_dlpack(ours)`` (table) vs
  ``amrex_rs.from_dlpack(ours.__dlpack__(max_version=(1, 3)))`` (capsule path).

Run: ``bash scripts/build-python.sh && .venv/bin/python python-tests/bench_exchange.py``
(needs gcc and tvm-ffi, both in the test setup).
"""

import ctypes
import os
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path

import amrex_rs

HERE = Path(__file__).resolve().parent


def best_ns(fn, number, repeat=7):
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e9


def c_library():
    inc = subprocess.run([str(Path(sys.executable).with_name("tvm-ffi-config")), "--dlpack-includedir"],
                         capture_output=True, text=True, check=True).stdout.strip()
    out = Path(tempfile.mkdtemp()) / "libexchange.so"
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", f"-I{inc}", str(HERE / "exchange_api.c"), "-o", str(out)],
                   check=True)
    lib = ctypes.PyDLL(str(out))
    lib.exchange_bench.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.c_int64]
    lib.exchange_bench.restype = ctypes.c_double
    return lib


def main():
    import tvm_ffi

    number = int(os.environ.get("BENCH_NUMBER", "100000"))
    v = amrex_rs.PodVectorF64(1000, 1.0)
    api = amrex_rs._debug_exchange_api_address()
    lib = c_library()
    c_ns = min(lib.exchange_bench(api, v, number) for _ in range(7))
    rows = [
        ("C: table export + deleter (per exchange)", None, c_ns),
        ("tvm_ffi.from_dlpack(ours)            [table]", lambda: tvm_ffi.from_dlpack(v), None),
        ("tvm_ffi.from_dlpack(ours.__dlpack__()) [capsule]", lambda: tvm_ffi.from_dlpack(v.__dlpack__()), None),
        ("amrex_rs.from_dlpack(ours)           [table]", lambda: amrex_rs.from_dlpack(v), None),
        ("amrex_rs.from_dlpack(ours.__dlpack__(max_version=(1, 3))) [capsule]",
         lambda: amrex_rs.from_dlpack(v.__dlpack__(max_version=(1, 3))), None),
        ("ours.__dlpack__(max_version=(1, 3)) alone", lambda: v.__dlpack__(max_version=(1, 3)), None),
    ]
    width = max(len(r[0]) for r in rows)
    res = {}
    for name, fn, fixed in rows:
        res[name] = fixed if fixed is not None else best_ns(fn, number)
        print(f"{name:<{width}}  {res[name]:8.1f} ns")
    names = [r[0] for r in rows]
    print(f"tvm-ffi: capsule / table = {res[names[2]] / res[names[1]]:.2f}x")
    print(f"amrex_rs.from_dlpack: capsule / table = {res[names[4]] / res[names[3]]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
