"""Night mechanisms several roles share: a slot opened with its prompt, a seer-like check (one
final answer), locking a slot's current choice."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Anchor, Seat, Slot


def open_slot(ctx: Ctx, key: str, actor: Seat | None, deadline: tuple[Anchor, int],
              yellow: bool) -> None:
    """Tonight's slot `key` for `actor` (if any), with its NightPrompt."""
    if actor is not None:
        ctx.add_slot(key, [actor.seat], *deadline, yellow=yellow)
        ctx.tell(actor.seat, "NightPrompt", skill=key)


def check_once(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None, *,
               self_check: bool) -> int:
    """A seer-like check: one living target, final at once (no change after the result)."""
    if slot.sub is not None:
        ctx.reject("action_final")
    target = ctx.living_target(target)
    if target == st.seat and not self_check:
        ctx.reject("no_self_check")
    ctx.submit(slot, cmd, [target])
    slot.final = True
    return target


def lock(ctx: Ctx, slot: Slot) -> int | None:
    """G-RES-6: make the slot's current choice final; returns its target."""
    if slot.sub is None:
        ctx.reject("nothing_to_lock")
    if slot.final:
        ctx.reject("action_final")
    slot.final = True
    return slot.sub.targets[0] if slot.sub.targets else None
