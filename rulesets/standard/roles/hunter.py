"""猎人 (S-HUNTER-1..3): going out other than by poison (unless standard.hunter_poisoned_shoots)
or a red card, he may shoot one other living character, announced to everyone; deadlines as
P-DL-6, no card; a hunter-sheriff shoots before the badge passes. Over rulesets/common/shot.py.
The shot is owed only after the CHECK of his going out and fired only by a command, so a win
reached in the night comes first (S-WIN-3)."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Deadline, Seat
from rulesets.common import shot
from rulesets.common.roles import DirectSkill, Role
from rulesets.standard.base import SHOT_IN
from rulesets.standard.options import opts

GUN = "gun"


def _after_out(ctx: Ctx, st: Seat) -> None:
    if st.role != "hunter" or not st.holds(GUN) or st.out_cause == "red-card":
        return
    if st.out_cause == "poison" and not opts(ctx).standard_hunter_poisoned_shoots:
        return
    shot.owe(ctx, st, day_rule="close_plus_30", night_rule="before_next_open")


def _claims(ctx: Ctx, st: Seat, cmd: Act) -> DirectSkill | None:
    """`shoot T`, or `pass` while the shot is owed: his, though he is out."""
    if st.role == "hunter" and (cmd.skill == "shoot" or (cmd.skill == "pass"
                                                         and shot.is_due(st))):
        return _shoot
    return None


def _shoot(ctx: Ctx, st: Seat, cmd: Act) -> None:
    shot.fire(ctx, st, cmd, skill=GUN, hit=_hit)


def _hit(ctx: Ctx, hunter: Seat, target: int) -> None:
    ctx.announce("HunterShot", seat=hunter.seat, target=target)  # S-HUNTER-1: public
    ctx.state.seat(target).set_status(SHOT_IN, hunter.out_phase or ctx.state.phase)
    ctx.put_out(target, "shot")


def _missed(ctx: Ctx, deadline: Deadline) -> None:
    shot.missed(ctx, deadline.seats, skill=GUN, yellow=False)  # S-HUNTER-2


def _may_handover(ctx: Ctx, st: Seat) -> bool:
    return not shot.is_due(st)  # S-HUNTER-3


ROLE = Role(
    name="hunter",
    claims=_claims,
    claimed=("shoot",),
    after_out=_after_out,
    may_handover=_may_handover,
    deadline_kinds={shot.KIND: shot.DEADLINE_KIND},
    deadline=_missed,
    out_causes=("shot",),
)
