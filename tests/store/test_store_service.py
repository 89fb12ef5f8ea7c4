"""The service: one transaction per command, idempotency, optimistic concurrency, mirrors."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import select
from storehelp import at, classic_game, count, random_games

from bot.service import Service, state_of
from bot.store.codec import decode, encode
from bot.store.models import (
    Card,
    DeadlineRow,
    Game,
    InboxMessage,
    LogEntry,
    OutboxRow,
    Player,
    Snapshot,
)
from engine import handle
from engine.commands import JudgeCard, JudgeEnd, JudgePause, JudgeResume, Tick, Vote
from engine.events import Rejection


def test_create_game_writes_everything_in_one_go(service: Service) -> None:
    out = classic_game(service)
    state = out.state
    assert out.accepted and state.version == 0
    assert service.state("g1") == state
    assert count(service, LogEntry, game_id="g1") == len(out.events)
    assert count(service, Player, game_id="g1") == 12
    assert count(service, Card, game_id="g1") == 12
    with service.db.read() as s:
        game = s.get(Game, "g1")
        assert game is not None and game.status == "active"
        assert game.commitment == out.events[0].data["commitment"]
        assert decode(game.params)["seed"] == "seed-g1"
        dls = {(d.deadline_id, d.due) for d in s.scalars(select(DeadlineRow))}
        targets = list(s.scalars(select(OutboxRow.target).order_by(OutboxRow.id)))
    assert dls == {(d.id, d.due) for d in state.deadlines}
    assert targets.count("public") == 1  # GameCreated
    assert {f"seat:{n}" for n in range(1, 13)} <= set(targets)  # RoleDealt
    assert targets[-1] == "judge"
    # Creating the same game again is a no-op; with other parameters it is refused.
    assert classic_game(service).duplicate
    with pytest.raises(ValueError, match="exists"):
        classic_game(service, seed="another")


def test_duplicate_messages_are_applied_once(service: Service) -> None:
    classic_game(service)
    service.advance("g1", at(1, 9))
    first = service.submit("g1", Vote(seat=1, target=2), now=at(1, 10), msg_id="wx-1",
                           sender="wx-g1-1")
    assert first.accepted and not first.duplicate
    again = service.submit("g1", Vote(seat=1, target=2), now=at(1, 10, 5), msg_id="wx-1",
                           sender="wx-g1-1")
    assert again.duplicate and again.accepted
    assert again.version == first.version
    assert [e.model_dump() for e in again.events] == [e.model_dump() for e in first.events]
    # A second, different vote from seat 1 is refused; its duplicate is not applied either.
    refused = service.submit("g1", Vote(seat=1, target=3), now=at(1, 11), msg_id="wx-2",
                             sender="wx-g1-1")
    assert refused.status == "rejected" and refused.rejection is not None
    dup = service.submit("g1", Vote(seat=1, target=3), now=at(1, 11), msg_id="wx-2",
                         sender="wx-g1-1")
    assert dup.duplicate and dup.rejection == refused.rejection
    assert service.state("g1").version == first.version
    assert count(service, LogEntry, game_id="g1", msg_id="wx-1", kind="command") == 1
    assert count(service, LogEntry, game_id="g1", msg_id="wx-2") == 0
    assert count(service, InboxMessage, game_id="g1", msg_id="wx-1") == 1
    assert count(service, InboxMessage, game_id="g1", msg_id="wx-2") == 1
    with service.db.read() as s:
        replies = list(s.scalars(select(OutboxRow).where(OutboxRow.seq.is_(None))))
    assert len(replies) == 1
    assert replies[0].address == "wx-g1-1" and replies[0].dedupe_key == "g1/reply/wx-2"
    assert replies[0].text
    assert service.rebuild("g1").ok


def test_two_writers_on_one_game_never_both_win(db_url: str) -> None:
    a, b = Service(db_url), Service(db_url)
    try:
        classic_game(a)
        a.advance("g1", at(1, 9))
        v0 = a.state("g1").version
        raced = []

        def interfere() -> None:
            if not raced:  # B commits after A loaded, before A writes
                raced.append(b.submit("g1", Vote(seat=2, target=5), now=at(1, 10), msg_id="b"))

        a.before_write = interfere
        out = a.submit("g1", Vote(seat=1, target=5), now=at(1, 10, 1), msg_id="a")
        assert raced[0].accepted and out.accepted
        assert raced[0].version == v0 + 1 and out.version == v0 + 2  # A retried on B's state
        cmds = [r for r in a.log("g1") if r.kind == "command"]
        assert [r.msg_id for r in cmds[-2:]] == ["b", "a"]
        assert set(a.state("g1").votes) == {1, 2}
        assert a.rebuild("g1").ok
    finally:
        a.close()
        b.close()


def test_concurrent_threads_apply_each_message_once(db_url: str) -> None:
    services = [Service(db_url) for _ in range(3)]
    try:
        classic_game(services[0])
        services[0].advance("g1", at(1, 9))
        errors: list[BaseException] = []

        def work(k: int) -> None:
            svc = services[k]
            try:
                for seat in range(1, 13):  # every thread sends every vote: same message ids
                    svc.submit("g1", Vote(seat=seat, target=seat % 12 + 1),
                               now=at(1, 10, seat), msg_id=f"vote-{seat}")
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        state = services[0].state("g1")
        assert set(state.votes) == set(range(1, 13))
        assert all(len(posts) == 1 for posts in state.votes.values())
        cmds = [r for r in services[0].log("g1") if r.kind == "command"]
        assert sorted(r.msg_id for r in cmds if r.msg_id.startswith("vote")) == sorted(
            f"vote-{n}" for n in range(1, 13))
        assert services[0].rebuild("g1").ok
    finally:
        for svc in services:
            svc.close()


def test_games_are_isolated(service: Service) -> None:
    classic_game(service, "a")
    classic_game(service, "b", seed="other")
    service.advance("a", at(1, 9))
    service.submit("a", Vote(seat=3, target=4), now=at(1, 10), msg_id="m1")
    service.submit("b", Vote(seat=3, target=4), now=at(1, 10), msg_id="m1")  # not a duplicate
    assert service.state("a").votes and not service.state("b").votes  # b is still SETUP
    assert count(service, InboxMessage, game_id="a", msg_id="m1", outcome="accepted") == 1
    assert count(service, InboxMessage, game_id="b", msg_id="m1", outcome="rejected") == 1
    assert service.rebuild("a").ok and service.rebuild("b").ok


def test_mirrors_follow_the_state(service: Service) -> None:
    classic_game(service)
    service.advance("g1", at(1, 9))
    service.submit("g1", JudgeCard(seat=4, color="yellow"), now=at(1, 9, 30))
    state = service.state("g1")
    with service.db.read() as s:
        cards = {c.seat: (c.yellow, c.red) for c in s.scalars(select(Card))}
        dls = {(d.deadline_id, d.due) for d in s.scalars(select(DeadlineRow))}
    assert cards == {st.seat: (st.yellow, st.red) for st in state.seats}
    assert cards[4] == (1, False)
    assert dls == {(d.id, d.due) for d in state.deadlines}
    assert service.due_games(at(1, 20)) == []
    assert service.due_games(at(1, 21)) == ["g1"]


def test_receive_fires_what_is_due_first(service: Service) -> None:
    classic_game(service)
    out = service.receive("g1", Vote(seat=1, target=2), now=at(1, 10), msg_id="v1")
    assert out.accepted  # day 1 opened at 09:00 before the vote was applied
    late = service.receive("g1", Vote(seat=2, target=1), now=at(1, 21, 5), msg_id="v2")
    assert late.status == "rejected" and late.rejection.code == "no_vote_now"
    assert service.state("g1").phase == "N1"
    # The scheduler's ticks and the catching-up message agree on ids: nothing fires twice.
    assert service.fire_due(at(1, 21, 5)) == []
    ticks = [r for r in service.log("g1") if r.kind == "command" and r.type == "tick"]
    assert len({r.msg_id for r in ticks}) == len(ticks) >= 3


def test_the_game_row_records_the_end(service: Service) -> None:
    classic_game(service, roles=["wolf", "villager", "villager"], rooms={})
    service.advance("g1", at(6, 9))  # nobody acts: cards and kills end it within days
    state = service.state("g1")
    assert state.winner is not None
    with service.db.read() as s:
        game = s.get(Game, "g1")
        assert game is not None and (game.status, game.winner) == ("over", state.winner)
    assert count(service, DeadlineRow, game_id="g1") == 0
    assert service.rebuild("g1").ok


def test_a_paused_game_mirrors_no_deadline_and_an_ended_one_is_over(service: Service) -> None:
    classic_game(service)
    service.advance("g1", at(1, 12))
    assert service.receive("g1", JudgePause(), now=at(1, 12), sender="wx-judge").accepted
    assert service.deadline_rows("g1") == []  # the scheduler has nothing to wait for
    assert service.advance("g1", at(2, 12)) == []
    assert service.state("g1").paused_at == at(1, 12)
    assert not service.receive("g1", JudgeResume(), now=at(1, 13), sender="wx-g1-1").accepted
    assert service.receive("g1", JudgeResume(), now=at(1, 13), sender="wx-judge").accepted
    state = service.state("g1")
    assert [(i, due) for i, _, due in service.deadline_rows("g1")] == sorted(
        ((d.id, d.due) for d in state.deadlines), key=lambda x: (x[1], x[0]))
    assert state.deadline("day_close:1").due == at(1, 22)
    assert service.receive("g1", JudgeEnd(reason="test"), now=at(1, 14),
                           sender="wx-judge").accepted
    with service.db.read() as s:
        game = s.get(Game, "g1")
        assert game is not None and (game.status, game.winner) == ("over", None)
    assert count(service, DeadlineRow, game_id="g1") == 0
    assert service.rebuild("g1").ok


def test_snapshots_round_trip_exactly(service: Service) -> None:
    classic_game(service)
    service.advance("g1", at(3, 9))
    with service.db.read() as s:
        snap = s.get(Snapshot, "g1")
        assert snap is not None
        stored = state_of(snap.state)
    live = service.state("g1")
    assert stored.model_dump() == live.model_dump()
    assert stored.version == snap.version


def test_codec_is_exact() -> None:
    from datetime import date, datetime, time

    value = {"stages": {1: "growth", 2: "complete"}, "pair": (1, None), "at": datetime(2026, 1,
             2, 3, 4, 5, 6), "d": date(2026, 1, 1), "t": time(9, 30), "$odd": [1, {"x": ()}],
             "nested": [{3: {(1, 2): "t"}}], "plain": {"a": [1.5, True, None, "文字"]}}
    assert decode(encode(value)) == value
    assert type(decode(encode(value))["pair"]) is tuple
    with pytest.raises(TypeError):
        encode({1, 2})


def _reference_encode(value: object) -> object:
    """codec.encode as it was written first (before its fast paths and its key cache)."""
    from datetime import date, datetime, time

    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime):
        return {"$dt": value.isoformat()}
    if isinstance(value, date):
        return {"$date": value.isoformat()}
    if isinstance(value, time):
        return {"$time": value.isoformat()}
    if isinstance(value, list):
        return [_reference_encode(v) for v in value]
    if isinstance(value, tuple):
        return {"$tuple": [_reference_encode(v) for v in value]}
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {k: _reference_encode(v) for k, v in value.items()}
        return {"$map": [[_reference_encode(k), _reference_encode(v)]
                         for k, v in value.items()]}
    raise TypeError(value)


def test_codec_key_cache_never_changes_an_encoding() -> None:
    # the same key sets again (cached), then keys that look like them but are not plain
    values = [{"a": 1, "b": {"c": [1, (2, 3)]}}, {"a": 2, "b": {"c": []}}, {"$a": 1, "b": 2},
              {1: "x", 2: "y"}, {"a": {1: 2}}, {"b": 1, "a": 2}, {(1, 2): "t"}, {"a": 3}, {}]
    for _ in range(2):
        for v in values:
            assert repr(encode(v)) == repr(_reference_encode(v))
    from engine import new_game

    for game in random_games(3, "codec"):  # every state, event and command of real games
        state, events = new_game(**game.args)
        dumps = [state.model_dump(), *(e.model_dump() for e in events)]
        for step in game.steps:
            dumps.append(step.command.model_dump())
            out = handle(state, step.command, step.now)
            if not isinstance(out, Rejection):
                state, events = out
                dumps += [state.model_dump(), *(e.model_dump() for e in events)]
        for v in dumps:
            assert repr(encode(v)) == repr(_reference_encode(v))


def test_deadlines_passed_while_down_fire_once_in_order(db_url: str) -> None:
    a, b = Service(db_url), Service(db_url)
    try:
        classic_game(a)
        expected = a.state("g1")
        # What the deadlines would do on time, one by one (the engine alone):
        fired = []
        while (dl := expected.next_deadline()) is not None and dl.due <= at(2, 10):
            out = handle(expected, Tick(deadline_id=dl.id), dl.due)
            assert not isinstance(out, Rejection)
            expected = out[0]
            fired.append(dl.id)
        # Two processes come back up at once and both catch up.
        threads = [threading.Thread(target=svc.fire_due, args=(at(2, 10),)) for svc in (a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ticks = [r.body["deadline_id"] for r in a.log("g1") if r.type == "tick"]
        assert ticks == fired
        assert a.state("g1").model_dump() == expected.model_dump()
        assert a.fire_due(at(2, 10)) == [] and a.rebuild("g1").ok
    finally:
        a.close()
        b.close()
