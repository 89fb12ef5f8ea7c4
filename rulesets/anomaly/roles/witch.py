"""女巫 (A-WITCH): 净化, at complete 格式化; 通灵 at the stages of
anomaly.witch_tongling_stages (G-RES-6)."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Seat, Slot
from rulesets.anomaly.base import NORMAL, can_format, can_purify, stage
from rulesets.anomaly.options import opts
from rulesets.common.roles import Role
from rulesets.common.skills import open_slot
from rulesets.common.witch import WITCH_SLOT
from rulesets.common.witch import deadline as witch_deadline


def _open(ctx: Ctx) -> None:
    witch = next((s for s in ctx.state.living() if s.role == "witch" and s.camp == NORMAL),
                 None)
    acts = witch is not None and (can_purify(ctx, witch) or can_format(witch))
    ctx.night.data["tongling"] = witch.seat if witch is not None and acts and witch.holds(
        "tongling") and stage(witch) in opts(ctx).anomaly_witch_tongling_stages else None
    if acts:
        open_slot(ctx, WITCH_SLOT, witch, witch_deadline(ctx), ctx.rs.procedures_apply(ctx))


def _act_purify(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    _act_witch(ctx, st, slot, cmd, target, other="format")


def _act_format(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    if ctx.night.data["stages"].get(str(st.seat)) != "complete":
        ctx.reject("skill_not_at_stage")
    _act_witch(ctx, st, slot, cmd, target, other="purify")


def _act_witch(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None, *,
               other: str) -> None:
    """净化 or 格式化: a held skill, never both on one night (A-WITCH-4/5)."""
    if not st.holds(cmd.skill):
        ctx.reject("skill_lost")
    if slot.sub is not None and slot.sub.skill == other:
        ctx.reject("purify_or_format")
    target = ctx.living_target(target)
    ctx.submit(slot, cmd, [target])
    ctx.tell(st.seat, "ActionRecorded", skill=cmd.skill, target=target)


ROLE = Role(name="witch", night_skills={"purify": _act_purify, "format": _act_format},
            slot=WITCH_SLOT, open_night=_open, out_causes=("format",))
