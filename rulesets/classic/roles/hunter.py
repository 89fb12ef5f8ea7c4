"""猎人, classic's optional role (docs/rules-hunter.md C-HUNTER-1..7; the preset variant
classic.hunter=true deals him instead of one villager). Going out other than by poison or red
card, he may shoot one other living character (cause `shot`); his deadlines and card are the
anomaly hunter's (P-DL-6), and as a sheriff he shoots before the badge passes. The mechanism,
shared with anomaly's 粉碎机, is rulesets/common/shot.py."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Deadline, Seat
from rulesets.classic.options import opts
from rulesets.common import shot
from rulesets.common.roles import DirectSkill, Role

GUN = "gun"  # his skill (猎枪), spent by the shot or lost with a missed deadline
NO_SHOT = ("poison", "red-card")  # C-HUNTER-1


def _after_out(ctx: Ctx, st: Seat) -> None:
    """C-HUNTER-1/2: the shot is owed. This hook runs after the CHECK of his going out, so a
    game that ended there gives no shot (C-HUNTER-3, G-END-4)."""
    if st.role != "hunter" or not st.holds(GUN) or st.out_cause in NO_SHOT:
        return
    if st.out_cause == "lovers" and not opts(ctx).classic_hunter_shoots_on_lover_death:
        return
    # C-HUNTER-4: exiled, deadlines.after_exile after close; out at night, before next open.
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
    ctx.put_out(target, "shot")  # with its CHECK: a shot may end the game


def _missed(ctx: Ctx, deadline: Deadline) -> None:
    shot.missed(ctx, deadline.seats, skill=GUN, yellow=False)  # C-HUNTER-4: no card


def _may_handover(ctx: Ctx, st: Seat) -> bool:
    return not shot.is_due(st)  # C-HUNTER-5: the badge waits for the shot


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
