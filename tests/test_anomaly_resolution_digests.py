"""Anomaly's night resolution pinned by digest under option sets that change its paths.

The digests were computed on the hand-written pipeline (`Pipeline.run`, commit 439851d) before
the resolution became `night_resolution:` role steps; equal digests say the steps play the very
same games: the same final snapshot and the same events, in order, with their data. Each set
bends one part of the order or of what is read when: `resolve.locked_actions=false` (what the
submissions of actors out by then count for, read at the start and in R4), the timing of the
stage changes, the night end's atomicity, the effects that decide the 空守 mark, the cure, the
overloads, 血睿, resonance and 归零.

Random games seldom reach some paths (a 过载 user put out by 感染 before R4, a complete guard's
firewall on a 空守 seat, 格式化 on the 感染 target), so a second family plays the same games
with the night perturbed at random before some commands (`PerturbedDriver`): derivatives with
过载 submissions (and 感染 on them), stages, earlier 空守 marks, actors out before the
resolution, targets made to collide with the infection, 血睿, skills lost or used. The states
it makes need not be reachable: they only have to resolve the same way on both sides.

To recompute after an intended change of the rules:
`python tests/test_anomaly_resolution_digests.py`.
"""

from __future__ import annotations

import hashlib
import os
import random
import sys
from datetime import datetime, timedelta
from typing import Any

import pytest
from randomplay_anomaly import AnomalyDriver

from engine.events import Rejection
from engine.model import GameState, Slot, Submission
from rulesets.anomaly.statuses import (
    DERIVATIVE,
    KONGSHOU,
    OVERLOAD_NIGHT,
    STAGE,
    WINDOW,
    WINDOW_PART,
)

GAMES = int(os.environ.get("RES_GAMES", "10"))  # per option set and table size
OPTION_SETS: dict[str, dict[str, Any]] = {
    "default": {},
    "unlocked": {"resolve.locked_actions": False},
    "immediate": {"anomaly.stage_change_timing": "immediate"},
    "atomic_end": {"anomaly.night_end_atomic": True},
    "unlocked_immediate_atomic": {
        "resolve.locked_actions": False, "anomaly.stage_change_timing": "immediate",
        "anomaly.night_end_atomic": True, "anomaly.seer_snapshot": "after_resolution"},
    "unlocked_late_seer": {
        "resolve.locked_actions": False, "anomaly.seer_snapshot": "after_resolution",
        "anomaly.night_end_atomic": False, "anomaly.overload_usable": "same_night"},
    "firewall_overload": {
        "anomaly.kongshou_def": "firewall_had_no_effect", "anomaly.firewall_blocks_out": True,
        "anomaly.infect_anomaly_members": "no_effect", "anomaly.overload_usable": "same_night",
        "anomaly.overload_spent_on_no_effect": False,
        "anomaly.purify_blocks_patricide": False, "anomaly.cure_targets": "any",
        "anomaly.cure_restores_role_skills": False, "resolve.locked_actions": False},
    "evolution": {
        "anomaly.bloodsight_invalid_target": "fizzle_evolve", "anomaly.bloodsight_regrant": True,
        "anomaly.resonance_max_per_night": "unbounded", "anomaly.resonance_counts_head": True,
        "anomaly.lost_skill_regained_on_evolve": True,
        "anomaly.derivative_keeps_role_skills": True,
        "anomaly.derivative_notified": "on_overload_only",
        "anomaly.derivative_class": "villager"},
    "evolution_immediate": {
        "anomaly.stage_change_timing": "immediate",
        "anomaly.bloodsight_invalid_target": "fizzle_evolve",
        "anomaly.resonance_max_per_night": "unbounded", "anomaly.resonance_counts_head": True,
        "anomaly.head_class": "none", "resolve.locked_actions": False},
    "zeroing": {
        "anomaly.zeroing_window": "day_only", "anomaly.zeroing_applies_new_complete": False,
        "anomaly.night_end_atomic": True, "anomaly.lose2_eval": "night_end_only",
        "anomaly.purify_growth_reusable": False, "anomaly.kongshou_def": "guarded_any",
        "resolve.locked_actions": False},
    "per_step": {"check.granularity": "per_step", "anomaly.night_end_atomic": True,
                 "anomaly.stage_change_timing": "immediate"},
}
# (Recomputed in issue 33: a reminder to a witch whose answer before 通灵 stands carries
# `standing`; the games are otherwise the same, event by event.)
DIGESTS: dict[str, str] = {
    'default': '124bed02177c95e7',
    'unlocked': '473593c8e403621c',
    'immediate': 'e41e92b2232c8f7c',
    'atomic_end': 'f569506c78c4885c',
    'unlocked_immediate_atomic': '4f7708ed44180a86',
    'unlocked_late_seer': '21e99c42724cf8ef',
    'firewall_overload': 'd23fd506dd0672d8',
    'evolution': 'cd90518898742b85',
    'evolution_immediate': 'ca8469e86b6b5ccb',
    'zeroing': '726e770a7d513d1f',
    'per_step': 'a5a2b3abf7baadb4',
}
PERTURBED_DIGESTS: dict[str, str] = {
    'default': 'b07644f4b935baeb',
    'unlocked': 'cec028f1c1a2d1d0',
    'immediate': '4f97918edf6602ce',
    'atomic_end': 'dddcf52ad1bc0352',
    'unlocked_immediate_atomic': 'ee5b729b0d9344ba',
    'unlocked_late_seer': 'deec298dce4ee398',
    'firewall_overload': 'c47eb30a66587bf4',
    'evolution': 'f9f006284b3ab52d',
    'evolution_immediate': '1ff4f15f89d5ea0b',
    'zeroing': 'd1d4a7deb867ea74',
    'per_step': 'eebf11ad19148719',
}
STAGES = ("growth", "mature", "complete")


