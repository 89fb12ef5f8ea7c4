"""守卫 (C-GUARD): a shield a night, never twice on one character; its deadline and card are
options (P-DL-6)."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Seat, Slot
from rulesets.classic.base import ack, living_holder
from rulesets.classic.options import opts
from rulesets.common.roles import Resolution, Role
from rulesets.common.skills import open_slot


def _setup(ctx: Ctx) -> None:
    ctx.state.data["guarded"] = []  # everyone shielded so far (C-GUARD-2)


def _open(ctx: Ctx) -> None:
    o = opts(ctx)
    open_slot(ctx, "guard", living_holder(ctx.state, "guard", "guard"),
              ("close", o.classic_guard_deadline), o.classic_guard_yellow)


def _guard(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    target = ctx.living_target(target, allow_none=True)
    if target is not None and target in ctx.state.data["guarded"]:
        ctx.reject("already_guarded", target=target)  # C-GUARD-2
    ctx.submit(slot, cmd, [target] if target is not None else [])
    ack(ctx, st, cmd.skill, target)


def _shield(ctx: Ctx, res: Resolution) -> None:
    target = res.target("guard", "guard")
    if target is not None:
        ctx.state.data["guarded"].append(target)
    res.marks["shield"] = target


ROLE = Role(name="guard", night_skills={"guard": _guard}, slot="guard", setup=_setup,
            open_night=_open, steps={"shield": _shield})
