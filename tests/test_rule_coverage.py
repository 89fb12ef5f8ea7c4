"""Each rule ID of RULES.md §1–§4 (G-, C-, A-, P-) and of docs/rules-*.md (any area letter:
S-WIN-1 of the standard board) is checked by a scenario or a test that says so: a scenario
lists it in its `rules` field, or a test names it in its name (`test_p_dl_6_…`,
`test_S_WIN_3_…`), its docstring or its `rules` marker (issue 22: never a comment)."""

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


def scenario_rules() -> set[str]:
    """The rule IDs the scenario files list in their `rules` field."""
    out: set[str] = set()
    for path in [*(ROOT / "tests").rglob("*.yaml"), *(ROOT / "bot" / "examples").glob("*.yaml")]:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and "steps" in doc:
            out.update(str(r) for r in doc.get("rules") or [])
    return out


def what_tests_say() -> list[str]:
    """What the tests say of themselves: each test function's name, its docstring and the IDs
    of its `@pytest.mark.rules(...)` marker (comments and other code do not count)."""
    out: list[str] = []
    for path in (ROOT / "tests").rglob("test_*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or not (
                    node.name.startswith("test_")):
                continue
            out.append(node.name)
            out.append(ast.get_docstring(node) or "")
            for deco in node.decorator_list:
                if (isinstance(deco, ast.Call) and isinstance(deco.func, ast.Attribute)
                        and deco.func.attr == "rules"):
                    out.extend(str(a.value) for a in deco.args if isinstance(a, ast.Constant))
    return out


def is_covered(rule: str, scenarios: set[str], texts: str, names: str) -> bool:
    """Listed by a scenario, or named by a test: in its docstring or marker as written, or
    in its name in snake case (P-DL-6: test_p_dl_6_…)."""
    snake = rule.lower().replace("-", "_")
    return (rule in scenarios or re.search(rf"(?<![\w-]){re.escape(rule)}(?![\w-])", texts)
            is not None or re.search(rf"(?:^|_){re.escape(snake)}(?:_|$)", names,
                                     re.M | re.I) is not None)


def uncovered(ids: set[str]) -> list[str]:
    scenarios = scenario_rules()
    texts = what_tests_say()
    names = "\n".join(t for t in texts if t.startswith("test_"))
    return sorted(i for i in ids if not is_covered(i, scenarios, "\n".join(texts), names))


def test_rule_ids_are_found(rules_text: str) -> None:
    ids = rule_ids(rules_text)
    assert {"G-END-4", "C-NIGHT-1G", "C-WIN-W1", "P-VOTE-11", "A-LOSE-A2", "A-NIGHT-C1",
            "C-NIGHT-5"} <= ids


def test_coverage_counts_no_comment() -> None:
    """A rule named only in a comment, or only by the file a scenario is in, is not covered."""
    assert is_covered("C-WOLF-1", {"C-WOLF-1"}, "", "")
    assert is_covered("P-DL-6", set(), "", "test_p_dl_6_night")
    assert not is_covered("P-DL-6", set(), "", "test_p_dl_61_night")
    assert is_covered("S-WIN-3", set(), "", "test_S_WIN_3_no_shot")
    assert is_covered("AMB-P-09", set(), "the judge rules (AMB-P-09).", "")
    assert not is_covered("C-WOLF-1", set(), "", "")


def test_every_rule_id_is_covered(rules_text: str) -> None:
    missing = uncovered(rule_ids(rules_text))
    assert not missing, f"rule IDs listed by no scenario or test: {', '.join(missing)}"


def test_every_rule_id_of_the_project_rule_docs_is_covered() -> None:
    """docs/rules-*.md hold the rules RULES.md does not know (the classic hunter, the judge's
    procedures, the standard board)."""
    for path in sorted((ROOT / "docs").glob("rules-*.md")):
        ids = {d.group(1) or d.group(2) for line in path.read_text(encoding="utf-8").splitlines()
               if (d := DOC_DEFINITION.match(line))}
        assert ids, f"{path.name} defines no rule ID"
        missing = uncovered(ids)
        assert not missing, f"{path.name}: rule IDs listed by no scenario or test: {missing}"
