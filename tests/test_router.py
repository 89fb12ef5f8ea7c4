"""The pure router (bot/router.py): one message per recipient per commit, the answer marked,
the judge's feed by its setting, the public room, and who is told once out; a public event
reaches whom its payload model's declared reach says (engine/payloads.py `Reach`), for every
public event type of every registered ruleset, and one that declares none is refused. No
database."""

from __future__ import annotations

import ast
import random
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path
from types import UnionType
from typing import Any, Union, get_args, get_origin

import pytest
from randomplay import random_game, start_game

import bot.render as render
from bot import undo
from bot.feed import FEEDS
from bot.render import dm_order, messages_for, render_event
from bot.router import PAGE, Asker, RoomsView, UndeclaredReach, route
from engine import handle
from engine.commands import Act, Command, Tick, Vote
from engine.events import Audience, Event, Rejection
from engine.model import GameState
from engine.payloads import PAYLOADS, Payload, Reach, empty, public_reach
from engine.ruleset import get_ruleset, ruleset_names

ROOT = Path(__file__).resolve().parents[1]
RULESETS = ruleset_names()
PUBLIC = RoomsView(frozenset({"public"}))
Commit = tuple[GameState, GameState, Command | None, list[Event], int]


def commits(ruleset: str, seed: int) -> list[Commit]:
    """(before, after, command, events, head) of every commit of a random game of `ruleset`,
    the creation first."""
    trace = random_game(ruleset, random.Random(seed), seed)
    out: list[Commit] = [(trace.initial_state, trace.initial_state, None, trace.initial_events, 0)]
    state, head = trace.initial_state, len(trace.initial_events)
    for at, cmd, _ in trace.accepted:
        result = handle(state, cmd, at)
        assert not isinstance(result, Rejection)
        out.append((state, result[0], cmd, result[1], head))
        head += 1 + len(result[1])
        state = result[0]
    return out


# Whom each event reaches, in the README's words ("Messages"), from its declared reach: the
# router's answers are checked against these.
def dm_reads(ev: Event, seat: int, after: GameState, went_out: set[int], room: bool,
             dm_out: bool) -> bool:
    """Whether `seat` reads `ev` in its DM (no group room here: a group's events are DMs)."""
    if not ev.audience.public:
        return seat in ev.audience.seats
    reach = public_reach(ev.type)
    if reach is Reach.EVERY_SEAT:  # the end: every seat, in the game or out, always
        return True
    if reach is Reach.TABLE:  # without a public room: the seats in the game, and dm_out's
        return not room and (dm_out or after.seat(seat).alive or seat in went_out)
    return False  # the forum's only


def room_reads(ev: Event) -> bool:
    return ev.audience.public and public_reach(ev.type) in (Reach.TABLE, Reach.EVERY_SEAT)


def check_reach(after: GameState, events: list[Event], messages: list[Any], room: bool,
                dm_out: bool) -> None:
    """Each seat's DM and the public room (without one: the public page's copy) hold exactly
    the texts they should, in order."""
    got = {m.target: m.text for m in messages if m.channel != "judge"}
    channels = {m.target: m.channel for m in messages}
    went_out = {e.data["seat"] for e in events if e.type == "SeatOut"}
    last, own_words = dm_order()
    for st in after.seats:
        # in event order, but a seat's own news first (the texts read `last` after the rest),
        # and no public line about its own card under its own words (templates.yaml `dm`)
        own = {e.type for e in events if not e.audience.public
               and e.data.get("seat") == st.seat and st.seat in e.audience.seats}
        want = [(e.audience.public and e.type in last, t) for e in events
                if dm_reads(e, st.seat, after, went_out, room, dm_out)
                and not (e.audience.public and e.data.get("seat") == st.seat
                         and own_words.get(e.type) in own)
                and (t := messages_for(e, st.seat, after.ruleset))]
        assert got.pop(f"seat:{st.seat}", "") == "\n".join(
            t for _, t in sorted(want, key=lambda x: x[0])), (st.seat, events)
    want = [t for e in events if room_reads(e) and (t := render_event(e, after.ruleset))]
    assert got.pop("public", "") == "\n".join(want), events
    if want:
        assert channels["public"] == ("public" if room else PAGE)
    assert not got, got  # nobody else


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("room", [False, True], ids=["channel=dm", "channel=room"])
@pytest.mark.parametrize("dm_out", [False, True], ids=["dm_out=false", "dm_out=true"])
def test_one_message_per_recipient_per_commit_with_every_text_in_order(
        ruleset: str, seed: int, room: bool, dm_out: bool) -> None:
    """Random games of every ruleset, with public.channel=dm and room and public.dm_out both
    ways: each seat and the room get, per commit, exactly what each event tells them."""
    keys: Counter[str] = Counter()
    for before, after, cmd, events, head in commits(ruleset, seed):
        dl = before.deadline(cmd.deadline_id) if isinstance(cmd, Tick) else None
        messages = route("G", after, events, head=head, cmd=cmd,
                         rooms=PUBLIC if room else RoomsView(), feed="all", deadline=dl,
                         dm_out=dm_out)
        recipients = [(m.channel, m.target) for m in messages]
        assert len(recipients) == len(set(recipients)), recipients
        keys.update(m.key for m in messages)
        again = route("G", after, events, head=head, cmd=cmd,
                      rooms=PUBLIC if room else RoomsView(), feed="all", deadline=dl,
                      dm_out=dm_out)
        assert again == messages  # the same commit, the same messages and keys
        check_reach(after, events, messages, room, dm_out)
    assert max(keys.values()) == 1  # no two messages of a game share a dedupe key


