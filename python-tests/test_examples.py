"""The Python half of the main example runs, passes its own checks, and leaves a plotfile
and a PNG whose pixels are the field."""
import re
import runpy
from pathlib import Path

import numpy as np

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "heat.py"


def test_heat_example_runs(capsys, monkeypatch, tmp_path, amr):
    monkeypatch.setenv("AMREX_RS_HEAT_OUT", str(tmp_path))
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    out = capsys.readouterr().out
    assert "all checks passed" in out
    png = Path(re.search(r"slice k = \d+ .*: (\S+\.png)", out).group(1))
    assert png == tmp_path / "heat_slice.png" and png.is_file()
    pf = amr.Plotfile(str(tmp_path / "plt00040"))
    assert pf.var_names == ["phi"] and pf.level_steps == [40]

    # The field, from the closed form (independent of the example's code).
    n, steps, dt, k = 64, 40, 0.1, 16
    lam = 3.0 * (2.0 * np.cos(2.0 * np.pi / n) - 2.0)
    w = 2.0 * np.pi / n
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    field = 1.0 + (1.0 + dt * lam) ** steps * np.sin(w * i) * np.sin(w * j) * np.sin(w * k)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import colormaps

    rgb = plt.imread(png)[..., :3]
    assert rgb.shape == (4 * n, 4 * n, 3)
    lut = colormaps["viridis"](np.linspace(0.0, 1.0, 256))[:, :3]
    idx = np.argmin(((rgb[..., None, :] - lut[None, None]) ** 2).sum(-1), axis=-1)
    assert np.sqrt(((rgb - lut[idx]) ** 2).sum(-1)).max() < 0.02  # every pixel is viridis
    # matplotlib maps [min, max] onto 256 equal bins: a pixel's value is its bin's centre.
    values = field.min() + (idx + 0.5) / 256.0 * (field.max() - field.min())
    cells = values[::-1][::4, ::4].T  # back to [i, j]: row 0 is the top, 4 pixels per cell
    step = (field.max() - field.min()) / 256.0
    # 8-bit PNG channels can make the nearest colour a neighbouring bin: two bins at most.
    assert np.abs(cells - field).max() <= 2 * step
    assert np.corrcoef(cells.ravel(), field.ravel())[0, 1] > 0.9999
    assert abs(values.mean() - field.mean()) < step and abs(values.std() - field.std()) < step
