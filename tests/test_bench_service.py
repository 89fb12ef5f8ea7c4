"""The service benchmarks (bench/service.py, recovery.py, growth.py, chat.py) still run: tiny
sizes, SQLite only, no timing judged (never a timed assertion in a test)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import chat  # noqa: E402
import growth  # noqa: E402
import recovery  # noqa: E402
import service  # noqa: E402


def test_service_bench_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert service.main(["--backends", "sqlite", "--games", "3", "--commands", "15",
                          "--baseline", "10", "--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "load average" in out and "\nsqlite " in out


def test_growth_bench_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert growth.main(["--days", "2", "--games", "1"]) == 0
    assert "whole game" in capsys.readouterr().out


def test_recovery_bench_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert recovery.main(["--games", "3", "--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "3 active games" in out and "KiB per game" in out


def test_chat_bench_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert chat.main(["--backends", "sqlite", "--games", "2", "--messages", "20", "--warmup",
                      "5", "--baseline", "10", "--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "2 classic games" in out and "\nsqlite " in out
    assert "sqlite: outcomes {'accepted': " in out  # the games are played, not refused
