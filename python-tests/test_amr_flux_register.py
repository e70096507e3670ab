"""FluxRegister: pyAMReX's tests/test_fluxregister.py (AMReX-Codes/pyamrex), then a
two-level update that conserves mass to round-off with reflux (and with overwrite_flux)
and visibly does not without, and the refusals."""

import numpy as np
import pytest

from conftest import is_testing_build
from amr_util import at, fill, level, same, snapshot

amr = pytest.importorskip("amrex_rs")
N = 8  # coarse cells per direction, over [0, 1]^3
FACE = [amr.IndexType(*(d == e for e in range(3))) for d in range(3)]


def geom():
    return amr.Geometry(amr.Box((0, 0, 0), (N - 1,) * 3), amr.RealBox([0.0] * 3, [1.0] * 3), 0, [0, 0, 0])


def face_mfab(ba, dm, d, val):
    faces = amr.BoxArray([ba[i].convert(FACE[d]) for i in range(len(ba))])
    mf = amr.MultiFab(faces, dm, 1, 0)
    mf.set_val(val)
    return mf


def setup(fine_max=None):
    """A coarse level covering the domain and a fine level over coarse cells 2..5."""
    ba_c = amr.BoxArray(amr.Box((0, 0, 0), (N - 1,) * 3))
    dm_c = amr.DistributionMapping(ba_c)
    fine_box = amr.Box((4, 4, 4), (11, 11, 11))
    ba_f = amr.BoxArray(fine_box, max_size=fine_max) if fine_max else amr.BoxArray(fine_box)
    dm_f = amr.DistributionMapping(ba_f)
    return ba_c, dm_c, ba_f, dm_f, amr.FluxRegister(ba_f, dm_f, amr.IntVect(2), 1, 1)


def test_fluxregister_construct():
    ba_c, dm_c, ba_f, dm_f, fr = setup()
    assert (fr.fine_level, fr.crse_level, fr.n_comp) == (1, 0, 1)
    assert fr.ref_ratio == amr.IntVect(2)
    fr.set_val(0.0)
    assert fr.sum_reg(0) == 0.0
    assert amr.FluxRegister.FrOp.COPY == 0 and amr.FluxRegister.FrOp.ADD == 1


def test_fluxregister_matched_fluxes_cancel():
    ba_c, dm_c, ba_f, dm_f, fr = setup()
    c = 3.0
    for d in range(3):
        fr.crse_init(face_mfab(ba_c, dm_c, d, c), d, 0, 0, 1, mult=-1.0)
        # each coarse face is 2^2 fine faces
        fr.fine_add(face_mfab(ba_f, dm_f, d, c / 4), d, 0, 0, 1, mult=1.0)
    assert fr.sum_reg(0) == 0.0
    phi = amr.MultiFab(ba_c, dm_c, 1, 0)
    phi.set_val(1.0)
    fr.reflux(phi, 1.0, 0, 0, 1, geom())
    assert phi.min(0) == phi.max(0) == 1.0


def test_fluxregister_mismatch_corrects_and_conserves():
    ba_c, dm_c, ba_f, dm_f, fr = setup()
    c = 3.0
    fr.crse_init(face_mfab(ba_c, dm_c, 0, c), 0, 0, 0, 1)  # mult=-1 by default
    fr.fine_add(face_mfab(ba_f, dm_f, 0, 2 * c / 4), 0, 0, 0, 1, 1.0)
    phi = amr.MultiFab(ba_c, dm_c, 1, 0)
    phi.set_val(1.0)
    before = phi.sum(0)
    fr.reflux(phi, 1.0, 0, 0, 1, geom())
    vol = (1 / N) ** 3
    # register c on each face: -c/V into the cell below the low x face, +c/V above the high
    assert np.isclose(at(phi, 1, 3, 3), 1.0 - c / vol)
    assert np.isclose(at(phi, 6, 3, 3), 1.0 + c / vol)
    assert at(phi, 3, 3, 3) == 1.0 and at(phi, 1, 1, 3) == 1.0
    assert np.isclose(phi.sum(0), before)


