from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# CI explores the same examples every run (a red CI blocks landing); locally they vary, so the
# property tests keep finding new games.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parent.parent


def shared_dir() -> Path:
    return Path(os.environ.get("WOLFJUDGE_SHARED", ROOT.parent / "shared"))


@pytest.fixture(scope="session")
def rules_text() -> str:
    path = shared_dir() / "RULES.md"
    assert path.exists(), f"RULES.md not found at {path} (set WOLFJUDGE_SHARED)"
    return path.read_text(encoding="utf-8")
