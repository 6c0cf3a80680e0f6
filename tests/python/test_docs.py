"""docs/python.md's examples run as written (from the repository root) and
pass `mypy --strict`."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
from typing import List

import pytest

from conftest import SOURCE_DIR

DOC = SOURCE_DIR / "docs" / "python.md"


def examples() -> List[str]:
    return re.findall(r"^```python\n(.*?)^```", DOC.read_text(), flags=re.S | re.M)


def test_the_guide_has_examples() -> None:
    assert len(examples()) >= 7


@pytest.mark.parametrize("number", range(len(examples())))
def test_example_runs(number: int) -> None:
    code = examples()[number]
    done = subprocess.run([sys.executable, "-c", code], cwd=SOURCE_DIR, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"example {number + 1}:\n{code}\n{done.stderr}"
    assert done.stdout or done.stderr


def test_examples_pass_mypy_strict(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("mypy")
    files = []
    for number, code in enumerate(examples()):
        path = tmp_path / f"example_{number + 1}.py"
        path.write_text(code)
        files.append(str(path))
    config = tmp_path / "mypy.ini"
    # pandas ships no type information in Debian 12.
    config.write_text("[mypy]\nstrict = True\n\n[mypy-pandas.*]\nignore_missing_imports = True\n")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file", str(config), "--cache-dir", str(tmp_path / "cache"),
         *files],
        capture_output=True, text=True, timeout=600, cwd=tmp_path, env={**os.environ, "MYPYPATH": ""},
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_package_passes_mypy_strict(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("mypy")
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\nstrict = True\n\n[mypy-pandas.*]\nignore_missing_imports = True\n")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", str(tmp_path / "cache"),
         "-p", "hwaccel"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
