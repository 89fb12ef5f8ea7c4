"""The rules, scenario, chat and architecture contracts are kept in docs/spec/ (the tests read
only the repository). Where the product owner's ../shared/ is present (a developer's checkout,
CI), a copy that differs from it fails here, so an updated contract is never tested against
silently. Nothing else in the repository points at ../shared/: a clone does not have it."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "docs" / "spec"


def shared_dir() -> Path:
    return Path(os.environ.get("WOLFJUDGE_SHARED", ROOT.parent / "shared"))


@pytest.mark.parametrize("name", ["RULES.md", "SCENARIOS.md", "CHAT.md", "ARCHITECTURE.md"])
def test_spec_copy_matches_shared(name: str) -> None:
    ours = SPEC / name
    assert ours.exists(), f"docs/spec/{name} is missing"
    theirs = shared_dir() / name
    if not theirs.exists():
        pytest.skip(f"no {theirs} here: the copy in docs/spec/ is what is tested")
    assert ours.read_bytes() == theirs.read_bytes(), (
        f"{theirs} differs from docs/spec/{name}: copy it over and update the code to it")


# a path into the product owner's folder: `shared/X`, `../shared/X` (not `bot/shared/`)
OUTSIDE = re.compile(r"(?<![\w/.-])(?:\.\./)?shared/")
SKIPPED = {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache",
           ".ruff_cache", "build", "dist", "exports"}
TEXT = {".py", ".md", ".yaml", ".yml", ".toml", ".js", ".mjs", ".json", ".txt", ".cfg", ".ini",
        ".html", ".sh", ".example", ""}


def test_nothing_points_at_a_file_outside_the_repository() -> None:
    """Issue 33: a comment or doc cites the copy in docs/spec/, never ../shared/."""
    found = []
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT)
        if (not path.is_file() or set(rel.parts) & SKIPPED or rel.parts[0].endswith(".egg-info")
                or rel.parts[:2] == ("docs", "spec") or path.suffix not in TEXT
                or path == Path(__file__)):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += [f"{rel}:{n}" for n, line in enumerate(text.splitlines(), 1)
                  if OUTSIDE.search(line)]
    assert not found, found
