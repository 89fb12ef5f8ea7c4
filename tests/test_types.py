"""engine/, rulesets/ and bot/ are mypy clean (configured in [tool.mypy] of pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_clean() -> None:
    mypy = shutil.which("mypy")
    assert mypy, "mypy is a test dependency: pip install -e '.[test]'"
    proc = subprocess.run([mypy, "engine", "rulesets", "bot"], cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
