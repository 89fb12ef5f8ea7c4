"""The witch's night, shared by classic and anomaly: her deadline (deadlines.witch) and 通灵
(G-RES-6): the witch holding 通灵 tonight is told the choice of the reported slot once it is
final, and the night does not resolve early before she has answered after that."""

from __future__ import annotations

from datetime import time
from typing import cast

from engine.context import Ctx
from engine.model import Anchor
from rulesets.common.options import SharedOptions, witch_deadline

WITCH_SLOT = "witch"


def deadline(ctx: Ctx) -> tuple[Anchor, int]:
    """The witch's slot deadline: HH:MM the next morning, or a duration after close."""
    return witch_deadline(cast(SharedOptions, ctx.o).deadlines_witch)


class WitchNight:
    """A ruleset mixin (before Ruleset in the bases): 通灵 in `ready`, `deliver_tongling`,
    the fast-game check of the witch's deadline. Tonight's 通灵 holder is the seat in
    night.data["tongling"] (None: nobody), set by the ruleset's open_night."""

    # The slot whose choice 通灵 reports (G-RES-6 (a)).
    reported_slot: str = ""

    def reported_target(self, ctx: Ctx) -> int | None:
        """The target 通灵 reports, from the reported slot's submission."""
        raise NotImplementedError

    def ready(self, ctx: Ctx) -> bool:
        """Whether the night may resolve before its last deadline (G-RES-6 (a)-(c))."""
        night = ctx.view("night")  # read only: a check copies nothing
        tongling = night.data.get("tongling")
        for key, slot in night.slots.items():
            if slot.expired:
                continue
            if key == self.reported_slot and tongling:
                done = slot.final  # (a) locked or past its deadline
            elif key == WITCH_SLOT and tongling:
                done = slot.answered_after_prompt  # (b) answered after 通灵
            else:
                done = slot.sub is not None or slot.final  # (c)
            # (a slot with no living owner does not hold the night up; asked only of a slot
            # not done yet, which is rarer than the alive scan it saves)
            if not done and any(ctx.state.peek(n).alive for n in slot.seats):
                return False
        return True

    def deliver_tongling(self, ctx: Ctx) -> None:
        """Once the reported choice is final, the witch holding 通灵 tonight is told it."""
        night = ctx.night
        witch = night.data.get("tongling")
        slot = night.slots.get(WITCH_SLOT)
        if witch is None or slot is None or slot.prompted:
            return
        slot.prompted = True
        ctx.tell(witch, "Tongling", target=self.reported_target(ctx),
                 answered=slot.sub is not None)

    def check_game(self, options: object, *, fast: bool,
                   hours: tuple[time, time] | None = None) -> None:
        """The game's options against its schedule (a fast game has no next morning)."""
        cast(SharedOptions, options).check_game(fast=fast, hours=hours)
