"""The engine's module structure (issue 10): split by job, no import cycle (counting imports
made only for type checking), and nothing in engine/ imports a ruleset."""

from __future__ import annotations

from pathlib import Path

from astnames import imports

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "engine"
MODULES = {f"engine.{p.stem}" for p in ENGINE.glob("*.py") if p.stem != "__init__"}

GRAPH = {f"engine.{p.stem}": imports(p) & MODULES for p in ENGINE.glob("*.py")
         if p.stem != "__init__"}


def test_no_import_cycle() -> None:
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            raise AssertionError("import cycle: " + " -> ".join([*path, module]))
        if module in done:
            return
        for dep in sorted(GRAPH[module]):
            visit(dep, [*path, module])
        done.add(module)

    for module in sorted(GRAPH):
        visit(module, [])


def test_the_engine_imports_no_ruleset_and_no_compatibility_module() -> None:
    for path in ENGINE.glob("*.py"):
        names = imports(path)
        assert not any(n.split(".")[0] == "rulesets" for n in names), path
        if path.stem not in ("core", "__init__"):
            assert "engine.core" not in names, f"{path.name} imports the engine.core shim"


def test_the_old_import_paths_still_work() -> None:
    import engine
    import engine.core
    from engine.context import Ctx
    from engine.dispatch import handle
    from engine.game import new_game

    assert engine.handle is handle is engine.core.handle
    assert engine.new_game is new_game is engine.core.new_game
    assert engine.core.Ctx is Ctx


def test_nothing_in_the_engine_names_a_role_a_ruleset_or_a_ruleset_option() -> None:
    """Roles, rulesets, their options and 通灵 live in rulesets/ (issue 10); the engine has
    hooks; the engine's out causes are its own (engine.model.OUT_CAUSES), a ruleset's are
    Ruleset.out_causes."""
    import re

    from engine.options import CommonOptions
    from engine.ruleset import get_ruleset, ruleset_names
    from rulesets.data import load

    names: set[str] = {"tongling", "通灵"}
    for ruleset in ruleset_names():
        rs = get_ruleset(ruleset)
        names |= {ruleset, *rs.roles, *(load(ruleset, "data").get("role_names") or {}).values()}
        names |= set(rs.options_model.keys()) - set(CommonOptions.keys())
    words = re.compile("|".join(rf"(?<![\w.-]){re.escape(n)}(?![\w-])" for n in sorted(names)),
                       re.I)
    for path in sorted(ENGINE.glob("*.py")):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            hit = words.search(line)
            assert hit is None, f"{path.name}:{i} names {hit.group(0)!r}: {line.strip()}"


def test_a_rulesets_deadline_kinds_order_a_state_before_the_ruleset_is_imported() -> None:
    """Same-time deadlines: anomaly's hunter shoots before the sheriff hands over (A-HUNTER-3),
    also for a state loaded by a process that has not imported rulesets.anomaly yet."""
    import subprocess
    import sys

    code = """
import sys
from datetime import date, datetime
from engine.model import Deadline, GameState, Schedule, Seat
assert "rulesets.anomaly" not in sys.modules
due = datetime(2026, 1, 2, 21, 30)
state = GameState(game_id="g", ruleset="anomaly", options={}, seed="s",
                  seats=[Seat(seat=1, role="hunter", camp="normal")],
                  schedule=Schedule(start=date(2026, 1, 1)), phase="D2", day=2,
                  deadlines=[Deadline(id=f"{k}:2", kind=k, day=2, anchor="at", due=due)
                             for k in ("handover", "hunter")])
print(state.next_deadline().kind)
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "hunter"


def test_rulesets_are_found_through_entry_points() -> None:
    """get_ruleset finds a ruleset through the wolfjudge.rulesets entry points (issue 10)."""
    from importlib.metadata import entry_points

    from engine.ruleset import ENTRY_POINT_GROUP, get_ruleset, ruleset_names

    eps = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    assert {"classic", "anomaly", "standard"} <= set(eps) <= set(ruleset_names())
    for name, ep in eps.items():
        assert ep.load() is get_ruleset(name)
