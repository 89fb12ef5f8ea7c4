"""What the standard board's glue and its role modules share: the data, the camps, the gods,
the statuses it keeps on seats."""

from __future__ import annotations

from engine.context import Ctx
from engine.model import GameState, Seat, StatusKey
from rulesets.data import load

DATA = load("standard", "data")

WOLVES, VILLAGE = "wolves", "village"

# The idiot was revealed by an exile (S-IDIOT-1): he stays, without a vote.
REVEALED = StatusKey[bool]("idiot_revealed")
# A seat the hunter shot: the phase of the hunter's going out, which the shot belongs to (a day
# exile's shot, fired after the close, is a day out for the last words, S-WORDS-1).
SHOT_IN = StatusKey[str]("shot_in")


def gods(state: GameState) -> tuple[str, ...]:
    """The gods of this game's board (S-SETUP-3)."""
    return tuple(DATA["gods"][state.options["standard.board"]])


def living_holder(state: GameState, role: str, skill: str) -> Seat | None:
    """The first living `role` who holds `skill` (to read: `state.seat(n)` to change it)."""
    return state.holder(role, skill=skill)


def ack(ctx: Ctx, st: Seat, skill: str, target: int | None) -> None:
    ctx.tell(st.seat, "ActionRecorded", skill=skill, target=target, final=False)
