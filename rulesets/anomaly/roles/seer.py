"""预言家 (A-SEER): one check a night; the result at once, or after the resolution
(anomaly.seer_snapshot=after_resolution: its step `result` of the night resolution)."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Seat, Slot
from rulesets.anomaly.base import NORMAL, seer_label
from rulesets.anomaly.options import opts
from rulesets.anomaly.resolution import AnomalyResolution
from rulesets.common.roles import Resolution, Role
from rulesets.common.skills import check_once, open_slot


def _open(ctx: Ctx) -> None:
    seer = ctx.holder("seer", camp=NORMAL)
    if seer is not None and seer.holds("see"):
        open_slot(ctx, "see", seer, ctx.night_deadline(), ctx.rs.procedures_apply(ctx))


def _act_see(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    target = check_once(ctx, st, slot, cmd, target, self_check=False)
    if opts(ctx).anomaly_seer_snapshot == "night_open":
        ctx.tell(st.seat, "SeerResult", target=target, label=seer_label(ctx, st, target))


def _result(ctx: Ctx, res: Resolution) -> None:
    """The deferred result (anomaly.seer_snapshot=after_resolution) of the check taken at the
    start of the resolution: a seer who went out during it still gets it, in the log only
    (G-RES-4)."""
    r = AnomalyResolution.of(res)
    see = r.see
    if see is not None and r.seer_used and opts(ctx).anomaly_seer_snapshot == "after_resolution":
        seer = ctx.state.seat(see.by)
        checked = see.targets[0]
        assert checked is not None  # a check names a living target (_act_see)
        ctx.tell(seer.seat, "SeerResult", target=checked, label=seer_label(ctx, seer, checked))


ROLE = Role(name="seer", night_skills={"see": _act_see}, slot="see", open_night=_open,
            steps={"result": _result})
