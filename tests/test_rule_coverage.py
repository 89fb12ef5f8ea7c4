"""Each rule ID of RULES.md §1–§4 (G-, C-, A-, P-) is named in at least one scenario or test."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ID = r"[GCAP]-[A-Z]+(?:-[A-Z0-9]+)+"
# A rule is defined where its ID opens a bold item (**C-WOLF-1 …) or a table row (| C-NIGHT-1 …).
DEFINITION = re.compile(rf"^\s*(?:(?:[*-]|\d+\.)\s*)?\*\*({ID})\b|^\|\s*({ID})\b")
COVERED_SECTIONS = ("1", "2", "3", "4")


def rule_ids(text: str) -> set[str]:
    ids: set[str] = set()
    section = None
    for line in text.splitlines():
        m = re.match(r"## (\d+)\.", line)
        if m:
            section = m.group(1)
        d = DEFINITION.match(line)
        if section in COVERED_SECTIONS and d:
            ids.add(d.group(1) or d.group(2))
    return ids


def named_in_tests() -> str:
    me = Path(__file__).resolve()
    parts = [p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("*")
             if p.is_file() and p.suffix in (".yaml", ".py") and p.resolve() != me]
    return "\n".join(parts)


def test_rule_ids_are_found(rules_text: str) -> None:
    ids = rule_ids(rules_text)
    assert {"G-END-4", "C-NIGHT-1G", "C-WIN-W1", "P-VOTE-11", "A-LOSE-A2", "A-NIGHT-C1",
            "C-NIGHT-5"} <= ids


def test_every_rule_id_is_covered(rules_text: str) -> None:
    corpus = named_in_tests()
    missing = sorted(i for i in rule_ids(rules_text) if not re.search(rf"\b{re.escape(i)}\b",
                                                                      corpus))
    assert not missing, f"rule IDs named by no scenario or test: {', '.join(missing)}"


def test_every_rule_id_of_the_project_rule_docs_is_covered() -> None:
    """docs/rules-*.md hold the rules of roles RULES.md does not know (the classic hunter)."""
    corpus = named_in_tests()
    for path in sorted((ROOT / "docs").glob("rules-*.md")):
        ids = {d.group(1) or d.group(2) for line in path.read_text(encoding="utf-8").splitlines()
               if (d := DEFINITION.match(line))}
        assert ids, f"{path.name} defines no rule ID"
        missing = sorted(i for i in ids if not re.search(rf"\b{re.escape(i)}\b", corpus))
        assert not missing, f"{path.name}: rule IDs named by no scenario or test: {missing}"
