"""A community's records (issue 31, docs/records.md): writing a finished game's summary once
its export verifies, and reading the tables for the chat, the pages and `wolfjudge stats`.

    game over ─> export_game ─> verify_export_state (signature, commitment, deal, draws, replay)
                    ├─ verified: summarize(export, replayed state) ─> one summary row + seats
                    └─ not:      a `refused` row (why), in no table
    a read ─> the summary rows only (two aggregate statements for a leaderboard)

The summary is written when the game ends (a commit hook of the chat bot), and any game over
without one is recorded by the next read (at most SYNC_LIMIT a read; `wolfjudge stats` all).
It stays tied to the signed log by its digest (bot/records/summary.py `digest`): `wolfjudge
stats --verify` exports every recorded game again, verifies it and compares.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from bot.audit import export_game, verify_export_state
from bot.gametime import utcnow
from bot.records import summary as summaries
from bot.records.tables import (
    BoardRates,
    Leaderboard,
    Record,
    Standing,
    board_rates,
    leaderboard,
    record,
    standings,
)
from bot.store.records import REFUSED, GameSummary, Line, RecordStore, SeasonRow, Window
from engine.ruleset import get_ruleset

if TYPE_CHECKING:
    from bot.service import Service
    from engine.events import Event
    from engine.model import GameState

log = logging.getLogger(__name__)
SYNC_LIMIT = 20  # games over recorded by one read at most (a chat answer stays quick)
TOP = 10
KEY_SECRET = "records-player-key"
# the checks a halted game's export can pass (its seed is never revealed)
HALTED_CHECKS = ("log rows", "signature")


@dataclass(frozen=True)
class Scope:
    """Which games a table reads: a season's, or all (None)."""

    season: SeasonRow | None = None

    @property
    def window(self) -> Window | None:
        return self.season.window if self.season is not None else None


ALL = Scope()


class _Own:
    """The service's own host (the default community)."""


OWN = _Own()


