"""Property tests: random play of whole classic games (tests/randomplay.py drives them).

Checked on every game:
- handle() never raises, and never changes the state it was given; a Rejection changes nothing;
- the game ends, by day 30, with exactly one winner: a camp on the field that is not lost,
  announced by exactly one GameOver event, the last event of the game; once nobody acts any
  more (randomplay.LAZY_DAY), the cards for not voting end it within a few days;
- after every accepted command the state is coherent: the dead stay dead with a cause, roles
  never change, lovers go out together (unless a red card spares the partner by option), the
  sheriff is alive, two counted yellow cards (cards.yellow_to_red) are a red one, a lost camp
  stays lost, and (with the default atomic checks) every camp whose lose condition holds (RULES.md
  §2.5, computed here independently) is already judged lost, and the wolves never meet C-WIN-W1
  unannounced; private feedback tells the truth (seer label, kill and poison feedback, 通灵);
- after the end, commands are refused (`game_over`) and ticks change nothing;
- replaying the accepted (time, command) list on a fresh new_game with the same seed gives the
  same final state (model_dump equality) and the same events.

The games are long, so Hypothesis does not shrink a failure by default (a failing game prints
its last commands and the options; Hypothesis prints a seed to replay it). Set WOLFJUDGE_SHRINK=1
to let it shrink.
"""

from __future__ import annotations

import os
import random
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from randomplay import (
    FAST_GAME,
    FAST_OPTIONS,
    LAZY_DAY,
    MAX_DAY,
    OPTION_SETS,
    Step,
    Trace,
    play,
    replay,
)

from engine import handle
from engine.commands import Act, JudgeCard, Tick, Vote
from engine.events import Event, Rejection
from engine.model import GameState
from rulesets.data import load

PHASES = tuple(Phase) if os.environ.get("WOLFJUDGE_SHRINK") else (
    Phase.explicit, Phase.reuse, Phase.generate)
GAMES = settings(max_examples=30, deadline=None, phases=PHASES,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                        HealthCheck.large_base_example])
# Beyond OPTION_SETS: two options under which the kill messages go to seats outside the group
# they are addressed to (an engine bug); the hygiene tests leave them out, these properties do
# not depend on who reads what.
ALL_OPTION_SETS: list[dict[str, Any]] = [
    *OPTION_SETS,
    {"classic.kill_participants": "whole_camp",
     "classic.double_wolf_lovers_in_wolf_group": False},
    # the judge reviews every night (docs/rules-judge.md P-REVIEW); nobody says 天亮: each
    # night is published at the day's open, which moves after the last deadline
    {"resolve.judge_review": True, "resolve.review_minutes": 90},
]


def draw_options(rnd: random.Random, which: int) -> dict[str, Any]:
    """Option set number `which`, or (4 times in 10) the defaults."""
    return ALL_OPTION_SETS[which] if rnd.randrange(10) < 6 else {}


def lose_conditions(state: GameState) -> set[str]:
    """The camps on the field whose lose condition holds (RULES.md §2.5, C-LOSE-*)."""
    lost = set(state.camps_surrendered)
    living = state.living()
    for camp in state.camps_on_field:
        if not any(s.camp == camp for s in living):
            lost.add(camp)  # C-LOSE-W1, C-LOSE-B1 (and the village with nobody left)
    gods = [s for s in state.seats if s.camp == "village" and s.role in ("seer", "witch", "guard")]
    if state.options["classic.village_gods_rule"] == "any_out":
        gods_gone = not gods or any(not s.alive for s in gods)
    else:
        gods_gone = not any(s.alive for s in gods)
    villagers_gone = not any(s.camp == "village" and s.role == "villager" for s in living)
    if "village" in state.camps_on_field and (gods_gone or villagers_gone):
        lost.add("village")  # C-LOSE-V1, C-LOSE-V2
    return lost


SEER_LABELS = load("classic", "data")["seer_labels"]


