"""预言家 (S-SEER-1): one check a night, told at once: 好人 / 狼人 (standard.seer_words)."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Seat, Slot
from rulesets.common.roles import Role
from rulesets.common.skills import check_once, open_slot
from rulesets.standard.base import DATA, WOLVES, living_holder
from rulesets.standard.options import opts


def _open(ctx: Ctx) -> None:
    open_slot(ctx, "see", living_holder(ctx.state, "seer", "see"), ctx.night_deadline(), True)


def _see(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    target = check_once(ctx, st, slot, cmd, target, self_check=False)
    wolf, good = DATA["seer_words"][opts(ctx).standard_seer_words]
    label = wolf if ctx.state.seat(target).camp == WOLVES else good
    ctx.tell(st.seat, "SeerResult", target=target, label=label)


ROLE = Role(name="seer", night_skills={"see": _see}, slot="see", open_night=_open)
