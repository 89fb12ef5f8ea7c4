"""What each page shows, built from the state and the log (the chat layer's own views where it
has them), as plain data for the templates (bot/web/templates). Every text is Chinese and comes
from the texts and the renderer; the templates escape all of it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from bot.chat import reports
from bot.feed import describe_command, describe_deadline
from bot.render import messages_for, render_for_judge
from bot.service import event_of
from bot.store.codec import decode
from bot.store.models import LogEntry
from bot.texts import camp_name, phase_text, role_name, ruleset_name, t
from engine.commands import parse_command
from engine.model import GameState


@dataclass
class Line:
    at: str
    text: str


@dataclass
class SeatRow:
    seat: int
    name: str
    contact: str
    role: str
    camp: str
    alive: bool
    marks: str


@dataclass
class JudgePage:
    code: str
    title: str
    phase: str
    status: str  # what 状态 says
    tally: str
    ledger: str = ""  # the forum vote thread as read (votes.channel=forum-auto), by day
    deadlines: list[str] = field(default_factory=list)
    seats: list[SeatRow] = field(default_factory=list)
    timeline: list[Line] = field(default_factory=list)


@dataclass
class PlayerPage:
    code: str
    title: str
    phase: str
    card: str  # the role as the seat was dealt it (RoleDealt, told to the seat)
    status: str  # what 状态 says to the seat
    history: list[Line] = field(default_factory=list)


TIMELINE = 300  # the judge's timeline: the latest lines


def judge_page(state: GameState, code: str, players: dict[int, tuple[str | None, str | None]],
               log: list[LogEntry], now: datetime, ledger: str = "") -> JudgePage:
    rows = []
    for st in state.seats:
        contact, name = players.get(st.seat, (None, None))
        marks = [t("web.sheriff")] if state.sheriff == st.seat else []
        if st.lover_of:
            marks.append(t("web.lover", partner=st.lover_of))
        if st.yellow or st.red:
            marks.append(t("web.cards", yellow=st.yellow, red=t("words.red") if st.red else ""))
        rows.append(SeatRow(st.seat, name or "-", contact or t("words.unbound"),
                            role_name(state.ruleset, st.role), camp_name(state.ruleset, st.camp),
                            st.alive, " ".join(marks)))
    timeline: list[Line] = []
    for row in log:
        if row.kind == "command":
            text = describe_command(parse_command(decode(row.body)))
        else:
            text = render_for_judge(event_of(row.body), state.ruleset)
        if text:
            timeline.append(Line(row.at.strftime("%m-%d %H:%M"), text))
    return JudgePage(code, t("web.judge_title", code=code, ruleset=ruleset_name(state.ruleset)),
                     phase_text(state.phase), reports.judge_status(state, code, players),
                     reports.vote_tally(state, code, now), ledger, deadlines(state, now), rows,
                     timeline[-TIMELINE:][::-1])


def deadlines(state: GameState, now: datetime) -> list[str]:
    """Every pending deadline but the reminders, soonest first, with the time left."""
    out = []
    for d in sorted(state.deadlines, key=lambda d: (d.due, d.id)):
        if d.kind == "remind":
            continue
        what = describe_deadline(d, None)
        due = d.due.strftime("%m-%d %H:%M")
        minutes = int((d.due - now).total_seconds() // 60)
        if minutes < 0:
            out.append(t("web.deadline_due", what=what, due=due))
            continue
        h, m = divmod(minutes, 60)
        left = t("web.left", h=h, m=m) if h else t("web.left_min", m=m)
        out.append(t("web.deadline_left", what=what, due=due, left=left))
    return out


def player_page(state: GameState, seat: int, code: str, forum_name: str,
                log: list[LogEntry], delivered: list[tuple[datetime, str]],
                wall: Callable[[datetime], datetime]) -> PlayerPage:
    """What seat `seat`'s contact was sent (`delivered`: each message as it went, naive UTC,
    shown at `wall`'s game time), the role card the seat was dealt, and its own status as
    `状态` gives it: nothing else, ever. The outbox is the truth, as for the chat."""
    card = ""
    for row in log:
        if row.kind == "event" and row.type == "RoleDealt" and seat in (
                (row.audience or {}).get("seats") or []):
            card = messages_for(event_of(row.body), seat, state.ruleset) or ""
    history = [Line(wall(at).strftime("%m-%d %H:%M"), text) for at, text in delivered]
    return PlayerPage(code, t("web.player_title", code=code, seat=seat,
                              role=role_name(state.ruleset, state.seat(seat).role)),
                      phase_text(state.phase), card,
                      reports.player_status(state, seat, code, forum_name, log), history[::-1])
