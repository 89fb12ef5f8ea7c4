"""白痴 (S-IDIOT-1..4): exiled by the vote, he is revealed and stays, without a vote; once. At
night and otherwise he goes out as anyone. A revealed idiot who holds the badge passes it on."""

from __future__ import annotations

from engine.context import Ctx
from rulesets.common.roles import Role
from rulesets.standard.base import REVEALED

SKILL = "reveal"


def spares_exile(ctx: Ctx, seat: int) -> bool:
    """The exile of `seat` is averted by the idiot's reveal (the glue's hook)."""
    st = ctx.peek(seat)
    if st.role != "idiot" or not st.holds(SKILL):
        return False
    st = ctx.state.seat(seat)
    st.skills[SKILL] = "used"
    st.set_status(REVEALED, True)
    ctx.announce("IdiotRevealed", day=ctx.state.day, seat=seat)
    if ctx.state.sheriff == seat:  # S-IDIOT-4
        ctx.owe_handover(seat, notice="IdiotHandoverDue")
    return True


def has_vote(ctx: Ctx, seat: int) -> bool:
    return not ctx.peek(seat).status(REVEALED)


ROLE = Role(name="idiot")
