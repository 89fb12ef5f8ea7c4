"""守卫 (A-GUARD): 防火墙 a night (the verb 守 too); no card when missed (P-DL-6); its step of
the night resolution: the complete firewall and tonight's 空守 mark (R3)."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Seat, Slot
from rulesets.anomaly.base import NORMAL
from rulesets.anomaly.options import opts
from rulesets.anomaly.resolution import AnomalyResolution
from rulesets.anomaly.statuses import KONGSHOU
from rulesets.common.roles import Resolution, Role
from rulesets.common.skills import open_slot


def _open(ctx: Ctx) -> None:
    guard = ctx.holder("guard", camp=NORMAL)
    if guard is not None and guard.holds("firewall"):
        open_slot(ctx, "guard", guard, ctx.night_deadline(), False)


def _act_firewall(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    target = ctx.living_target(target, allow_none=True)
    ctx.submit(slot, cmd, [target] if target is not None else [])
    ctx.tell(st.seat, "ActionRecorded", skill="firewall", target=target)


def _firewall(ctx: Ctx, res: Resolution) -> None:
    """R3: a complete guard's firewall puts out a character 空守 on an earlier night; then
    tonight's 空守 mark, as anomaly.kongshou_def says (after 感染, which it may depend on)."""
    r = AnomalyResolution.of(res)
    firewall = r.firewall
    if firewall is None or r.guard is None:
        return
    ft = ctx.state.seat(firewall)
    marks = ft.status(KONGSHOU) or ()
    if (r.stages.get(r.guard) == "complete" and any(m < r.n for m in marks)
            and ft.alive and ft.role != "elder"):
        ctx.put_out(firewall, "firewall")
    rule = opts(ctx).anomaly_kongshou_def
    if (rule == "guarded_any" or (rule == "guarded_not_infected" and firewall != r.infect)
            or (rule == "firewall_had_no_effect" and not r.converted_blocked_by_firewall)):
        ft.set_status(KONGSHOU, (*marks, r.n))


ROLE = Role(name="guard", night_skills={"firewall": _act_firewall}, slot="guard",
            open_night=_open, steps={"firewall": _firewall}, out_causes=("firewall",))
