"""The standard board's option model (docs/rules-standard.md, "Options"), over the shared keys."""

from __future__ import annotations

import re
from datetime import time
from operator import attrgetter
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import BeforeValidator, StrictBool
from pydantic_core import PydanticCustomError

from engine.context import Ctx
from engine.options import OptionError, OptionSpec, duration_minutes, opt, spec_of
from rulesets.common.options import SharedOptions

WEIGHTS = (1.0, 1.5, 2.0)  # S-SHERIFF-7


def _weight(value: Any) -> float:
    """The sheriff's weight: 1, 1.5 or 2, given as a number or its text (chat gives "1.5")."""
    try:
        if isinstance(value, bool):
            raise ValueError
        weight = float(value)
    except (TypeError, ValueError):
        weight = -1.0
    if weight not in WEIGHTS:
        raise PydanticCustomError("weight", "one of 1, 1.5, 2")
    return weight


Weight = Annotated[float, BeforeValidator(_weight)]


def election_time(value: str) -> tuple[Literal["time", "after"], int]:
    """("time", minutes after midnight) for HH:MM on day 1; ("after", minutes) for a duration
    after day 1 opens (S-SHERIFF-2/3)."""
    m = re.fullmatch(r"(\d{1,2}):(\d{2})", value.strip())
    if m and int(m.group(1)) < 24 and int(m.group(2)) < 60:
        return "time", int(m.group(1)) * 60 + int(m.group(2))
    return "after", duration_minutes(value)


class StandardOptions(SharedOptions):
    """The standard keys (S-OPT-1), over the shared ones."""

    standard_board: Literal["预女猎白", "预女猎守"] = opt("standard.board", "预女猎白")
    standard_seer_words: Literal["good_wolf", "gold_kill", "camp"] = opt(
        "standard.seer_words", "good_wolf")
    standard_witch_self_save: Literal["first_night", "never", "always"] = opt(
        "standard.witch_self_save", "first_night")
    standard_guard_save_collision: Literal["dies", "lives"] = opt(
        "standard.guard_save_collision", "dies")
    standard_hunter_poisoned_shoots: StrictBool = opt("standard.hunter_poisoned_shoots", False)
    # S-HUNTER-4: which of a kill and a poison on the hunter the same night puts him out
    standard_hunter_killed_and_poisoned: Literal["poison", "kill"] = opt(
        "standard.hunter_killed_and_poisoned", "poison")
    standard_day1: Literal["sheriff_only", "sheriff_then_exile"] = opt(
        "standard.day1", "sheriff_only")
    standard_sheriff_signup: str = opt("standard.sheriff_signup", "12:00")
    standard_sheriff_withdraw: str = opt("standard.sheriff_withdraw", "18:00")
    standard_sheriff_tie: Literal["lost", "random"] = opt("standard.sheriff_tie", "lost")
    standard_sheriff_weight: Weight = opt("standard.sheriff_weight", 1.5)
    standard_self_destruct: Literal["night_now", "night_at_close"] = opt(
        "standard.self_destruct", "night_now")
    standard_last_words: Literal["first_night_and_exiled", "all", "exiled_only"] = opt(
        "standard.last_words", "first_night_and_exiled")
    standard_win: Literal["side", "all"] = opt("standard.win", "side")

    # (added after standard games were stored: kept in a game's options only when set)
    added_keys: ClassVar[frozenset[str]] = SharedOptions.added_keys | {
        "standard.hunter_killed_and_poisoned"}

    def election_times(self) -> tuple[tuple[str, int], tuple[str, int]]:
        return (election_time(self.standard_sheriff_signup),
                election_time(self.standard_sheriff_withdraw))

    def check(self, camps: tuple[str, ...]) -> None:
        times = []
        for key, value in (("standard.sheriff_signup", self.standard_sheriff_signup),
                           ("standard.sheriff_withdraw", self.standard_sheriff_withdraw)):
            try:
                times.append(election_time(value))
            except ValueError:
                raise OptionError(f"bad value {value!r} for option {key!r}: a time of day 1 "
                                  "like 12:00, or a duration after day 1 opens like 3h") from None
        (k1, signup), (k2, withdraw) = times
        # (both given: a sign-up after the close with the default withdrawal is the close for
        # both, S-SHERIFF-2)
        both = {"standard_sheriff_signup", "standard_sheriff_withdraw"} <= self.model_fields_set
        if k1 == k2 and withdraw < signup and (k1 == "after" or both):
            raise OptionError("standard.sheriff_withdraw may not come before "
                              "standard.sheriff_signup")
        super().check(camps)

    def check_game(self, *, fast: bool, hours: tuple[time, time] | None = None) -> None:
        super().check_game(fast=fast, hours=hours)
        if fast and any(kind == "time" for kind, _ in self.election_times()):
            raise ValueError("in a fast game standard.sheriff_signup and "
                             "standard.sheriff_withdraw must be durations after day 1 opens, "
                             "e.g. 10min")
        if hours is None:
            return
        opens = hours[0].hour * 60 + hours[0].minute
        for key, (kind, minutes) in zip(("standard.sheriff_signup", "standard.sheriff_withdraw"),
                                        self.election_times(), strict=True):
            # S-SHERIFF-2: a time before day 1 opens would close the election before anyone
            # could stand (a time after the close is the close)
            if kind == "time" and minutes < opens:
                raise ValueError(f"{key} is before day 1 opens ({hours[0]:%H:%M})")


STANDARD_OPTIONS: OptionSpec = spec_of(StandardOptions)


if TYPE_CHECKING:
    def opts(ctx: Ctx) -> StandardOptions:
        """The game's options, typed (ctx.o is this ruleset's StandardOptions)."""
else:
    opts = attrgetter("o")
