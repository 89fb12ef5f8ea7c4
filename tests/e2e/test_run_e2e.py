"""End to end on the real protocol (issue 9): `wolfjudge run --clock …` as a subprocess, speaking
gRPC to the Node test gateway (wechaty-puppet-service serving wechaty-puppet-mock,
tests/e2e/gateway/), whose mock contacts are the players and the judge. The test makes them DM
the bot and speak in rooms through the gateway's control API and reads what the bot sent and
which rooms it made from there. Game time moves only by `/clock` and `/advance` lines on the
bot's standard input (never a sleep for a deadline); network events are polled for, with a
bounded timeout (tests/e2e/runhelp.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from gatewayhelp import Gateway, need_gateway
from runhelp import BOT, CAMPS, JUDGE, BotProcess, GatewayTable

from bot.store import migrate

ROLES = {"classic": {"狼人", "预言家", "女巫", "守卫", "丘比特", "村民"},
         "anomaly": {"狼头", "预言家", "女巫", "长老", "守卫", "猎人", "村民"}}
CHINESE = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[Gateway]:
    gw = Gateway(need_gateway(), tmp_path)
    gw.start()
    yield gw
    gw.stop()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "wolfjudge.db"
    migrate(f"sqlite:///{path}")
    return path


@pytest.fixture
def bot(gateway: Gateway, db: Path, tmp_path: Path) -> Iterator[BotProcess]:
    proc = BotProcess(gateway, db, tmp_path)
    yield proc
    proc.close()


def start_table(bot: BotProcess, gateway: Gateway, ruleset: str, seed: int) -> GatewayTable:
    table = GatewayTable(bot, gateway, ruleset, seed)  # the contacts exist before the bot
    bot.ready()
    return table


@pytest.mark.parametrize(("ruleset", "seed"), [("classic", 1), ("anomaly", 2)])
def test_a_whole_game_through_wolfjudge_run(bot: BotProcess, gateway: Gateway, ruleset: str,
                                            seed: int) -> None:
    table = start_table(bot, gateway, ruleset, seed)
    table.deal()
    players = list(table.players.values())
    # Each contact got its role DM with both markers; seats 1-12 once each.
    for p in players:
        assert any(f"你的座位：{p.seat}号" in t and f"你的身份：{p.role}" in t
                   for t in table.feed.dms_to(p.name)), p
    assert sorted(p.seat for p in players) == list(range(1, 13))
    assert all(p.role in ROLES[ruleset] for p in players), [p.role for p in players]
    table.play_until(table.night)
    # At night, a villager who tries the seer's check is refused, in Chinese, and nothing
    # else happens.
    villager = table.by_role("村民")[0]
    got = table.say(villager.name, "验 3")
    refusal = [m.text for m in got if m.to == villager.name]
    assert refusal and all(CHINESE.search(t) for t in refusal), refusal
    assert [m for m in got if m.to != villager.name] == []
    table.play()
    told = table.told_the_end()
    assert set(told) >= {*table.players, JUDGE}, sorted(told)
    assert len(set(told.values())) == 1 and next(iter(told.values())) in CAMPS, told
    # A day post: the public announcement went to every player by DM.
    for p in players:
        assert any(t.startswith("第1天讨论日开始") for t in table.feed.dms_to(p.name)), p
    # The players voted by DM, each vote answered.
    votes = [m for m in table.log if m.head == "→" and m.to in table.players
             and "投" in m.text]
    assert votes
    rooms = table.feed.rooms
    if ruleset == "anomaly":
        assert rooms == {}  # P-ASSIGN-2: no rooms
        return
    # The killers' room and the lovers' room, made on the gateway with exactly the entitled
    # members: every wolf but the wolf of a wolf + non-wolf pair of lovers (C-SETUP-7), the
    # lovers unless both are wolves, and the judge.
    lovers = {p.name for p in players if any(t.startswith("你成为了情侣")
                                             for t in table.feed.dms_to(p.name))}
    assert len(lovers) == 2
    wolves = {p.name for p in table.by_role("狼人")}
    mixed = lovers & wolves if not lovers <= wolves else set()
    made = {r["topic"]: r for r in gateway.rooms().values()}
    killers = made[f"{table.code}狼群"]
    assert killers["ownerId"] == BOT
    first = table.log_members(killers["id"])
    assert sorted(first) == sorted((wolves - mixed) | {JUDGE})
    if lovers <= wolves:
        assert f"{table.code}情侣群" not in made
    else:
        assert sorted(table.log_members(made[f"{table.code}情侣群"]["id"])) == sorted(
            lovers | {JUDGE})
    # The killers spoke in their room, and were answered there.
    assert any(m.room == killers["id"] and "刀" in m.text for m in table.log if m.head == "→")
