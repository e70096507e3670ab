"""The Python two-level example runs (10 coarse steps here instead of 40), keeps the mass
to round-off, and leaves a plotfile of a synchronised hierarchy: its numbers are checked
against an independent NumPy computation, not against the example's own code."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "two_level.py"
STEPS = 10
N, LO, HI = 64, 16, 48  # coarse cells; the fine region is coarse cells LO..HI-1
NUMBER = r"([-+]?\d\.\d+e[-+]\d+)"


def gaussian_cells(n):
    """The initial Gaussian at the cell centres of an n^3 grid on the unit cube, [i, j, k]."""
    x = (0.5 + np.arange(n)) / n
    i, j, k = np.meshgrid(x, x, x, indexing="ij")
    return np.exp(-((i - 0.45) ** 2 + (j - 0.2) ** 2 + (k - 0.4) ** 2) / (2.0 * 0.06**2))


def run_example(tmp_path, steps):
    env = dict(os.environ, AMREX_RS_TWO_LEVEL_STEPS=str(steps), TWO_LEVEL_PLOTFILE=str(tmp_path / "plt"))
    return subprocess.run([sys.executable, str(EXAMPLE)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)


def test_two_level_example_conserves_mass(tmp_path, amr):
    done = run_example(tmp_path, STEPS)
    assert done.returncode == 0, done.stderr
    out = done.stdout

    # The initial mass is the composite one: coarse cells outside the fine region, fine
    # cells inside it (average_down made the covered coarse cells their fine cells' mean).
    coarse, fine = gaussian_cells(N), gaussian_cells(2 * N)
    covered = np.zeros((N, N, N), dtype=bool)
    covered[LO:HI, LO:HI, LO:HI] = True
    fine_in = fine[2 * LO:2 * HI, 2 * LO:2 * HI, 2 * LO:2 * HI]
    vc, vf = N**-3.0, (2 * N) ** -3.0
    expected_m0 = coarse[~covered].sum() * vc + fine_in.sum() * vf
    m0 = float(re.search(r"initial mass " + NUMBER, out).group(1))
    assert abs(m0 - expected_m0) <= 1e-13 * expected_m0

    step = re.search(rf"step +10 +time (\S+) +mass {NUMBER} +relative change {NUMBER} +max (\S+)", out)
    assert step is not None, out
    m10, change10, max10 = float(step.group(2)), float(step.group(3)), float(step.group(4))
    assert abs(change10) <= 1e-13 and abs(m10 - m0) <= 1e-13 * m0
    assert 0.5 < max10 < coarse.max()  # diffusion lowered the peak
    drift = re.search(rf"relative change of mass after {STEPS} steps: " + r"(\S+) \(must be <= 1e-13\)", out)
    assert drift is not None, out
    assert float(drift.group(1)) <= 1e-13

    # The plotfile: both levels at the end time, the covered coarse cells the mean of their
    # fine cells, and the coarse level holding the printed mass.
    pf = amr.Plotfile(str(tmp_path / "plt"))
    assert pf.nlevels == 2 and pf.var_names == ["phi"] and pf.level_steps == [STEPS, 2 * STEPS]
    dt = float(re.search(r"coarse dt " + NUMBER, out).group(1))
    assert abs(pf.time - STEPS * dt) < 1e-8
    c, f = pf.read_level(0)[...], pf.read_level(1)[...]
    assert c.shape == (N, N, N) and f.shape == (N, N, N)
    mean = f.reshape(HI - LO, 2, HI - LO, 2, HI - LO, 2).mean(axis=(1, 3, 5))
    assert np.abs(c[LO:HI, LO:HI, LO:HI] - mean).max() <= 1e-15
    assert abs(c.sum() * vc - m0) <= 1e-13 * m0
    # Mass was carried into the fine region (u_y > 0 moves the Gaussian towards it): the
    # interface fluxes, refluxed, are what keep the total constant.
    assert f.sum() * vf > 2.0 * fine_in.sum() * vf  # 2.5 times after 10 steps
    assert re.search(r"two-level plotfile .*: 2 levels, finest level sum " + NUMBER, out)


def test_two_level_example_type_checks_against_the_stubs():
    from test_stubs import _mypy

    out = _mypy(EXAMPLE)
    assert out.returncode == 0, out.stdout + out.stderr
