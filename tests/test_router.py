"""The pure router (bot/router.py): one message per recipient per commit, the answer marked,
the judge's feed by its setting, the public room, and who is told once out. No database."""

from __future__ import annotations

import random
from collections import Counter
from datetime import datetime

import pytest
from randomplay import play, start_game
from randomplay_anomaly import play_anomaly

from bot.feed import FEEDS
from bot.render import messages_for, render_event
from bot.router import BROADCAST, EVERY_SEAT, PAGE, Asker, RoomsView, route
from engine import handle
from engine.commands import Act, Command, Tick, Vote
from engine.events import Event, Rejection
from engine.model import GameState

PUBLIC = RoomsView(frozenset({"public"}))


def commits(seed: int) -> list[tuple[GameState, GameState, Command | None, list[Event], int]]:
    """(before, after, command, events, head) of every commit of a random game, the
    creation first."""
    rnd = random.Random(seed)
    trace = play(rnd) if seed % 2 else play_anomaly(rnd)
    out: list[tuple[GameState, GameState, Command | None, list[Event], int]] = [
        (trace.initial_state, trace.initial_state, None, trace.initial_events, 0)]
    state, head = trace.initial_state, len(trace.initial_events)
    for at, cmd, _ in trace.accepted:
        result = handle(state, cmd, at)
        assert not isinstance(result, Rejection)
        out.append((state, result[0], cmd, result[1], head))
        head += 1 + len(result[1])
        state = result[0]
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("rooms", [RoomsView(), PUBLIC])
def test_one_message_per_recipient_per_commit_with_every_text_in_order(
        seed: int, rooms: RoomsView) -> None:
    keys: Counter[str] = Counter()
    for before, after, cmd, events, head in commits(seed):
        dl = before.deadline(cmd.deadline_id) if isinstance(cmd, Tick) else None
        messages = route("G", after, events, head=head, cmd=cmd, rooms=rooms, feed="all",
                         deadline=dl, dm_out=True)
        recipients = [(m.channel, m.target) for m in messages]
        assert len(recipients) == len(set(recipients)), recipients
        keys.update(m.key for m in messages)
        again = route("G", after, events, head=head, cmd=cmd, rooms=rooms, feed="all",
                      deadline=dl, dm_out=True)
        assert again == messages  # the same commit, the same messages and keys
        for m in messages:
            if not m.target.startswith("seat:"):
                continue
            seat = int(m.target[5:])
            # each seat's text: what each event tells it, in event order, one per line
            want = [t for e in events
                    if (t := messages_for(e, seat, after.ruleset))
                    and (not e.audience.public or e.type in EVERY_SEAT
                         or (e.type in BROADCAST and not rooms.names))]
            assert m.text == "\n".join(want)
    assert max(keys.values()) == 1  # no two messages of a game share a dedupe key


def test_the_start_is_one_dm_per_seat_and_one_to_the_judge() -> None:
    _, state, events = start_game("1" * 64)
    messages = route("G", state, events, head=0, cmd=None)
    # (and the public page's copy of the first post: no transport sends it)
    assert [m.text for m in messages if m.channel == PAGE] == [
        render_event(events[0], state.ruleset)]
    messages = [m for m in messages if m.channel != PAGE]
    assert sorted(m.target for m in messages) == sorted(
        [f"seat:{n}" for n in range(1, 13)] + ["judge"])
    for m in messages:
        if m.target != "judge":
            n = int(m.target[5:])
            assert "随机种子承诺" in m.text and f"你的座位：{n}号" in m.text
            assert "你的身份：" in m.text


def test_the_answer_is_marked_for_the_sender_only() -> None:
    day = next(c for c in commits(1) if c[2] is not None and c[2].kind == "vote")
    before, after, cmd, evs, head = day
    assert isinstance(cmd, Vote)
    asked = route("G", after, evs, head=head, cmd=cmd, feed="all",
                  asker=Asker(seat=cmd.seat))
    assert [m.target for m in asked if m.reply] in ([f"seat:{cmd.seat}"], [])
    judge = route("G", after, evs, head=head, cmd=cmd, feed="off",
                  asker=Asker(judge=True, own_judge=True))
    assert [m.target for m in judge if m.reply] == ["judge"]


