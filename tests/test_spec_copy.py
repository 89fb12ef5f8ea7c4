"""The rules, scenario and chat contracts are kept in docs/spec/ (the tests read only the
repository). Where the product owner's ../shared/ is present (a developer's checkout, CI), a copy
that differs from it fails here, so an updated contract is never tested against silently."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "docs" / "spec"


def shared_dir() -> Path:
    return Path(os.environ.get("WOLFJUDGE_SHARED", ROOT.parent / "shared"))


@pytest.mark.parametrize("name", ["RULES.md", "SCENARIOS.md", "CHAT.md"])
def test_spec_copy_matches_shared(name: str) -> None:
    ours = SPEC / name
    assert ours.exists(), f"docs/spec/{name} is missing"
    theirs = shared_dir() / name
    if not theirs.exists():
        pytest.skip(f"no {theirs} here: the copy in docs/spec/ is what is tested")
    assert ours.read_bytes() == theirs.read_bytes(), (
        f"{theirs} differs from docs/spec/{name}: copy it over and update the code to it")