class RecordBook:
    """The records of one community: `host` (default: the service's own account)."""

    def __init__(self, service: Service, host: str | None | _Own = OWN) -> None:
        self.service = service
        self.store = RecordStore(service.db)
        self.host: str | None = service.host if isinstance(host, _Own) else host
        self._key: bytes | None = None

    # writing -----------------------------------------------------------------------------------
    def record(self, game_id: str) -> str | None:
        """Write the game's summary if it is over and has none: its outcome (won, ended,
        halted, refused), or None (not over, no such game, or recorded before)."""
        info = self.store.game(game_id)
        if info is None or info[0] == "active":
            return None
        made = self.summary(game_id, info)
        if made.outcome == REFUSED:
            log.warning("%s: refused from the records: %s", game_id, made.reason)
        return made.outcome if self.store.write(made) else None

    def summary(self, game_id: str, info: tuple[str, str | None, str, str]) -> GameSummary:
        """A game over's summary from its export, verified against the commitment on record;
        a `refused` one when it does not verify (R-REC-1, R-REC-2)."""
        status, host, commitment, time_zone = info
        try:
            export = export_game(self.service, game_id)
        except Exception as exc:  # a game whose rows cannot even be read
            log.exception("%s: no export for the records", game_id)
            return summaries.refused(None, game_id, "", host, f"export: {type(exc).__name__}",
                                     utcnow())
        contacts = self.store.contacts(game_id)
        if status == "halted":  # its seed is never revealed: its log and signature only
            checks, _ = verify_export_state(export, commitment=commitment, replay=False)
            kept = [c for c in checks if c.name in HALTED_CHECKS]
            if len(kept) == len(HALTED_CHECKS) and all(c.ok for c in kept):
                return summaries.halted(export, contacts, host, time_zone)
            return summaries.refused(export, game_id, export["game"]["ruleset"], host,
                                     _why(kept or checks), utcnow())
        checks, state = verify_export_state(export, commitment=commitment)
        if state is None:
            return summaries.refused(export, game_id, export["game"]["ruleset"], host,
                                     _why(checks), utcnow())
        return summaries.summarize(export, state, contacts, host, time_zone)

    def sync(self, limit: int | None = SYNC_LIMIT) -> int:
        """Record the community's games over that have no summary yet (at most `limit`)."""
        done = 0
        for gid in self.store.pending(self.host, limit):
            try:
                done += self.record(gid) is not None
            except Exception:  # one broken game must not stop the records
                log.exception("%s: recording failed", gid)
        return done

    def on_commit(self, game_id: str, state: GameState, events: Sequence[Event]) -> None:
        """A commit hook (Service.on_commit_state): a game that just ended is recorded."""
        if not state.over or not any(e.type in (*summaries.END_EVENTS, "JudgeRulingNeeded")
                                     for e in events):
            return
        try:
            self.record(game_id)
        except Exception:  # the game is committed; its record waits for the next read
            log.exception("%s: recording failed", game_id)

    def recheck(self) -> list[tuple[str, str]]:
        """Every recorded game exported and verified again (`wolfjudge stats --verify`): a
        game whose log no longer gives its digest is recorded anew from its verified export,
        or refused. What changed: (game, the new outcome)."""
        changed = []
        for gid, outcome, digest in self.store.recorded(self.host):
            info = self.store.game(gid)
            if info is None:
                continue
            try:
                now = summaries.digest(export_game(self.service, gid))
            except Exception:
                now = ""
            if outcome != REFUSED and now == digest:
                continue
            made = self.summary(gid, info)
            if made.outcome != outcome or made.digest != digest:
                self.store.write(made, replace=True)
                changed.append((gid, made.outcome))
        return changed

    # who is who --------------------------------------------------------------------------------
    def key(self, contact: str) -> str:
        """A player's opaque key (CSV, pages): keyed, so no contact id can be tried against
        it."""
        if self._key is None:
            self._key = self.store.secret(KEY_SECRET, lambda: secrets.token_hex(32)).encode()
        return hmac.new(self._key, contact.encode(), hashlib.sha256).hexdigest()[:12]

    def hidden(self) -> set[str]:
        return self.store.hidden()

    def set_hidden(self, contact: str, hidden: bool) -> None:
        self.store.set_hidden(contact, hidden)

    def find(self, name: str, *, judge: bool) -> str | None:
        """The contact whose record `战绩 马甲` shows: the latest to play a recorded game
        under that 马甲 (never one still in play); None when there is none, or when they hide
        their records (but to a judge)."""
        users = self.store.users_of(self.host, name)
        if not users or (not judge and users[0] in self.store.hidden()):
            return None
        return users[0]

    # seasons -----------------------------------------------------------------------------------
    def seasons(self) -> list[SeasonRow]:
        return self.store.seasons(self.host)

    def current(self) -> SeasonRow | None:
        return self.store.open_season(self.host)

    def season(self, name: str) -> SeasonRow | None:
        return self.store.season(self.host, name)

    def start_season(self, name: str, at: datetime, by: str) -> SeasonRow | str:
        return self.store.start_season(self.host, name, at, by)

    def end_season(self, at: datetime, by: str) -> SeasonRow | None:
        return self.store.end_season(self.host, at, by)

    # reading -----------------------------------------------------------------------------------
    def standings(self, scope: Scope = ALL, *, judge: bool = False) -> list[Standing]:
        tallies = self.store.tallies(self.host, scope.window)
        keys = {x.contact: self.key(x.contact) for x in tallies}
        return standings(tallies, keys, self.store.hidden(), judge=judge)

    def leaderboard(self, scope: Scope = ALL, *, judge: bool = False, top: int | None = TOP,
                    minimum: int | None = None, players: list[Standing] | None = None
                    ) -> Leaderboard:
        """`minimum`: the win-rate list's (default: the service's, WOLFJUDGE_RANK_MIN_GAMES).
        `players`: the scope's standings, when read already."""
        if players is None:
            players = self.standings(scope, judge=judge)
        least = self.service.rank_min_games if minimum is None else minimum
        return leaderboard(players, least, top, judge=judge)

    def record_of(self, contact: str, scope: Scope = ALL) -> Record | None:
        """A contact's record (None: no recorded game in the scope). The name is the 马甲 of
        their latest game."""
        lines = self.store.lines(self.host, contact=contact, window=scope.window)
        if not lines:
            return None
        return record(lines[0].name or "", lines)

    def records(self, scope: Scope = ALL, *, judge: bool = False,
                players: list[Standing] | None = None) -> list[tuple[Standing, Record]]:
        """Every player's record (the judges' view; or without the hidden ones), most games
        first: `wolfjudge stats` and the CSV. `players`: the scope's standings, if read."""
        by_contact: dict[str, list[Line]] = {}
        for line in self.store.lines(self.host, window=scope.window):
            if line.contact is not None:
                by_contact.setdefault(line.contact, []).append(line)
        hidden = self.store.hidden()
        out = []
        keys = {c: self.key(c) for c in by_contact}
        by_key = {p.key: p for p in (players if players is not None
                                     else self.standings(scope, judge=judge))}
        for contact, lines in by_contact.items():
            if contact in hidden and not judge:
                continue
            out.append((by_key[keys[contact]], record(lines[0].name or "", lines)))
        return sorted(out, key=lambda pr: (-pr[0].games, -pr[0].wins, pr[0].name, pr[0].key))

    def boards(self, scope: Scope = ALL) -> list[BoardRates]:
        out = []
        for tally in self.store.boards(self.host, scope.window):
            try:
                camps = list(get_ruleset(tally.ruleset).camps)
            except Exception:  # a ruleset this engine lacks
                camps = []
            out.append(board_rates(tally, camps))
        return sorted(out, key=lambda b: (-b.games, b.board))

    def refused(self) -> list[tuple[str, str | None]]:
        return self.store.refused(self.host)

    def counts(self, scope: Scope = ALL) -> tuple[int, int]:
        """(games that count, games listed apart) in the scope."""
        boards = self.store.boards(self.host, scope.window)
        return sum(b.games for b in boards), sum(b.other for b in boards)


def _why(checks: Sequence[object]) -> str:
    failed = [str(c) for c in checks if not getattr(c, "ok", True)]
    return "; ".join(failed) or "not verified"


__all__ = ["ALL", "OWN", "RecordBook", "Scope"]