def test_crse_init_add_and_area():
    ba_c, dm_c, ba_f, dm_f, fr = setup()
    flux, area = face_mfab(ba_c, dm_c, 0, 2.0), face_mfab(ba_c, dm_c, 0, 0.5)
    fr.crse_init(flux, 0, 0, 0, 1, -1.0, amr.FluxRegister.FrOp.COPY)
    fr.crse_init(flux, 0, 0, 0, 1, -1.0, amr.FluxRegister.FrOp.ADD)
    phi = amr.MultiFab(ba_c, dm_c, 1, 0)
    phi.set_val(0.0)
    fr.reflux(phi, 1.0, 0, 0, 1, geom())
    vol = (1 / N) ** 3
    assert np.isclose(at(phi, 1, 3, 3), 4.0 / vol)  # -(-2 - 2) / V
    fr.set_val(0.0)
    fr.crse_init(flux, 0, 0, 0, 1, area=area)
    fr.crse_add(flux, 0, 0, 0, 1, -1.0, geom(), area=area)
    phi.set_val(0.0)
    fr.reflux(phi, 1.0, 0, 0, 1, geom())
    assert np.isclose(at(phi, 1, 3, 3), 2.0 / vol)  # two times -(2 * 0.5), negated
    vol_mf = amr.MultiFab(ba_c, dm_c, 1, 0)
    vol_mf.set_val(2 * vol)
    phi.set_val(0.0)
    fr.reflux(phi, 1.0, 0, 0, 1, geom(), volume=vol_mf)
    assert np.isclose(at(phi, 1, 3, 3), 1.0 / vol)


def conservative_step(with_reflux=True, overwrite=False, fine_max=None):
    """One explicit update of both levels with scattered face fluxes (area and time step
    included, zero on the domain boundary), fine averaged down: returns the coarse mass
    before and after."""
    ba_c, dm_c, ba_f, dm_f, fr = setup(fine_max)
    g = geom()
    vc, vf = (1 / N) ** 3, (1 / (2 * N)) ** 3
    u_c = amr.MultiFab(ba_c, dm_c, 1, 0)
    fill(u_c, lambda i, j, k, n: 1.0 + 0.1 * np.sin(i + 2 * j + 3 * k))
    u_f = amr.MultiFab(ba_f, dm_f, 1, 0)
    fill(u_f, lambda i, j, k, n: 1.0 + 0.2 * np.cos(i - j + k))
    amr.average_down(u_f, u_c, 0, 1, 2)
    mass0 = u_c.sum(0) * vc

    # Fluxes are functions of the global face index, so faces shared by two boxes get
    # one value: each level alone then conserves.
    fc = [face_mfab(ba_c, dm_c, d, 0.0) for d in range(3)]
    ff = [face_mfab(ba_f, dm_f, d, 0.0) for d in range(3)]
    for d in range(3):
        def flux(i, j, k, n, d=d, scale=1e-3):
            return scale * np.sin(12.9898 * i + 78.233 * j + 37.719 * k + 3.1 * d)
        # no flux through the domain boundary
        fill(fc[d], lambda i, j, k, n, d=d: flux(i, j, k, n) * ((i, j, k)[d] % N != 0))
        fill(ff[d], lambda i, j, k, n, d=d: flux(i, j, k, n, scale=2.5e-4) + 1e-5 * d)
    if overwrite:
        fr.set_val(0.0)
        for d in range(3):
            fr.fine_add(ff[d], d, 0, 0, 1, 1.0)
        fr.overwrite_flux(fc, 1.0, 0, 0, 1, g)
    else:
        for d in range(3):
            fr.crse_init(fc[d], d, 0, 0, 1, -1.0)
            fr.fine_add(ff[d], d, 0, 0, 1, 1.0)

    # u -= (F_hi - F_lo) / V on both levels
    for u, fl, v in ((u_c, fc, vc), (u_f, ff, vf)):
        for a, fa in zip(u.to_numpy(order="C", ghosts=False), zip(*(f.to_numpy(order="C", ghosts=False) for f in fl))):
            a[0] -= (fa[0][0][:, :, 1:] - fa[0][0][:, :, :-1]) / v
            a[0] -= (fa[1][0][:, 1:, :] - fa[1][0][:, :-1, :]) / v
            a[0] -= (fa[2][0][1:, :, :] - fa[2][0][:-1, :, :]) / v
    if with_reflux and not overwrite:
        fr.reflux(u_c, 1.0, 0, 0, 1, g)
    amr.average_down(u_f, u_c, 0, 1, 2)
    return mass0, u_c.sum(0) * vc


@pytest.mark.parametrize("fine_max", [None, 4])
def test_reflux_conserves_the_two_level_update(fine_max):
    mass0, mass1 = conservative_step(fine_max=fine_max)
    assert abs(mass1 - mass0) < 1e-15 * 1000
    m0, m1 = conservative_step(with_reflux=False, fine_max=fine_max)
    assert abs(m1 - m0) > 1e-9  # without it the interface leaks


