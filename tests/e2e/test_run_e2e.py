"""End to end on the real protocol (issue 9): `wolfjudge run --clock …` as a subprocess, speaking
gRPC to the Node test gateway (wechaty-puppet-service serving wechaty-puppet-mock,
gateway/), whose mock contacts are the players and the judge. The test makes them DM
the bot and speak in rooms through the gateway's control API and reads what the bot sent and
which rooms it made from there. Game time moves only by `/clock` and `/advance` lines on the
bot's standard input (never a sleep for a deadline); network events are polled for, with a
bounded timeout (tests/e2e/runhelp.py)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from gatewayhelp import Gateway, need_gateway, wait_until
from runhelp import BOT, CAMPS, JUDGE, SEEDS, BotProcess, GatewayTable, dealt, wait_for_dm

from bot.store import migrate
from bot.texts import role_name

CHINESE = re.compile(r"[\u4e00-\u9fff]")
LOGGED_IN = "机器人已登录微信"  # the judges' DM at login (bot/capabilities.py)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "wolfjudge.db"
    migrate(f"sqlite:///{path}")
    return path


@pytest.fixture
def bot(gateway: Gateway, db: Path, tmp_path: Path) -> Iterator[BotProcess]:
    proc = BotProcess(gateway, db, tmp_path)
    yield proc
    assert proc.close() == 0
    assert proc.tracebacks() == 0, proc.log()


def start_table(bot: BotProcess, gateway: Gateway, ruleset: str, seed: int) -> GatewayTable:
    table = GatewayTable(bot, gateway, ruleset, seed)  # the contacts exist before the bot
    bot.ready()
    # At login the judge is told what the account can do (once a day for the same report).
    wait_until(lambda: any(LOGGED_IN in t for t in gateway.dms_to(table.judge)), 30,
               "the judge to be told what the account can do")
    table.log += table.feed.new()  # not caused by any step
    return table


@pytest.mark.parametrize(("ruleset", "seed"), SEEDS)  # every registered ruleset
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
    assert Counter(p.role for p in players) == dealt(ruleset), [p.role for p in players]
    table.play_until(table.night)
    # The game runs on the bot's virtual clock (moved only by stdin), not on the machine's:
    # night 1 is the evening of the day the clock started.
    view = "\n".join(m.text for m in table.say(JUDGE, "状态", expect=f"【{table.code}】")
                     if m.to == JUDGE)
    assert "第1天夜晚" in view and "12-01 22:30" in view, view
    # At night, a villager who tries the seer's check is refused, in Chinese, and nothing
    # else happens.
    villager = table.by_role("村民")[0]
    got = table.say(villager.name, "验 3", expect="不能")
    refusal = [m.text for m in got if m.to == villager.name]
    assert refusal and all(CHINESE.search(t) for t in refusal), refusal
    assert [m for m in got if m.to != villager.name] == []
    table.play()
    told = table.told_the_end()
    assert set(told) >= {*table.players, JUDGE}, sorted(told)
    assert len(set(told.values())) == 1 and next(iter(told.values())) in CAMPS, told
    # Issue 20: no recipient got two messages from what one message caused, over the real
    # protocol (bench/messages.py counts the sends of whole games).
    for step in table.steps:
        sends = Counter(m.to or m.room for m in step if m.head == "→")
        assert max(sends.values(), default=1) == 1, step
    # A day post: the public announcement went to every player by DM.
    for p in players:
        assert any(t.startswith("第1天讨论日开始") for t in table.feed.dms_to(p.name)), p
    # The players voted by DM, each vote answered.
    votes = [m for m in table.log if m.head == "→" and m.to in table.players
             and "投" in m.text]
    assert votes
    # The rooms made on the gateway, as the ruleset's roles make them, with exactly the entitled
    # members: the killers' room, every wolf but the wolf of a wolf + non-wolf pair of lovers
    # (C-SETUP-7), and the judge; the lovers' room, the lovers unless both are wolves, and the
    # judge; none without either (anomaly: P-ASSIGN-2).
    lovers = {p.name for p in players if any(t.startswith("你成为了情侣")
                                             for t in table.feed.dms_to(p.name))}
    cupid = any(p.role == role_name(ruleset, "cupid") for p in players)
    assert len(lovers) == (2 if cupid else 0), lovers
    wolves = {p.name for p in table.by_role(role_name(ruleset, "wolf"))}
    mixed = lovers & wolves if not lovers <= wolves else set()
    want = {f"{table.code}狼群": (wolves - mixed) | {JUDGE}} if wolves - mixed else {}
    if lovers and not lovers <= wolves:
        want[f"{table.code}情侣群"] = lovers | {JUDGE}
    made = {r["topic"]: r for r in gateway.rooms().values()}
    assert {topic: sorted(table.log_members(r["id"])) for topic, r in made.items()} == {
        topic: sorted(members) for topic, members in want.items()}
    assert all(r["ownerId"] == BOT for r in made.values())
    roomed = {p.name for p in players if p.mates}  # the wolves told of the killers' room
    assert {table.contact_of(n) for p in players for n in p.mates} == roomed == wolves - mixed
    if killers := made.get(f"{table.code}狼群"):
        # The killers spoke in their room, and were answered there.
        assert any(m.room == killers["id"] and "已记录" in m.text for m in table.log
                   if m.head == "→")


def test_the_bot_killed_mid_night_and_restarted_loses_nothing_acknowledged(
        gateway: Gateway, db: Path, tmp_path: Path) -> None:
    bot = BotProcess(gateway, db, tmp_path)
    table = start_table(bot, gateway, "classic", 3)
    try:
        table.deal()
        table.play_until(table.night)
        for p in table.players.values():
            p.saved = True  # the witch saves nobody: the kill is the night's
        # The killers kill and lock in their room, the seer checks: each is answered on the
        # gateway (acknowledged) before the bot is killed; the guard and the witch wait.
        acted = [a for a in table.todo if re.match(r"(刀|锁定|验)", a[1])]
        assert {a[1].split()[0] for a in acted} == {"刀", "锁定", "验"}, table.todo
        table.todo = [a for a in table.todo if a not in acted]
        kill = next(int(a[1].split()[1]) for a in acted if a[1].startswith("刀"))
        check = next(int(a[1].split()[1]) for a in acted if a[1].startswith("验"))
        guard = next(s for s in table.alive if s != kill)  # the guard shields someone else
        table.todo = [(n, f"守 {guard}", r) if t.startswith("守") else (n, t, r)
                      for n, t, r in table.todo]
        for name, text, room in acted:
            table.say(name, text, room)
        seer = table.by_role("预言家")[0]
        results = [t for t in table.feed.dms_to(seer.name) if "查验结果" in t]
        assert len(results) == 1 and f"{check} 号" in results[0], results
        assert any(f"指杀目标已锁定：{kill} 号" in t for t in table.feed.posts_in(
            table.room_named(f"{table.code}狼群") or "-"))
    finally:
        bot.kill()  # SIGKILL, mid-night
    bot = BotProcess(gateway, db, tmp_path)  # the same database, the same start clock
    table.bot = table.c = bot  # type: ignore[assignment]
    try:
        notes = bot.ready()
        assert any("the clock starts at 2026-12-01 2" in n for n in notes), notes
        # Nothing acknowledged goes again: the restart itself sends nothing.
        assert table.settle() == []
        # The judge's view: the acknowledged kill and check are still tonight's submissions.
        view = "\n".join(m.text for m in table.say(JUDGE, "状态", expect=f"【{table.code}】")
                         if m.to == JUDGE)
        assert f"查验：验 {check}号（已确定）" in view, view
        assert f"指杀：刀 {kill}号（已确定）" in view, view
        table.play()
    finally:
        assert bot.close() == 0
    assert bot.tracebacks() == 0, bot.log()
    # The kill resolved as sent (no shield, no save), and the game went on to its end.
    dawn = next(t for p in table.players for t in table.feed.dms_to(p)
                if "第2天讨论日开始" in t)
    out = re.search(r"昨夜至今出局：(.*?)。", dawn)
    assert out and f"{kill}号" in out[1].split("、"), dawn
    told = table.told_the_end()
    assert set(told) >= {*table.players, JUDGE}, sorted(told)
    assert len(set(told.values())) == 1, told


def test_the_bot_reconnects_by_itself_after_the_gateway_restarts(
        bot: BotProcess, gateway: Gateway) -> None:
    table = start_table(bot, gateway, "classic", 4)
    table.deal()  # Cupid's link is still to come
    link = next(a for a in table.todo if a[1].startswith("连"))
    gateway.kill()  # the connection drops without a goodbye
    gateway.start()  # the same ports and token, the same contacts, no history
    table.feed.reset()
    notice = wait_for_dm(table.feed, JUDGE, "重新连接", timeout=60)
    assert "重新发送" in notice  # players are asked to resend what was not answered
    assert bot.proc.poll() is None
    # A later command gets its reply, and the game goes on: Cupid links, the rooms are made
    # on the new gateway.
    table.todo.remove(link)
    got = table.say(*link, expect="成为情侣")
    assert any(m.to == link[0] and "成为情侣" in m.text for m in got), got
    assert f"{table.code}狼群" in {r["topic"] for r in gateway.rooms().values()}
    # A second drop, while day 1 opens: what the bot could not send meanwhile goes out once
    # it is back (the outbox retries), each message once.
    table.settle()
    gateway.kill()
    table.bot.send("/clock 2026-12-01 09:00")
    wait_until(lambda: any(row[3] for row in bot.pending()), 30,
               "a send to fail while the gateway is away")
    gateway.start()
    table.feed.reset()
    wait_for_dm(table.feed, JUDGE, "重新连接", timeout=60)

    def day_post(contact: str) -> list[str]:
        return [t for t in table.feed.dms_to(contact) if "第1天讨论日开始" in t]

    def opened() -> bool:
        table.feed.new()
        return all(day_post(p) for p in table.players)

    wait_until(opened, 60, "day 1's post to reach every player after the reconnect")
    table.settle()
    assert all(len(day_post(p)) == 1 for p in table.players)
    assert day_post(JUDGE) == []  # 法官通知 摘要: a day opening on time is no judge's DM
    voter = next(iter(table.players))
    got = table.say(voter, f"投 {table.seat_of(voter) % 12 + 1}", expect="投")
    assert any(m.to == voter for m in got), got


def test_refused_room_creation_falls_back_to_a_judge_made_room_bound_with_bind(
        bot: BotProcess, gateway: Gateway) -> None:
    table = start_table(bot, gateway, "classic", 6)
    gateway.refuse_rooms()
    table.deal()
    table.flush()  # Cupid links: the camps are formed, the bot's room creation is refused
    assert gateway.rooms() == {}
    tried = gateway.call("GET", "/health")["refusedRooms"]
    assert tried in (1, 2)  # the killers' room, and the lovers' unless both are wolves
    name = f"{table.code}狼群"
    ask = next(t for t in table.feed.dms_to(JUDGE) if "请手动建立微信群" in t and name in t)
    members = re.search(r"成员：(.*?)(。|，)", ask)
    assert members, ask
    seats = sorted(int(n) for n in re.findall(r"(\d+)号", members[1]))
    # The killers per their DMs: the wolves, less a wolf lover of a non-wolf.
    told = {p.seat for p in table.players.values() if p.mates}
    assert seats == sorted(told) and told <= {p.seat for p in table.by_role("狼人")}, ask
    assert f"绑定 {table.code} 狼群" in ask
    # The judge makes the room by hand, with exactly those members, and binds it in the room.
    room = gateway.make_room(JUDGE, [table.contact_of(n) for n in seats], name)
    got = table.say(JUDGE, f"绑定 {table.code} 狼群", room, expect="已绑定")
    assert any(m.to == JUDGE and "已绑定" in m.text for m in got), got
    assert any(m.room == room and "狼群" in m.text for m in got), got  # members announced
    # Night 1: the prompt comes to the bound room, and a kill there is recorded there.
    table.play_until(table.night)
    assert any("请共同选择今晚的指杀目标" in t for t in table.feed.posts_in(room))
    kill = next(a for a in table.todo if a[1].startswith("刀"))
    assert kill[2] == room
    table.todo.remove(kill)
    target = kill[1].split()[1]
    got = table.say(*kill, expect=f"指杀目标：{target} 号")
    assert any(m.room == room and f"指杀目标：{target} 号" in m.text for m in got), got
    # Once the judge was asked, the bot tried no creation again (one refused try a room).
    assert gateway.call("GET", "/health")["refusedRooms"] == tried
    assert list(gateway.rooms()) == [room]


def test_an_account_that_cannot_make_rooms_is_told_and_the_bot_never_tries(
        db: Path, tmp_path: Path) -> None:
    """Issue 21: at login the gateway reports what the puppet can do; the judges are told in
    Chinese which features are off and what replaces them, and the bot does not try them."""
    gateway = Gateway(need_gateway(), tmp_path, without="roomCreate")
    gateway.start()
    bot = BotProcess(gateway, db, tmp_path)
    try:
        table = start_table(bot, gateway, "classic", 6)
        told = next(t for t in gateway.dms_to(JUDGE) if LOGGED_IN in t)
        assert "wechaty-puppet-mock" in told and "不可用：建群" in told, told
        assert "绑定 游戏码 狼群" in told and "groups.mode=relay" in told, told
        table.deal()
        table.flush()  # Cupid links: the camps are formed, the rooms are asked of the judge
        assert gateway.rooms() == {}
        assert any("请手动建立微信群" in t and f"{table.code}狼群" in t
                   for t in table.feed.dms_to(JUDGE))
        assert gateway.call("GET", "/health")["refusedRooms"] == 0  # never even tried
    finally:
        assert bot.close() == 0
        gateway.stop()
    assert bot.tracebacks() == 0, bot.log()
