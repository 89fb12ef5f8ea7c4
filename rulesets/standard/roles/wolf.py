"""狼人 (S-WOLF-1..2): one kill a night (空刀 allowed), chosen in the killers' room; the kill is
resolved against the shield and the antidote (S-GUARD-3, 同守同救). No kill feedback. By day,
自爆 (S-DESTRUCT-1..4)."""

from __future__ import annotations

from typing import cast

from engine.commands import Act
from engine.context import Ctx
from engine.flow import void_votes
from engine.model import Seat, Slot
from rulesets.common.kill import KILL_SLOT, kill_group, killers, tell_killers
from rulesets.common.roles import Resolution, Role
from rulesets.common.skills import lock
from rulesets.common.witch import WitchNight
from rulesets.standard import election
from rulesets.standard.base import WOLVES
from rulesets.standard.options import opts


def _open(ctx: Ctx) -> None:
    seats = killers(ctx, whole_camp=False)
    ctx.night.data["kill_group"] = kill_group(ctx.state, seats, {WOLVES: WOLVES}, WOLVES)
    if seats:
        ctx.add_slot(KILL_SLOT, seats, *ctx.night_deadline(), yellow=True)
        tell_killers(ctx, "NightPrompt", skill="kill")


def _kill(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    target = ctx.living_target(target, allow_none=True)
    ctx.submit(slot, cmd, [target])
    tell_killers(ctx, "KillRecorded", by=st.seat, target=target)


def _lock(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    tell_killers(ctx, "KillLocked", by=st.seat, target=lock(ctx, slot))
    cast(WitchNight, ctx.rs).deliver_tongling(ctx)


def _passed(ctx: Ctx, st: Seat, cmd: Act) -> None:
    tell_killers(ctx, "KillRecorded", by=st.seat, target=None)


def _expired(ctx: Ctx, slot: Slot) -> None:
    slot.final = True
    if slot.sub is None:
        tell_killers(ctx, "KillForfeited")
        for n in slot.seats:
            if ctx.state.seat(n).alive:
                ctx.missed(n, "kill", True)
    cast(WitchNight, ctx.rs).deliver_tongling(ctx)


def _destruct(ctx: Ctx, st: Seat, cmd: Act) -> None:
    """自爆 (S-DESTRUCT-1..4, S-SHERIFF-9): out at once, the day's vote void (and the night
    at once under standard.self_destruct=night_now); during the election, the badge lost.
    (The book refuses a seat that is out before it comes here.)"""
    if st.role != "wolf":
        ctx.reject("not_your_skill", skill="destruct")
    if not ctx.state.phase.startswith("D"):
        ctx.reject("destruct_by_day")
    swallowed = election.swallow(ctx)
    ctx.announce("SelfDestruct", seat=st.seat, swallowed=swallowed)
    ctx.put_out(st.seat, "destruct")  # the CHECK: the last wolf's ends the game
    void_votes(ctx, close_now=opts(ctx).standard_self_destruct == "night_now")


def _resolve_kill(ctx: Ctx, res: Resolution) -> None:
    """The kill against the shield and the antidote marked by earlier steps (S-NIGHT-1); a
    target left to the poison (S-HUNTER-4) is the poison's."""
    target = res.target(KILL_SLOT)
    if target is None or target == res.marks.get("to_the_poison"):
        return
    shielded, saved = target == res.marks.get("shield"), target == res.marks.get("save")
    if shielded and saved:
        dies = opts(ctx).standard_guard_save_collision == "dies"  # S-GUARD-3
    else:
        dies = not shielded and not saved
    if dies and ctx.state.seat(target).alive:
        ctx.put_out(target, "kill")
    ctx.check("step")


ROLE = Role(
    name="wolf",
    night_skills={"kill": _kill, "lock": _lock},
    slot=KILL_SLOT,
    open_night=_open,
    expired=_expired,
    passed=_passed,
    skills={"destruct": _destruct},
    steps={"kill": _resolve_kill},
    out_causes=("kill", "destruct"),
)
