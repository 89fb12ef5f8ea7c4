"""女巫 (C-WITCH): an antidote and a poison, one a night; 通灵 tells her the kill (G-RES-6)."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Seat, Slot
from rulesets.classic.base import ack
from rulesets.classic.options import opts
from rulesets.common.kill import reported_target
from rulesets.common.roles import Resolution, Role
from rulesets.common.skills import open_slot
from rulesets.common.witch import WITCH_SLOT
from rulesets.common.witch import deadline as witch_deadline


def _open(ctx: Ctx) -> None:
    witch = next((s for s in ctx.holders("witch")
                  if s.holds("antidote") or s.holds("poison")), None)
    ctx.night.data["tongling"] = witch.seat if witch and witch.holds("tongling") else None
    open_slot(ctx, WITCH_SLOT, witch, witch_deadline(ctx), True)


def _save(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    if not st.holds("antidote"):
        ctx.reject("skill_used", skill="antidote")
    if slot.sub is not None and slot.sub.skill == "poison":
        ctx.reject("one_potion_only")
    target = ctx.living_target(target)
    self_save = opts(ctx).classic_witch_self_save
    if target == st.seat and (self_save is False or (
            self_save == "first_night_only" and ctx.night.day != 1)):
        ctx.reject("no_self_save")
    if opts(ctx).classic_antidote_any_target == "kill_target_only" and (
            not slot.prompted or target != reported_target(ctx)):
        ctx.reject("antidote_kill_target_only")
    ctx.submit(slot, cmd, [target])
    ack(ctx, st, cmd.skill, target)


def _poison(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    if not st.holds("poison"):
        ctx.reject("skill_used", skill="poison")
    if slot.sub is not None and slot.sub.skill == "save":
        ctx.reject("one_potion_only")
    target = ctx.living_target(target)
    if target == st.seat and not opts(ctx).classic_witch_self_poison:
        ctx.reject("no_self_poison")
    ctx.submit(slot, cmd, [target])
    ack(ctx, st, cmd.skill, target)


def _spend(ctx: Ctx, res: Resolution) -> None:
    """The potions chosen tonight are spent (the antidote takes 通灵 with it); the antidote's
    target is marked for the kill step."""
    witch = res.seat_of(WITCH_SLOT)
    save, poison = res.target(WITCH_SLOT, "save"), res.target(WITCH_SLOT, "poison")
    if witch is not None and save is not None:
        ws = ctx.state.seat(witch)
        ws.skills["antidote"] = "used"
        if ws.holds("tongling"):
            ws.skills["tongling"] = "lost"
    if witch is not None and poison is not None:
        ctx.state.seat(witch).skills["poison"] = "used"
    res.marks["save"] = save


def _resolve_poison(ctx: Ctx, res: Resolution) -> None:
    """C-NIGHT-5."""
    witch, target = res.seat_of(WITCH_SLOT), res.target(WITCH_SLOT, "poison")
    if target is None or witch is None:
        return
    went_out = False
    if ctx.state.seat(target).alive:
        ctx.put_out(target, "poison")
        went_out = True
    ctx.check("step")
    # C-WITCH-5: the feedback and the kill-post duty stand even for a dead witch.
    ctx.tell_duty(witch, "PoisonFeedback", target=target, out=went_out)
    if went_out or opts(ctx).classic_kill_post_on_no:
        ctx.tell_duty(witch, "KillPostDue")


ROLE = Role(name="witch", night_skills={"save": _save, "poison": _poison}, slot=WITCH_SLOT,
            open_night=_open, steps={"spend": _spend, "poison": _resolve_poison},
            out_causes=("poison",))
