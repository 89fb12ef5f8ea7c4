"""A community's records (issue 31, docs/records.md): every statement on the summary rows of
finished games, their seats, the seasons, who hides their records, the simulator's numbers
per board and the community page's secret. A community is one hosting account (`of_host`).

A game's summary is written once, by bot/records when the game is over and its export
verifies, and read many times: a leaderboard reads these rows, never a game's log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import and_, case, delete, func, select
from sqlalchemy.exc import IntegrityError

from bot.gametime import utcnow
from bot.store.chat import ChatStore
from bot.store.db import Database, Host, of_host
from bot.store.models import (
    Game,
    GameRecord,
    Player,
    RecordPrivacy,
    RecordSeat,
    Season,
    Secret,
    Simulation,
)

WON, ENDED, HALTED, REFUSED = "won", "ended", "halted", "refused"
SLUG_PREFIX = "community:"  # the secrets row of a community page's address (bot/web)


@dataclass(frozen=True)
class SeatSummary:
    """A seat of a finished game as recorded. `result`: win | loss | None (no rate)."""

    seat: int
    contact: str | None
    name: str | None
    role: str | None
    camp: str | None
    result: str | None
    out_cause: str | None
    out_phase: str | None
    yellow: int = 0
    red: bool = False


@dataclass(frozen=True)
class GameSummary:
    """A finished game's summary row and its seats (bot/records/summary.py makes it)."""

    game_id: str
    host: str | None
    ruleset: str
    players: int
    board: str
    outcome: str
    winner: str | None
    day: int
    ended_at: datetime  # naive UTC
    ended_on: date  # on the game's clock
    digest: str
    last_seq: int
    seats: tuple[SeatSummary, ...] = ()
    reason: str | None = None


@dataclass(frozen=True)
class Window:
    """The games that ended in [start, end) (naive UTC; None: no bound)."""

    start: datetime | None = None
    end: datetime | None = None


@dataclass(frozen=True)
class Line:
    """One seat of one recorded game, with the game's own columns: a line of a record."""

    game_id: str
    ruleset: str
    board: str
    outcome: str
    winner: str | None
    day: int
    ended_at: datetime
    ended_on: date
    seat: int
    contact: str | None
    name: str | None
    role: str | None
    camp: str | None
    result: str | None
    out_cause: str | None
    out_phase: str | None
    yellow: int
    red: bool


@dataclass(frozen=True)
class Tally:
    """A contact's games in a window: `games` that count (won), `wins`, `other` (ended by
    the judge or halted), and the 马甲 of their latest game."""

    contact: str
    games: int
    wins: int
    other: int
    name: str | None


@dataclass(frozen=True)
class BoardTally:
    """A board's games in a window: how many were won (count for rates), and by which camp."""

    board: str
    ruleset: str
    games: int
    wins: dict[str, int]
    other: int


@dataclass(frozen=True)
class SeasonRow:
    name: str
    started_at: datetime
    ended_at: datetime | None

    @property
    def window(self) -> Window:
        return Window(self.started_at, self.ended_at)


def _season(row: Season) -> SeasonRow:
    return SeasonRow(row.name, row.started_at, row.ended_at)


def _ended_within(ended_at: Any, window: Window | None) -> list[Any]:
    """The conditions that `ended_at` (a summary's or a seat's column) lies in the window."""
    if window is None:
        return []
    out = []
    if window.start is not None:
        out.append(ended_at >= window.start)
    if window.end is not None:
        out.append(ended_at < window.end)
    return out


_LINE = (GameRecord.game_id, GameRecord.ruleset, GameRecord.board, GameRecord.outcome,
         GameRecord.winner, GameRecord.day, GameRecord.ended_at, GameRecord.ended_on,
         RecordSeat.seat, RecordSeat.contact_id, RecordSeat.forum_name, RecordSeat.role,
         RecordSeat.camp, RecordSeat.result, RecordSeat.out_cause, RecordSeat.out_phase,
         RecordSeat.yellow, RecordSeat.red)


