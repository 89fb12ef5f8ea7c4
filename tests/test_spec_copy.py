"""The rules, scenario, chat and architecture contracts are kept in docs/spec/ (the tests read
only the repository), pinned by docs/spec/SHA256SUMS: a copy edited here fails. And no
comment or doc anywhere in the repository names a file a clone does not have: a contract is
cited by its copy (`RULES.md`, `docs/spec/ARCHITECTURE.md`), never by the originals' folder."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "docs" / "spec"


def test_the_copies_are_the_pinned_contracts() -> None:
    """Each copy is byte for byte what docs/spec/SHA256SUMS pins (docs/spec/README.md says how
    a newer original is taken over): a contract edited here fails."""
    sums = dict(reversed(line.split(maxsplit=1)) for line in
                (SPEC / "SHA256SUMS").read_text(encoding="utf-8").splitlines())
    assert sorted(sums) == ["ARCHITECTURE.md", "CHAT.md", "RULES.md", "SCENARIOS.md"]
    for name, digest in sums.items():
        ours = SPEC / name
        assert ours.exists(), f"docs/spec/{name} is missing"
        assert hashlib.sha256(ours.read_bytes()).hexdigest() == digest, (
            f"docs/spec/{name} is not the pinned contract (docs/spec/README.md)")


# Where the comments are checked: the whole repository but the copies themselves.
SKIPPED = {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache",
           ".ruff_cache", "build", "dist", "exports"}
TEXT = {".py", ".md", ".yaml", ".yml", ".toml", ".js", ".mjs", ".json", ".txt", ".cfg", ".ini",
        ".html", ".sh", ".example"}
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
        "shared/ARCHITECTURE.md"]  # (the folder; the file has its copy in docs/spec/)
    assert pointers_outside("a copy of ../shared/RULES.md") == ["../shared"]
    assert pointers_outside("(STYLE-ANCHORS.md \"Voice\")") == ["STYLE-ANCHORS.md"]
    assert pointers_outside("RULES.md §4.3, docs/spec/CHAT.md, README.md, docs/rules.md") == []


def checked_files() -> list[Path]:
    """Every text file of the repository but docs/spec/ (the copies) and this module."""
    here = Path(__file__).resolve()
    files = []
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT)
        if (path.is_file() and path.suffix in TEXT | ({""} if path.name == "Dockerfile" else set())
                and not set(rel.parts) & SKIPPED and not rel.parts[0].endswith(".egg-info")
                and rel.parts[:2] != ("docs", "spec") and path != here):
            files.append(path)
    return files


def test_no_comment_or_doc_points_outside_the_repository() -> None:
    """Issue 33: bot/, docs/, the README, the gateway … too."""
    bad = [f"{path.relative_to(ROOT)}:{i}: {hit}" for path in checked_files()
           for i, line in enumerate(path.read_text(encoding="utf-8", errors="replace")
                                    .splitlines(), 1)
           for hit in pointers_outside(line)]
    assert not bad, "\n".join(bad)
