"""Helpers the test_amr_*.py files share: fill a MultiFab from a function of the
indices, read all of it back, build one-box levels."""

import numpy as np


def fill(mf, f, ghosts=False):
    """mf at (i, j, k) component n becomes f(i, j, k, n) (NumPy arrays of indices) on
    every local box, valid cells only or ghost cells too."""
    for a, (lo, hi) in zip(mf.to_numpy(order="C", ghosts=ghosts), mf.boxes(ghosts=ghosts)):
        n, k, j, i = np.meshgrid(
            np.arange(a.shape[0]),
            np.arange(lo[2], hi[2] + 1),
            np.arange(lo[1], hi[1] + 1),
            np.arange(lo[0], hi[0] + 1),
            indexing="ij",
        )
        a[...] = f(i, j, k, n)


def snapshot(mf):
    """Copies of every local box, ghost cells included, to compare before and after."""
    return [a.copy() for a in mf.to_numpy(order="C", ghosts=True)]


def same(before, mf):
    """Whether mf still holds exactly `before` (NaNs compare equal)."""
    return all(np.array_equal(a, b, equal_nan=True) for a, b in zip(before, snapshot(mf)))


def level(amr, lo, hi, ncomp=1, ngrow=0, max_size=None, typ=None):
    """A MultiFab over the cells lo..hi (boxes of at most max_size), converted to the
    index type `typ` when given."""
    ba = amr.BoxArray(amr.Box(lo, hi), max_size=max_size) if max_size else amr.BoxArray(amr.Box(lo, hi))
    if typ is not None:
        ba = amr.BoxArray([ba[i].convert(typ) for i in range(len(ba))])
    return amr.MultiFab(ba, amr.DistributionMapping(ba), ncomp, ngrow)


def at(mf, i, j, k, n=0):
    """The value at (i, j, k), component n, from the first local box whose fab (ghost
    cells included) holds it; None if none does."""
    for a, (lo, hi) in zip(mf.to_numpy(order="C", ghosts=True), mf.boxes(ghosts=True)):
        if all(lo[d] <= p <= hi[d] for d, p in enumerate((i, j, k))):
            return float(a[n, k - lo[2], j - lo[1], i - lo[0]])
    return None
