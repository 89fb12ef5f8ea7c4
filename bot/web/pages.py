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
from bot.texts import (
    camp_name,
    contact_text,
    phase_text,
    role_name,
    ruleset_name,
    seats_text,
    t,
)
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
class Countdown:
    """The next public change of the phase: what, when (game time, shown), and the instant
    the page's script counts down to (milliseconds since the epoch)."""

    what: str
    due: str
    left: str
    ms: int


@dataclass
class JudgePage:
    code: str
    title: str
    phase: str
    status: str  # what 状态 says
    tally: str
    ledger: str = ""  # the forum vote thread as read (votes.channel=forum-auto), by day
    deadlines: list[Due] = field(default_factory=list)
    seats: list[SeatRow] = field(default_factory=list)
    timeline: list[Line] = field(default_factory=list)
    ends: Countdown | None = None
    public_url: str = ""  # the game's public page, to post on the forum


@dataclass
class PlayerPage:
    code: str
    title: str
    phase: str
    card: str  # the role as the seat was dealt it (RoleDealt, told to the seat)
    status: str  # what 状态 says to the seat
    history: list[Line] = field(default_factory=list)
    ends: Countdown | None = None  # when the phase ends, by the public schedule


TIMELINE = 300  # the judge's timeline: the latest lines


def judge_page(state: GameState, code: str, players: dict[int, tuple[str | None, str | None]],
               log: list[LogEntry], now: datetime, ledger: str = "",
               wall_to_ms: Callable[[datetime], int] = lambda _: 0,
               public_url: str = "") -> JudgePage:
    rows = []
    for st in state.seats:
        contact, name = players.get(st.seat, (None, None))
        marks = [t("web.sheriff")] if state.sheriff == st.seat else []
        if st.lover_of:
            marks.append(t("web.lover", partner=st.lover_of))
        if st.yellow or st.red:
            marks.append(t("web.cards", yellow=st.yellow, red=t("words.red") if st.red else ""))
        rows.append(SeatRow(st.seat, name or "-",
                            contact_text(contact) if contact else t("words.unbound"),
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
                     reports.vote_tally(state, code, now), ledger,
                     deadlines(state, now, wall_to_ms), rows, timeline[-TIMELINE:][::-1],
                     phase_end(state, now, wall_to_ms), public_url)


@dataclass
class Due:
    """A deadline as a page shows it: what and when, and the time left, which the page's
    script counts down (`ms`: the instant, milliseconds since the epoch)."""

    text: str
    left: str
    ms: int


def left_text(due: datetime, now: datetime) -> str:
    """（还有 1小时5分） or （已到）."""
    minutes = int((due - now).total_seconds() // 60)
    if minutes < 0:
        return t("web.due_paren")
    h, m = divmod(minutes, 60)
    return t("web.left_paren", left=t("web.left", h=h, m=m) if h else t("web.left_min", m=m))


def deadlines(state: GameState, now: datetime,
              wall_to_ms: Callable[[datetime], int] = lambda _: 0) -> list[Due]:
    """Every pending deadline but the reminders, soonest first, with the time left."""
    out = []
    for d in sorted(state.deadlines, key=lambda d: (d.due, d.id)):
        if d.kind == "remind":
            continue
        text = t("web.deadline_at", what=describe_deadline(d, None),
                 due=d.due.strftime("%m-%d %H:%M"))
        out.append(Due(text, left_text(d.due, now), wall_to_ms(d.due)))
    return out


def player_page(state: GameState, seat: int, code: str, forum_name: str,
                log: list[LogEntry], delivered: list[tuple[datetime, str]],
                wall: Callable[[datetime], datetime], now: datetime | None = None,
                wall_to_ms: Callable[[datetime], int] = lambda _: 0) -> PlayerPage:
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
                      reports.player_status(state, seat, code, forum_name, log), history[::-1],
                      phase_end(state, now, wall_to_ms) if now is not None else None)


# the game's public page (`/g/CODE`) ------------------------------------------------------------
@dataclass
class PublicPage:
    code: str
    title: str
    phase: str
    ends: Countdown | None
    alive: str
    sheriff: str
    tally: str  # the day's votes as they stand, where they are public (a forum thread)
    post: str  # what `公示` says now, without the judge's own notes
    posts: list[Line] = field(default_factory=list)  # every public post, latest first
    replay: str = ""  # the replay's link, once the game is over


PUBLIC_OUTS = ("Exiled", "RedCard", "SelfDestruct")  # public posts that name a seat going out


def public_alive(state: GameState, log: list[LogEntry]) -> list[int]:
    """The living as the table was told: every seat, then each public day post's list, less
    the seats announced out since (an exile, a red card, a self-destruct). A death not yet
    announced (the night's, a lover's) stays alive here until the post that tells it."""
    if state.over:
        return state.living_numbers()
    alive = [st.seat for st in state.seats]
    for row in log:
        if row.kind != "event" or not (row.audience or {}).get("public"):
            continue
        data = (row.body or {}).get("data") or {}
        if row.type == "DayOpened" and isinstance(data.get("alive"), list):
            alive = list(data["alive"])
        elif row.type in PUBLIC_OUTS and data.get("seat") in alive:
            alive.remove(data["seat"])
    return alive


def public_sheriff(log: list[LogEntry]) -> int | None:
    """The sheriff as the table was last told."""
    sheriff = None
    for row in log:
        if row.kind != "event" or not (row.audience or {}).get("public"):
            continue
        data = (row.body or {}).get("data") or {}
        if row.type == "SheriffChanged":
            sheriff = data.get("seat")
        elif row.type in ("NoSheriff", "BadgeLost", "BadgeTorn"):
            sheriff = None
    return sheriff


def phase_end(state: GameState, now: datetime, wall_to_ms: Callable[[datetime], int]
              ) -> Countdown | None:
    """When the phase ends by the schedule, as the table knows it (day 1 opens, the day
    closes, the next day opens); None when over or paused."""
    if state.over or state.paused_at is not None:
        return None
    day = max(state.day, 1)
    if state.phase.startswith("D"):
        what, due = t("web.ends_close"), state.schedule.close_at(day)
    elif state.phase.startswith("N"):
        what, due = t("web.ends_open"), state.schedule.open_at(day + 1)
    else:
        what, due = t("web.ends_open"), state.schedule.open_at(1)
    return Countdown(what, due.strftime("%m-%d %H:%M"), left_text(due, now), wall_to_ms(due))


def public_page(state: GameState, code: str, log: list[LogEntry],
                posts: list[tuple[datetime, str]], wall: Callable[[datetime], datetime],
                wall_to_ms: Callable[[datetime], int], now: datetime, *,
                votes_public: bool, replay: str) -> PublicPage:
    """The public board only, built from what the table was told: the posts sent in public
    (`posts`: the public room's, or the public page's copy of each announcement), the living
    and the sheriff as announced, what `公示` says (without the judge's notes), the tally
    where the votes are public anyway (the forum thread), the phase and when it ends."""
    alive = public_alive(state, log)
    sheriff = public_sheriff(log)
    tally = reports.vote_tally(state, code, now) if votes_public and state.phase.startswith(
        "D") else ""
    post = reports.publish(state, code, log, judge_notes=False, living=alive) if (
        state.phase != "SETUP") else ""
    lines = [Line(wall(at).strftime("%m-%d %H:%M"), text) for at, text in posts]
    return PublicPage(code, t("web.public_title", code=code, ruleset=ruleset_name(state.ruleset)),
                      phase_text(state.phase), phase_end(state, now, wall_to_ms),
                      seats_text(alive), t("words.seat", n=sheriff) if sheriff else
                      t("words.none"), tally, post, lines[::-1],
                      replay if state.over else "")