def test_the_judges_feed_setting() -> None:
    games = commits(1)
    votes = [c for c in games if c[2] is not None and c[2].kind == "vote"]
    ticks = [c for c in games if isinstance(c[2], Tick)]
    resolving = [c for c in games if any(e.type == "NightResolving" for e in c[3])]
    assert votes and ticks and resolving

    def judged(c: tuple[GameState, GameState, Command | None, list[Event], int],
               feed: str) -> list[str]:
        before, after, cmd, evs, head = c
        dl = before.deadline(cmd.deadline_id) if isinstance(cmd, Tick) else None
        return [m.text for m in route("G", after, evs, head=head, cmd=cmd, feed=feed,
                                      deadline=dl) if m.target == "judge"]

    vote = votes[0]
    assert isinstance(vote[2], Vote)
    assert judged(vote, "all") and judged(vote, "summary") == [] == judged(vote, "off")
    said = judged(vote, "all")[0]
    assert said.startswith("【G】") and f"{vote[2].seat}号 投票给" in said
    assert judged(resolving[0], "summary") and not judged(resolving[0], "off")
    close = next(c for c in ticks if (dl := c[0].deadline(getattr(c[2], "deadline_id", "")))
                 and dl.kind == "day_close")
    assert "关门" in judged(close, "summary")[0]
    creation = games[0]
    assert all(judged(creation, feed) for feed in FEEDS)  # the start, always


def test_a_public_room_gets_each_announcement_once() -> None:
    opened = next(c for c in commits(1) if any(e.type == "DayOpened" for e in c[3]))
    before, after, cmd, evs, head = opened
    in_room = route("G", after, evs, head=head, cmd=cmd, rooms=PUBLIC)
    by_dm = route("G", after, evs, head=head, cmd=cmd)
    assert [m.channel for m in in_room].count("public") == 1
    day = next(e for e in evs if e.type == "DayOpened")
    assert not any(render_event(day, after.ruleset) in m.text for m in in_room
                   if m.channel == "dm")
    assert sum(render_event(day, after.ruleset) in m.text for m in by_dm
               if m.channel == "dm") == sum(st.alive for st in after.seats)


def test_seats_out_are_told_the_announcements_only_with_dm_out() -> None:
    for before, after, cmd, evs, head in commits(3):
        out_before = {st.seat for st in before.seats if not st.alive}
        if not out_before or not any(e.type in BROADCAST for e in evs):
            continue
        quiet = route("G", after, evs, head=head, cmd=cmd)
        told = route("G", after, evs, head=head, cmd=cmd, dm_out=True)
        announced = [render_event(e, after.ruleset) for e in evs if e.type in BROADCAST]
        for n in out_before:
            assert any(a in m.text for m in told if m.target == f"seat:{n}" for a in announced)
            assert not any(a in m.text for m in quiet if m.target == f"seat:{n}"
                           for a in announced)
        went_out = {e.data["seat"] for e in evs if e.type == "SeatOut"}
        for n in went_out:  # who goes out in this very commit still reads why
            assert any(m.target == f"seat:{n}" for m in quiet)
        return
    pytest.fail("no announcement after a seat went out in this game")


def test_a_group_room_gets_only_what_all_its_members_may_read() -> None:
    state = start_game("3" * 64)[1]
    ev = Event(type="KillRecorded", at=datetime(2026, 3, 1, 22), phase="N1",
               audience={"seats": (1, 2), "group": "wolves"},  # type: ignore[arg-type]
               data={"by": 1, "target": 5})
    cmd = Act(seat=1, skill="kill", targets=(5,))
    exact = RoomsView(frozenset({"wolves"}), {"wolves": frozenset({1, 2})})
    spied = RoomsView(frozenset({"wolves"}), {"wolves": frozenset({1, 2, -1})})
    assert [m.target for m in route("G", state, [ev], head=1, cmd=cmd, rooms=exact)
            if m.target != "judge"] == ["group:wolves"]
    assert sorted(m.target for m in route("G", state, [ev], head=1, cmd=cmd, rooms=spied)
                  if m.target != "judge") == ["seat:1", "seat:2"]
