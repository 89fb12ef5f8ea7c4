"""Property tests for `standard` (docs/rules-standard.md): random whole games on both boards,
under the defaults and option sets that bend every rule, sometimes as a fast game
(tests/randomplay_standard.py drives them).

Every game: handle() never raises nor changes its input (the driver checks); it ends by day 30
with exactly one winner (a camp on the field, not lost), announced once; after every accepted
command no camp's lose condition (S-WIN-1, recomputed here) holds unannounced, the sheriff is
alive, a revealed idiot casts no vote, the election's votes come from non-candidates for
candidates, a self-destruct leaves the day without votes; the whole game replays to the same
state and events; and nobody learns what they may not (test_hygiene's rules, for this board):
role-bearing messages reach only their subject, the kill messages only the living wolves, a
seat that is out only what concerns its duties, and nothing public names a role before the end
except the three announcements whose subject reveals it (自爆, the hunter's shot, the idiot's
reveal), each about a seat that holds that role.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from randomplay import MAX_DAY, Step, replay
from randomplay_standard import play_standard
from test_hygiene import out_seat_may_read

from bot.render import render_event, render_rejection
from engine.commands import Act, Vote
from engine.events import Event, Rejection
from engine.model import GameState
from rulesets.data import load
from rulesets.standard.base import REVEALED

GAMES = settings(max_examples=40, deadline=None,
                 phases=tuple(Phase) if os.environ.get("WOLFJUDGE_SHRINK") else (
                     Phase.explicit, Phase.reuse, Phase.generate),
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                        HealthCheck.large_base_example])
DATA = load("standard", "data")
OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"standard.board": "预女猎守"},
    {"standard.board": "预女猎守", "standard.guard_save_collision": "lives",
     "standard.witch_self_save": "always", "standard.hunter_poisoned_shoots": True,
     "standard.seer_words": "gold_kill", "standard.sheriff_weight": 2},
    {"standard.day1": "sheriff_then_exile", "standard.sheriff_tie": "random",
     "standard.self_destruct": "night_at_close", "standard.last_words": "all",
     "standard.win": "all"},
    {"standard.last_words": "exiled_only", "standard.sheriff_weight": 1,
     "standard.sheriff_signup": "10:00", "standard.sheriff_withdraw": "10:00",
     "standard.witch_self_save": "never", "standard.seer_words": "camp"},
    {"standard.board": "预女猎守", "standard.day1": "sheriff_then_exile",
     "night.resolve_early": False, "cards.yellow_to_red": 3, "surrender.requires": "any_member"},
]
FAST_GAME: dict[str, Any] = {"first_open": datetime(2026, 3, 1, 19, 0), "day_minutes": 40,
                             "night_minutes": 20}
FAST_OPTIONS: dict[str, Any] = {
    "deadlines.night_action": "8min", "deadlines.witch": "15min", "deadlines.after_exile": "5min",
    "deadlines.proxy_cutoff": "5min", "deadlines.change_freeze": "10min",
    "reminders.before": "2min", "standard.sheriff_signup": "10min",
    "standard.sheriff_withdraw": "20min"}
ROLE_WORDS = tuple(DATA["role_names"][r] for r in DATA["roles"] if r != "villager")
# The public announcements whose subject reveals a role, and that role.
REVEALING = {"SelfDestruct": "wolf", "HunterShot": "hunter", "IdiotRevealed": "idiot"}
KILL_MESSAGES = {"KillRecorded", "KillLocked", "KillForfeited"}
TO_SUBJECT = {"RoleDealt": "seat", "YouAreOut": "seat", "YouAreSheriff": "seat",
              "YellowCard": "seat"}


def lost_camps(state: GameState) -> set[str]:
    """S-WIN-1, recomputed: the camps whose lose condition holds (surrenders included)."""
    lost = set(state.camps_surrendered)
    living = state.living()
    if not any(s.camp == "wolves" for s in living):
        lost.add("wolves")
    village = [s for s in living if s.camp == "village"]
    gods = DATA["gods"][state.options["standard.board"]]
    if state.options["standard.win"] == "all":
        if not village:
            lost.add("village")
    elif not any(s.role == "villager" for s in village) or not any(
            s.role in gods for s in village):
        lost.add("village")
    return lost


class Checks:
    def __init__(self) -> None:
        self.over = False
        self.checked = 0

    def on_step(self, step: Step) -> None:
        before = step.before
        if isinstance(step.result, Rejection):
            rej = step.result
            assert not {"role", "roles", "camp"} & set(rej.data), rej
            text = render_rejection(rej, "standard")
            sender = getattr(step.command, "seat", None)
            own = DATA["role_names"].get(before.seat(sender).role) if sender in range(
                1, len(before.seats) + 1) else None
            assert not [w for w in ROLE_WORDS if w in text and w != own], (step.command, text)
            return
        after, events = step.result
        self.check_state(before, after, step.command)
        out = {s.seat for s in before.seats if not s.alive}
        for ev in events:
            self.checked += 1
            if ev.type == "SeatOut":
                out.add(ev.data["seat"])
            self.check_event(before, after, ev)
            if not ev.audience.public:
                for seat in out & set(ev.audience.seats):
                    assert out_seat_may_read(ev, before, seat) or ev.type == "IdiotHandoverDue", (
                        f"{ev.type} {ev.data} reached seat {seat}, which is out")

    def check_state(self, before: GameState, after: GameState, cmd: Any) -> None:
        if after.winner:
            assert after.winner not in after.camps_lost
            return
        if after.options["check.granularity"] == "atomic_event":
            assert not lost_camps(after), (lost_camps(after), cmd)
        assert after.sheriff is None or after.seat(after.sheriff).alive
        if isinstance(cmd, Vote) and cmd.mode != "void":
            voter = before.seat(cmd.seat)
            assert not voter.status(REVEALED), ("a revealed idiot voted", cmd)
            election = before.data.get("election")
            if before.day == 1 and election and election["phase"] != "done":
                assert cmd.seat not in election["candidates"] + election["withdrawn"], cmd
                assert election["phase"] != "signup", cmd
                assert cmd.target is None or cmd.target in election["candidates"], cmd
        if isinstance(cmd, Act) and cmd.skill == "destruct":
            assert before.seat(cmd.seat).role == "wolf" and not after.votes

    def check_event(self, before: GameState, after: GameState, ev: Event) -> None:
        aud, d, t = ev.audience, ev.data, ev.type
        seats = set(aud.seats)
        if t == "GameOver":
            assert not self.over
            self.over = True
            return
        assert not self.over, f"an event after the end: {t}"
        if aud.public:
            assert not d.get("role") and not d.get("roles"), ev
            text = render_event(ev, "standard")
            if t == "CampSurrendered":  # a camp's name is no role (狼人阵营)
                text = text.replace(DATA["camp_names"][d["camp"]], "")
            named = [w for w in ROLE_WORDS if w in text]
            if t in REVEALING:
                assert named == [DATA["role_names"][REVEALING[t]]], (text, ev)
                assert before.seat(d["seat"]).role == REVEALING[t], ev
            else:
                assert not named, (text, ev)
            return
        if t in TO_SUBJECT:
            assert seats <= {d[TO_SUBJECT[t]]}, ev
        elif t == "SeerResult":
            assert seats <= {s.seat for s in before.seats if s.role == "seer"}, ev
            wolf, good = DATA["seer_words"][before.options["standard.seer_words"]]
            assert d["label"] == (wolf if before.seat(d["target"]).role == "wolf" else good), ev
        elif t == "Tongling":
            assert seats <= {s.seat for s in before.seats
                             if s.role == "witch" and s.holds("antidote")}, ev
        elif t in KILL_MESSAGES or (t == "NightPrompt" and d.get("skill") == "kill"):
            assert seats <= {s.seat for s in before.seats if s.role == "wolf"}, ev
        elif t in ("HunterDue", "ShotForfeited"):
            assert seats <= {s.seat for s in before.seats if s.role == "hunter"}, ev
        elif t == "IdiotHandoverDue":
            assert seats <= {s.seat for s in before.seats if s.role == "idiot"}, ev
        elif t == "GroupFormed":
            assert aud.group == "wolves" and d["members"] == after.groups["wolves"], ev
        elif t == "ActionRecorded":
            assert len(seats) <= 1, ev


def _play(rnd: Any, options: dict[str, Any], schedule: dict[str, Any] | None = None) -> None:
    checks = Checks()
    trace = play_standard(rnd, options=options, on_step=checks.on_step, schedule=schedule)
    final = trace.final
    assert final is not None and final.winner in final.camps_on_field
    assert final.winner not in final.camps_lost
    assert final.day <= MAX_DAY
    assert sum(1 for e in trace.events if e.type == "GameOver") == 1
    assert checks.over and checks.checked > 0
    state, events = replay(trace)
    assert state.model_dump() == final.model_dump()
    assert [e.model_dump() for e in events] == [e.model_dump() for e in trace.events]


@GAMES
@given(rnd=st.randoms(use_true_random=False), which=st.integers(0, len(OPTION_SETS) - 1))
def test_standard_games_end_with_one_winner_replay_and_keep_secrets(rnd: Any,
                                                                    which: int) -> None:
    _play(rnd, OPTION_SETS[which] if rnd.randrange(10) < 7 else {})


@settings(GAMES, max_examples=12)
@given(rnd=st.randoms(use_true_random=False), guard=st.booleans())
def test_standard_fast_games(rnd: Any, guard: bool) -> None:
    options = {**FAST_OPTIONS, **({"standard.board": "预女猎守"} if guard else {})}
    _play(rnd, options, FAST_GAME)
