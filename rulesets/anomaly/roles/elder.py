"""长老 (A-ELDER): Key盾, when he goes out by vote or 格式化 (the same atomic change)."""

from __future__ import annotations

from engine.context import Ctx
from engine.model import Seat
from rulesets.anomaly.base import PASSIVE_SKILLS, is_derivative
from rulesets.anomaly.options import opts
from rulesets.common import shot
from rulesets.common.roles import Role


def _on_out(ctx: Ctx, st: Seat) -> None:
    if (st.role == "elder" and st.holds("keyshield") and not is_derivative(st)
            and st.out_cause in ("vote", "format")):
        _key_shield(ctx, st)


def _key_shield(ctx: Ctx, elder: Seat) -> None:
    """A-ELDER-1: the witch, seer, hunter and guard lose their skills."""
    elder.skills["keyshield"] = "used"
    scope = opts(ctx).anomaly_key_shield_scope
    hit = []
    for st in ctx.state.seats:
        if st.role in ("witch", "seer", "hunter", "guard") and not is_derivative(st):
            for skill, status in st.skills.items():
                if status == "held" and (scope == "all_skills" or skill not in PASSIVE_SKILLS):
                    st.skills[skill] = "lost"
            if opts(ctx).anomaly_key_shield_cancels_pending:
                shot.cancel(ctx, st)
            hit.append(st.seat)
    ctx.tell(hit, "KeyShield")
    ctx.note("KeyShieldFired", seats=hit)


ROLE = Role(name="elder", on_out=_on_out)
