"""Each rule ID of RULES.md §1–§4 (G-, C-, A-, P-) is named in at least one scenario or test;
so is each ID of docs/rules-*.md, and those of the docs in STRICT only where a scenario's
`rules:` field lists it or a test is named after it (`test_S_WIN_3_…`)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
ID = r"[GCAP]-[A-Z]+(?:-[A-Z0-9]+)+"
# A rule is defined where its ID opens a bold item (**C-WOLF-1 …) or a table row (| C-NIGHT-1 …).
DEFINITION = re.compile(rf"^\s*(?:(?:[*-]|\d+\.)\s*)?\*\*({ID})\b|^\|\s*({ID})\b")
COVERED_SECTIONS = ("1", "2", "3", "4")
# The project's rule docs (docs/rules-*.md) may use any area letter (S-WIN-1).
DOC_ID = r"[A-Z]-[A-Z]+(?:-[A-Z0-9]+)+"
DOC_DEFINITION = re.compile(rf"^\s*(?:(?:[*-]|\d+\.)\s*)?\*\*({DOC_ID})\b|^\|\s*({DOC_ID})\b")
# Rule docs covered only by a scenario's `rules:` field or a test's name (a mention in a
# comment or a docstring does not count).
STRICT = ("rules-standard.md",)


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


def doc_ids(path: Path) -> set[str]:
    return {d.group(1) or d.group(2) for line in path.read_text(encoding="utf-8").splitlines()
            if (d := DOC_DEFINITION.match(line))}


def declared_in_scenarios_and_test_names() -> set[str]:
    """The IDs in the `rules:` fields of the scenario files, and in the names of the test
    functions (`test_S_WIN_3_no_shot` names S-WIN-3)."""
    ids: set[str] = set()
    for path in (ROOT / "tests" / "scenarios").rglob("*.yaml"):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and isinstance(doc.get("rules"), list):
            ids |= {str(r) for r in doc["rules"]}
    for path in (ROOT / "tests").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                ids |= {m.replace("_", "-") for m in
                        re.findall(r"(?<![A-Za-z0-9])[A-Z]_[A-Z]+(?:_[A-Z0-9]+)+", node.name)}
    return ids


def test_every_rule_id_of_the_project_rule_docs_is_covered() -> None:
    """docs/rules-*.md hold the rules of roles and rulesets RULES.md does not know (the classic
    hunter, the standard board)."""
    corpus = named_in_tests()
    declared = declared_in_scenarios_and_test_names()
    for path in sorted((ROOT / "docs").glob("rules-*.md")):
        ids = doc_ids(path)
        assert ids, f"{path.name} defines no rule ID"
        if path.name in STRICT:
            missing = sorted(ids - declared)
        else:
            missing = sorted(i for i in ids if not re.search(rf"\b{re.escape(i)}\b", corpus))
        assert not missing, f"{path.name}: rule IDs named by no scenario or test: {missing}"


def test_the_strict_coverage_reads_rules_fields_and_test_names_only() -> None:
    """A rule of a STRICT doc is not covered by a mention elsewhere (this docstring names
    S-WIN-2), only by a `rules:` field or a test's name."""
    assert "S-OPT-1" in doc_ids(ROOT / "docs" / "rules-standard.md")
    assert "S_NOT_A_RULE" not in declared_in_scenarios_and_test_names()
