"""The option keys both rulesets accept beyond the engine's (RULES.md §5): the witch's deadline
and anomaly's surrender switch (which classic accepts too, to no effect, as it always has)."""

from __future__ import annotations

import re
from datetime import time
from typing import ClassVar, Literal

from pydantic import StrictBool

from engine.options import CommonOptions, OptionError, duration_minutes, opt


def witch_deadline(value: str) -> tuple[Literal["morning", "close"], int]:
    """("morning", minutes after midnight) for HH:MM, ("close", minutes) for a duration."""
    m = re.fullmatch(r"(\d{1,2}):(\d{2})", value.strip())
    if m and int(m.group(1)) < 24 and int(m.group(2)) < 60:
        return "morning", int(m.group(1)) * 60 + int(m.group(2))
    return "close", duration_minutes(value)


class SharedOptions(CommonOptions):
    placed_after: ClassVar[dict[str, str]] = {
        "surrender.enabled_anomaly": "surrender.requires",
        "deadlines.witch": "deadlines.night_action"}

    # Whether anomaly's camps may surrender (S-1); classic accepts the key and ignores it.
    surrender_enabled_anomaly: StrictBool = opt("surrender.enabled_anomaly", True)
    # HH:MM the next morning, or a duration after close
    deadlines_witch: str = opt("deadlines.witch", "08:00")

    def check(self, camps: tuple[str, ...]) -> None:
        try:
            witch_deadline(self.deadlines_witch)
        except ValueError:
            raise OptionError(f"bad value {self.deadlines_witch!r} for option 'deadlines.witch': "
                              "a time like 08:00 or a duration like 2h") from None
        super().check(camps)

    def night_deadlines(self) -> dict[str, int | None]:
        anchor, minutes = witch_deadline(self.deadlines_witch)  # (well formed: check said so)
        return {**super().night_deadlines(),
                "deadlines.witch": minutes if anchor == "close" else None}

    def check_game(self, *, fast: bool, hours: tuple[time, time] | None = None) -> None:
        """A fast game has no next morning: the witch's deadline is then a duration.
        (`hours`: a daily game's open and close, for a ruleset's own times.)"""
        if fast and witch_deadline(self.deadlines_witch)[0] == "morning":
            raise ValueError("in a fast game deadlines.witch must be a duration after close, "
                             "e.g. 2min")
