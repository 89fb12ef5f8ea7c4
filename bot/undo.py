"""Undoing a judge's command (`撤销`, issue 25 part 3; docs/rules-judge.md P-UNDO).

Event-sourced: the log keeps the command and gains an `undo` row naming its seq; the game's
state is the replay of its creation and every logged command but the undone ones. Pure: it
reads log rows and the game's creation parameters, and answers with the state to store, or
why the undo is refused. The store writes it (bot/store/games.py `commit_undo`), `wolfjudge
rebuild` and `verify` replay the same way (bot/rebuild.py, bot/audit.py).

What may be undone (P-UNDO-1): a judge's own command into the game (a card, a waiver, a vote
entered, changed, corrected or voided, a proxy vote, a ruling on a correction, a time
change, an extension, a 代行), while the phase in which it was given is still open: no
deadline but a reminder has fired since, no night resolved, no day opened or closed, and
the command did not move the phase itself. And only when every command after it replays to
the events it had (P-UNDO-3): a later command that depended on it (a second yellow card made
red by the first) keeps it in; when no deadline that the command had moved away would have
come due, without it, before a later command or before now (P-UNDO-7: the replay would fire
it late, after what came since); and when it did not make a night choice final and tell it
(P-UNDO-8: a check's told result stands, G-RES-1).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.feed import describe_command, describe_deadline
from bot.store.codec import decode
from bot.store.games import event_of
from bot.store.models import UNDO, LogEntry
from bot.texts import t
from engine import handle, new_game
from engine.commands import Command, Tick, parse_command
from engine.context import OPEN_NOTICE
from engine.events import Audience, Event, Rejection
from engine.model import Deadline, GameState

# The judge's commands that can be undone; a vote or an act only when a judge sent it.
UNDOABLE = frozenset({"judge_card", "judge_waiver", "judge_proxy", "judge_correction",
                      "judge_set_time", "judge_set_schedule", "judge_extend", "vote", "act"})
# Events that say the phase moved on: after one, nothing before it can be undone.
PHASE_MOVES = frozenset({"NightResolving", "DawnReview", "DayOpened", "NightStarted", "VoteResult",
                         "RevoteOpened", "GameOver", "GameEnded"})
# The undo's notices (engine/payloads.py): a public one told as the announcement was.
NOTICE, NOTICE_PUBLIC = "CommandUndone", "CommandUndonePublic"


@dataclass(frozen=True)
class Candidate:
    """A command that can still be undone: its log row's seq, the command, when it was
    applied, whether the table (the forum or the room) was told of it, and whether anyone
    but the judge was."""

    seq: int
    cmd: Command
    at: datetime
    public: bool
    told: bool


@dataclass
class Plan:
    """An accepted undo: the state to store (the replay without the command) and the events
    of the undone command (whoever read one is told of the undo)."""

    target: Candidate
    state: GameState
    undone_events: list[Event] = field(default_factory=list)


@dataclass(frozen=True)
class Refusal:
    """Why an undo is refused: the text key (bot/texts.yaml `undo.*`) and its fields."""

    key: str
    fields: dict[str, str] = field(default_factory=dict)


def what(c: Candidate) -> str:
    """The undoable command as the judge wrote it (a vote with its post time)."""
    return describe_command(c.cmd, by_judge=c.cmd.kind == "vote", at=c.at)


def undone(rows: Iterable[LogEntry]) -> set[int]:
    """The seqs of the commands undone so far."""
    return {int(decode(r.body)["seq"]) for r in rows if r.kind == UNDO}


def groups(rows: Sequence[LogEntry]) -> list[tuple[LogEntry | None, list[LogEntry]]]:
    """The log as (head row, its events): the creation's events first (head None); a head is a
    command or an undo row."""
    out: list[tuple[LogEntry | None, list[LogEntry]]] = [(None, [])]
    for row in rows:
        if row.kind == "event":
            out[-1][1].append(row)
        else:
            out.append((row, []))
    return out


def effective(rows: Sequence[LogEntry]) -> list[LogEntry]:
    """The log as the game stands: without the undone commands, their events, and the undo
    rows with their notices (what 公示 and 复盘 read)."""
    gone = undone(rows)
    out: list[LogEntry] = []
    for head, events in groups(rows):
        if head is not None and (head.kind == UNDO or head.seq in gone):
            continue
        out += ([head] if head is not None else []) + events
    return out


# A logged command as a replay takes it: its seq, the command, when it was applied.
Logged = tuple[int, Command, datetime]


def replay(params: Mapping[str, Any], rows: Sequence[LogEntry], skip: set[int],
           *, until: int | None = None
           ) -> tuple[GameState, dict[int, list[Event]]] | str:
    """new_game + every logged command but those in `skip` (and before seq `until`, if
    given): the state, and each replayed command's events by its seq; a text saying which
    command the engine no longer accepts."""
    return replay_commands(params, ((r.seq, parse_command(decode(r.body)), r.at) for r in rows
                                    if r.kind == "command"
                                    and (until is None or r.seq < until)), skip)


def replay_commands(params: Mapping[str, Any], commands: Iterable[Logged], skip: set[int]
                    ) -> tuple[GameState, dict[int, list[Event]]] | str:
    """`replay` of commands however they were read (the log's rows, an export's entries)."""
    state, _ = new_game(**dict(params))
    out: dict[int, list[Event]] = {}
    for seq, cmd, at in commands:
        if seq in skip:
            continue
        got = handle(state, cmd, at)
        if isinstance(got, Rejection):
            return f"seq {seq}: {got.code}"
        state, out[seq] = got
    return state, out


def candidates(rows: Sequence[LogEntry], by_judge: Callable[[LogEntry], bool]
               ) -> list[Candidate]:
    """The commands that can be undone now, the latest first (P-UNDO-1): a judge's own
    command (`by_judge` says whose a command row is) after the last move of the phase."""
    gone = undone(rows)
    found: list[Candidate] = []
    for head, events in groups(rows):
        if head is None or head.kind != "command":
            continue
        cmd = parse_command(decode(head.body))
        if _moves_phase(cmd, events):
            found = []  # everything before is in a phase that is over
            continue
        if head.seq in gone or cmd.kind not in UNDOABLE or not by_judge(head):
            continue
        public = any((e.audience or {}).get("public") for e in events)
        told = public or any((e.audience or {}).get("seats") for e in events)
        found.append(Candidate(head.seq, cmd, head.at, public, told))
    return found[::-1]


def _moves_phase(cmd: Command, events: Sequence[LogEntry]) -> bool:
    if isinstance(cmd, Tick):  # (a reminder, or the review's notice of the moved open)
        return not cmd.deadline_id.startswith(("remind:", f"{OPEN_NOTICE}:"))
    return any(e.type in PHASE_MOVES for e in events)


def plan(params: Mapping[str, Any], rows: Sequence[LogEntry], target: Candidate,
         version: int, *, now: datetime, current: GameState) -> Plan | Refusal:
    """The undo of `target` at `now` (`current`: the game's state): the replay without it
    (the undo row's version `version`), or why it is refused: a later command replays to
    other events (P-UNDO-3), a deadline would come due late (P-UNDO-7), a final answer was
    told (P-UNDO-8)."""
    skip = undone(rows) | {target.seq}
    logged = {head.seq: events for head, events in groups(rows)
              if head is not None and head.kind == "command"}
    state, _ = new_game(**dict(params))
    clock: datetime | None = None  # the latest time the log has seen: what has passed
    for row in rows:
        if row.kind != "command":
            continue
        clock = row.at if clock is None else max(clock, row.at)
        if row.seq in skip:
            continue
        cmd = parse_command(decode(row.body))
        if row.seq > target.seq:
            late = _come_due(state, clock, _notice(cmd))
            if late is not None:
                return _late(late)
        got = handle(state, cmd, row.at)
        if isinstance(got, Rejection):
            return Refusal("undo.depends")
        state, events = got
        if row.seq > target.seq and [e.model_dump() for e in events] != [
                event_of(r.body).model_dump() for r in logged[row.seq]]:
            return Refusal("undo.depends")
    late = _come_due(state, max(now, clock) if clock is not None else now)
    if late is not None:
        return _late(late)
    seats = _final_told(current, state) if target.told else None
    if seats:
        return Refusal("undo.told_final", {"what": what(target), "seats": "、".join(
            t("words.seat", n=n) for n in seats)})
    state = state.model_copy(update={"version": version})
    return Plan(target, state, [event_of(r.body) for r in logged[target.seq]])


def _come_due(state: GameState, when: datetime, firing: str | None = None) -> Deadline | None:
    """A deadline of the replayed `state` (a reminder is none) due by `when`, other than the
    notice the next row fires (`firing`): in the game as it was, every deadline due by then had
    fired and is logged as a tick, so this one would fire later than its time, after commands
    that came after it (P-UNDO-7)."""
    if state.over or state.paused_at is not None:
        return None
    due = [d for d in state.deadlines
           if d.kind != "remind" and d.id != firing and d.due <= when]
    return min(due, key=lambda d: (d.due, d.id)) if due else None


def _notice(cmd: Command) -> str | None:
    """The deadline a tick that can follow an undoable command fires at its time, as it would
    have without the command: the review's notice of the moved open (P-REVIEW-4; no phase
    move). (Any other tick but a reminder's moved the phase: nothing before it is undone.)"""
    if isinstance(cmd, Tick) and cmd.deadline_id.startswith(f"{OPEN_NOTICE}:"):
        return cmd.deadline_id
    return None


def _late(dl: Deadline) -> Refusal:
    return Refusal("undo.deadline_passed", {"deadline": describe_deadline(dl),
                                            "due": dl.due.strftime("%m-%d %H:%M")})


def _final_told(current: GameState, replayed: GameState) -> list[int]:
    """The seats of a night choice that is final in the game and would not be without the
    command (P-UNDO-8): a check whose result was told, a kill locked and reported."""
    night, again = current.night, replayed.night
    if night is None or night.resolved:
        return []
    slots = again.slots if again is not None and again.day == night.day else {}
    return sorted({n for key, slot in night.slots.items() if slot.final
                   and not (key in slots and slots[key].final) for n in slot.seats})


def notices(undone_events: Sequence[Event], what: str, at: datetime, phase: str,
            broadcast: Callable[[str], bool]) -> list[Event]:
    """The undo told where the undone command was told (P-UNDO-4): one notice per audience
    that read one of its events. A public event the table was sent (`broadcast` by its type)
    gives a public notice that is sent the same way, and then no seat needs its own."""
    public = [e for e in undone_events if e.audience.public]
    sent = any(broadcast(e.type) for e in public)
    audiences: list[Audience] = []
    if public:
        audiences.append(Audience.everyone())
    if not sent:
        for e in undone_events:
            aud = e.audience
            if not aud.public and aud.seats and aud not in audiences:
                audiences.append(aud)
    return [Event(type=NOTICE_PUBLIC if aud.public and sent else NOTICE, at=at, phase=phase,
                  audience=aud, data={"what": what}) for aud in audiences]
