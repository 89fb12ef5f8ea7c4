"""The engine's module structure (issue 10): split by job, no import cycle (counting imports
made only for type checking), and nothing in engine/ imports a ruleset."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "engine"
MODULES = {f"engine.{p.stem}" for p in ENGINE.glob("*.py") if p.stem != "__init__"}


def imports(path: Path) -> set[str]:
    """Every engine module `path` imports, anywhere in the file (TYPE_CHECKING blocks too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


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