def check_feedback(before: GameState, after: GameState, ev: Event) -> None:
    """Private feedback tells the truth (C-SEER-1, C-WOLF-2, C-WITCH-5, C-WITCH-1)."""
    d = ev.data
    if ev.type == "SeerResult":
        mode = before.options["classic.seer_feedback"]
        holds, other = SEER_LABELS[mode]
        camp = before.seat(d["target"]).camp
        test = camp == "wolves" if mode == "wolf_partition" else camp == "village"
        assert d["label"] == (holds if test else other), (d, camp, mode)
    elif ev.type == "KillFeedback":
        target = after.seat(d["target"])
        assert d["out"] == (target.out_cause == "kill"), (d, target)
    elif ev.type == "PoisonFeedback":
        target = after.seat(d["target"])
        assert d["out"] == (target.out_cause == "poison"), (d, target)
    elif ev.type == "Tongling":
        assert after.night is not None
        kill = after.night.slots.get("kill")
        reported = kill.sub.targets[0] if kill and kill.sub and kill.sub.targets else None
        assert d["target"] == reported, (d, reported)
        assert all(before.seat(n).holds("tongling") for n in ev.audience.seats), d
    elif ev.type == "DayOpened":
        assert all(not after.seat(n).alive for n in d["outs"]), d
        assert d["alive"] == [s.seat for s in after.living()], d


def check_step(step: Step) -> None:
    """Coherence of the state after each accepted command."""
    if isinstance(step.result, Rejection):
        return
    before, (after, events) = step.before, step.result
    opts = after.options
    for ev in events:
        check_feedback(before, after, ev)
    assert [s.role for s in after.seats] == [s.role for s in before.seats]
    assert set(before.camps_lost) <= set(after.camps_lost)
    assert before.winner is None or after.winner == before.winner
    limit = opts["cards.yellow_to_red"]
    for old, seat in zip(before.seats, after.seats, strict=True):
        assert old.alive or not seat.alive, f"seat {seat.seat} came back"
        assert seat.alive == (seat.out_cause is None), seat
        assert not (seat.red and seat.alive), f"seat {seat.seat} was sent off but plays on"
        if limit and seat.yellow - seat.uncounted_yellow >= limit:  # night cards may not count
            assert seat.red, f"seat {seat.seat} has {seat.yellow} yellow cards and no red one"
        if opts["cards.night_yellow_counts_to_red"]:
            assert seat.uncounted_yellow == 0, seat
        if seat.lover_of is not None:
            partner = after.seat(seat.lover_of)
            assert partner.lover_of == seat.seat
            spared = "red-card" in (seat.out_cause, partner.out_cause) and not opts[
                "cards.red_lover_partner_dies"]
            if not seat.alive and after.winner is None and not spared:
                assert not partner.alive, f"lover {seat.seat} is out, {partner.seat} is not"
    if after.sheriff is not None and after.winner is None:  # G-END-4: no succession at the end
        assert after.seat(after.sheriff).alive, f"the sheriff {after.sheriff} is out"
    assert set(after.camps_lost) <= set(after.camps_on_field)
    assert all(s.camp in after.camps_on_field for s in after.seats if s.camp)
    if after.winner is None and not after.halted and opts["check.granularity"] == "atomic_event":
        missed = lose_conditions(after) - set(after.camps_lost)
        assert not missed, f"{missed} met a lose condition but are not judged lost " \
                           f"(after {step.command!r})"
        wolves = [s for s in after.living() if s.camp == "wolves"]
        assert "wolves" in after.camps_lost or not wolves or 2 * len(wolves) < len(
            after.living()), f"the wolves meet C-WIN-W1 unannounced (after {step.command!r})"


