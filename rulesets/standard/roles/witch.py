"""女巫 (S-WITCH-1..4): an antidote and a poison, one potion a night; 通灵 tells her the kill
only while she holds the antidote, which saves that target only; self-save by option."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Seat, Slot
from rulesets.common.kill import reported_target
from rulesets.common.roles import Resolution, Role
from rulesets.common.witch import WITCH_SLOT
from rulesets.common.witch import deadline as witch_deadline
from rulesets.standard.base import ack
from rulesets.standard.options import opts


def _open(ctx: Ctx) -> None:
    witch = next((s for s in ctx.holders("witch")
                  if s.holds("antidote") or s.holds("poison")), None)
    ctx.night.data["tongling"] = witch.seat if witch and witch.holds("tongling") else None
    if witch is not None:  # (the prompt without the antidote speaks of the poison only)
        ctx.add_slot(WITCH_SLOT, [witch.seat], *witch_deadline(ctx), yellow=True)
        ctx.tell(witch.seat, "NightPrompt",
                 skill=WITCH_SLOT if witch.holds("antidote") else "witch_poison")


def _save(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    if not st.holds("antidote"):
        ctx.reject("skill_used", skill="antidote")
    if slot.sub is not None and slot.sub.skill == "poison":
        ctx.reject("one_potion_only")
    target = ctx.living_target(target)
    reported = reported_target(ctx)
    if not slot.prompted or reported is None or target != reported:  # S-WITCH-2
        ctx.reject("antidote_kill_target_only")
    rule = opts(ctx).standard_witch_self_save
    if target == st.seat and (rule == "never" or (rule == "first_night"
                                                  and ctx.night.day != 1)):
        ctx.reject("no_self_save")  # S-WITCH-3
    ctx.submit(slot, cmd, [target])
    ack(ctx, st, "save", target)


def _poison(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    if not st.holds("poison"):
        ctx.reject("skill_used", skill="poison")
    if slot.sub is not None and slot.sub.skill == "save":
        ctx.reject("one_potion_only")
    target = ctx.living_target(target)
    if target == st.seat:
        ctx.reject("no_self_poison")  # S-WITCH-4
    ctx.submit(slot, cmd, [target])
    ack(ctx, st, "poison", target)


def _spend(ctx: Ctx, res: Resolution) -> None:
    """The potions chosen tonight are spent; the antidote takes 通灵 with it (S-WITCH-2)."""
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
    """After the kill (S-NIGHT-1); the shield does not stop it (S-GUARD-2). No feedback."""
    target = res.target(WITCH_SLOT, "poison")
    if target is not None and res.seat_of(WITCH_SLOT) is not None and ctx.state.seat(
            target).alive:
        ctx.put_out(target, "poison")
    ctx.check("step")


ROLE = Role(name="witch", night_skills={"save": _save, "poison": _poison}, slot=WITCH_SLOT,
            open_night=_open, steps={"spend": _spend, "poison": _resolve_poison},
            out_causes=("poison",))
