"""engine/ and rulesets/ never read the clock, use global randomness, or touch the network."""

from __future__ import annotations

import ast
import random
import socket
import time
from datetime import date, datetime
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PURE = sorted((ROOT / "engine").rglob("*.py")) + sorted((ROOT / "rulesets").rglob("*.py"))
FORBIDDEN_MODULES = {"time", "random", "secrets", "uuid", "socket", "ssl", "http", "urllib",
                     "requests", "asyncio", "subprocess", "os", "sys", "threading",
                     "multiprocessing", "sqlite3", "sqlalchemy", "wechaty", "zoneinfo"}
FORBIDDEN_CALLS = {"now", "today", "utcnow", "time", "monotonic", "perf_counter", "urandom"}
CLOCK_OWNERS = {"datetime", "date", "time", "os", "dt"}
# Reading the ruleset's own data files is the one I/O the pure packages do (at import).
FILE_READERS = {ROOT / "rulesets" / "data.py"}


@pytest.mark.parametrize("path", PURE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_impure_imports_or_calls(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                assert alias.name.split(".")[0] not in FORBIDDEN_MODULES, (path, alias.name)
        elif isinstance(node, ast.ImportFrom):
            assert (node.module or "").split(".")[0] not in FORBIDDEN_MODULES, (path, node.module)
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_CALLS:
            owner = node.value
            name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
            assert name not in CLOCK_OWNERS, (path, node.lineno, f"{name}.{node.attr}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "open"):
                assert path in FILE_READERS, (path, node.lineno, "open()")


def test_a_game_runs_without_clock_or_randomness(monkeypatch: pytest.MonkeyPatch) -> None:
    """Play a night with the clock, the global RNG and sockets booby-trapped."""
    import engine
    from bot.scenario import Game
    from engine.commands import Act

    state, _ = engine.new_game(ruleset="classic", game_id="pure", seed="s", start=date(2026, 1, 1),
                               players=12)

    def trap(*_a: object, **_k: object) -> None:
        raise AssertionError("impure call from the engine")

    for mod, name in ((time, "time"), (time, "monotonic"), (random, "random"),
                      (random, "randrange"), (random, "choice"), (random, "shuffle"),
                      (socket, "socket"), (socket, "create_connection")):
        monkeypatch.setattr(mod, name, trap)
    game = Game(state=state, now=datetime(2026, 1, 1), ruleset="classic")
    wolves = [s.seat for s in state.seats if s.role == "wolf"]
    game.advance(datetime(2026, 1, 1, 21, 5))
    assert game.send(Act(seat=wolves[0], skill="kill", targets=(wolves[0],))) is None
    game.advance(datetime(2026, 1, 5, 12, 0))
    assert game.state.day >= 4 or game.state.winner
