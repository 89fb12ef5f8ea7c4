"""守卫 (S-GUARD-1..3, 预女猎守): a shield a night, himself included, never the same character
two nights running; no card for a missed night (P-DL-6)."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Seat, Slot
from rulesets.common.roles import Resolution, Role
from rulesets.common.skills import open_slot
from rulesets.standard.base import ack, living_holder

LAST = "last_shield"  # state.data: [night, target or None] of the latest resolved night


def _open(ctx: Ctx) -> None:
    open_slot(ctx, "guard", living_holder(ctx.state, "guard", "guard"), ctx.night_deadline(),
              False)


def _guard(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    target = ctx.living_target(target, allow_none=True)
    last = ctx.view("data").get(LAST)
    if target is not None and last == [ctx.night.day - 1, target]:
        ctx.reject("same_guard_twice", target=target)  # S-GUARD-1
    ctx.submit(slot, cmd, [target] if target is not None else [])
    ack(ctx, st, "guard", target)


def _shield(ctx: Ctx, res: Resolution) -> None:
    target = res.target("guard", "guard")
    if res.seat_of("guard") is not None:  # (a night without a guard leaves nothing to chain)
        ctx.state.data[LAST] = [ctx.night.day, target]
    res.marks["shield"] = target


ROLE = Role(name="guard", night_skills={"guard": _guard}, slot="guard", open_night=_open,
            steps={"shield": _shield})