class PerturbedDriver(AnomalyDriver):
    """The random driver, bending the open night's state at random before some commands."""

    perturb_rnd: random.Random

    def send(self, cmd: Any) -> Rejection | None:
        night = self.state.night
        if night is not None and not night.resolved and self.perturb_rnd.random() < 0.35:
            self.state = perturb(self.perturb_rnd, self.state, self.now)
        return super().send(cmd)


def perturb(pr: random.Random, state: GameState, now: datetime) -> GameState:
    state = state.model_copy(deep=True)
    night = state.night
    assert night is not None
    living = [s for s in state.seats if s.alive]
    if len(living) < 4:
        return state
    deadline_id = next(iter(night.slots.values())).deadline_id if night.slots else "night"
    head = night.slots.get("head")
    for _ in range(pr.randint(1, 3)):
        kind = pr.randrange(7)
        if kind == 0:  # a derivative with a 过载 submission, perhaps 感染's target
            st = pr.choice([s for s in living if s.role != "wolf-head"])
            st.set_status(DERIVATIVE, True)
            st.camp = "anomaly"
            st.skills["overload"] = "held"
            st.set_status(OVERLOAD_NIGHT, night.day - 1)
            target = pr.choice([s for s in living if s.seat != st.seat]).seat
            key = f"overload:{st.seat}"
            at = now - timedelta(minutes=pr.randrange(300))
            night.slots[key] = Slot(key=key, seats=[st.seat], deadline_id=deadline_id,
                                    sub=Submission(skill="overload", targets=[target],
                                                   by=st.seat, at=at))
            if head is not None and head.sub is not None and pr.random() < 0.5:
                head.sub.options["infect"] = st.seat
        elif kind == 1:  # stages, now and (mostly) at the opening
            for st in state.seats:
                if st.status(STAGE) is not None and pr.random() < 0.5:
                    new = pr.choice(STAGES)
                    st.set_status(STAGE, new)
                    if pr.random() < 0.7:
                        night.data["stages"][str(st.seat)] = new
        elif kind == 2:  # a 空守 mark of an earlier night
            pr.choice(living).set_status(KONGSHOU, (night.day - 1,))
        elif kind == 3:  # an actor out before the resolution
            st = pr.choice(living)
            st.alive = False
            st.out_cause = pr.choice(["vote", "red-card", "infect"])
            st.set_status(WINDOW, night.day)
            st.set_status(WINDOW_PART, pr.choice(["day", "night"]))
        elif kind == 4:  # the firewall, 净化 / 格式化 and the check on the infection's target
            infect = head.sub.options.get("infect") if head and head.sub else None
            target = infect if infect is not None else pr.choice(living).seat
            for key, skill in (("guard", "firewall"), ("witch", pr.choice(["purify", "format"])),
                               ("see", "see")):
                slot = night.slots.get(key)
                if slot is not None and pr.random() < 0.5:
                    slot.sub = Submission(skill=skill, by=slot.seats[0], at=now, targets=[
                        pr.choice([target, pr.choice(living).seat])])
        elif kind == 5 and head is not None and head.sub is not None:  # 血睿
            head.sub.options["bloodsight"] = pr.choice(living).seat
        elif kind == 6:  # skills held, lost or used at random
            st = pr.choice(living)
            for skill in list(st.skills):
                st.skills[skill] = pr.choice(["held", "lost", "used"])
    return state


def digest(name: str, *, perturbed: bool = False) -> str:
    """The games of one option set: every final snapshot and every event, hashed."""
    h = hashlib.sha256()
    for players in (12, 13, 14):
        for i in range(GAMES):
            cls = PerturbedDriver if perturbed else AnomalyDriver
            driver = cls(random.Random(f"{name}-{players}-{i}"),
                         seed=f"res-{name}-{players}-{i}", ruleset="anomaly",
                         players=players, options=OPTION_SETS[name])
            if isinstance(driver, PerturbedDriver):
                driver.perturb_rnd = random.Random(f"perturb-{name}-{players}-{i}")
            driver.verify_input = False  # the property tests check that; here only the games
            trace = driver.play()
            assert trace.final is not None
            h.update(trace.final.model_dump_json().encode())
            for ev in trace.events:
                h.update(ev.model_dump_json().encode())
    return h.hexdigest()[:16]


@pytest.mark.parametrize("name", list(OPTION_SETS))
def test_resolution_plays_the_pinned_games(name: str) -> None:
    assert digest(name) == DIGESTS[name]


@pytest.mark.parametrize("name", list(OPTION_SETS))
def test_resolution_of_perturbed_nights_plays_the_pinned_games(name: str) -> None:
    assert digest(name, perturbed=True) == PERTURBED_DIGESTS[name]


if __name__ == "__main__":
    for perturbed in (False, True):
        print("PERTURBED_DIGESTS = {" if perturbed else "DIGESTS = {")
        for key in sys.argv[1:] or list(OPTION_SETS):
            print(f"    {key!r}: {digest(key, perturbed=perturbed)!r},")
        print("}")
