"""No message lost while the bot is away (issue 21): the gateway keeps what comes while no bot
is connected (gateway/mailbox.js, a file in its session volume) and replays it, in order, when
the bot connects again; the bot applies each message once. Over the real protocol on loopback:
`wolfjudge run` on the gateway with its mock puppet."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path

import pytest
from gatewayhelp import Gateway, wait_until
from runhelp import JUDGE, BotProcess, GatewayTable
from test_run_e2e import start_table

from bot.store import migrate

CODE = re.compile(r"游戏码[ ：:]?([A-Z0-9]{4,8})")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "wolfjudge.db"
    migrate(f"sqlite:///{path}")
    return path


def commands(db: Path, code: str) -> list[tuple[str, str]]:
    """(message id, command kind) of every command logged for the game, in order."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return list(con.execute("select msg_id, type from events where game_id = ? and "
                                "kind = 'command' order by seq", (code,)))


@pytest.mark.parametrize("gateway_restarts", [False, True],
                         ids=["the bot restarts", "the gateway restarts too"])
def test_night_actions_sent_while_the_bot_is_down_are_applied_once_in_order(
        gateway: Gateway, db: Path, tmp_path: Path, gateway_restarts: bool) -> None:
    bot = BotProcess(gateway, db, tmp_path)
    table: GatewayTable = start_table(bot, gateway, "classic", 5)
    try:
        table.deal()
        table.play_until(table.night)
    finally:
        bot.kill()  # SIGKILL: the event stream drops without a goodbye
    code = table.code
    # The wolves who kill together: a wolf in love with a villager has left the pack.
    pack = gateway.rooms()[table.room_named(f"{code}狼群") or "-"]["members"]
    wolves = [p for p in table.by_role("狼人") if not p.out and p.name in pack]
    seer, guard = table.by_role("预言家")[0], table.by_role("守卫")[0]
    villager = next(p for p in table.by_role("村民") if not p.out)
    first, second = villager.seat, next(s for s in table.alive if s not in (
        villager.seat, *(w.seat for w in wolves)))
    sent = [(wolves[0].name, f"刀 {first}"), (wolves[1].name, f"刀 {second}"),
            (wolves[-1].name, "锁定"), (seer.name, f"验 {first}"),
            (guard.name, f"守 {guard.seat}")]
    ids = [gateway.dm(name, text) for name, text in sent]  # five players, while it is down

    def kept() -> list[str]:
        if not gateway.mailbox.exists():
            return []
        return [k["id"] for k in json.loads(gateway.mailbox.read_text(encoding="utf-8"))]

    wait_until(lambda: len(kept()) == len(ids), 10, "the gateway to keep the five messages")
    assert kept() == ids  # kept, in order, on disk
    if gateway_restarts:
        gateway.kill()
        gateway.start()  # the same mailbox file: the messages survive the gateway too
        table.feed.reset()
    before = len(commands(db, code))
    bot = BotProcess(gateway, db, tmp_path)
    table.bot = table.c = bot  # type: ignore[assignment]
    try:
        bot.ready()
        # All five applied once, in the order they were sent, and each answered.
        wait_until(lambda: len(commands(db, code)) >= before + 5, 60,
                   "the five night actions to be applied")
        applied = commands(db, code)[before:]
        assert [m for m, _ in applied] == ids, applied
        for (name, _text), msg_id in zip(sent, ids, strict=True):
            # (marked handled right after its command's commit)
            wait_until(lambda m=msg_id: bot.handled(m), 10, f"{msg_id} to be marked handled")
            wait_until(lambda n=name: table.feed.new() is not None and (
                table.feed.dms_to(n) or table.feed.posts_in(
                    table.room_named(f"{code}狼群") or "-")), 30, f"an answer to {name}")
        view = "\n".join(m.text for m in table.say(table.judge, "状态", expect=f"【{code}】")
                         if m.to == table.judge)
        assert f"指杀：刀 {second}号（已确定）" in view, view
        assert f"查验：验 {first}号" in view and f"守护：守 {guard.seat}号" in view, view
        # A second restart replays nothing new: each message is applied once.
        count = len(commands(db, code))
    finally:
        assert bot.close() == 0
    bot = BotProcess(gateway, db, tmp_path)
    try:
        bot.ready()
        wait_until(lambda: gateway.call("GET", "/health").get("connected"), 30,
                   "the bot to connect again")
        assert len(commands(db, code)) == count
    finally:
        assert bot.close() == 0
    assert bot.tracebacks() == 0, bot.log()


KILL_AFTER = (0.0, 0.01, 0.025, 0.05, 0.1)  # seconds from the end of a burst to the SIGKILL


def lobby_players(db: Path, code: str) -> list[str]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return [c for (c,) in con.execute(
            "select contact_id from lobby_players where code = ? order by joined", (code,))]


def settled(bot: BotProcess, ids: list[str], what: str, timeout: float = 30.0) -> None:
    """Every message in `ids` handled and the outbox empty, within `timeout` seconds."""
    def done() -> bool:
        return all(bot.handled(i) for i in ids) and not bot.pending()

    try:
        wait_until(done, timeout, what)
    except AssertionError:
        handled = sum(bot.handled(i) for i in ids)
        raise AssertionError(f"{what}: {handled} of {len(ids)} messages handled, unsent: "
                             f"{bot.pending()[:5]}") from None


def test_a_message_is_kept_until_the_bot_has_committed_it(
        gateway: Gateway, db: Path, tmp_path: Path) -> None:
    """README "Restarts, stops and messages sent meanwhile": twenty players DM the running bot
    and it is SIGKILLed 0 to 100 ms later, while it holds messages it has received but not
    committed; after the restart every one of the twenty is applied once and answered once."""
    judge = gateway.contact("judge", JUDGE)
    bot = BotProcess(gateway, db, tmp_path)
    bot.ready()
    try:
        for n, delay in enumerate(KILL_AFTER):
            # Two lobbies of ten seats' worth (a lobby seats twelve), twenty new contacts.
            codes = []
            for _ in range(2):
                before = len(gateway.dms_to(judge))
                gateway.dm(judge, "新游戏 经典")
                codes.append(wait_until(lambda b=before: next(
                    (m[1] for t in gateway.dms_to(judge)[b:] if (m := CODE.search(t))), None),
                    30, "a game code"))
            players = [gateway.contact(f"r{n}p{i}", f"wxid_r{n}p{i}") for i in range(20)]
            ids = [gateway.dm(p, f"报名 {codes[i // 10]} 马甲{i:02d}")
                   for i, p in enumerate(players)]
            time.sleep(delay)  # where the kill lands: not a deadline
            bot.kill()
            bot = BotProcess(gateway, db, tmp_path)
            bot.ready()
            settled(bot, ids, f"round {n} (the kill {delay * 1000:g} ms after the burst)")
            wait_until(lambda: gateway.call("GET", "/health")["kept"] == 0, 30,
                       "the gateway to have let go of every committed message")
            for i, p in enumerate(players):
                answers = gateway.dms_to(p)
                joined = f"报名成功：游戏 {codes[i // 10]}，马甲 马甲{i:02d}"
                assert len(answers) == 1 and joined in answers[0], (delay, p, answers)
            for k, code in enumerate(codes):  # applied once each, in the lobby
                assert sorted(lobby_players(db, code)) == sorted(players[10 * k:10 * k + 10])
    finally:
        assert bot.close() == 0
    assert bot.tracebacks() == 0, bot.log()