class RecordStore:
    """The records of the database's communities; `host` is always given (a community)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # writing a game's summary --------------------------------------------------------------
    def pending(self, host: Host, limit: int | None = None) -> list[str]:
        """Games over (won, ended, halted) of `host` that have no summary row yet, oldest
        first."""
        stmt = (select(Game.id).outerjoin(GameRecord, GameRecord.game_id == Game.id)
                .where(GameRecord.game_id.is_(None), Game.status != "active",
                       of_host(Game.host, host))
                .order_by(Game.created_at, Game.id))
        if limit is not None:
            stmt = stmt.limit(limit)
        with self.db.read() as s:
            return list(s.scalars(stmt))

    def game(self, game_id: str) -> tuple[str, str | None, str, str] | None:
        """(status, host, commitment, time zone) of a game."""
        with self.db.read() as s:
            row = s.execute(select(Game.status, Game.host, Game.commitment, Game.time_zone)
                            .where(Game.id == game_id)).first()
        return None if row is None else (row[0], row[1], row[2], row[3])

    def contacts(self, game_id: str) -> dict[int, str]:
        """Who holds each seat now (after any `接替`)."""
        with self.db.read() as s:
            return {n: c for n, c in s.execute(select(Player.seat, Player.contact_id).where(
                Player.game_id == game_id)) if c}

    def write(self, summary: GameSummary, *, replace: bool = False) -> bool:
        """The summary and its seats in one transaction; False when it was written before
        (by another process) and `replace` is not asked."""
        try:
            with self.db.write() as s:
                if replace:
                    s.execute(delete(RecordSeat).where(RecordSeat.game_id == summary.game_id))
                    s.execute(delete(GameRecord).where(GameRecord.game_id == summary.game_id))
                s.add(GameRecord(
                    game_id=summary.game_id, host=summary.host, ruleset=summary.ruleset,
                    players=summary.players, board=summary.board, outcome=summary.outcome,
                    winner=summary.winner, day=summary.day, ended_at=summary.ended_at,
                    ended_on=summary.ended_on, digest=summary.digest,
                    last_seq=summary.last_seq, reason=summary.reason,
                    recorded_at=utcnow()))
                s.flush()
                s.add_all(RecordSeat(
                    game_id=summary.game_id, seat=x.seat, host=summary.host,
                    outcome=summary.outcome, ended_at=summary.ended_at, contact_id=x.contact,
                    forum_name=x.name, role=x.role, camp=x.camp, result=x.result,
                    out_cause=x.out_cause, out_phase=x.out_phase, yellow=x.yellow, red=x.red)
                    for x in summary.seats)
        except IntegrityError:
            return False
        return True

    def recorded(self, host: Host) -> list[tuple[str, str, str]]:
        """Every summary row of `host`: (game, outcome, digest)."""
        with self.db.read() as s:
            return [(g, o, d) for g, o, d in s.execute(
                select(GameRecord.game_id, GameRecord.outcome, GameRecord.digest)
                .where(of_host(GameRecord.host, host)).order_by(GameRecord.ended_at))]

    # reading -----------------------------------------------------------------------------------
    def tallies(self, host: Host, window: Window | None = None) -> list[Tally]:
        """Every contact's games in the window, with the 马甲 of their latest game: one
        aggregate over the seats' community index, then the latest seat of each contact."""
        won = RecordSeat.outcome == WON
        counted = (select(RecordSeat.contact_id,
                          func.sum(case((won, 1), else_=0)),
                          func.sum(case((and_(won, RecordSeat.result == "win"), 1), else_=0)),
                          func.sum(case((won, 0), else_=1)),
                          func.max(RecordSeat.ended_at))
                   .where(of_host(RecordSeat.host, host), RecordSeat.contact_id.is_not(None),
                          *_ended_within(RecordSeat.ended_at, window))
                   .group_by(RecordSeat.contact_id))
        with self.db.read() as s:
            rows = s.execute(counted).all()
            latest = {c: at for c, _, _, _, at in rows}
            names: dict[str, tuple[str, str | None]] = {}
            contacts = list(latest)
            for chunk in range(0, len(contacts), 500):  # (a bound on the statement's size)
                part = contacts[chunk:chunk + 500]
                # each contact's seats at their latest end (an index range each: a row-value
                # IN is a scan of every seat on PostgreSQL), the latest game's 马甲 kept
                for contact, at, game, name in s.execute(
                        select(RecordSeat.contact_id, RecordSeat.ended_at, RecordSeat.game_id,
                               RecordSeat.forum_name)
                        .where(of_host(RecordSeat.host, host),
                               RecordSeat.contact_id.in_(part),
                               RecordSeat.ended_at.in_({latest[c] for c in part}))):
                    if at == latest[contact] and (contact not in names
                                                  or game > names[contact][0]):
                        names[contact] = (game, name)
        return [Tally(c, int(g or 0), int(w or 0), int(o or 0), names.get(c, ("", None))[1])
                for c, g, w, o, _ in rows]

    def lines(self, host: Host, *, contact: str | None = None, window: Window | None = None
              ) -> list[Line]:
        """Seats of recorded games (of one contact, or every one), the latest game first."""
        stmt = (select(*_LINE).join(GameRecord, GameRecord.game_id == RecordSeat.game_id)
                .where(of_host(GameRecord.host, host), GameRecord.outcome != REFUSED,
                       *_ended_within(GameRecord.ended_at, window))
                .order_by(GameRecord.ended_at.desc(), GameRecord.game_id.desc(),
                          RecordSeat.seat))
        if contact is not None:
            stmt = stmt.where(RecordSeat.contact_id == contact)
        with self.db.read() as s:
            return [Line(*row) for row in s.execute(stmt)]

    def users_of(self, host: Host, name: str) -> list[str]:
        """The contacts who played a recorded game of `host` under the 马甲 `name`, the
        latest first."""
        with self.db.read() as s:
            rows = s.execute(
                select(RecordSeat.contact_id, func.max(RecordSeat.ended_at))
                .where(of_host(RecordSeat.host, host), RecordSeat.forum_name == name,
                       RecordSeat.contact_id.is_not(None))
                .group_by(RecordSeat.contact_id)).all()
        return [c for c, _ in sorted(rows, key=lambda r: r[1], reverse=True)]

    def boards(self, host: Host, window: Window | None = None) -> list[BoardTally]:
        """Each board's games in the window, and how many each camp won."""
        stmt = (select(GameRecord.board, GameRecord.ruleset, GameRecord.outcome,
                       GameRecord.winner, func.count())
                .where(of_host(GameRecord.host, host), GameRecord.outcome != REFUSED,
                       *_ended_within(GameRecord.ended_at, window))
                .group_by(GameRecord.board, GameRecord.ruleset, GameRecord.outcome,
                          GameRecord.winner))
        found: dict[str, tuple[str, int, dict[str, int], int]] = {}
        with self.db.read() as s:
            for board, ruleset, outcome, winner, n in s.execute(stmt):
                _, games, wins, other = found.get(board, (ruleset, 0, {}, 0))
                if outcome == WON and winner:
                    wins[winner] = wins.get(winner, 0) + n
                    games += n
                else:
                    other += n
                found[board] = (ruleset, games, wins, other)
        return [BoardTally(b, r, g, w, o) for b, (r, g, w, o) in sorted(found.items())]

    def refused(self, host: Host) -> list[tuple[str, str | None]]:
        """The games refused from the records (their export did not verify), with why."""
        with self.db.read() as s:
            return [(g, r) for g, r in s.execute(
                select(GameRecord.game_id, GameRecord.reason).where(
                    of_host(GameRecord.host, host), GameRecord.outcome == REFUSED)
                .order_by(GameRecord.game_id))]

    # seasons -----------------------------------------------------------------------------------
    def seasons(self, host: Host) -> list[SeasonRow]:
        with self.db.read() as s:
            return [_season(r) for r in s.scalars(select(Season).where(
                of_host(Season.host, host)).order_by(Season.started_at, Season.id))]

    def season(self, host: Host, name: str) -> SeasonRow | None:
        return next((x for x in self.seasons(host) if x.name == name), None)

    def open_season(self, host: Host) -> SeasonRow | None:
        return next((x for x in self.seasons(host) if x.ended_at is None), None)

    def start_season(self, host: str | None, name: str, at: datetime, by: str
                     ) -> SeasonRow | str:
        """A new season from `at`; else why not: "open" (one runs), "taken" (the name)."""
        with self.db.write() as s:
            rows = list(s.scalars(select(Season).where(of_host(Season.host, host))))
            if any(r.ended_at is None for r in rows):
                return "open"
            if any(r.name == name for r in rows):
                return "taken"
            row = Season(host=host, name=name, started_at=at, started_by=by)
            s.add(row)
            return _season(row)

    def end_season(self, host: str | None, at: datetime, by: str) -> SeasonRow | None:
        """The open season ended at `at` (None: none was open)."""
        with self.db.write() as s:
            row = s.scalars(select(Season).where(of_host(Season.host, host),
                                                 Season.ended_at.is_(None))).first()
            if row is None:
                return None
            row.ended_at, row.ended_by = max(at, row.started_at), by
            return _season(row)

    # privacy -----------------------------------------------------------------------------------
    def hidden(self) -> set[str]:
        """The contacts who hide their records."""
        with self.db.read() as s:
            return set(s.scalars(select(RecordPrivacy.contact_id).where(
                RecordPrivacy.hidden.is_(True))))

    def set_hidden(self, contact: str, hidden: bool) -> None:
        with self.db.write() as s:
            s.merge(RecordPrivacy(contact_id=contact, hidden=hidden, changed_at=utcnow()))

    # the simulator's numbers ---------------------------------------------------------------------
    def simulation(self, key: str) -> tuple[str, int, Any] | None:
        """(status, games, result) of a board's simulation, if one was computed."""
        with self.db.read() as s:
            row = s.get(Simulation, key)
            return None if row is None else (row.status, row.games, row.result)

    def save_simulation(self, key: str, board: str, agent: str, games: int, seed: int,
                        status: str, result: Any) -> None:
        with self.db.write() as s:
            row = s.get(Simulation, key)
            if row is None:
                s.add(Simulation(key=key, board=board, agent=agent, games=games, seed=seed,
                                 status=status, result=result, computed_at=utcnow()))
            else:
                row.status, row.result, row.games = status, result, games
                row.computed_at = utcnow()

    # the community page's address ----------------------------------------------------------------
    def slug(self, host: str | None, make: Callable[[], str]) -> str:
        """The community page's secret address part, made the first time."""
        return self.secret(SLUG_PREFIX + (host or ""), make)

    def new_slug(self, host: str | None, make: Callable[[], str]) -> str:
        """A new address: the old one stops working."""
        name = SLUG_PREFIX + (host or "")
        value = make()
        with self.db.write() as s:
            s.merge(Secret(name=name, value=value))
        return value

    def slugs(self) -> Iterable[tuple[str | None, str]]:
        """Every community's address: (host, slug)."""
        with self.db.read() as s:
            rows = list(s.execute(select(Secret.name, Secret.value).where(
                Secret.name.like(SLUG_PREFIX + "%"))))
        return [(name[len(SLUG_PREFIX):] or None, value) for name, value in rows]

    def secret(self, name: str, make: Callable[[], str]) -> str:
        """A server secret of the records (the key of the players' opaque keys, a
        community page's address), made the first time as every server secret is."""
        return ChatStore(self.db).secret(name, make)
