"""The simulator's side of a board (docs/balance.md's method), beside the real games' win rates.

Never computed on a page load or a chat answer. A board's simulated numbers come from:
1. the table shipped with wolfjudge (`balance.json`: the runs of docs/balance.md, every
   default board with both kinds of agents, 20,000 games, or 2,000 for the standard board),
   made from that page by `python -m bot.records.balance docs/balance.md`;
2. else the database's cache (`simulations`), filled once per board: by `wolfjudge stats
   --simulate`, or in the background by the pages' server (`Background`: one process, one
   board at a time) the first time a board without numbers is shown; until then the page says
   the numbers are being computed.
A board with the judge's own role set has none (the simulator deals the presets only).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from bot.records.summary import board_key, read_board
from bot.records.tables import CampRate, camp_rate
from bot.store.records import RecordStore

log = logging.getLogger(__name__)
TABLE = Path(__file__).with_name("balance.json")
GAMES = 2000  # a board's computed simulation: as many as docs/balance.md's standard tables
SEED = 1
AGENT = "heuristic"
AGENTS = ("heuristic", "random")


@dataclass(frozen=True)
class Simulated:
    """The simulator's games of a board: `agent` (heuristic | random), how many, the seed,
    each camp's wins with its Wilson 95 % interval; `shipped`: from docs/balance.md."""

    agent: str
    games: int
    seed: int
    camps: tuple[CampRate, ...]
    shipped: bool

    def camp(self, camp: str) -> CampRate | None:
        return next((c for c in self.camps if c.camp == camp), None)


@dataclass(frozen=True)
class Side:
    """What the simulator says of a board: `runs` (none yet), and why there are none:
    `pending` (being computed), `custom` (the judge's own role set), `failed`."""

    runs: tuple[Simulated, ...] = ()
    pending: bool = False
    custom: bool = False
    failed: bool = False


def _simulated(agent: str, games: int, seed: int, wins: dict[str, int], shipped: bool
               ) -> Simulated:
    camps = tuple(camp_rate(camp, n, games) for camp, n in wins.items())
    return Simulated(agent, games, seed, camps, shipped)


def sim_key(board: str, agent: str, games: int, seed: int) -> str:
    return hashlib.sha256(f"{board}|{agent}|{games}|{seed}".encode()).hexdigest()


def _spec_key(ruleset: str, players: int, options: dict[str, Any]) -> str:
    return json.dumps([ruleset, players, dict(sorted(options.items()))], ensure_ascii=False,
                      sort_keys=True)


@cache
def shipped() -> dict[str, list[dict[str, Any]]]:
    """The shipped table: (ruleset, players, options) -> the docs' runs."""
    out: dict[str, list[dict[str, Any]]] = {}
    for run in json.loads(TABLE.read_text(encoding="utf-8")):
        board = read_board(board_key(run["ruleset"], run["players"], run["options"], None))
        key = _spec_key(board["ruleset"], board["players"], board["options"])
        out.setdefault(key, []).append(run)
    return out


class Simulations:
    """The simulator's side of boards: shipped, cached, or asked for (`request`, None: not
    asked; the page's server gives its `Background.request`)."""

    def __init__(self, store: RecordStore,
                 request: Callable[[str], None] | None = None) -> None:
        self.store = store
        self.request = request

    def side(self, board: str) -> Side:
        parts = read_board(board)
        if parts.get("roles"):
            return Side(custom=True)
        key = _spec_key(parts["ruleset"], parts["players"], parts["options"])
        runs = [_simulated(r["agent"], r["games"], r["seed"], r["wins"], True)
                for r in sorted(shipped().get(key, ()), key=lambda r: AGENTS.index(r["agent"]))]
        if runs:
            return Side(tuple(runs))
        found = self.store.simulation(sim_key(board, AGENT, GAMES, SEED))
        if found is not None:
            status, games, result = found
            if status == "done":
                return Side((_simulated(AGENT, games, SEED, result["wins"], False),))
            if status == "failed":
                return Side(failed=True)
        if self.request is not None:
            self.request(board)
            return Side(pending=True)
        return Side()


