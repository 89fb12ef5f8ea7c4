"""A finished game's summary, made from its verified export and the state the export's replay
ended in (pure: no database, no clock).

What the records say of a game comes from the signed log: the 马甲 of each seat (the export's
players), the dealt roles and the winners (its GameOver), each seat's camp at the end, how and
when it went out and its cards (the state the replay of every logged command ends in, which
`verify` compares event by event with the log). Who sat in a seat is the bot's own binding
(a contact id is never in an export); after `接替` the seat is the substitute's.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from bot.gametime import instant_of, zone
from bot.store.records import ENDED, HALTED, REFUSED, WON, GameSummary, SeatSummary
from bot.store.signing import canonical
from engine.model import GameState
from engine.options import OptionError, validate_options
from engine.ruleset import get_ruleset

END_EVENTS = ("GameOver", "GameEnded")


def digest(export: dict[str, Any]) -> str:
    """The SHA-256 of what a record is made from: the export's header, players and log (not
    its list of refused messages, which grows when someone writes to a game that is over)."""
    body = {k: export.get(k) for k in ("format", "game", "players", "log")}
    return hashlib.sha256(canonical(body)).hexdigest()


def board_key(ruleset: str, players: int, options: dict[str, Any] | None,
              roles: list[str] | None) -> str:
    """The board a game was played on, as one canonical JSON text: the ruleset, the seat
    count, the options set away from their defaults (as the option model reads them), and the
    judge's own role set (sorted), if any. Games on one board are compared with each other
    and with the simulator's games of the same options."""
    given = dict(options or {})
    try:
        rs = get_ruleset(ruleset)
        full = validate_options(rs.options_model, given, rs.camps)
        base = validate_options(rs.options_model, {}, rs.camps)
        changed = {k: full[k] for k in sorted(full) if base.get(k) != full[k]}
    except (OptionError, KeyError, ValueError):  # a ruleset or options this engine lacks
        changed = dict(sorted(given.items()))
    key = {"ruleset": ruleset, "players": players, "options": changed,
           "roles": sorted(roles) if roles else None}
    return json.dumps(key, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def read_board(board: str) -> dict[str, Any]:
    """`board_key`'s parts again."""
    return dict(json.loads(board))


def _utc(wall: datetime, time_zone: str) -> datetime:
    return instant_of(wall, zone(time_zone)).astimezone(UTC).replace(tzinfo=None)


def _common(export: dict[str, Any], host: str | None, time_zone: str) -> dict[str, Any]:
    game, log = export["game"], export["log"]
    params = game["params"]
    roles = params.get("roles")
    players = len(roles) if roles else int(params.get("players") or len(export["players"]))
    last = log[-1] if log else None
    wall = datetime.fromisoformat(last["at"]) if last else datetime.fromisoformat(
        game["created_at"])
    return {"game_id": game["id"], "host": host, "ruleset": game["ruleset"],
            "players": players,
            "board": board_key(game["ruleset"], players, params.get("options"), roles),
            "ended_at": _utc(wall, time_zone), "ended_on": wall.date(),
            "digest": digest(export), "last_seq": last["seq"] if last else 0}


def summarize(export: dict[str, Any], state: GameState, contacts: dict[int, str],
              host: str | None, time_zone: str) -> GameSummary:
    """The summary of a game over whose export verified; `state`: what its replay ended in."""
    end = next(e for e in reversed(export["log"])
               if e["kind"] == "event" and e["type"] in END_EVENTS)
    names = {int(p["seat"]): p.get("forum_name") for p in export["players"]}
    won = end["type"] == "GameOver"
    members = {int(n) for n in end["data"].get("members") or ()} if won else set()
    roles = {int(k): v for k, v in end["data"]["roles"].items()}
    seats = tuple(SeatSummary(
        seat=s.seat, contact=contacts.get(s.seat), name=names.get(s.seat),
        role=roles.get(s.seat, s.role), camp=s.camp,
        result=("win" if s.seat in members else "loss") if won else None,
        out_cause=None if s.alive else s.out_cause, out_phase=None if s.alive else s.out_phase,
        yellow=s.yellow, red=s.red) for s in state.seats)
    common = _common(export, host, time_zone)
    return GameSummary(**common, outcome=WON if won else ENDED,
                       winner=end["data"].get("winner") if won else None, day=state.day,
                       seats=seats)


def halted(export: dict[str, Any], contacts: dict[int, str], host: str | None,
           time_zone: str) -> GameSummary:
    """A game halted for a ruling that never came (停局): its seed and roles stay secret, so
    the record names only who sat where; it counts for no rate."""
    names = {int(p["seat"]): p.get("forum_name") for p in export["players"]}
    seats = tuple(SeatSummary(seat=n, contact=contacts.get(n), name=names.get(n), role=None,
                              camp=None, result=None, out_cause=None, out_phase=None)
                  for n in sorted(names))
    day = max((int(e["phase"][1:]) for e in export["log"]
               if e["phase"][:1] in "DN" and e["phase"][1:].isdigit()), default=0)
    return GameSummary(**_common(export, host, time_zone), outcome=HALTED, winner=None,
                       day=day, seats=seats)


def refused(export: dict[str, Any] | None, game_id: str, ruleset: str, host: str | None,
            reason: str, ended_at: datetime) -> GameSummary:
    """A game whose export did not verify: a row that says so, and no seat."""
    if export is not None:
        try:
            common = _common(export, host, "UTC")
            common["ended_at"] = ended_at
            return GameSummary(**common, outcome=REFUSED, winner=None, day=0,
                               reason=reason[:2000])
        except Exception:  # the export is broken in another way too: a bare row
            pass
    return GameSummary(game_id=game_id, host=host, ruleset=ruleset, players=0,
                       board=board_key(ruleset, 0, None, None), outcome=REFUSED, winner=None,
                       day=0, ended_at=ended_at, ended_on=ended_at.date(), digest="",
                       last_seq=0, reason=reason[:2000])
