"""The Python examples of README.md and docs/python.md run as written."""

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def python_block(path, heading):
    text = (ROOT / path).read_text()
    section = text[text.index(heading):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.parametrize("path, heading", [
    ("README.md", "## Python quick start"),
    ("docs/python.md", "## Quick start"),
])
def test_quick_start_runs(path, heading, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the examples write plotfiles into the working directory
    exec(compile(python_block(path, heading), f"{path}:{heading}", "exec"), {})
    assert (tmp_path / "plt00000" / "Header").is_file()
    assert os.listdir(tmp_path)
