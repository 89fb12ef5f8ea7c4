"""猎人 (A-HUNTER): 粉碎机 when he goes out other than by red card (rulesets/common/shot.py)."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Deadline, Seat
from rulesets.anomaly.base import is_derivative
from rulesets.anomaly.options import opts
from rulesets.anomaly.statuses import WINDOW, WINDOW_PART
from rulesets.common import shot
from rulesets.common.roles import DirectSkill, Role


def _after_out(ctx: Ctx, st: Seat) -> None:
    if st.role == "hunter" and st.holds("shredder") and st.out_cause != "red-card":
        _hunter_due(ctx, st)


def _claims(ctx: Ctx, st: Seat, cmd: Act) -> DirectSkill | None:
    """`shoot` from anyone (refused unless a shot is owed), `pass` while one is owed."""
    if cmd.skill == "shoot" or (cmd.skill == "pass" and shot.is_due(st)):
        return _act_shoot
    return None


def _missed(ctx: Ctx, deadline: Deadline) -> None:
    shot.missed(ctx, deadline.seats, skill="shredder", yellow=opts(ctx).anomaly_hunter_yellow)


def _hunter_due(ctx: Ctx, st: Seat) -> None:
    shot.owe(ctx, st, day_rule=opts(ctx).anomaly_hunter_deadline_day,
             night_rule=opts(ctx).anomaly_hunter_deadline_night)


def _act_shoot(ctx: Ctx, st: Seat, cmd: Act) -> None:
    shot.fire(ctx, st, cmd, skill="shredder", hit=_shred)


def _shred(ctx: Ctx, hunter: Seat, target: int) -> None:
    victim = ctx.state.seat(target)
    if victim.role == "elder" and not is_derivative(victim):
        ctx.note("ShotNoEffect", target=target)  # A-ELDER-2
    else:
        ctx.put_out(target, "shredder")
        # The shot belongs to the hunter's own window (a day exile's shot counts for that day).
        window, part = hunter.status(WINDOW), hunter.status(WINDOW_PART)
        assert window is not None and part is not None  # on_out gave the out hunter both
        victim.set_status(WINDOW, window)
        victim.set_status(WINDOW_PART, part)


ROLE = Role(
    name="hunter",
    claims=_claims,
    claimed=("shoot",),
    after_out=_after_out,
    may_handover=lambda ctx, st: not shot.is_due(st),
    deadline_kinds={shot.KIND: shot.DEADLINE_KIND},
    deadline=_missed,
    out_causes=("shredder",),
)