# every public event type ------------------------------------------------------------------
def _source_dirs(ruleset: str) -> list[Path]:
    """Where a ruleset's events are made: the engine, the shared mechanisms, its package."""
    package = Path(sys.modules[type(get_ruleset(ruleset)).__module__].__file__ or "").parent
    return [ROOT / "engine", ROOT / "rulesets" / "common", package]


def announced_in(dirs: list[Path]) -> set[str]:
    """The event types the code under `dirs` makes public: `ctx.announce("Type", …)`, and an
    `emit("Type", …)` whose audience may be everyone (`Audience.everyone()`)."""
    found: set[str] = set()
    for path in (p for d in dirs for p in sorted(d.rglob("*.py"))):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.args and isinstance(node.args[0], ast.Constant)):
                continue
            if node.func.attr == "announce" or (
                    node.func.attr == "emit" and "everyone" in ast.unparse(node)):
                found.add(str(node.args[0].value))
    return found


def public_types(ruleset: str) -> set[str]:
    """Every event type `ruleset` may tell everyone, and the undo's notices (bot/undo.py)."""
    return announced_in(_source_dirs(ruleset)) | {undo.NOTICE, undo.NOTICE_PUBLIC}


def example(annotation: Any, ruleset: str) -> Any:
    """A value of the type `annotation` for an example payload (a text: the ruleset's name,
    which every word of the renderer can read)."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, UnionType):
        return example(next(a for a in args if a is not type(None)), ruleset)
    if origin is list:
        return [1, 2] if args[0] is int else []
    if origin is dict:
        return {1: example(args[1], ruleset)}
    return {int: 1, float: 1.5, bool: False, str: ruleset}[annotation]


def example_event(type_: str, ruleset: str) -> Event:
    """An event of type `type_` told to everyone; a wording chosen by a field's value
    (`by: how`) gets its template's first case."""
    model = PAYLOADS[type_]
    data = {name: example(f.annotation, ruleset) for name, f in model.model_fields.items()}
    template = render._templates(ruleset)["events"].get(type_)
    if isinstance(template, dict) and template["by"] in data and isinstance(
            data[template["by"]], str):
        data[template["by"]] = next(iter(template["cases"]))
    model.model_validate(data)  # a payload the event could really carry
    return Event(type=type_, at=datetime(2026, 3, 2, 10), phase="D2",
                 audience=Audience.everyone(), data=data)


def a_state_with_seats_out(ruleset: str) -> GameState:
    """A state of a random game with two seats or more out, the game still on."""
    for seed in range(10):
        for _, after, _, _, _ in commits(ruleset, seed):
            if not after.over and sum(not st.alive for st in after.seats) >= 2:
                return after
    raise AssertionError(f"no {ruleset} game with two seats out")


