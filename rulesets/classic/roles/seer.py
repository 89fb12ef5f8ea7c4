"""预言家 (C-SEER): one check a night, its label told at once."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Seat, Slot
from rulesets.classic.base import DATA, VILLAGE, WOLVES, living_holder
from rulesets.classic.options import opts
from rulesets.common.roles import Role
from rulesets.common.skills import check_once, open_slot


def _open(ctx: Ctx) -> None:
    open_slot(ctx, "see", living_holder(ctx.state, "seer", "see"), ctx.night_deadline(), True)


def _see(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    target = check_once(ctx, st, slot, cmd, target,
                        self_check=opts(ctx).classic_seer_self_check)
    ctx.tell(st.seat, "SeerResult", target=target, label=_label(ctx, target))


def _label(ctx: Ctx, target: int) -> str:
    camp = ctx.state.seat(target).camp
    mode = opts(ctx).classic_seer_feedback
    holds, other = DATA["seer_labels"][mode]
    return holds if camp == (WOLVES if mode == "wolf_partition" else VILLAGE) else other


ROLE = Role(name="seer", night_skills={"see": _see}, slot="see", open_night=_open)
