"""Games stored by the engine before the issue-10 restructuring still replay the same way.

tests/fixtures/stored_games/*.json were made once by the engine of commit a824fdf (see make.py
there, never to be run again to make this test pass): each holds a whole random game as the
store keeps it (the store's exact codec over `model_dump()`): new_game's arguments, the initial
snapshot and events, every command with its `now` and what came back, and the final snapshot.
Today's engine must make the same initial state, give the same events to every accepted
command and the same refusal to every refused one, and end in the same final state, with the
records read through the upcasters (engine.commands.parse_command, engine.events.parse_event).

The upcaster hooks themselves are tested on synthetic old records.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from bot.store.codec import decode
from engine import handle, new_game
from engine.commands import (
    COMMAND_VERSIONS,
    Vote,
    command_upcaster,
    parse_command,
    upcast_command,
)
from engine.events import EVENT_VERSIONS, Rejection, event_upcaster, parse_event
from engine.model import GameState

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "stored_games"
GAMES = sorted(FIXTURES.glob("*.json"))


def test_fixtures_cover_both_rulesets() -> None:
    rulesets = {json.loads(p.read_text(encoding="utf-8"))["game_args"]["ruleset"] for p in GAMES}
    assert rulesets == {"classic", "anomaly"}


@pytest.mark.parametrize("path", GAMES, ids=lambda p: p.stem)
def test_stored_game_replays(path: Path) -> None:
    game: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    state, events = new_game(**decode(game["game_args"]))
    assert state == GameState.model_validate(decode(game["initial_state"]))
    assert events == [parse_event(decode(e)) for e in game["initial_events"]]
    accepted = 0
    for i, step in enumerate(game["steps"]):
        now = decode(step["now"])
        assert isinstance(now, datetime)
        out = handle(state, parse_command(decode(step["command"])), now)
        where = f"{path.stem} step {i}: {step['command']}"
        if "rejection" in step:
            assert isinstance(out, Rejection), where
            assert out == Rejection.model_validate(decode(step["rejection"])), where
            continue
        assert not isinstance(out, Rejection), f"{where} refused: {out}"
        state, events = out
        accepted += 1
        assert state.version == step["version"], where
        assert [e.model_dump() for e in events] == [
            parse_event(decode(e)).model_dump() for e in step["events"]], where
    assert accepted
    final = GameState.model_validate(decode(game["final_state"]))
    assert state.model_dump() == final.model_dump()
    assert (state.winner, state.halted) == (game["winner"], game["halted"])


# the upcaster hooks, on synthetic old records ------------------------------------------------


def test_command_records_without_a_version_are_version_1() -> None:
    assert parse_command({"kind": "vote", "seat": 3, "target": 5}) == Vote(seat=3, target=5)
    assert parse_command({"kind": "vote", "seat": 3, "target": 5, "class_version": 1}) == Vote(
        seat=3, target=5)


def test_an_old_command_record_is_upcast(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend `vote` is at version 3: version 1 said `to`, version 2 `choice`, 3 `target`."""
    monkeypatch.setitem(COMMAND_VERSIONS, "vote", 3)
    from engine import commands

    def v1(record: dict[str, Any]) -> dict[str, Any]:
        record["choice"] = record.pop("to")
        return record

    def v2(record: dict[str, Any]) -> dict[str, Any]:
        record["target"] = record.pop("choice")
        return record

    monkeypatch.setattr(commands, "_COMMAND_UPCASTERS", dict(commands._COMMAND_UPCASTERS))
    command_upcaster("vote", 1)(v1)
    command_upcaster("vote", 2)(v2)
    assert parse_command({"kind": "vote", "seat": 3, "to": 5}) == Vote(seat=3, target=5)
    assert parse_command({"kind": "vote", "seat": 3, "choice": 5, "class_version": 2}) == Vote(
        seat=3, target=5)
    assert parse_command({"kind": "vote", "seat": 3, "target": 5, "class_version": 3}) == Vote(
        seat=3, target=5)
    assert upcast_command({"kind": "tick", "deadline_id": "x"}) == {"kind": "tick",
                                                                      "deadline_id": "x"}
    with pytest.raises(ValueError, match="newer"):
        parse_command({"kind": "vote", "seat": 3, "target": 5, "class_version": 4})


def test_an_old_event_record_is_upcast(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend `VotePosted` is at version 2, which renamed `voter` to `seat`: an old stored
    record reads as version 2, and the engine emits version 2."""
    from engine import events as events_module

    monkeypatch.setitem(EVENT_VERSIONS, "VotePosted", 2)
    monkeypatch.setattr(events_module, "_EVENT_UPCASTERS", dict(events_module._EVENT_UPCASTERS))

    @event_upcaster("VotePosted", 1)
    def rename(record: dict[str, Any]) -> dict[str, Any]:
        data = dict(record["data"])
        data["seat"] = data.pop("voter")
        return {**record, "data": data}

    old = {"type": "VotePosted", "at": datetime(2026, 1, 1, 10), "phase": "D1",
           "audience": {"public": True}, "data": {"voter": 3, "target": 5}}
    ev = parse_event(old)
    assert ev.class_version == 2 and ev.data == {"seat": 3, "target": 5}
    assert parse_event({**old, "class_version": 2, "data": {"seat": 3}}).data == {"seat": 3}
    untouched = parse_event({**old, "type": "VoteResult"})
    assert untouched.class_version == 1 and untouched.data == old["data"]
    with pytest.raises(ValueError, match="newer"):
        parse_event({**old, "class_version": 3})
    # the engine emits the current version
    from datetime import date
    state, _ = new_game(ruleset="classic", game_id="v", seed="v", start=date(2026, 1, 1),
                        players=12)
    for deadline in ("day_open:1",):
        out = handle(state, {"kind": "tick", "deadline_id": deadline}, datetime(2026, 1, 1, 9))
        assert not isinstance(out, Rejection)
        state = out[0]
    out = handle(state, Vote(seat=1, target=2), datetime(2026, 1, 1, 10))
    assert not isinstance(out, Rejection)
    posted = [e for e in out[1] if e.type == "VotePosted"]
    assert posted and all(e.class_version == 2 for e in posted)
