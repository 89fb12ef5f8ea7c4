"""守卫 (A-GUARD): 防火墙 a night (the verb 守 too); no card when missed (P-DL-6)."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Seat, Slot
from rulesets.anomaly.base import NORMAL
from rulesets.common.roles import Role
from rulesets.common.skills import open_slot


def _open(ctx: Ctx) -> None:
    guard = next((s for s in ctx.state.living() if s.role == "guard" and s.camp == NORMAL), None)
    if guard is not None and guard.holds("firewall"):
        open_slot(ctx, "guard", guard, ctx.night_deadline(), False)


def _act_firewall(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    target = ctx.living_target(target, allow_none=True)
    ctx.submit(slot, cmd, [target] if target is not None else [])
    ctx.tell(st.seat, "ActionRecorded", skill="firewall", target=target)


ROLE = Role(name="guard", night_skills={"firewall": _act_firewall}, slot="guard",
            open_night=_open, out_causes=("firewall",))