def check_ending(trace: Trace) -> None:
    final = trace.final
    assert final is not None
    opts = final.options
    if final.halted:
        # AMB-G-03: no camp left unlost. Only possible when checks are not atomic.
        assert opts["check.granularity"] != "atomic_event", "halted under atomic checks"
        assert set(final.camps_on_field) <= set(final.camps_lost)
        return
    assert final.winner is not None, "the game did not end"
    assert final.phase == "END"
    assert final.winner in final.camps_on_field, (final.winner, final.camps_on_field)
    assert final.winner not in final.camps_lost, (final.winner, final.camps_lost)
    assert final.day <= MAX_DAY, f"still playing on day {final.day}"
    # From LAZY_DAY on nobody acts: everybody misses the vote each day, and the cards for it
    # send everybody off within cards.yellow_to_red days (a prior notice may waive one card).
    assert final.day <= LAZY_DAY + opts["cards.yellow_to_red"] + 1, final.day
    assert final.deadlines == []
    assert final.next_deadline() is None
    events = trace.events
    overs = [e for e in events if e.type == "GameOver"]
    assert len(overs) == 1, f"{len(overs)} GameOver events"
    assert events[-1].type == "GameOver", f"events after GameOver: {events[-1].type}"
    over = overs[0]
    assert over.audience.public
    assert over.data["winner"] == final.winner
    assert over.data["roles"] == {s.seat: s.role for s in final.seats}
    assert over.data["members"] == [s.seat for s in final.seats if s.camp == final.winner]
    # The win is justified: the only camp not lost (G-END-3), or the wolves' C-WIN-W1.
    unlost = [c for c in final.camps_on_field if c not in final.camps_lost]
    wolves = [s for s in final.seats if s.alive and s.camp == "wolves"]
    wolves_win = final.winner == "wolves" and wolves and 2 * len(wolves) >= len(final.living())
    assert unlost == [final.winner] or wolves_win, (final.winner, unlost)


def check_after_end(trace: Trace) -> None:
    final = trace.final
    assert final is not None
    later = trace.accepted[-1][0] + timedelta(days=1)
    for cmd in (Vote(seat=1, target=2), Act(seat=1, skill="kill", targets=(2,)),
                JudgeCard(seat=3, color="red")):
        out = handle(final, cmd, later)
        assert isinstance(out, Rejection) and out.code == "game_over", out
    out = handle(final, Tick(deadline_id="day_open:2"), later)
    assert not isinstance(out, Rejection)
    state, events = out
    assert events == [] and state.model_dump() == final.model_dump()


def check_replay(trace: Trace) -> None:
    state, events = replay(trace)
    assert trace.final is not None
    assert state.model_dump() == trace.final.model_dump()
    assert events == trace.events


@GAMES
@given(rnd=st.randoms(use_true_random=False), which=st.integers(0, len(ALL_OPTION_SETS) - 1))
def test_random_games_end_well_and_replay(rnd: random.Random, which: int) -> None:
    """The default 12-seat preset dealt by seed, under the default and other option sets.
    (Every command goes through randomplay.Driver.send, which checks that handle() never raises
    and never changes the state it is given, refused or not.)"""
    trace = play(rnd, options=draw_options(rnd, which), on_step=check_step)
    check_ending(trace)
    check_after_end(trace)
    check_replay(trace)


@settings(GAMES, max_examples=8)
@given(rnd=st.randoms(use_true_random=False))
def test_fast_games_end_well_and_replay(rnd: random.Random) -> None:
    """A fast game (40-minute days, 20-minute nights, deadlines of minutes, reminders)."""
    trace = play(rnd, options=FAST_OPTIONS, schedule=FAST_GAME, on_step=check_step)
    check_ending(trace)
    check_replay(trace)


@settings(GAMES, max_examples=8)
@given(rnd=st.randoms(use_true_random=False), granularity=st.sampled_from(
    ["per_step", "per_phase"]))
def test_coarse_checks_end_or_wait_for_the_judge(rnd: random.Random, granularity: str) -> None:
    """With per-step or per-phase checks a game may halt for a judge ruling (AMB-G-03)."""
    trace = play(rnd, options={"check.granularity": granularity}, on_step=check_step)
    check_ending(trace)
    check_replay(trace)
