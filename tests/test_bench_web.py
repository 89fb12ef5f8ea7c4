"""The pages benchmark (bench/web.py) still runs: tiny sizes, no timing judged (never a timed
assertion in a test)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import web  # noqa: E402


def test_web_bench_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert web.main(["--games", "2", "--commits", "4", "--renders", "5"]) == 0
    out = capsys.readouterr().out
    assert "24 event streams opened" in out and "(24 open at the end)" in out
    assert "48 (commit, stream) pairs" in out and "not all reached within 30 s: 0" in out
    assert "streams of another game woken: 0" in out
    assert "a seat's page: 5 renders" in out
