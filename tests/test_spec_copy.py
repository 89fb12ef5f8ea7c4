"""The rules, scenario and chat contracts are kept in docs/spec/ (the tests read only the
repository). Where the product owner's originals are present (WOLFJUDGE_SHARED, by default the
folder `shared` beside the checkout: a developer's checkout, CI), a copy that differs from
them fails here, so an updated contract is never tested against silently. And no comment or
doc names a file a clone does not have: a contract is cited by its copy (`RULES.md`,
`docs/spec/CHAT.md`), never by the originals' folder (this module is where they are read)."""

from __future__ import annotations

import os
import re
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


# Where the comments are checked (bot/ and docs/ join once theirs point at docs/spec/ too).
CHECKED = ("engine", "rulesets", "tests")
OUTSIDE = re.compile(r"\.\./shared\b|\bshared/[\w.-]+")
DOC_NAME = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)*[A-Z][A-Z-]+\.md\b")


def pointers_outside(text: str) -> list[str]:
    """What in `text` names a file outside the repository: the originals' folder, or a
    Markdown file (`ARCHITECTURE.md`) found neither where it says nor in docs/spec/."""
    found = OUTSIDE.findall(text)
    for name in DOC_NAME.findall(text):
        path = Path(name)
        if not ((ROOT / path).exists() or (SPEC / path.name).exists() or path.parts[0] == ".."):
            found.append(name)
    return found


def test_the_guard_finds_a_pointer_outside() -> None:
    assert pointers_outside("(shared/ARCHITECTURE.md, \"Secrets\")") == [
        "shared/ARCHITECTURE.md", "shared/ARCHITECTURE.md"]  # (the folder, and a file not here)
    assert pointers_outside("a copy of ../shared/RULES.md") == ["../shared"]
    assert pointers_outside("(issue 21, ARCHITECTURE.md \"Scale\")") == ["ARCHITECTURE.md"]
    assert pointers_outside("RULES.md §4.3, docs/spec/CHAT.md, README.md, docs/rules.md") == []


def test_no_comment_or_doc_points_outside_the_repository() -> None:
    here = Path(__file__).resolve()
    bad = [f"{path.relative_to(ROOT)}:{i}: {hit}"
           for folder in CHECKED for path in sorted((ROOT / folder).rglob("*"))
           if path.suffix in (".py", ".yaml", ".md") and path != here
           for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
           for hit in pointers_outside(line)]
    assert not bad, "\n".join(bad)