def test_overwrite_flux_makes_the_update_conservative_without_reflux():
    mass0, mass1 = conservative_step(overwrite=True)
    assert abs(mass1 - mass0) < 1e-15 * 1000


def test_clear_internal_borders_keeps_covered_cells():
    ba_c, dm_c, ba_f, dm_f, fr = setup(fine_max=4)  # 8 fine boxes: internal faces
    g = geom()
    fr.fine_add(face_mfab(ba_f, dm_f, 0, 1.0), 0, 0, 0, 1, 1.0)
    phi = amr.MultiFab(ba_c, dm_c, 1, 0)
    phi.set_val(0.0)
    fr.reflux(phi, 1.0, 0, 0, 1, g)
    assert at(phi, 3, 3, 3) != 0.0  # an internal face corrected a covered cell
    fr.clear_internal_borders(g)
    phi.set_val(0.0)
    fr.reflux(phi, 1.0, 0, 0, 1, g)
    assert all(at(phi, i, j, k) == 0.0 for i in range(2, 6) for j in range(2, 6) for k in range(2, 6))
    assert at(phi, 1, 3, 3) != 0.0 and at(phi, 6, 3, 3) != 0.0


def test_refusals_change_nothing():
    ba_c, dm_c, ba_f, dm_f, fr = setup()
    with pytest.raises(ValueError, match="level"):
        amr.FluxRegister(ba_f, dm_f, 2, 0, 1)
    with pytest.raises(ValueError, match="ratio"):
        amr.FluxRegister(ba_f, dm_f, 0, 1, 1)
    with pytest.raises(ValueError, match="coarsen"):
        amr.FluxRegister(amr.BoxArray(amr.Box((0, 0, 0), (2, 3, 3))), amr.DistributionMapping(amr.BoxArray(amr.Box((0, 0, 0), (2, 3, 3)))), 2, 1, 1)
    fr.crse_init(face_mfab(ba_c, dm_c, 0, 1.0), 0, 0, 0, 1)
    reg = fr.sum_reg(0)
    cells = amr.MultiFab(ba_c, dm_c, 1, 0)
    with pytest.raises(ValueError, match="face"):
        fr.crse_init(cells, 0, 0, 0, 1)  # not face data
    with pytest.raises(ValueError, match="face"):
        fr.fine_add(face_mfab(ba_f, dm_f, 1, 1.0), 0, 0, 0, 1, 1.0)  # y faces for x
    with pytest.raises(ValueError, match="direction"):
        fr.crse_init(face_mfab(ba_c, dm_c, 0, 1.0), 3, 0, 0, 1)
    with pytest.raises(IndexError, match="component"):
        fr.crse_init(face_mfab(ba_c, dm_c, 0, 1.0), 0, 0, 0, 2)
    with pytest.raises(IndexError, match="component"):
        fr.sum_reg(1)
    assert fr.sum_reg(0) == reg
    phi = amr.MultiFab(ba_c, dm_c, 1, 0)
    phi.set_val(2.0)
    before = snapshot(phi)
    with pytest.raises(IndexError, match="component"):
        fr.reflux(phi, 1.0, 0, 0, 2, geom())
    with pytest.raises(ValueError, match="same object"):
        fr.reflux(phi, 1.0, 0, 0, 1, geom(), volume=phi)
    fc = [face_mfab(ba_c, dm_c, d, 5.0) for d in range(3)]
    with pytest.raises(ValueError, match="distinct"):
        fr.overwrite_flux([fc[0], fc[0], fc[2]], 1.0, 0, 0, 1, geom())
    with pytest.raises(ValueError, match="face"):
        fr.overwrite_flux([fc[1], fc[0], fc[2]], 1.0, 0, 0, 1, geom())
    assert same(before, phi)
    assert all(f.min(0) == f.max(0) == 5.0 for f in fc)


@pytest.mark.testing_build
def test_device_memory_is_not_implemented():
    if not is_testing_build(amr):
        pytest.skip("needs the fake device arena of a testing build")
    ba_c, dm_c, ba_f, dm_f, fr = setup()
    dev = amr.MultiFab(ba_c, dm_c, 1, 0, arena=amr._debug_fake_device_arena())
    with pytest.raises(NotImplementedError, match="to_host"):
        fr.reflux(dev, 1.0, 0, 0, 1, geom())
