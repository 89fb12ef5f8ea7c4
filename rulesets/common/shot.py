"""A shot owed on going out (猎人, P-DL-6): the duty and its deadline, firing or giving it up,
the deadline missed. Shared by anomaly's 粉碎机 and classic's hunter; each says which skill the
shot spends, what its deadlines are and what a shot does to its target."""

from __future__ import annotations

from collections.abc import Callable

from engine.commands import Act
from engine.context import Ctx
from engine.model import DeadlineKind, Seat, StatusKey
from engine.options import duration_minutes

KIND = "hunter"  # the deadline kind, and the duty named in reminders and missed duties
# Reminded, owed when out, extendable; it fires before a same-time sheriff handover
# (A-HUNTER-3: the hunter-sheriff shoots first, then hands over).
DEADLINE_KIND = DeadlineKind(3, reminded=True, outlives_out=True, extendable=True)
SHOT_DUE = StatusKey[bool]("shot_due")  # the out hunter owes his shot


def is_due(st: Seat) -> bool:
    return bool(st.status(SHOT_DUE))


def owe(ctx: Ctx, st: Seat, *, day_rule: str, night_rule: str) -> None:
    """The shot is owed: out by day, by `day_rule` ("close_plus_30": deadlines.after_exile
    after close, or a duration after close); out by night, by `night_rule` ("before_next_open",
    or a duration after now)."""
    state = ctx.state
    day = max(state.day, 1)
    st.set_status(SHOT_DUE, True)
    if state.phase.startswith("D"):
        offset = ctx.o.deadlines_after_exile if day_rule == "close_plus_30" else \
            duration_minutes(day_rule)
        ctx.add_deadline(KIND, day, "close", offset, [st.seat], key=str(st.seat))
    elif night_rule == "before_next_open":
        ctx.add_deadline(KIND, day + 1, "open", 0, [st.seat], key=str(st.seat))
    else:
        ctx.add_deadline(KIND, day + 1, "at", duration_minutes(night_rule), [st.seat],
                         key=str(st.seat), at=ctx.now)
    ctx.tell_duty(st.seat, "HunterDue")


def cancel(ctx: Ctx, st: Seat) -> bool:
    """The owed shot is gone (its skill lost before it was used); whether one was owed."""
    if not st.clear_status(SHOT_DUE):
        return False
    ctx.remove_deadline(f"{KIND}:{st.seat}")
    return True


def missed(ctx: Ctx, seats: list[int], *, skill: str, yellow: bool) -> None:
    """The deadline passed: the shot is given up, with a card if `yellow`."""
    for n in seats:
        st = ctx.state.seat(n)
        if st.clear_status(SHOT_DUE):
            st.skills[skill] = "lost"
            ctx.tell_duty(n, "ShotForfeited")
            ctx.missed(n, KIND, yellow)
            ctx.release_handover(n)


def fire(ctx: Ctx, st: Seat, cmd: Act, *, skill: str,
         hit: Callable[[Ctx, Seat, int], None]) -> None:
    """`shoot T` (or `pass`: given up) while the shot is owed; `hit` puts T out (or not). The
    badge held for the shooter passes after it (A-HUNTER-3)."""
    if not st.status(SHOT_DUE):
        ctx.reject("no_shot_due")
    st.clear_status(SHOT_DUE)
    ctx.remove_deadline(f"{KIND}:{st.seat}")
    st.skills[skill] = "used"
    if cmd.skill == "pass":
        ctx.tell_duty(st.seat, "ShotForfeited")
        ctx.release_handover(st.seat)
        return
    target = cmd.targets[0] if cmd.targets else None
    if target == st.seat:
        ctx.reject("no_self_target")
    target = ctx.living_target(target)
    ctx.note("ShotFired", seat=st.seat, target=target)  # causes stay unpublished (G-RES-5)
    hit(ctx, st, target)
    ctx.release_handover(st.seat)
