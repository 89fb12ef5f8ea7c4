"""The verdicts of a day's ledger lines under RULES.md §4.3 (pure: no database, no forum).

Lines are judged in post-time order, each voter's story told as the rules tell it:
- a voter's first floor of the day is the vote (`vote`; abstaining is a vote for nobody), or
  a malformed one (`void`, P-VOTE-7: it can still be corrected);
- a 楼中楼 reply by the voter to their own vote floor is an edit, and only the judge says
  whether it is the one change or a correction (AMB-P-09): the bot proposes (a correction of a
  void floor, or a reply that says 更正; otherwise a change) and the line waits for `判`;
- a change is refused when the voter has changed already (P-VOTE-5) or it was posted in the
  last hour (P-VOTE-6); a correction is not a change and keeps the original time (P-VOTE-8,
  AMB-P-10);
- refused outright: posted before the day opened or after it closed, by an account bound to
  no seat, by a seat that is out, a vote in someone else's floor; a second floor by a voter
  waits for the judge (proposed refused: a change must be a 楼中楼 reply);
- lines already entered into the engine keep their verdict (they are counted once).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.forum.posts import PostVote
from engine.commands import Vote

DECISIONS = ("vote", "change", "correct", "void", "ignore")


@dataclass(frozen=True)
class Line:
    pid: int
    floor: int
    sub: int
    parent_pid: int | None
    seat: int | None
    posted_at: datetime
    vote: PostVote
    decision: str | None = None
    applied: bool = False
    verdict: str = ""  # the stored verdict: kept once applied


@dataclass(frozen=True)
class Day:
    open_at: datetime
    close_at: datetime
    freeze_at: datetime  # a change after this is in the last hour
    alive: frozenset[int]


@dataclass(frozen=True)
class Verdict:
    """`verdict`: vote | void | change | correct | refused | talk; `reason`: why refused, or
    what the bot proposes; `needs_judge`: waits for `判`; `command`: what enters the engine
    once nobody needs to decide."""

    verdict: str
    reason: str | None = None
    needs_judge: bool = False
    command: Vote | None = None


def judge_day(lines: list[Line], day: Day) -> dict[int, Verdict]:
    """pid -> verdict, for one day's lines."""
    out: dict[int, Verdict] = {}
    first: dict[int, Line] = {}  # seat -> its vote floor
    changed: set[int] = set()  # seats whose one change is used (or proposed)
    first_void: set[int] = set()
    for line in sorted(lines, key=lambda x: (x.posted_at, x.floor, x.sub)):
        v = _judge(line, day, first, changed, first_void)
        out[line.pid] = v
        if line.seat is not None:
            if v.verdict in ("vote", "void") and line.sub == 0 and line.seat not in first:
                first[line.seat] = line
                if v.verdict == "void":
                    first_void.add(line.seat)
            if v.verdict == "change":
                changed.add(line.seat)
            if v.verdict == "correct":
                first_void.discard(line.seat)
    return out


def _kept(line: Line) -> Verdict:
    return Verdict(line.verdict or "vote")


def _judge(line: Line, day: Day, first: dict[int, Line], changed: set[int],
           first_void: set[int]) -> Verdict:
    if line.applied:
        return _kept(line)
    pv = line.vote
    if line.decision == "ignore":
        return Verdict("talk", "judge")
    if pv.kind == "talk" and line.decision is None:
        return Verdict("talk")
    seat = line.seat
    if seat is None:
        return Verdict("refused", "not_player")
    if line.posted_at > day.close_at:
        return Verdict("refused", "after_close")
    if line.posted_at < day.open_at:
        return Verdict("refused", "before_open")
    if seat not in day.alive:
        return Verdict("refused", "out")
    if line.sub == 0:
        if seat not in first:
            return _first_floor(line, seat)
        return _edit(line, seat, day, changed, first_void, second_floor=True)
    own = first.get(seat)
    if own is None or own.pid != line.parent_pid:
        return Verdict("refused", "not_own_floor")
    return _edit(line, seat, day, changed, first_void, second_floor=False)


def _first_floor(line: Line, seat: int) -> Verdict:
    pv = line.vote
    decision = line.decision
    if decision == "void":
        return Verdict("void", "judge", command=Vote(seat=seat, mode="void"))
    if pv.is_vote:
        return Verdict("vote", command=Vote(seat=seat, mode="vote", target=pv.target))
    return Verdict("void", "malformed", command=Vote(seat=seat, mode="void"))


def _edit(line: Line, seat: int, day: Day, changed: set[int], first_void: set[int], *,
          second_floor: bool) -> Verdict:
    """A voter's later post: the judge's decision, or the bot's proposal waiting for one."""
    pv = line.vote
    decision = line.decision
    if decision is None:
        if second_floor:
            return Verdict("refused", "second_floor", needs_judge=True)
        if not pv.is_vote:
            return Verdict("refused", "malformed", needs_judge=True)
        proposal = "correct" if seat in first_void or pv.kind == "correct" else "change"
        got = _as(proposal, line, seat, day, changed)
        return Verdict(got.verdict, got.reason or f"proposed_{proposal}", needs_judge=True)
    if decision in ("void", "vote"):
        return Verdict("refused", "judge")
    if not pv.is_vote:
        return Verdict("refused", "no_target")
    return _as(decision, line, seat, day, changed)


def _as(what: str, line: Line, seat: int, day: Day, changed: set[int]) -> Verdict:
    target = line.vote.target
    if what == "correct":
        return Verdict("correct", command=Vote(seat=seat, mode="correct", target=target))
    if seat in changed:
        return Verdict("refused", "second_change")
    if line.posted_at > day.freeze_at:
        return Verdict("refused", "last_hour")
    return Verdict("change", command=Vote(seat=seat, mode="change", target=target))
