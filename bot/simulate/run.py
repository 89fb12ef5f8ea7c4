"""A simulation run: G games, played in one process or several, summarized in game order.

Game i's randomness comes from (seed, i) only (bot.simulate.driver.game_seed), and the
results are put back in game order before they are counted, so the numbers (and the JSON) are
the same whatever the number of jobs.
"""

from __future__ import annotations

import multiprocessing
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from bot.commands.vocabulary import RULESET_NAMES
from bot.simulate.driver import START, GameResult, play_game
from bot.simulate.stats import rules_for, summarize, texts
from engine import new_game
from engine.options import OptionError


@dataclass(frozen=True)
class Spec:
    ruleset: str
    players: int
    games: int
    seed: int
    agent: str = "heuristic"
    options: dict[str, Any] = field(default_factory=dict)


def check(spec: Spec) -> None:
    """Refuse a bad ruleset, player count or option before any work (new_game says why)."""
    if spec.games < 1:
        raise ValueError("--games must be at least 1")
    try:
        new_game(ruleset=spec.ruleset, game_id="sim-check", seed="0", start=START,
                 options=dict(spec.options), players=spec.players)
    except (OptionError, KeyError, ValueError) as exc:
        raise ValueError(f"cannot make a {spec.ruleset} game of {spec.players}: {exc}") from exc


def _one(spec: Spec, index: int) -> GameResult:
    return play_game(spec.ruleset, spec.players, spec.options, spec.agent, spec.seed, index)


def results(spec: Spec, jobs: int = 1) -> Iterator[GameResult]:
    """Every game's result, in game order."""
    play = partial(_one, spec)
    if jobs <= 1:
        yield from map(play, range(spec.games))
        return
    chunk = max(1, min(64, spec.games // (jobs * 8)))
    with multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn").Pool(
            jobs) as pool:
        yield from pool.imap(play, range(spec.games), chunksize=chunk)  # imap keeps the order


def simulate(spec: Spec, jobs: int = 1, progress: bool = False) -> dict[str, Any]:
    """The run's summary (the JSON document)."""
    check(spec)
    it = results(spec, jobs)
    if progress:
        from tqdm import tqdm

        it = tqdm(it, total=spec.games, unit="局", file=sys.stderr, dynamic_ncols=True)
    summary = summarize(it, spec.ruleset)
    return {
        "ruleset": spec.ruleset, "players": spec.players, "agent": spec.agent,
        "seed": spec.seed, "options": dict(sorted(spec.options.items())),
        "counted_rules": {k: v["name"] for k, v in rules_for(spec.ruleset).items()},
        **summary,
    }


def report(doc: dict[str, Any]) -> str:
    """The summary as Chinese text (texts.yaml)."""
    t = texts()
    r = t["report"]
    name = RULESET_NAMES.get(doc["ruleset"], doc["ruleset"])
    lines = [r["title"].format(ruleset=name, players=doc["players"],
                               agent=t["agents"].get(doc["agent"], doc["agent"]),
                               games=doc["games"], seed=doc["seed"])]
    opts = ", ".join(f"{k}={v}" for k, v in doc["options"].items())
    lines.append(r["options"].format(options=opts) if opts else r["no_options"])
    lines.append(r["wins"])
    for camp, w in doc["wins"].items():
        lines.append(r["win_row"].format(camp=t["camps"].get(camp, camp), rate=w["rate"],
                                         lo=w["ci95"][0], hi=w["ci95"][1], wins=w["wins"]))
    d = doc["days"]
    lines.append(r["days"].format(**{k: d[k] for k in ("mean", "median", "min", "max")}))
    lines.append(r["outs"])
    for cause, o in sorted(doc["outs"].items(), key=lambda kv: -kv[1]["total"]):
        lines.append(r["out_row"].format(cause=t["causes"].get(cause, cause), mean=o["mean"]))
    lines.append(r["rules"])
    for key, rule in doc["rules"].items():
        lines.append(r["rule_row"].format(rule=doc["counted_rules"][key], share=rule["share"],
                                          mean=rule["mean"]))
    return "\n".join(lines)
