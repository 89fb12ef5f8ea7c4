"""engine.clone.working_copy, the lazy copy handle() works on, and Event.trusted.

The working copy copies each container field of the state the first time it is read, and each
seat the first time it is handed out (SeatsOnDemand). These tests check that whatever is done
through it never reaches the source state, that settling it gives an ordinary state equal to
`clone`'s, and that the engine's unvalidated events equal validated ones. (The property tests
check the contract end to end on every command of random games.)
"""

from __future__ import annotations

import random

from randomplay import Step, random_player

from engine.clone import SeatsOnDemand, clone, settle, view, working_copy
from engine.events import Audience, Event
from engine.model import GameState, Seat
from engine.ruleset import ruleset_names


def _states(ruleset: str) -> list[GameState]:
    states: list[GameState] = []
    driver = random_player(ruleset)[0](random.Random(3), seed="wc-3", ruleset=ruleset)
    driver.verify_input = False

    def keep(step: Step) -> None:
        states.append(step.before)

    driver.on_step = keep
    driver.play()
    return states[::5]


def _same(a: GameState, b: GameState) -> None:
    assert a == b
    assert a.model_dump_json() == b.model_dump_json()
    assert a.model_fields_set == b.model_fields_set
    assert type(a.seats) is list


def test_settled_untouched_copy_equals_the_state() -> None:
    for state in [s for ruleset in ruleset_names() for s in _states(ruleset)]:
        work = working_copy(state)
        settle(work)
        _same(work, state)


def test_changes_through_the_working_copy_never_reach_the_state() -> None:
    for state in [s for ruleset in ruleset_names() for s in _states(ruleset)]:
        before = clone(state)
        work = working_copy(state)
        assert isinstance(view(work, "seats"), list)  # a view copies nothing
        assert "seats" not in work.__dict__
        work.seat(1).alive = not work.seat(1).alive  # via __getitem__
        work.seats[-1].statuses["x"] = 1  # negative index
        for st in work.seats[1:3]:  # slice
            st.skills["z"] = "lost"
        for st in work.seats:  # iteration
            st.yellow += 1
        work.seats.sort(key=lambda s: -s.seat)
        work.seats.sort(key=lambda s: s.seat)
        popped = work.seats.pop()
        popped.red = True
        work.deadlines.clear()
        work.votes.setdefault(1, []).clear()
        work.data["x"] = [1]
        work.news.setdefault("outs", []).append(99)
        if work.night is not None:
            work.night.data["x"] = 1
            for slot in work.night.slots.values():
                slot.final = not slot.final
        work.schedule.opens[40] = work.schedule.open_at(1)
        _same(state, before)
        settle(work)
        assert type(work.seats) is list and len(work.seats) == len(state.seats) - 1
        _same(state, before)


def test_seats_on_demand_copies_once_and_shares_the_unread() -> None:
    seats = [Seat(seat=i, role="villager", camp="village") for i in (1, 2, 3)]
    lazy = SeatsOnDemand(seats)
    first = lazy[0]
    assert first is not seats[0] and first == seats[0]
    assert lazy[0] is first  # copied once
    assert list.__getitem__(lazy, 1) is seats[1]  # not read: still the source's
    assert all(a is not b for a, b in zip(lazy.copy(), seats, strict=True))


def test_a_refused_command_after_changes_leaves_everything() -> None:
    """A command that changes the working copy and then refuses: the caller's state is as it
    was (the engine just drops the copy)."""
    for state in _states("classic"):
        before = clone(state)
        work = working_copy(state)
        work.seat(2).alive = False
        work.votes.clear()
        del work  # refused: dropped, never settled
        _same(state, before)


def test_trusted_events_equal_validated_ones() -> None:
    events: list[Event] = []
    for ruleset in ruleset_names():
        driver = random_player(ruleset)[0](random.Random(5), seed="wc-5", ruleset=ruleset)
        driver.verify_input = False
        events += driver.play().events
    assert len(events) > 100
    for ev in events:
        checked = Event(type=ev.type, class_version=ev.class_version, at=ev.at, phase=ev.phase,
                        audience=ev.audience, data=ev.data)
        assert checked == ev
        assert checked.model_dump_json() == ev.model_dump_json()
        assert checked.model_fields_set == ev.model_fields_set
    for fast, slow in ((Audience.everyone(), Audience(public=True)), (Audience.judge(), Audience()),
                       (Audience.to(3, 1, 3), Audience(seats=(1, 3)))):
        assert fast == slow
        assert fast.model_fields_set == slow.model_fields_set
        assert fast.model_dump_json(exclude_unset=True) == slow.model_dump_json(exclude_unset=True)
