"""The judge's clock: moving a day's open or close (P-TIME-2), new daily times, one player's
extension, pausing and resuming the game's clock, ending the game early."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from engine.commands import JudgeEnd, JudgeExtend, JudgeSetSchedule, JudgeSetTime
from engine.context import OPEN_NOTICE, TIME_HORIZON, Ctx
from engine.flow import owing_seats
from engine.model import Deadline, GameState, Schedule


def _future_time(ctx: Ctx, at: datetime) -> None:
    """A judge's new time: after now, and within TIME_HORIZON of it."""
    if at <= ctx.now:
        ctx.reject("time_in_past")
    if at > ctx.now + TIME_HORIZON:
        ctx.reject("time_too_far", days=TIME_HORIZON.days)


def extend(ctx: Ctx, cmd: JudgeExtend) -> None:
    """The judge gives one player more time on every deadline that player owes."""
    ctx.seat(cmd.seat)
    _not_paused(ctx)
    _future_time(ctx, cmd.at)
    hits = [d for d in ctx.state.deadlines
            if cmd.seat in d.seats and d.kind in ctx.kinds and ctx.kinds[d.kind].extendable]
    if not hits:
        ctx.reject("nothing_to_extend", seat=cmd.seat)
    for dl in hits:
        if cmd.at <= dl.due:
            ctx.reject("not_later", seat=cmd.seat)
    ids = {d.id for d in hits}
    ctx.state.deadlines = [replace(d, anchor="at", offset_min=0, due=cmd.at)
                           if d.id in ids else d for d in ctx.state.deadlines]
    ctx.retime_deadlines()
    at = cmd.at.strftime("%m-%d %H:%M")
    told = ctx.tell_duty if any(ctx.outlives_out(d.kind) for d in hits) else ctx.tell
    told(cmd.seat, "DeadlineExtended", seat=cmd.seat, due=at)
    ctx.note("DeadlineExtendedJudge", seat=cmd.seat, due=at, deadlines=sorted(ids))


def set_time(ctx: Ctx, cmd: JudgeSetTime) -> None:
    state = ctx.state
    _not_paused(ctx)
    _future_time(ctx, cmd.at)
    if cmd.which == "close":
        if not state.phase.startswith("D"):
            ctx.reject("no_open_day")
        if cmd.at <= state.schedule.open_at(state.day):
            ctx.reject("close_before_open")
        state.schedule.closes[state.day] = cmd.at
        day = state.day
    else:
        day = state.day + 1
        if state.phase.startswith("D") and cmd.at <= state.schedule.close_at(state.day):
            ctx.reject("open_before_close")
        if day >= 2 and state.phase.startswith("N") and cmd.at <= state.schedule.close_at(
                state.day):
            ctx.reject("open_before_close")
        state.schedule.opens[day] = cmd.at
        ctx.remove_deadline(f"{OPEN_NOTICE}:{day}")  # (the judge's own move is told below)
    _check_schedule(ctx)
    ctx.retime_deadlines()
    ctx.announce("TimeChanged", which=cmd.which, day=day, at=cmd.at.isoformat(sep=" "))


def _check_schedule(ctx: Ctx) -> None:
    """Every coming day must open before it closes and close before the next day opens."""
    sch = ctx.state.schedule
    first = max(ctx.state.day, 1)
    for day in range(first, first + 3):
        if not sch.open_at(day) < sch.close_at(day) < sch.open_at(day + 1):
            ctx.reject("bad_schedule", day=day)


def set_schedule(ctx: Ctx, cmd: JudgeSetSchedule) -> None:
    """New daily times for every day that has not opened yet; days already running keep theirs,
    and so do the judge's one-off moves (P-TIME-2)."""
    state = ctx.state
    sch = state.schedule
    _not_paused(ctx)
    if sch.cyclic:
        ctx.reject("fast_game_schedule")
    if cmd.open >= cmd.close:
        ctx.reject("close_before_open")
    first_new = state.day + 1
    for day in range(1, first_new):  # freeze the days that have opened
        sch.opens.setdefault(day, sch.open_at(day))
        sch.closes.setdefault(day, sch.close_at(day))
    sch.open, sch.close = cmd.open, cmd.close
    if sch.open_at(first_new) <= ctx.now:
        ctx.reject("time_in_past")
    _check_schedule(ctx)
    ctx.retime_deadlines()
    ctx.announce("ScheduleChanged", open=cmd.open.strftime("%H:%M"),
                 close=cmd.close.strftime("%H:%M"), day=first_new)


def _not_paused(ctx: Ctx) -> None:
    """The judge's time changes wait for the clock to run again: a time set while paused would
    otherwise move on by the pause when it resumes."""
    if ctx.state.paused_at is not None:
        ctx.reject("paused")


def pause(ctx: Ctx) -> None:
    """Stop the clock: no deadline fires (ticks change nothing, `next_deadline` is None) until
    the judge resumes. Everything else goes on as usual: night actions, votes, last words …"""
    state = ctx.state
    if state.paused_at is not None:
        ctx.reject("already_paused")
    state.paused_at = ctx.now
    ctx.announce("GamePaused")


