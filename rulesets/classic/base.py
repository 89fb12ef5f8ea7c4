"""What classic's glue and its role modules share: the data, the camps, the groups."""

from __future__ import annotations

from engine.context import Ctx
from engine.model import GameState, Seat
from rulesets.data import load

DATA = load("classic", "data")

WOLVES, VILLAGE, BL = "wolves", "village", "black-lovers"


def refresh_field(state: GameState) -> None:
    for camp in DATA["camps"]:
        if camp not in state.camps_on_field and any(s.camp == camp for s in state.seats):
            state.camps_on_field.append(camp)


def form_groups(ctx: Ctx) -> None:
    for group in (WOLVES, "lovers"):
        members = ctx.state.groups.get(group)
        if members:
            ctx.tell_group(group, "GroupFormed", group=group, members=members)


def living_holder(state: GameState, role: str, skill: str) -> Seat | None:
    """The first living `role` who holds `skill` (to read: `state.seat(n)` to change it)."""
    return state.holder(role, skill=skill)


def ack(ctx: Ctx, st: Seat, skill: str, target: int | None, final: bool = False) -> None:
    ctx.tell(st.seat, "ActionRecorded", skill=skill, target=target, final=final)
