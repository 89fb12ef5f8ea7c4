"""handle(state, command, now) -> (state, events) | Rejection. Pure: no clock, no I/O.

The state given is never changed: the engine works on a copy (`engine.clone.working_copy`, a deep
copy that shares only what never changes in place, and copies each seat the first time the command
reads it) and throws it away when a command is refused, so
a refused command changes nothing and an accepted one is all-or-nothing. Each command kind goes
to the module of its job: engine.flow (deadlines firing), engine.voting, engine.duties (player
commands and the judge's cards), engine.clock (the judge's times, pause, resume, end).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from engine.clock import end, extend, pause, resume, set_schedule, set_time
from engine.clone import settle
from engine.clone import working_copy as _working_copy
from engine.commands import (
    Act,
    Command,
    Handover,
    JudgeCard,
    JudgeCorrection,
    JudgeDawn,
    JudgeEnd,
    JudgeExtend,
    JudgePause,
    JudgeProxy,
    JudgeResume,
    JudgeSetSchedule,
    JudgeSetTime,
    JudgeWaiver,
    LastWords,
    Surrender,
    Tick,
    Vote,
    parse_command,
)
from engine.context import Ctx, GameOver, Reject
from engine.duties import act, card, handover, lastwords, surrender, waiver
from engine.events import Event, Rejection
from engine.flow import fire, maybe_resolve, publish_dawn
from engine.model import GameState
from engine.ruleset import get_ruleset
from engine.voting import judge_correction, proxy, vote


def working_copy(state: GameState) -> GameState:
    """The copy a command works on (bench/engine.py swaps it to compare mechanisms)."""
    return _working_copy(state)


def handle(state: GameState, command: Command | dict, now: datetime
           ) -> tuple[GameState, list[Event]] | Rejection:
    if isinstance(command, dict):
        command = parse_command(command)
    rs = get_ruleset(state.ruleset)
    if isinstance(command, Tick):
        dl = state.deadline(command.deadline_id)
        if dl is None or dl.due > now or state.over or state.paused_at is not None:
            return state, []  # stale tick, or the clock is stopped (JudgePause)
    elif state.over:
        return Rejection(code="game_over")
    work = working_copy(state)
    ctx = Ctx(work, now, rs)
    try:
        _dispatch(ctx, command)
        maybe_resolve(ctx)
    except Reject as r:
        return Rejection(code=r.code, data=r.data)
    except GameOver:
        pass
    settle(work)
    # What pydantic's __setattr__ does for a plain field, without its handler lookup.
    work.__dict__["version"] += 1
    work.__pydantic_fields_set__.add("version")
    return work, ctx.events


def _dispatch(ctx: Ctx, cmd: Command) -> None:
    # One dict lookup by the command's class instead of a chain of isinstance checks (the
    # command classes are final: nothing subclasses them).
    fn = _HANDLERS.get(type(cmd))
    if fn is None:  # a subclass of a command class: the first class it is an instance of
        fn = next((f for cls, f in _HANDLERS.items() if isinstance(cmd, cls)), None)
        if fn is None:
            return
    fn(ctx, cmd)


def _vote(ctx: Ctx, cmd: Vote) -> None:
    vote(ctx, cmd.seat, cmd.mode, cmd.target, by_judge=False)


_HANDLERS: dict[type, Callable[[Ctx, Any], None]] = {
    Tick: lambda ctx, cmd: fire(ctx, cmd.deadline_id, cmd.fired_at),
    Act: act,
    Vote: _vote,
    JudgeProxy: proxy,
    JudgeCorrection: judge_correction,
    Handover: handover,
    LastWords: lastwords,
    Surrender: surrender,
    JudgeCard: card,
    JudgeWaiver: waiver,
    JudgeSetTime: set_time,
    JudgeExtend: extend,
    JudgeSetSchedule: set_schedule,
    JudgePause: lambda ctx, cmd: pause(ctx),
    JudgeResume: lambda ctx, cmd: resume(ctx),
    JudgeDawn: lambda ctx, cmd: publish_dawn(ctx, by_judge=True),
    JudgeEnd: end,
}
