"""The Python half of the main example runs and passes its own checks."""
import runpy
from pathlib import Path


def test_heat_example_runs(capsys):
    runpy.run_path(str(Path(__file__).resolve().parent.parent / "examples" / "heat.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "all checks passed" in out
