"""The random driver of tests/randomplay.py, taught the anomaly ruleset's night and duties.

Same clock, same legal/illegal mix, same progress guarantees; the night commands are the wolf
head's 感染 (with a mode at complete) / 血睿 / lock, derivatives' 过载, the seer's check, the
guard's 防火墙 and the witch's 净化 / 格式化, and a hunter who went out shoots (or passes).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from randomplay import Driver, Step, Trace, pick, within

from engine.commands import Act
from engine.events import Event
from engine.model import GameState
from rulesets.anomaly.statuses import DERIVATIVE


class AnomalyDriver(Driver):
    def hunted(self) -> list[int]:
        return [s.seat for s in self.state.living() if s.camp == "anomaly"]

    def night_actors(self) -> list[int]:
        night = self.state.night
        if night is None or night.resolved:
            return []
        seats = {n for slot in night.slots.values() if not slot.expired and not slot.final
                 for n in slot.seats}
        return sorted(n for n in seats if self.state.seat(n).alive)

    def night_command(self, seat: int, r: float, slot_key: str | None = None) -> Any:
        state = self.state
        night = state.night
        if night is None:
            return None
        st = state.seat(seat)
        stage = night.data.get("stages", {}).get(str(seat))
        if slot_key and slot_key.startswith("overload") or (
                slot_key is None and f"overload:{seat}" in night.slots and r < 0.5):
            if r < 0.6:
                return Act(seat=seat, skill="overload", targets=(self.any_living(r),))
            return Act(seat=seat, skill="pass")
        if st.role == "wolf-head" and st.camp == "anomaly":
            if self.peace:
                return Act(seat=seat, skill="pass")
            if r < 0.55:
                options = {"mode": 1 if r < 0.3 else 2} if stage == "complete" else {}
                return Act(seat=seat, skill="infect", targets=(self.any_living(r),),
                           options=options)
            if r < 0.75:
                derivatives = [s.seat for s in state.living() if s.status(DERIVATIVE)]
                target = pick(derivatives, within(r, 0.55, 0.75))[0] if derivatives and \
                    r < 0.7 else self.any_living(r)
                return Act(seat=seat, skill="bloodsight", targets=(target,))
            return Act(seat=seat, skill="lock" if r < 0.9 else "pass")
        if st.role == "seer":
            return Act(seat=seat, skill="see", targets=(self.any_living(r),))
        if st.role == "guard":
            if r < 0.85:
                return Act(seat=seat, skill="firewall",
                           targets=(self.any_living(within(r, 0, 0.85), none=True),))
            return Act(seat=seat, skill="pass")
        if st.role == "witch":
            if self.peace or r >= 0.7:
                return Act(seat=seat, skill="pass")
            skill = "format" if stage == "complete" and r >= 0.45 else "purify"
            return Act(seat=seat, skill=skill, targets=(self.any_living(within(r, 0, 0.7)),))
        return Act(seat=seat, skill="pass")


def play_anomaly(rnd: random.Random, *, players: int = 12, seed: str | None = None,
                 options: dict[str, Any] | None = None,
                 on_step: Callable[[Step], None] | None = None,
                 on_start: Callable[[GameState, list[Event]], None] | None = None) -> Trace:
    seed = seed if seed is not None else f"{rnd.getrandbits(64):016x}"
    driver = AnomalyDriver(rnd, seed=seed, options=options, on_step=on_step, on_start=on_start,
                           ruleset="anomaly", players=players)
    return driver.play()


DRIVER = AnomalyDriver
GAMES: list[dict[str, Any]] = [{"players": 12}, {"players": 13}, {"players": 14}]