def test_the_scan_finds_the_public_events() -> None:
    found = announced_in(_source_dirs("classic"))
    assert {"DayOpened", "VotePosted", "RedCard", "GameOver", "BadgeTorn"} <= found
    assert "SeatOut" not in found and "RoleDealt" not in found  # (a note, a private one)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_every_public_event_type_declares_its_reach_and_has_words(ruleset: str) -> None:
    """An announcement the router would not know whom to tell fails here, before any game
    plays it; one with no template would reach nobody with words (an empty one is a choice:
    the standard board's NoSheriff, which its BadgeLost says)."""
    undeclared = sorted(t for t in public_types(ruleset) if public_reach(t) is None)
    assert not undeclared, f"public event types with no `reach` on their payload model " \
                           f"(engine/payloads.py Reach): {undeclared}"
    wordless = sorted(t for t in public_types(ruleset) if public_reach(t) is not Reach.FORUM
                      and t not in render._templates(ruleset)["events"])
    assert not wordless, f"{ruleset}: announcements with no template: {wordless}"


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("room", [False, True], ids=["channel=dm", "channel=room"])
@pytest.mark.parametrize("dm_out", [False, True], ids=["dm_out=false", "dm_out=true"])
def test_every_public_event_type_reaches_every_seat_it_should(
        ruleset: str, room: bool, dm_out: bool) -> None:
    """Each public event type of the ruleset (those no random game plays too: the judge's
    pause, the undo's notice …), in a commit where one seat goes out and others are out
    already: the room, every seat in the game, the one going out, and those out before (only
    with dm_out, or for the end) each get it or not as its declared reach says."""
    state = a_state_with_seats_out(ruleset)
    out = [st.seat for st in state.seats if not st.alive]
    going = Event(type="SeatOut", at=datetime(2026, 3, 2, 10), phase="D2",
                  audience=Audience.judge(), data={"seat": out[0], "cause": "vote"})
    for type_ in sorted(public_types(ruleset)):
        events = [going, example_event(type_, ruleset)]
        messages = route("G", state, events, head=5, cmd=None,
                         rooms=PUBLIC if room else RoomsView(), dm_out=dm_out)
        check_reach(state, events, messages, room, dm_out)
        told = {m.target for m in messages if m.channel not in ("judge", PAGE)}
        page = {m.target for m in messages if m.channel == PAGE}
        reach = public_reach(type_)
        if not render_event(events[1], ruleset):
            assert not told and not page, (type_, told)  # left empty on purpose: told nobody
            continue
        if reach is Reach.EVERY_SEAT or (reach is Reach.TABLE and not room):
            assert f"seat:{out[0]}" in told and (f"seat:{out[1]}" in told) == (
                dm_out or reach is Reach.EVERY_SEAT), (type_, told)
        assert ("public" in told) == (room and reach is not Reach.FORUM), (type_, told)
        # without a room, the public page keeps its copy of what the table is told
        assert ("public" in page) == (not room and reach is not Reach.FORUM), (type_, page)


def test_a_public_event_whose_type_declares_no_reach_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A new announcement without its declaration fails loudly, never reaching nobody."""
    monkeypatch.setattr("engine.payloads.PAYLOADS", dict(PAYLOADS))
    empty("Announced")  # a payload model with no reach
    state = start_game("4" * 64)[1]
    ev = Event(type="Announced", at=datetime(2026, 3, 1, 10), phase="D1",
               audience=Audience.everyone(), data={})
    with pytest.raises(UndeclaredReach, match="Announced"):
        route("G", state, [ev], head=1, cmd=None)
    private = ev.model_copy(update={"audience": Audience.to(3)})
    assert [m.target for m in route("G", state, [private], head=1, cmd=None)
            if m.channel == "dm"] in ([], ["seat:3"])  # a private one needs no reach


def test_a_reach_is_a_declaration_of_the_model() -> None:
    assert PAYLOADS["DayOpened"].reach is Reach.TABLE and issubclass(PAYLOADS["DayOpened"], Payload)
    assert public_reach("GameOver") is Reach.EVERY_SEAT
    assert public_reach("VotePosted") is Reach.FORUM
    assert public_reach("RoleDealt") is None  # never public


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
    day = next(c for c in commits("classic", 1) if c[2] is not None and c[2].kind == "vote")
    before, after, cmd, evs, head = day
    assert isinstance(cmd, Vote)
    asked = route("G", after, evs, head=head, cmd=cmd, feed="all",
                  asker=Asker(seat=cmd.seat))
    assert [m.target for m in asked if m.reply] in ([f"seat:{cmd.seat}"], [])
    judge = route("G", after, evs, head=head, cmd=cmd, feed="off",
                  asker=Asker(judge=True, own_judge=True))
    assert [m.target for m in judge if m.reply] == ["judge"]


def test_the_judges_feed_setting() -> None:
    games = commits("classic", 1)
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
    opened = next(c for c in commits("classic", 1) if any(e.type == "DayOpened" for e in c[3]))
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
    for before, after, cmd, evs, head in commits("classic", 3):
        out_before = {st.seat for st in before.seats if not st.alive}
        if not out_before or not any(public_reach(e.type) is Reach.TABLE for e in evs
                                     if e.audience.public):
            continue
        quiet = route("G", after, evs, head=head, cmd=cmd)
        told = route("G", after, evs, head=head, cmd=cmd, dm_out=True)
        announced = [render_event(e, after.ruleset) for e in evs
                     if e.audience.public and public_reach(e.type) is Reach.TABLE]
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