def resume(ctx: Ctx) -> None:
    """Start the clock again: every pending deadline, and the schedule from the next open or
    close on, moves on by the time the game was paused (in whole minutes, rounded up)."""
    state = ctx.state
    if state.paused_at is None:
        ctx.reject("not_paused")
    assert state.paused_at is not None
    minutes = max(0, -(-(ctx.now - state.paused_at) // timedelta(minutes=1)))
    state.paused_at = None
    delta = timedelta(minutes=minutes)
    targets = {d.id: d.due + delta for d in state.deadlines}
    first = _shift_schedule(ctx, delta) if delta else _next_boundary(state)
    shifted: list[Deadline] = []
    for dl in state.deadlines:
        target = targets[dl.id]
        if dl.anchor == "at":
            shifted.append(replace(dl, due=target))
            continue
        # Keep the anchor, so that a later change of that day's times still moves it; what the
        # schedule did not move by itself goes into the offset.
        gap = target - ctx.due(dl.anchor, dl.day, dl.offset_min)
        extra, rest = divmod(gap, timedelta(minutes=1))
        shifted.append(replace(dl, anchor="at", offset_min=0, due=target) if rest
                       else replace(dl, offset_min=dl.offset_min + extra, due=target))
    state.deadlines = shifted
    ctx.retime_deadlines()
    day, which = divmod(first, 2)
    at = _boundary(state.schedule, first)
    ctx.announce("GameResumed", minutes=minutes, day=day + 1,
                 which="open" if which == 0 else "close", at=at.strftime("%m-%d %H:%M"))
    for dl in state.deadlines:
        if dl.kind in ("remind", "day_open", "day_close"):
            continue
        owing = ([n for n in dl.seats if n in state.lastwords_due] if dl.kind == "lastwords"
                 else owing_seats(ctx, dl))
        if owing:
            ctx.tell_about(dl.kind, owing, "DeadlineShifted", duty=dl.kind,
                           due=dl.due.strftime("%m-%d %H:%M"))
    ctx.note("DeadlinesShifted", minutes=minutes,
             dues={d.id: d.due.strftime("%m-%d %H:%M") for d in state.deadlines})


def _boundary(sch: Schedule, i: int) -> datetime:
    day, which = divmod(i, 2)
    return sch.open_at(day + 1) if which == 0 else sch.close_at(day + 1)


def _set_boundary(sch: Schedule, i: int, at: datetime) -> None:
    day, which = divmod(i, 2)
    (sch.opens if which == 0 else sch.closes)[day + 1] = at


def _next_boundary(state: GameState) -> int:
    """The open or close the game waits for: day 1's open in setup, today's close by day, the
    next open by night."""
    if state.phase.startswith("D"):
        return 2 * (state.day - 1) + 1
    return 2 * state.day


def _shift_schedule(ctx: Ctx, delta: timedelta) -> int:
    """Move the next open or close, and the judge's moves after it, by `delta`; what has
    happened stays. A fast game moves its whole cycle (`first_open`). A daily game keeps its
    daily times for the days after that, unless the moved time passed them: then those days
    move by whole days, as few as keep every open before its close before the next open.
    Returns the boundary the game waits for."""
    sch = ctx.state.schedule
    first = _next_boundary(ctx.state)
    marked = [2 * (d - 1) for d in sch.opens] + [2 * (d - 1) + 1 for d in sch.closes]
    last = max([first, *marked])
    moved = {i: _boundary(sch, i) + delta for i in range(first, last + 1)}
    past = {i: _boundary(sch, i) for i in range(first)}
    if sch.first_open is not None:
        sch.first_open += delta
    else:
        days = 0
        while _daily(sch, last + 1, days) <= moved[last]:
            days += 1
        sch.start += timedelta(days=days)
    if sch.first_open is not None or any(_boundary(sch, i) != t for i, t in past.items()):
        for i, t in past.items():  # freeze what has happened
            _set_boundary(sch, i, t)
    for i, t in moved.items():
        _set_boundary(sch, i, t)
    _check_schedule(ctx)
    return first


def _daily(sch: Schedule, i: int, days: int) -> datetime:
    """Boundary `i` of a daily schedule from its daily times, `days` calendar days later."""
    day, which = divmod(i, 2)
    return datetime.combine(sch.start + timedelta(days=day + days),
                            sch.open if which == 0 else sch.close)


def end(ctx: Ctx, cmd: JudgeEnd) -> None:
    """The judge ends the game early: no winner, no more deadlines, every later command is
    refused (`game_over`); the roles and the seed are revealed as at a game's end."""
    state = ctx.state
    state.ended = True
    state.paused_at = None
    state.phase = "END"
    state.deadlines = []
    ctx.announce("GameEnded", reason=cmd.reason, roles={s.seat: s.role for s in state.seats},
                 seed=state.seed)
