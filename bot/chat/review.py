"""The judge's preview of a night's resolution under review (`预览`, and the DM that opens the
review: docs/rules-judge.md P-REVIEW): what `天亮` would publish, worked out by the engine on
the current state and thrown away, then the dawn post if the day's open comes next. Nothing of
it is sent to anyone but the judge."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from bot.render import render_for_judge
from bot.texts import t
from engine import handle
from engine.commands import JudgeDawn, Tick
from engine.events import Event, Rejection
from engine.flow import reviewing
from engine.model import GameState


def preview(state: GameState, code: str, now: datetime) -> str:
    """The resolution `天亮` would publish now, as the judge reads it."""
    night = state.night
    if not reviewing(state) or night is None:
        return t("review.none")
    got = handle(state, JudgeDawn(), now)
    if isinstance(got, Rejection):
        return t("review.none")
    after, events = got
    lines = _lines(events[1:], state.ruleset)  # (the first: the publication note itself)
    # the dawn post at the open, as it stands now (what a player does before it may add to it)
    dl = next((d for d in after.deadlines if d.kind == "day_open"), None)
    opened = None if dl is None else handle(after, Tick(deadline_id=dl.id), max(now, dl.due))
    if opened is not None and not isinstance(opened, Rejection):
        lines += _lines([e for e in opened[1] if e.type == "DayOpened"], state.ruleset)
    until = state.schedule.open_at(night.day + 1).strftime("%m-%d %H:%M")
    return "\n".join([t("review.title", code=code, day=night.day),
                      *(lines or [t("review.nothing")]), t("review.footer", until=until)])


def _lines(events: Sequence[Event], ruleset: str) -> list[str]:
    out = []
    for ev in events:
        text = render_for_judge(ev, ruleset)
        if text:
            out.append(t("review.public", text=text) if ev.audience.public else text)
    return out
