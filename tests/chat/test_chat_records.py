"""A community's records in chat (issue 31, docs/records.md): `战绩`, `战绩 马甲`, `战绩 隐藏`
/ `战绩 公开`, `排行 [赛季|全部]`, `赛季 开始 NAME` / `赛季 结束`.

Games are finished quickly through the chat: the judge red-cards the three wolves (the village
wins), or ends the game (`结束`, `结束 确认`: marked, and left out of the rates)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from chathelp import JUDGE, Table

from bot.store.records import RecordStore

CONTACT = re.compile(r"\bP\d+\b")  # the tests' contact ids: never in a reply


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    t = Table(tmp_path)
    yield t
    t.close()


def won(table: Table, code: str | None = None) -> str:
    """A classic game of P1…P12 the village wins (the judge red-cards the wolves)."""
    code = code or table.game()
    for seat in table.seats_with(code, "wolf"):
        table.reply(JUDGE, f"#{code} 红牌 {seat}")
    assert table.state(code).winner == "village"
    return code


def one_reply(table: Table, sender: str, text: str) -> str:
    replies = table.ask(sender, text)
    assert len(replies) == 1, replies  # one short message
    assert not CONTACT.search(replies[0]), replies[0]
    return replies[0]


def seat_of(table: Table, code: str, contact: str) -> int:
    return next(n for n, c in table.contacts(code).items() if c == contact)


@pytest.mark.rules("R-REC-1")
def test_a_game_is_recorded_when_it_ends(table: Table) -> None:
    """The summary is written by the game's last commit (verified then), not by a read."""
    code = won(table)
    store = RecordStore(table.service.db)
    assert store.pending(None) == []
    assert [(g, o) for g, o, _ in store.recorded(None)] == [(code, "won")]


@pytest.mark.rules("R-REC-3", "R-REC-4")
def test_战绩_my_record_in_one_message(table: Table) -> None:
    code = won(table)
    second = table.ended()
    seat = seat_of(table, code, "P1")
    state = table.state(code)
    role = state.seat(seat).role
    text = one_reply(table, "P1", "战绩")
    win = role != "wolf"
    assert f"1局{int(win)}胜" in text
    assert "另有 1 局未计胜率" in text  # the game the judge ended: listed, not counted
    assert code in text and second in text
    assert "法官提前结束" in text
    assert f"{seat}号「马甲1」" in text


def test_战绩_with_no_game_over(table: Table) -> None:
    table.game()  # in play: not a record yet
    assert "还没有计入战绩的对局" in one_reply(table, "P1", "战绩")


@pytest.mark.rules("R-REC-5")
def test_战绩_马甲_finds_a_马甲_used_in_a_finished_game_only(table: Table) -> None:
    code = won(table)
    text = one_reply(table, "P5", "战绩 马甲1")
    assert "「马甲1」的战绩" in text and code in text
    running = table.new_game()  # 马甲13 joins a game still in play: never looked up
    table.fill(running, 1, first=13)
    assert "没有找到马甲「马甲13」" in one_reply(table, "P5", "战绩 马甲13")
    assert ["没有找到" in x for x in table.ask("P5", "战绩 P1")] == [True]  # not a contact id


@pytest.mark.rules("R-REC-7")
def test_hidden_players_are_anonymous_and_off_the_leaderboard_but_not_for_the_judge(
        table: Table) -> None:
    for _ in range(3):
        won(table)
    top = re.search(r"1\. (马甲(\d+)) ", one_reply(table, "P5", "排行"))
    assert top is not None
    name, contact = top.group(1), f"P{top.group(2)}"
    other = "P1" if contact != "P1" else "P2"
    assert "已隐藏" in one_reply(table, contact, "战绩 隐藏")
    assert f"{name} " not in one_reply(table, other, "排行")
    assert "没有找到" in one_reply(table, other, f"战绩 {name}")
    mine = one_reply(table, contact, "战绩")  # one's own record stays one's own
    assert "3局" in mine and "对其他玩家隐藏" in mine
    judge = one_reply(table, JUDGE, "排行")  # the judges' view is unchanged, marked
    assert f"1. {name}（隐藏） " in judge
    judged = one_reply(table, JUDGE, f"战绩 {name}")
    assert f"「{name}」的战绩" in judged and "只有法官看得到" in judged
    assert "已公开" in one_reply(table, contact, "战绩 公开")
    assert f"1. {name} " in one_reply(table, other, "排行")


@pytest.mark.rules("R-REC-6")
def test_排行_by_win_rate_with_a_minimum_and_by_games(table: Table) -> None:
    table.service.rank_min_games = 2  # WOLFJUDGE_RANK_MIN_GAMES, as `wolfjudge run` passes it
    won(table)
    text = one_reply(table, "P5", "排行")
    assert "胜率榜（至少 2 局）" in text and "还没有人达到 2 局" in text
    won(table)
    text = one_reply(table, "P5", "排行")
    rate = text.split("胜率榜")[1].split("场次榜")[0]
    games = text.split("场次榜")[1]
    assert re.search(r"1\. \S+ 2局2胜 100%", rate), text
    assert re.search(r"1\. \S+ 2局", games), text
    assert len(text.splitlines()) <= 14  # a short answer: the top five of each


@pytest.mark.rules("P-SEASON-1", "P-SEASON-2", "P-SEASON-3", "R-REC-6")
def test_赛季_a_judge_starts_and_ends_a_season_that_groups_games(table: Table) -> None:
    before = won(table)
    assert "只有法官" in one_reply(table, "P1", "赛季 开始 第一季")
    table.now += timedelta(minutes=5)
    assert "已开始" in one_reply(table, JUDGE, "赛季 开始 第一季")
    assert "还在进行中" in one_reply(table, JUDGE, "赛季 开始 第二季")
    table.now += timedelta(minutes=5)
    inside = won(table)
    season = one_reply(table, "P5", "排行")  # the open season by default
    assert "赛季「第一季」（进行中），计入胜率 1 局" in season
    assert "本赛季「第一季」：1局" in one_reply(table, "P1", "战绩")
    table.now += timedelta(minutes=5)
    assert "已结束" in one_reply(table, JUDGE, "赛季 结束")
    assert "计入胜率 1 局" in one_reply(table, "P5", "排行 第一季")
    assert "全部对局，计入胜率 2 局" in one_reply(table, "P5", "排行")
    assert "全部对局，计入胜率 2 局" in one_reply(table, "P5", "排行 全部")
    assert "已经有名为「第一季」" in one_reply(table, JUDGE, "赛季 开始 第一季")
    assert "没有名为「第九季」的赛季" in one_reply(table, "P5", "排行 第九季")
    assert "「第一季」" in one_reply(table, "P5", "赛季")
    assert "没有进行中的赛季" in one_reply(table, JUDGE, "赛季 结束")
    assert before != inside


@pytest.mark.rules("P-SEASON-1")
@pytest.mark.parametrize("name", ["全部", "换链接", "全部对局",
                                  "一二三四五六七八九十一二三四五六七"])
def test_赛季_names_that_cannot_be_read_back_are_refused(table: Table, name: str) -> None:
    assert "赛季名需为" in one_reply(table, JUDGE, f"赛季 开始 {name}")


def test_records_are_answered_by_dm_only(table: Table) -> None:
    code = table.game()
    table.link(code)
    room = table.room(code, "wolves")
    assert room is not None
    wolf = table.contact(code, table.seats_with(code, "wolf")[0])
    sent = table.send(wolf, "战绩", room=room)
    assert all(s.kind == "dm" for s in sent)
    assert [s.text for s in sent] == ["这条指令请私聊机器人发送。"]
