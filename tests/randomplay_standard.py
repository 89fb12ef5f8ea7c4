"""The random driver of tests/randomplay.py, taught the standard board (docs/rules-standard.md).

Same clock, same legal/illegal mix, same progress guarantees. Beyond the shared night (kill,
check, shield, potions: the same skill words): on day 1 players stand (上警) and withdraw
(退水), and the election's votes go mostly to candidates; now and then a wolf self-destructs
by day; an out hunter shoots or passes; a sheriff who owes a successor hands over or tears
the badge. The illegal commands draw from the standard board's skill words.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from randomplay import Driver, Step, Trace, pick, skills_of, within

from engine.commands import Act, Handover
from engine.events import Event
from engine.model import Deadline, GameState


class StandardDriver(Driver):
    skills = skills_of(("standard",)) + ["link", "infect", "firewall"]

    def election(self) -> dict[str, Any] | None:
        election: dict[str, Any] | None = self.state.data.get("election")
        return election if election and election["phase"] != "done" else None

    def legal(self, r: float) -> Any:
        state = self.state
        shot = self.legal_shot(r)
        if shot is not None:
            return shot
        if state.handover_due is not None and r < 0.35:
            if r < 0.32:
                return Handover(seat=state.handover_due, target=self.any_living(r) or 1)
            return Act(seat=state.handover_due, skill="tear")
        election = self.election()
        if election is not None and r < 0.5 and self.living():
            seat, r = pick(self.living(), within(r, 0, 0.5))
            if election["phase"] == "signup" and r < 0.6:
                return Act(seat=seat, skill="run")
            if election["candidates"] and r < 0.8:
                return Act(seat=pick(election["candidates"], r)[0], skill="withdraw")
        if state.phase.startswith("D") and 0.5 <= r < 0.51 and not self.peace:
            wolves = [s.seat for s in state.living() if s.role == "wolf"]
            if wolves:
                return Act(seat=pick(wolves, within(r, 0.5, 0.51))[0], skill="destruct")
        return self.legal_turn(r)

    def vote_target(self, r: float) -> int | None:
        """On day 1, mostly a candidate (or an abstention)."""
        election = self.election()
        if election is not None and election["candidates"] and r < 0.9:
            return pick([*election["candidates"], None], within(r, 0, 0.9))[0]
        return super().vote_target(r)

    def catch_up(self, dl: Deadline) -> None:
        if dl.kind == "signup" and self.election() is not None:
            # Just before the sign-up closes, a few more stand (a contest is the usual case).
            self.now = max(self.now, dl.due - timedelta(minutes=3))
            for _ in range(int(self.p() * 4)):
                if self.over or not self.living():
                    break
                self.send(Act(seat=pick(self.living(), self.p())[0], skill="run"))
            return
        super().catch_up(dl)


def play_standard(rnd: random.Random, *, seed: str | None = None,
                  options: dict[str, Any] | None = None,
                  on_step: Callable[[Step], None] | None = None,
                  on_start: Callable[[GameState, list[Event]], None] | None = None,
                  schedule: dict[str, Any] | None = None,
                  roles: list[str] | None = None) -> Trace:
    seed = seed if seed is not None else f"{rnd.getrandbits(64):016x}"
    driver = StandardDriver(rnd, seed=seed, options=options, on_step=on_step, on_start=on_start,
                            schedule=schedule, ruleset="standard", roles=roles)
    return driver.play()


DRIVER = StandardDriver
# Both boards: the idiot's (the default) and the guard's.
GAMES: list[dict[str, Any]] = [{}, {"options": {"standard.board": "预女猎守"}}]
