"""Every scenario file under tests/scenarios/ and bot/examples/ passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.scenario import Scenario

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "tests" / "scenarios").rglob("*.yaml")) + sorted(
    (ROOT / "bot" / "examples").glob("*.yaml"))


def test_there_are_scenarios() -> None:
    assert len(FILES) > 1


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_scenario(path: Path) -> None:
    result = Scenario(path).run()
    assert result.ok, str(result)
