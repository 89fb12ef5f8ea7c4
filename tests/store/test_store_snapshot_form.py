"""A snapshot in the pydantic form (bot/store/codec.py `encode_state`, engine/exact.py `EXACT`):
pydantic's own JSON of the state, its untyped fields tagged. It must read back as the very state
it was (the engine must not play on differently from a stored state), an old snapshot
(`encode(state.model_dump())`) must still read, and the state's plain JSON (what the bench and
the pinned digests hash) must stay what it was."""

from __future__ import annotations

import json
import random

import pytest
from randomplay import Step, random_player
from sqlalchemy import select
from storehelp import classic_game

from bot.service import Service
from bot.store.codec import encode, encode_state, state_of
from bot.store.db import RawJSON, _dumps
from bot.store.models import Snapshot
from engine import handle
from engine.events import Rejection
from engine.model import GameState
from engine.ruleset import ruleset_names

# Every registered ruleset, each of its random player's games (tests/randomplay.py GAMES).
CASES = [(ruleset, args) for ruleset in ruleset_names() for args in random_player(ruleset)[1]]


def _steps(games: int = 2) -> list[Step]:
    steps: list[Step] = []
    for ruleset, args in CASES:
        for i in range(games):
            driver = random_player(ruleset)[0](random.Random(i), seed=f"form-{i}",
                                               ruleset=ruleset, **args)
            driver.verify_input = False
            driver.on_step = steps.append
            driver.play()
    return steps


def _stored(state: GameState) -> GameState:
    """The state as the store writes it and reads it back (the JSON text through json)."""
    return state_of(json.loads(_dumps(encode_state(state))))


@pytest.fixture(scope="module")
def steps() -> list[Step]:
    return _steps()


def test_every_state_of_real_games_reads_back_as_it_was(steps: list[Step]) -> None:
    states = [s.before for s in steps] + [s.result[0] for s in steps
                                          if not isinstance(s.result, Rejection)]
    assert len(states) > 500
    for state in states:
        back = _stored(state)
        # the same values of the same types: a tuple stays a tuple, an int key an int key
        assert repr(back.model_dump()) == repr(state.model_dump())
        assert back.model_dump_json() == state.model_dump_json()


def test_the_engine_plays_on_alike_from_a_stored_state(steps: list[Step]) -> None:
    for step in steps[::3]:
        again = handle(_stored(step.before), step.command, step.now)
        if isinstance(step.result, Rejection):
            assert again == step.result
            continue
        assert not isinstance(again, Rejection)
        state, events = again
        assert repr(state.model_dump()) == repr(step.result[0].model_dump())
        assert [e.model_dump() for e in events] == [e.model_dump() for e in step.result[1]]


def test_a_snapshot_stored_in_the_old_form_still_reads(steps: list[Step]) -> None:
    for step in steps[::25]:
        old = json.loads(_dumps(encode(step.before.model_dump())))
        assert "$exact" not in old
        assert repr(state_of(old).model_dump()) == repr(step.before.model_dump())


def test_untyped_values_are_tagged_in_the_stored_form_only() -> None:
    from engine.exact import EXACT
    from engine.model import Night

    state = _steps(1)[40].before
    night = Night(day=9, data={"stages": {1: "growth"}, "pair": (1, 2)})
    state = state.model_copy(update={"night": night, "data": {"marks": {3: (4,)}}})
    plain = json.loads(state.model_dump_json())
    exact = json.loads(state.model_dump_json(context=EXACT))
    assert plain["night"]["data"] == {"stages": {"1": "growth"}, "pair": [1, 2]}
    assert exact["night"]["data"] == {"stages": {"$map": [[1, "growth"]]},
                                      "pair": {"$tuple": [1, 2]}}
    assert exact["data"] == {"marks": {"$map": [[3, {"$tuple": [4]}]]}}
    back = _stored(state)
    assert back.night is not None and back.night.data == {"stages": {1: "growth"}, "pair": (1, 2)}
    assert back.data == {"marks": {3: (4,)}}


def test_the_store_writes_a_snapshot_as_the_json_it_is(service: Service) -> None:
    text = RawJSON('{"$exact":{"a":1}}')
    assert _dumps(text) is text  # written as it is, not quoted as a string
    classic_game(service)
    with service.db.read() as s:
        stored = s.scalar(select(Snapshot.state).where(Snapshot.game_id == "g1"))
    assert set(stored) == {"$exact"}
    assert state_of(stored).model_dump() == service.state("g1").model_dump()
