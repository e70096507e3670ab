#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into fuzz/corpus/<target>/ (run by
scripts/fuzz.sh; the seeds are small and deterministic, so they are regenerated rather
than committed as opaque bytes).

dlpack_core / dlpack_containers: tensors in the harness's input format (fuzz/src/lib.rs):
valid layouts of each container, and the hostile layouts once found by hand (index-space
edges, zero strides over huge extents, rank 0, NULL strides, negative strides).
plotfile: a small plotfile written by amrex-plotfile (fuzz/seeds/plt_small), each file
cut down, in the target's format (two u16 lengths, Header, Cell_H, data).
checkpoint: a checkpoint over the same two boxes (its level 0 is plt_small's VisMF data
under the name phi), the tutorial's Header lines, and cut or corrupted versions.
parm_parse: inputs files (the tutorial's keys) and malformed or extreme ones.
"""
import os
import struct
import sys

EDGES = [
    -(1 << 63), -(1 << 63) + 1, (1 << 63) - 1, (1 << 63) - 2,
    -(1 << 31), -(1 << 31) + 1, (1 << 31) - 1, (1 << 31) - 2, 1 << 31, (1 << 31) + 1,
    (1 << 32) - 1, 1 << 30, 1 << 31, 1 << 32, 1 << 40, 1 << 62, -(1 << 31), -(1 << 40),
]


def num(v):
    """The shortest encoding of integer v."""
    if -100 <= v < 100:
        return bytes([v + 100])
    if v in EDGES:
        return bytes([200 + EDGES.index(v)])
    return bytes([255]) + struct.pack("<q", v)


# dtype indices (fuzz/src/lib.rs DTYPES): 0 f64, 1 f32, 2 i32, 3 u8; devices: 0 CPU.
def tensor(shape, strides=None, dtype=0, device=0, read_only=False, legacy=False,
           misalign=0, split=0):
    mode = (1 if legacy else 0) | (2 if read_only else 0) | (4 if strides is None else 0)
    out = bytes([mode, len(shape), dtype, device])
    out += b"".join(num(e) for e in shape)
    out += b"".join(num(s) for s in (strides or [0] * len(shape)))
    return out + bytes([misalign, split])


def ivec(x, y, z):
    return num(x) + num(y) + num(z)


def main(root):
    I32MAX = (1 << 31) - 1
    core = {
        "f64_c": tensor([3, 4], [4, 1]) + b"\x00",
        "f64_null_strides": tensor([2, 3, 4]) + b"\x01",
        "scalar": tensor([]) + b"\x00",
        "negative_stride": tensor([3, 4], [-4, 1], split=1) + b"\x02",
        "zero_stride_huge": tensor([1 << 40], [0]) + b"\x00",
        "extent_one_min_stride": tensor([1], [-(1 << 63)]),
        "empty_1_5_0": tensor([1, 5, 0], [5, 1, 1]),
        "legacy": tensor([4], [1], legacy=True),
        "max_stride_extent_one": tensor([2, 1], [1, (1 << 63) - 1]),
        "misaligned": tensor([4], [1], misalign=3),
        "u8_read_only": tensor([8], [1], dtype=3, read_only=True),
    }
    containers = {}
    for sel in range(12):
        t = tensor([2, 3, 4, 5], [60, 20, 5, 1])
        containers[f"sel{sel}_4d"] = bytes([sel]) + ivec(0, 0, 0) + ivec(0, 0, 0) + t
    containers.update({
        "fab_i32_at_max": bytes([6]) + ivec(0, I32MAX, 0) + ivec(0, 0, 0)
        + tensor([3], [1], dtype=2),
        "fab_u8_long": bytes([4]) + ivec(0, -3, 0) + ivec(0, 0, 0)
        + tensor([(1 << 31) + 1, 1], [0, 1], dtype=3, read_only=True),
        "array4_2_31": bytes([0]) + ivec(0, -1, 0) + ivec(0, 0, 0)
        + tensor([1 << 31, 1], [0, 1], read_only=True),
        "array4_i64max": bytes([0]) + ivec(0, 2, 0) + ivec(0, 0, 0)
        + tensor([(1 << 63) - 2, 1], [0, 1], read_only=True),
        "fabarray_ghosts": bytes([7]) + ivec(0, 0, 0) + ivec(1, 1, 1)
        + tensor([1, 4, 4, 4], [64, 16, 4, 1]),
        "fabarray_neg_ghost": bytes([7]) + ivec(0, 0, 0) + ivec(0, -1, 0)
        + tensor([1, 2, 2, 2], [8, 4, 2, 1]),
        "fabarray_k_fast": bytes([7]) + ivec(0, 0, 0) + ivec(0, 0, 0)
        + tensor([1, 2, 2, 2], [8, 2, 4, 1]),
        "smallmatrix_3x2_f": bytes([11]) + ivec(0, 0, 0) + ivec(0, 0, 0)
        + tensor([3, 2], [1, 3]),
        "podvector_zero_stride": bytes([8]) + ivec(0, 0, 0) + ivec(0, 0, 0)
        + tensor([1 << 40], [0]),
    })
    plt = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plt_small")
    header = open(os.path.join(plt, "Header"), "rb").read()
    cell_h = open(os.path.join(plt, "Level_0", "Cell_H"), "rb").read()
    cell_d = open(os.path.join(plt, "Level_0", "Cell_D_00000"), "rb").read()

    def plot(h, c, d):
        return struct.pack("<HH", len(h), len(c)) + h + c + d

    plotfile = {
        "valid": plot(header, cell_h, cell_d),
        "short_data": plot(header, cell_h, cell_d[:100]),
        "empty_data": plot(header, cell_h, b""),
        "edge_box": plot(header, cell_h.replace(b"(7,3,3)", b"(7,3,2147483647)", 1), cell_d),
        "huge_box": plot(header, cell_h.replace(b"(7,3,3)", b"(999999990,1,1)", 1), b""),
        "dotdot": plot(header.replace(b"Level_0/Cell", b"../Level_0/Cell"), cell_h, cell_d),
    }
    lo = cell_h.index(b"(2 0")
    grids = cell_h[lo:cell_h.index(b"\n)\n", lo) + 3]
    chk_header = (b"Checkpoint file for AmrCoreAdv\n0\n20 40 \n0.011581673274624229 "
                  b"0.0057908366373121143 \n0.22307875274693367 0.22307875274693367 \n" + grids)
    phi_h = cell_h.replace(b"Cell_D_00000", b"phi_D_00000")
    checkpoint = {
        "valid": plot(chk_header, phi_h, cell_d),
        "two_levels": plot(chk_header.replace(b"\n0\n", b"\n1\n", 1)
                           + b"(1 0\n((2,2,2) (5,5,5) (0,0,0))\n)\n", phi_h, cell_d),
        "truncated": plot(chk_header[:len(chk_header) // 2], phi_h, cell_d),
        "count_mismatch": plot(chk_header.replace(b"(2 0", b"(3 0"), phi_h, cell_d),
        "finest_huge": plot(chk_header.replace(b"\n0\n", b"\n999999\n", 1), phi_h, cell_d),
        "short_data": plot(chk_header, phi_h, cell_d[:64]),
        "nan_dt": plot(chk_header.replace(b"0.011581673274624229", b"nan"), phi_h, cell_d),
    }
    tutorial = (b"max_step = 40\nstop_time = 1000.0\ngeometry.prob_lo = 0.0 0.0 0.0\n"
                b"geometry.prob_hi = 1.0 1.0 0.125\ngeometry.is_periodic = 1 1 1\n"
                b"amr.n_cell = 64 64 8\namr.max_level = 2\namr.ref_ratio = 2 2 2 2\n"
                b"amr.blocking_factor = 8\namr.max_grid_size = 16\namr.v = 1\n"
                b"adv.phierr = 1.01 1.1 1.5 # comment\nplot_file = \"a b\"\n")
    parm_parse = {
        "tutorial": tutorial,
        "max_level_huge": tutorial.replace(b"amr.max_level = 2", b"amr.max_level = 2147483647"),
        "n_cell_huge": tutorial.replace(b"64 64 8", b"2147483647 64 8"),
        "ref_ratio_vect": tutorial + b"amr.ref_ratio_vect = 2 2 1 4 4 2\n",
        "no_value": b"amr.max_level =\n",
        "bad_quotes": b"a = \"unterminated\n",
        "many_keys": b" ".join(b"k%d = %d" % (i, i) for i in range(200)),
    }
    for name, seeds in [("dlpack_core", core), ("dlpack_containers", containers),
                        ("plotfile", plotfile), ("checkpoint", checkpoint),
                        ("parm_parse", parm_parse)]:
        d = os.path.join(root, name)
        os.makedirs(d, exist_ok=True)
        for k, v in seeds.items():
            with open(os.path.join(d, "seed_" + k), "wb") as f:
                f.write(v)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "fuzz/corpus")
