"""The 复盘 post (issue 25, part 6; docs/rules-judge.md P-REPLAY-1): after a game is over, the
whole game as forum text, ready to paste: the roles with 马甲, the lovers and the camps, each
night and day as the log has it (in the judge's words: bot/feed.py, the rulesets' `judge:`
templates), and the seed with how to check it against the commitment published at the start.
Split into posts of at most `limit` characters, at line breaks. Pure: it reads the log it is
given; every word is in texts.yaml (`replay`) or the templates."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bot.feed import describe_command
from bot.render import render_for_judge
from bot.store.codec import decode
from bot.store.games import event_of
from bot.store.models import LogEntry
from bot.texts import phase_text, role_name, ruleset_name, t
from engine.commands import parse_command
from engine.model import GameState
from rulesets.data import load

POST_LIMIT = 2000  # characters a forum post holds, with room to spare
# What the 复盘 leaves out: prompts and reminders (the deadlines say it), the judge's notes,
# what the roles list and the header already say.
QUIET = frozenset({"Reminder", "LateSummary", "CardPolicyNote", "NightPrompt", "CupidPrompt",
                   "GameCreated", "RoleDealt", "YouAreSheriff", "YouAreOut", "YourCamp",
                   "LoverNotice", "GroupFormed", "CampLostNotice", "RandomChoice"})


def replay_posts(code: str, state: GameState, log: Sequence[LogEntry],
                 names: Mapping[int, str | None], limit: int = POST_LIMIT) -> list[str]:
    """The 复盘 of a game that is over, as forum posts."""
    rs = state.ruleset
    lines = [*_roles(state, names), "", t("replay.process")]
    lines += _timeline(log, rs)
    lines += ["", *_verify(log)]
    return _split(code, lines, limit)


def _roles(state: GameState, names: Mapping[int, str | None]) -> list[str]:
    rs = state.ruleset
    camps = load(rs, "data").get("camp_names", {})
    winner = camps.get(state.winner, state.winner) if state.winner else t("replay.no_winner")
    out = [t("replay.head", ruleset=ruleset_name(rs), players=len(state.seats), winner=winner),
           t("replay.roles")]
    for s in state.seats:
        out.append(t("replay.seat", seat=s.seat, name=names.get(s.seat) or "-",
                     role=role_name(rs, s.role), camp=camps.get(s.camp, s.camp),
                     out=t("replay.out_mark") if not s.alive else ""))
    lovers = sorted(s.seat for s in state.seats if s.lover_of)
    if lovers:
        out.append(t("replay.lovers", seats="、".join(f"{n}号" for n in lovers)))
    return out


def roles(state: GameState, names: Mapping[int, str | None]) -> list[str]:
    """The 复盘's first part: the header, each seat with its 马甲, role and camp, the lovers."""
    return _roles(state, names)


def phases(log: Iterable[LogEntry], ruleset: str) -> list[tuple[str, list[str]]]:
    """Each phase in order (its title, its lines in the judge's words): the 复盘's second
    part, and the replay page's steps (bot/web/replay.py)."""
    out: list[tuple[str, list[str]]] = []
    phase = None
    for row in log:
        if row.phase != phase:
            phase = row.phase
            out.append((phase_text(phase), []))
        lines = out[-1][1]
        if row.kind == "command":
            cmd = parse_command(decode(row.body))
            if cmd.kind in ("tick", "vote"):  # what a tick fired follows; votes: the 票型
                continue
            lines.append(describe_command(cmd))
            continue
        event = event_of(row.body)
        if event.type in QUIET:
            continue
        text = render_for_judge(event, ruleset)
        lines += [line for line in text.splitlines() if line.strip()]
    return out


def _timeline(log: Iterable[LogEntry], ruleset: str) -> list[str]:
    return [line for title, lines in phases(log, ruleset)
            for line in [title, *("  " + x for x in lines)]]


def _verify(log: Iterable[LogEntry]) -> list[str]:
    data: dict[str, Any] = {}
    for row in log:
        if row.kind == "event" and row.type in ("GameCreated", "GameOver", "GameEnded"):
            data.update(event_of(row.body).data)
    if "seed" not in data:
        return []
    return [t("replay.verify", seed=data["seed"], commitment=data.get("commitment", "-"))]


def _split(code: str, lines: list[str], limit: int) -> list[str]:
    """Posts of at most `limit` characters, each titled, split at line breaks (a line longer
    than a post is split into pieces: nothing is lost)."""
    bodies: list[list[str]] = [[]]
    size = 0
    room = limit - len(t("replay.part", code=code, i=99, n=99)) - 1
    pieces = [line[i:i + room] or "" for text in lines for line in text.split("\n")
              for i in range(0, max(len(line), 1), room)]
    for line in pieces:
        if bodies[-1] and size + len(line) + 1 > room:
            bodies.append([])
            size = 0
        bodies[-1].append(line)
        size += len(line) + 1
    n = len(bodies)
    return [t("replay.part", code=code, i=i, n=n) + "\n" + "\n".join(body).strip("\n")
            for i, body in enumerate(bodies, 1)]
