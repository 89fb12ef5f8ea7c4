"""猎人 (S-HUNTER-1..4): going out other than by poison (unless standard.hunter_poisoned_shoots)
or a red card, he may shoot one other living character, announced to everyone; deadlines as
P-DL-6, no card; a hunter-sheriff shoots before the badge passes; killed and poisoned the same
night, he goes out by the poison (unless standard.hunter_killed_and_poisoned=kill). Over
rulesets/common/shot.py. The shot is owed only after the CHECK of his going out and fired only
by a command, so a win reached in the night comes first (S-WIN-3)."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Deadline, Seat
from rulesets.common import shot
from rulesets.common.kill import KILL_SLOT
from rulesets.common.roles import DirectSkill, Resolution, Role
from rulesets.common.witch import WITCH_SLOT
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


def _killed_and_poisoned(ctx: Ctx, res: Resolution) -> None:
    """S-HUNTER-4: a hunter who is both tonight's kill target and the poison's is left to the
    poison (被刀又被毒: the poison decides), which puts him out in its step after the kill's,
    whatever the shield and the antidote did; `kill` keeps RULES.md's order (the kill first)."""
    target = res.target(KILL_SLOT)
    if (target is not None and target == res.target(WITCH_SLOT, "poison")
            and ctx.peek(target).role == "hunter"
            and opts(ctx).standard_hunter_killed_and_poisoned == "poison"):
        res.marks["to_the_poison"] = target


def _missed(ctx: Ctx, deadline: Deadline) -> None:
    shot.missed(ctx, deadline.seats, skill=GUN, yellow=False)  # S-HUNTER-2


def _may_handover(ctx: Ctx, st: Seat) -> bool:
    return not shot.is_due(st)  # S-HUNTER-3


ROLE = Role(
    name="hunter",
    claims=_claims,
    claimed=("shoot",),
    after_out=_after_out,
    steps={"killed_and_poisoned": _killed_and_poisoned},
    may_handover=_may_handover,
    deadline_kinds={shot.KIND: shot.DEADLINE_KIND},
    deadline=_missed,
    out_causes=("shot",),
)
