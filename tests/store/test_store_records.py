"""A community's records in the store (issue 31, docs/records.md), on SQLite and PostgreSQL:
a finished game's summary made from its verified export, once; a tampered game refused (its
export does not verify), also when it is tampered with after it was recorded; the judge's
end and a halt marked and left out of the rates; seasons; one community per account."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from typing import Any

import pytest
from randomgames import RandomGame, finished_games
from sqlalchemy import select, update

from bot.audit import export_game, verify_export
from bot.records.book import ALL, RecordBook, Scope
from bot.service import Service
from bot.store.models import Game, LogEntry
from bot.store.records import GameSummary, RecordStore, SeatSummary
from engine.commands import JudgeEnd

CONTACTS = {n: f"wx-player-{n}" for n in range(1, 13)}  # the same twelve in every game


@pytest.fixture(scope="module")
def games() -> list[RandomGame]:
    return finished_games(random.Random(5), 3, "rec", [{}])


def feed(service: Service, game: RandomGame, host: str | None = None) -> str:
    gid = game.args["game_id"]
    service.create_game(**game.args, bindings={n: (c, f"马甲{n}") for n, c in CONTACTS.items()},
                        judge_contact="wx-judge", host=host)
    for n, step in enumerate(game.steps):
        out = service.submit(gid, step.command, now=step.now, msg_id=f"{gid}#{n}")
        assert out.status == step.status
    return gid


@pytest.fixture
def book(service: Service) -> Iterator[RecordBook]:
    yield RecordBook(service)


@pytest.mark.rules("R-REC-1")
def test_a_finished_game_is_recorded_from_its_verified_export(
        service: Service, book: RecordBook, games: list[RandomGame]) -> None:
    for game in games:
        feed(service, game)
    assert book.sync() == 3
    lines = book.store.lines(None)
    for game in games:
        final = game.final
        assert final is not None and final.winner is not None
        seats = {x.seat: x for x in lines if x.game_id == game.args["game_id"]}
        assert len(seats) == 12
        for st in final.seats:
            x = seats[st.seat]
            assert (x.contact, x.name, x.role, x.camp) == (CONTACTS[st.seat], f"马甲{st.seat}",
                                                           st.role, st.camp)
            assert x.result == ("win" if st.camp == final.winner else "loss")
            assert x.out_cause == (None if st.alive else st.out_cause)
            assert (x.yellow, x.red) == (st.yellow, st.red)
    wins = {c: 0 for c in CONTACTS.values()}
    for game in games:
        assert game.final is not None
        for st in game.final.seats:
            wins[CONTACTS[st.seat]] += st.camp == game.final.winner
    tallies = {x.contact: (x.games, x.wins, x.other) for x in book.store.tallies(None)}
    assert tallies == {c: (3, w, 0) for c, w in wins.items()}
    boards = book.boards()
    assert [b.games for b in boards] == [3]
    assert sum(c.wins for c in boards[0].camps) == 3


@pytest.mark.rules("R-REC-1")
def test_a_game_is_recorded_once(service: Service, book: RecordBook,
                                 games: list[RandomGame]) -> None:
    gid = feed(service, games[0])
    assert book.record(gid) == "won"
    assert book.record(gid) is None and book.sync() == 0
    assert RecordBook(service).record(gid) is None  # another process's book too
    assert len(book.store.lines(None)) == 12


def _tamper(service: Service, gid: str) -> None:
    """Someone with the database edits the log: the winner in the GameOver row."""
    with service.db.write() as s:
        row = s.scalars(select(LogEntry).where(LogEntry.game_id == gid,
                                               LogEntry.type == "GameOver")).one()
        body: dict[str, Any] = dict(row.body)
        data = dict(body["data"])
        data["members"] = [n for n in range(1, 13) if n not in data["members"]]
        body["data"] = data
        s.execute(update(LogEntry).where(LogEntry.game_id == gid, LogEntry.seq == row.seq)
                  .values(body=body))
    service.forget(gid)


@pytest.mark.rules("R-REC-2")
def test_a_tampered_game_is_refused_from_the_records(service: Service, book: RecordBook,
                                                     games: list[RandomGame]) -> None:
    gid = feed(service, games[0])
    fine = feed(service, games[1])
    _tamper(service, gid)
    checks = verify_export(export_game(service, gid),
                           commitment=book.store.game(gid)[2])  # type: ignore[index]
    assert not all(c.ok for c in checks)  # its export does not verify
    assert book.sync() == 2
    refused = book.refused()
    assert [g for g, _ in refused] == [gid] and "replay" in (refused[0][1] or "")
    assert {x.game_id for x in book.store.lines(None)} == {fine}
    assert all(x.games == 1 for x in book.store.tallies(None))


@pytest.mark.rules("R-REC-2")
def test_a_game_tampered_with_after_it_was_recorded_is_refused_when_checked_again(
        service: Service, book: RecordBook, games: list[RandomGame]) -> None:
    gid = feed(service, games[0])
    book.sync()
    assert book.recheck() == []  # the log still gives its digest
    _tamper(service, gid)
    assert book.recheck() == [(gid, "refused")]
    assert book.store.lines(None) == [] and book.store.tallies(None) == []


@pytest.mark.rules("R-REC-3")
def test_a_game_the_judge_ended_is_marked_and_left_out_of_the_rates(
        service: Service, book: RecordBook, games: list[RandomGame]) -> None:
    game = games[0]
    gid = game.args["game_id"]
    service.create_game(**game.args, bindings={n: (c, f"马甲{n}") for n, c in CONTACTS.items()})
    service.submit(gid, JudgeEnd(reason="人数不够"), now=game.steps[0].now)
    assert book.sync() == 1
    lines = book.store.lines(None)
    assert {x.outcome for x in lines} == {"ended"} and {x.result for x in lines} == {None}
    assert {x.role for x in lines} == {st.role for st in service.state(gid).seats}  # revealed
    assert {(x.games, x.wins, x.other) for x in book.store.tallies(None)} == {(0, 0, 1)}
    assert book.counts() == (0, 1)


@pytest.mark.rules("R-REC-3")
def test_a_halted_game_is_marked_without_its_secret_roles(
        service: Service, book: RecordBook, games: list[RandomGame]) -> None:
    game = games[0]
    gid = game.args["game_id"]
    service.create_game(**game.args, bindings={n: (c, f"马甲{n}") for n, c in CONTACTS.items()})
    with service.db.write() as s:  # waiting for a ruling that never comes (停局)
        s.execute(update(Game).where(Game.id == gid).values(status="halted"))
    assert book.record(gid) == "halted"
    lines = book.store.lines(None)
    assert {(x.outcome, x.role, x.camp, x.result) for x in lines} == {
        ("halted", None, None, None)}
    assert {x.name for x in lines} == {f"马甲{n}" for n in range(1, 13)}


def test_the_records_of_another_account_are_another_community(
        service: Service, games: list[RandomGame]) -> None:
    feed(service, games[0], host="second")
    mine, theirs = RecordBook(service, None), RecordBook(service, "second")
    assert mine.sync() == 0 and mine.store.tallies(None) == []
    assert theirs.sync() == 1 and len(theirs.store.tallies("second")) == 12


def _game(service: Service, gid: str) -> str:
    service.create_game(game_id=gid, ruleset="classic", players=12, start=date(2026, 12, 1),
                        seed=f"seed-{gid}")
    return gid


def _summary(gid: str, ended: datetime, winners: set[int]) -> GameSummary:
    seats = tuple(SeatSummary(n, CONTACTS[n], f"马甲{n}", "villager", "village",
                              "win" if n in winners else "loss", None, None)
                  for n in range(1, 13))
    return GameSummary(gid, None, "classic", 12, '{"ruleset":"classic"}', "won", "village", 3,
                       ended, ended.date(), "0" * 64, 10, seats)


@pytest.mark.rules("P-SEASON-3")
def test_seasons_hold_the_games_that_ended_while_they_ran(service: Service) -> None:
    store = RecordStore(service.db)
    t0 = datetime(2026, 12, 1, 12)
    for gid in ("before", "inside", "after"):
        _game(service, gid)
    assert store.write(_summary("before", t0, {1}))
    assert store.start_season(None, "S1", t0 + timedelta(hours=1), "wx-judge") != "open"
    assert store.start_season(None, "S2", t0 + timedelta(hours=1), "wx-judge") == "open"
    assert store.write(_summary("inside", t0 + timedelta(hours=2), {1, 2}))
    ended = store.end_season(None, t0 + timedelta(hours=3), "wx-judge")
    assert ended is not None and ended.name == "S1"
    assert store.write(_summary("after", t0 + timedelta(hours=4), {2}))
    assert store.start_season(None, "S1", t0 + timedelta(hours=5), "wx-judge") == "taken"
    book = RecordBook(service)
    season = book.season("S1")
    assert season is not None
    inside = {x.contact: (x.games, x.wins) for x in book.store.tallies(None, season.window)}
    assert inside[CONTACTS[1]] == (1, 1) and inside[CONTACTS[3]] == (1, 0)
    everything = {x.contact: (x.games, x.wins) for x in book.store.tallies(None)}
    assert everything[CONTACTS[1]] == (3, 2) and everything[CONTACTS[2]] == (3, 2)
    assert book.counts(Scope(season)) == (1, 0) and book.counts(ALL) == (3, 0)
    assert [s.name for s in book.seasons()] == ["S1"]
    assert date(2026, 12, 1) == book.store.lines(None)[0].ended_on


def test_the_latest_马甲_names_a_player(service: Service) -> None:
    store = RecordStore(service.db)
    t0 = datetime(2026, 12, 1, 12)
    assert store.write(_summary(_game(service, "a"), t0, {1}))
    later = _summary(_game(service, "b"), t0 + timedelta(days=1), {1})
    seats = tuple(x if x.seat != 1 else SeatSummary(1, CONTACTS[1], "新马甲", "villager",
                                                    "village", "win", None, None)
                  for x in later.seats)
    assert store.write(GameSummary(**{**later.__dict__, "seats": seats}))
    book = RecordBook(service)
    names = {p.name for p in book.standings()}
    assert "新马甲" in names and "马甲1" not in names
    assert book.find("马甲1", judge=False) == CONTACTS[1]  # an older 马甲 still finds them
    assert book.find("马甲99", judge=False) is None
