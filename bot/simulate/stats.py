"""Counting: the rules that fired in one game (from its events), and the run's statistics."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from engine.events import Event
from rulesets.data import read_yaml

Z95 = 1.959963984540054  # the standard normal quantile of 0.975


@cache
def texts() -> dict[str, Any]:
    return read_yaml(Path(__file__).with_name("texts.yaml").read_text(encoding="utf-8"))


def rules_for(ruleset: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in texts()["rules"].items()
            if ruleset in v.get("rulesets", [ruleset])}


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95 % by default); (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def count_rules(log: list[Event]) -> dict[str, int]:
    """How often each rule of texts.yaml fired in one game, read from its full event log."""
    counts: Counter[str] = Counter()
    by_event: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    by_cause: dict[str, str] = {}
    for key, rule in texts()["rules"].items():
        if "event" in rule:
            by_event.setdefault(rule["event"], []).append((key, rule))
        elif "cause" in rule:
            by_cause[rule["cause"]] = key
    for e in log:
        for key, rule in by_event.get(e.type, ()):
            judge_only = not e.audience.public and not e.audience.seats
            if rule.get("audience") != "judge" or judge_only:
                counts[key] += 1
        if e.type == "SeatOut" and e.data.get("cause") in by_cause:
            counts[by_cause[e.data["cause"]]] += 1
    counts["same_guard_same_save"] = same_guard_same_save(log)
    return {k: v for k, v in counts.items() if v}


def same_guard_same_save(log: list[Event]) -> int:
    """Nights on which the kill target was both guarded and saved (classic 同守同救): the
    guard's and the witch's last recorded actions of the night and the last kill recorded.
    The seats' roles come from GameOver (the judge knows them anyway)."""
    roles: dict[int, str] = {}
    for e in log:
        if e.type == "GameOver":
            roles = {int(k): v for k, v in (e.data.get("roles") or {}).items()}
    if not roles:
        return 0
    nights: dict[str, dict[str, Any]] = {}
    for e in log:
        if not e.phase.startswith("N"):
            continue
        night = nights.setdefault(e.phase, {})
        if e.type in ("KillRecorded", "KillLocked"):
            night["kill"] = e.data.get("target")
        elif e.type == "ActionRecorded" and len(e.audience.seats) == 1:
            role = roles.get(e.audience.seats[0])
            if role in ("guard", "witch"):
                night[role] = (e.data.get("skill"), e.data.get("target"))
    fired = 0
    for night in nights.values():
        kill = night.get("kill")
        if kill is not None and night.get("guard") == ("guard", kill) and \
                night.get("witch") == ("save", kill):
            fired += 1
    return fired


def summarize(results: Iterable[Any], ruleset: str) -> dict[str, Any]:
    """The run's numbers from its GameResults, in game order (deterministic)."""
    results = list(results)
    n = len(results)
    wins = Counter(r.winner for r in results)
    camps = [c for c in texts()["camps"] if wins.get(c)] + sorted(
        c for c in wins if c not in texts()["camps"])
    win_table = {}
    for camp in camps:
        lo, hi = wilson(wins[camp], n)
        win_table[camp] = {"wins": wins[camp], "rate": wins[camp] / n if n else 0.0,
                           "ci95": [round(lo, 6), round(hi, 6)]}
    days = [r.days for r in results]
    outs: Counter[str] = Counter()
    for r in results:
        outs.update(r.outs)
    rules = {}
    for key in rules_for(ruleset):
        fired = [r.rules.get(key, 0) for r in results]
        games = sum(1 for f in fired if f)
        lo, hi = wilson(games, n)
        rules[key] = {"games": games, "share": games / n if n else 0.0,
                      "ci95": [round(lo, 6), round(hi, 6)], "total": sum(fired),
                      "mean": sum(fired) / n if n else 0.0}
    return {
        "games": n,
        "wins": win_table,
        "days": {"mean": statistics.fmean(days) if days else 0.0,
                 "median": statistics.median(days) if days else 0,
                 "min": min(days, default=0), "max": max(days, default=0),
                 "histogram": {str(d): c for d, c in sorted(Counter(days).items())}},
        "outs": {cause: {"total": c, "mean": c / n} for cause, c in sorted(outs.items())},
        "rules": rules,
        "commands": sum(r.commands for r in results),
        "rejected": sum(r.rejected for r in results),
    }
