"""The records' tables, from the summary rows (pure): a player's record and totals, the
leaderboard, and each board's camp win rates with their 95 % intervals. The chat's `战绩` and
`排行`, `wolfjudge stats` and the community page all show these, so they show the same figures.

A game counts for the rates only when it was won (GameOver); a game the judge ended (结束) or
that halted for a ruling is listed, marked, and counted apart. There is no scoring of play
(no MVP): games, wins, and the share won.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from bot.simulate.stats import wilson
from bot.store.records import BoardTally, Line, Tally

ANONYMOUS = "匿名"  # bot/texts.yaml records.anonymous says the same to people


def rate(wins: int, games: int) -> float:
    return wins / games if games else 0.0


@dataclass(frozen=True)
class Standing:
    """One player in the tables: `key` is opaque (never a contact id), `name` the 马甲 of
    their latest game (匿名 when they hide their records from this view)."""

    key: str
    name: str
    hidden: bool
    games: int
    wins: int
    other: int

    @property
    def rate(self) -> float:
        return rate(self.wins, self.games)


@dataclass(frozen=True)
class Leaderboard:
    min_games: int
    by_rate: list[Standing]
    by_games: list[Standing]


def standings(tallies: Iterable[Tally], keys: dict[str, str], hidden: set[str], *,
              judge: bool) -> list[Standing]:
    """Every player with a game in the window, most games first. `judge`: the judges' view
    (hidden players by their 马甲, marked); else they are 匿名."""
    out = []
    for x in tallies:
        hide = x.contact in hidden
        name = ANONYMOUS if hide and not judge else (x.name or ANONYMOUS)
        out.append(Standing(keys[x.contact], name, hide, x.games, x.wins, x.other))
    return sorted(out, key=lambda s: (-s.games, -s.wins, s.name, s.key))


def leaderboard(players: list[Standing], min_games: int, top: int | None = None, *,
                judge: bool = False) -> Leaderboard:
    """The top by win rate (among those with at least `min_games` counted games) and by
    games. Hidden players are left out, but in the judges' view."""
    shown = [p for p in players if judge or not p.hidden]
    by_rate = sorted((p for p in shown if p.games >= max(1, min_games)),
                     key=lambda p: (-p.rate, -p.games, p.name, p.key))
    by_games = sorted((p for p in shown if p.games),
                      key=lambda p: (-p.games, -p.rate, p.name, p.key))
    return Leaderboard(min_games, by_rate[:top], by_games[:top])


@dataclass
class Split:
    """Games and wins of one kind (a camp, a role)."""

    games: int = 0
    wins: int = 0

    @property
    def rate(self) -> float:
        return rate(self.wins, self.games)


@dataclass
class Record:
    """A player's record: every game (the latest first) and the totals of those that count."""

    name: str
    lines: list[Line]
    games: int = 0
    wins: int = 0
    other: int = 0  # ended by the judge, or halted: listed, not counted
    by_camp: dict[tuple[str, str], Split] = field(default_factory=dict)  # (ruleset, camp)
    by_role: dict[tuple[str, str], Split] = field(default_factory=dict)  # (ruleset, role)

    @property
    def rate(self) -> float:
        return rate(self.wins, self.games)


def record(name: str, lines: list[Line]) -> Record:
    """The totals of one player's lines. A camp or role is told apart by ruleset (classic's
    and the standard board's 狼人阵营 are one name, two boards' camps)."""
    out = Record(name, lines)
    for line in lines:
        if line.outcome != "won" or line.result is None:
            out.other += 1
            continue
        win = line.result == "win"
        out.games += 1
        out.wins += win
        for table, key in ((out.by_camp, line.camp), (out.by_role, line.role)):
            split = table.setdefault((line.ruleset, key or ""), Split())
            split.games += 1
            split.wins += win
    return out


@dataclass(frozen=True)
class CampRate:
    """A camp's wins in a board's games (real, or the simulator's: bot/records/balance.py),
    with its Wilson 95 % interval."""

    camp: str
    wins: int
    games: int
    low: float
    high: float

    @property
    def rate(self) -> float:
        return rate(self.wins, self.games)


def camp_rate(camp: str, wins: int, games: int) -> CampRate:
    lo, hi = wilson(wins, games)
    return CampRate(camp, wins, games, lo, hi)


@dataclass(frozen=True)
class BoardRates:
    """A board's real camp win rates (Wilson 95 %, as docs/balance.md), in the ruleset's camp
    order."""

    board: str
    ruleset: str
    games: int
    other: int
    camps: list[CampRate]


def board_rates(tally: BoardTally, camps: list[str]) -> BoardRates:
    """`camps`: the ruleset's camps in order (a camp that won no game is shown at 0 %)."""
    order = list(camps) + sorted(c for c in tally.wins if c not in camps)
    rows = [camp_rate(camp, tally.wins.get(camp, 0), tally.games) for camp in order]
    return BoardRates(tally.board, tally.ruleset, tally.games, tally.other, rows)
