"""Property tests for `anomaly` (issue 3): random whole games for each preset size (12–14).

Every game: handle() never raises nor changes its input (the driver checks), ends with exactly
one winner by day 30 (a camp on the field, not lost), replays to the same state and events, and
keeps secrets: role-bearing messages reach only the seat they concern, and nothing public names
a role before the game ends. A-LOSE-A1/N1/N2 are recomputed here independently.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from randomplay import MAX_DAY, Step, replay
from randomplay_anomaly import play_anomaly

from engine.events import Rejection
from engine.model import GameState

GAMES = settings(max_examples=12, deadline=None,
                 phases=(Phase.explicit, Phase.reuse, Phase.generate),
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                        HealthCheck.large_base_example])
OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"anomaly.infect_anomaly_members": "no_effect", "anomaly.firewall_blocks_out": True,
     "anomaly.resonance_counts_head": True, "anomaly.zeroing_window": "day_only"},
    {"anomaly.lose2_eval": "night_end_only", "anomaly.kongshou_def": "guarded_any",
     "anomaly.seer_identity_feedback": "current_role", "anomaly.cure_targets": "any",
     "anomaly.day1_exile": True, "anomaly.tie_fallback": "random"},
    {"anomaly.stage_change_timing": "immediate", "anomaly.key_shield_scope": "active_skills_only",
     "anomaly.bloodsight_invalid_target": "fizzle_evolve", "anomaly.hunter_yellow": True,
     "anomaly.seer_snapshot": "after_resolution", "anomaly.purify_growth_reusable": False,
     "cards.night_yellow_counts_to_red": False},
    {"resolve.judge_review": True, "resolve.review_minutes": 0},  # P-REVIEW, never 天亮
]
PRIVATE_TO_SUBJECT = {"BecameDerivative", "Cured", "OverloadGranted", "HunterDue", "StageNotice",
                      "RoleDealt"}
ROLE_WORDS = ("狼头", "预言家", "女巫", "长老", "守卫", "猎人", "衍生者")


def normal_lost(state: GameState) -> bool:
    gods = [s for s in state.seats if s.role in ("seer", "witch", "guard", "elder")]
    villagers = [s for s in state.seats if s.role == "villager"]
    gone = [not s.alive or s.camp == "anomaly" for s in gods]
    return all(gone) or all(not s.alive or s.camp == "anomaly" for s in villagers)


class Checks:
    def __init__(self) -> None:
        self.over = False

    def on_step(self, step: Step) -> None:
        if isinstance(step.result, Rejection):
            return
        after, events = step.result
        from bot.render import render_event

        for ev in events:
            if ev.type == "GameOver":
                self.over = True
            aud = ev.audience
            if ev.type in ("SeerResult",):
                assert set(aud.seats) <= {s.seat for s in step.before.seats if s.role == "seer"}
            if ev.type == "Tongling":
                assert set(aud.seats) <= {s.seat for s in step.before.seats if s.role == "witch"}
            if ev.type in ("HeadRecorded", "HeadLocked"):
                assert set(aud.seats) <= {s.seat for s in step.before.seats
                                          if s.role == "wolf-head"}
            if ev.type == "KeyShield":  # one DM each to those who lose their skills
                assert not aud.public and aud.group is None
                assert {step.before.seat(n).role for n in aud.seats} <= {
                    "witch", "seer", "hunter", "guard"}, ev
            if ev.type in PRIVATE_TO_SUBJECT:
                assert len(aud.seats) <= 1 and not aud.public, ev
            if aud.public and not self.over and ev.type != "GameOver":
                assert not ev.data.get("roles"), ev
                text = render_event(ev, "anomaly")
                assert not any(w in text for w in ROLE_WORDS), text
        if not after.winner and "normal" not in after.camps_lost and after.options[
                "check.granularity"] == "atomic_event":
            assert not normal_lost(after), "A-LOSE-N1/N2 hold but the normal camp is not lost"


@pytest.mark.parametrize("players", [12, 13, 14])
@GAMES
@given(rnd=st.randoms(use_true_random=False), which=st.integers(0, len(OPTION_SETS) - 1))
def test_anomaly_games_end_with_one_winner_and_replay(players: int, rnd: Any,
                                                      which: int) -> None:
    checks = Checks()
    trace = play_anomaly(rnd, players=players, options=OPTION_SETS[which],
                         on_step=checks.on_step)
    final = trace.final
    assert final is not None and final.winner in final.camps_on_field
    assert final.winner not in final.camps_lost
    assert final.day <= MAX_DAY
    assert sum(1 for e in trace.events if e.type == "GameOver") == 1
    state, events = replay(trace)
    assert state.model_dump() == final.model_dump()
    assert [e.model_dump() for e in events] == [e.model_dump() for e in trace.events]
