"""Shared fixtures of the Python package's tests.

The suite tests the *installed* package (tests/python/run-package-tests.sh
installs it into a fresh venv and runs pytest there, outside the source
tree); HWACCEL_SOURCE_DIR points at the checkout for fixtures and goldens.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from typing import List

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("HWACCEL_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
MACHINES = SOURCE_DIR / "fixtures" / "machines"
EIGHT_GPU = MACHINES / "dgx-h100-8x-nvswitch"


def machine_dirs() -> List[pathlib.Path]:
    return sorted(p for p in MACHINES.iterdir() if (p / "fixture.json").is_file())


@pytest.fixture(scope="session")
def source_dir() -> pathlib.Path:
    return SOURCE_DIR


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m hwaccel ARGS`, the package's own command."""
    return subprocess.run(
        [sys.executable, "-m", "hwaccel", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