def compute(store: RecordStore, board: str, *, games: int = GAMES, jobs: int = 1) -> bool:
    """Simulate a board now (`wolfjudge stats --simulate`) and keep the numbers: True if
    computed, False if the simulator cannot play it (kept as failed: not tried again)."""
    wins = run(board, games, jobs)
    status = "failed" if wins is None else "done"
    store.save_simulation(sim_key(board, AGENT, GAMES, SEED), board, AGENT, games, SEED,
                          status, None if wins is None else {"wins": wins})
    return wins is not None


def run(board: str, games: int = GAMES, jobs: int = 1) -> dict[str, int] | None:
    """The simulator's wins per camp over `games` games of the board (None: it cannot play
    it). A process of its own may call this (Background)."""
    from bot.simulate.run import Spec, simulate

    parts = read_board(board)
    spec = Spec(ruleset=parts["ruleset"], players=parts["players"], games=games, seed=SEED,
                agent=AGENT, options=dict(parts["options"]))
    try:
        doc = simulate(spec, jobs=jobs)
    except Exception:  # an option the simulator's players cannot play
        log.exception("simulation of %s failed", board)
        return None
    return {camp: int(w["wins"]) for camp, w in doc["wins"].items()}


def compute_into(url: str, board: str, games: int = GAMES) -> None:
    """`compute` in a process of its own, on its own connection (Background)."""
    from bot.store.db import Database

    db = Database(url)
    try:
        compute(RecordStore(db), board, games=games)
    finally:
        db.dispose()


class Background:
    """How the pages' server gets a board's numbers: once per board, in a daemon process of
    its own (the bot's own process keeps answering; a stop does not wait for it), one board
    at a time; the process writes the numbers to the cache. `launch(board)` runs one to its
    end (tests give their own)."""

    def __init__(self, url: str, games: int = GAMES,
                 launch: Callable[[str], None] | None = None) -> None:
        self.url = url
        self.games = games
        self.launch = launch or self._process
        self._asked: set[str] = set()
        self._queue: list[str] = []
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None

    def request(self, board: str) -> None:
        """Ask for a board's numbers (again asked: nothing more happens)."""
        with self._lock:
            if board in self._asked:
                return
            self._asked.add(board)
            self._queue.append(board)
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._work, name="wolfjudge-simulate",
                                                daemon=True)
                self._worker.start()

    def _work(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self._worker = None
                    return
                board = self._queue.pop(0)
            try:
                self.launch(board)
            except Exception:
                log.exception("background simulation of %s failed", board)

    def _process(self, board: str) -> None:
        import multiprocessing

        proc = multiprocessing.get_context("spawn").Process(
            target=compute_into, args=(self.url, board, self.games), daemon=True,
            name="wolfjudge-simulate")
        proc.start()
        proc.join()


# the shipped table, made from docs/balance.md ------------------------------------------------

_SECTION = re.compile(r"^```\n(wolfjudge simulate [^\n]+)\n```\n(.*?)(?=^## |\Z)", re.M | re.S)
_ROW = re.compile(r"^\| ([^|]+?) \| (\d+) \| [\d.]+% \|", re.M)


def from_docs(text: str) -> list[dict[str, Any]]:
    """Every run of docs/balance.md: its command's ruleset, players, options, agents, games
    and seed, and each camp's wins (its table's camp names read back to the camps)."""
    from rulesets.data import load

    runs = []
    for command, body in _SECTION.findall(text):
        words = command.split()
        args: dict[str, Any] = {"options": {}}
        for flag, value in zip(words, words[1:], strict=False):
            if flag == "--option":
                key, _, raw = value.partition("=")
                args["options"][key] = {"true": True, "false": False}.get(raw, raw)
            elif flag in ("--ruleset", "--agents"):
                args[flag[2:]] = value
            elif flag in ("--players", "--games", "--seed"):
                args[flag[2:]] = int(value)
        names = {v: k for k, v in load(args["ruleset"], "data")["camp_names"].items()}
        wins = {names[name]: int(n) for name, n in _ROW.findall(body) if name in names}
        runs.append({"ruleset": args["ruleset"], "players": args["players"],
                     "options": args["options"], "agent": args["agents"],
                     "games": args["games"], "seed": args["seed"], "wins": wins})
    return runs


if __name__ == "__main__":  # python -m bot.records.balance docs/balance.md > balance.json
    docs = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/balance.md")
    print(json.dumps(from_docs(docs.read_text(encoding="utf-8")), ensure_ascii=False,
                     indent=1))
