"""The Wechaty transport on the real protocol: python-wechaty over gRPC to the Node test gateway
(wechaty-puppet-service serving wechaty-puppet-mock, gateway/). Nothing here sleeps for
a deadline; network events are polled for, with a bounded timeout."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from gatewayhelp import Gateway, Inbox, wait_until

from bot.chat.bot import ChatBot
from bot.outbox import OutgoingMessage
from bot.service import Service
from bot.store import migrate
from bot.transport import Incoming, Refused, TransportCourier, split_text
from bot.transport.wechaty import WECHAT_MAX_TEXT, WechatyTransport

BOT = "wxid_bot"  # the gateway's mock account
CODE = re.compile(r"游戏码[ ：:]?([A-Z0-9]{4,8})")


def connect(gateway: Gateway, tmp_path: Path,
            inbox: Callable[[Incoming], None] | None = None,
            **options: object) -> WechatyTransport:
    t = WechatyTransport(gateway.endpoint, gateway.token, handler=inbox,
                         cache_dir=str(tmp_path / "wechaty"), reconnect_min=0.2,
                         reconnect_max=2.0, **options)  # type: ignore[arg-type]
    t.start()
    assert t.wait_ready(30), "no login from the gateway:\n" + gateway.log()
    return t


@pytest.fixture
def inbox() -> Inbox:
    return Inbox()


@pytest.fixture
def transport(gateway: Gateway, tmp_path: Path, inbox: Inbox) -> Iterator[WechatyTransport]:
    t = connect(gateway, tmp_path, inbox)
    yield t
    t.stop()


def test_login_is_the_gateway_account(transport: WechatyTransport) -> None:
    assert transport.connected and transport.self_id == BOT and transport.logins == 1


def test_a_dm_arrives_with_its_sender_and_text(gateway: Gateway, transport: WechatyTransport,
                                               inbox: Inbox) -> None:
    alice = gateway.contact("alice")
    msg = inbox.find(gateway.dm(alice, "帮助"))
    assert (msg.sender, msg.text, msg.room) == (alice, "帮助", None)
    assert msg.at.tzinfo is not None


def test_old_history_is_dropped_and_a_recent_message_keeps_its_time(
        gateway: Gateway, transport: WechatyTransport, inbox: Inbox) -> None:
    """A message older than the replay window (a day) is history a puppet may sync at login:
    dropped. One sent an hour ago (kept by the gateway while the bot was away) is handled, at
    the time it was sent."""
    alice = gateway.contact("alice")
    now = datetime.now(UTC)
    gateway.dm(alice, "上周的消息", timestamp_ms=int((now - timedelta(days=2)).timestamp() * 1000))
    hour_ago = now - timedelta(hours=1)
    gateway.dm(alice, "一小时前的消息", timestamp_ms=int(hour_ago.timestamp() * 1000))
    inbox.find(gateway.dm(alice, "现在的消息"))  # the barrier: handled in arrival order
    got = inbox.snapshot()
    assert [m.text for m in got] == ["一小时前的消息", "现在的消息"]
    assert abs((got[0].at - hour_ago).total_seconds()) < 1


def test_messages_kept_while_away_are_handled_before_the_transport_is_settled(
        gateway: Gateway, tmp_path: Path, inbox: Inbox) -> None:
    """The gateway keeps what comes while no bot is connected and replays it at the next
    connection; `wait_settled` (what `wolfjudge run` waits for before the deadlines start)
    returns only once those messages were handled, in the order they were sent."""
    alice, bob = gateway.contact("alice"), gateway.contact("bob")
    connect(gateway, tmp_path).stop()
    wait_until(lambda: not gateway.call("GET", "/health")["connected"], 20,
               "the gateway to see the bot go")
    gateway.dm(alice, "刀 3")
    gateway.dm(bob, "验 5")
    wait_until(lambda: gateway.call("GET", "/health")["kept"] == 2, 10, "two kept messages")
    t = WechatyTransport(gateway.endpoint, gateway.token, handler=inbox,
                         cache_dir=str(tmp_path / "wechaty"))
    t.start()
    try:
        assert t.wait_settled(), "not settled:\n" + gateway.log()
        assert [(m.sender, m.text) for m in inbox.snapshot()] == [(alice, "刀 3"), (bob, "验 5")]
    finally:
        t.stop()


def test_a_message_is_kept_by_the_gateway_until_the_handler_has_returned(
        gateway: Gateway, tmp_path: Path) -> None:
    """bot/transport's guarantee, over the real protocol: the gateway lets a message go when
    the handler it was handed to has returned (committed); one the handler failed on is kept
    and handed over again with the next connection, and nothing handled comes again."""
    alice = gateway.contact("alice")
    handled: list[str] = []
    failed: list[str] = []

    def flaky(msg: Incoming) -> None:
        if msg.text == "坏" and "坏" not in failed:
            failed.append(msg.text)
            raise RuntimeError("the database is away")
        handled.append(msg.text)

    t = connect(gateway, tmp_path, flaky)
    try:
        for text in ("一", "坏", "二"):
            gateway.dm(alice, text)
        wait_until(lambda: handled == ["一", "二"] and failed == ["坏"], 20, "three messages")
        wait_until(lambda: gateway.call("GET", "/health")["kept"] == 1, 20,
                   "the gateway to let the two handled ones go")
    finally:
        t.stop()
    t = connect(gateway, tmp_path, flaky)
    try:
        wait_until(lambda: handled == ["一", "二", "坏"], 20, "the failed one to come again")
        wait_until(lambda: gateway.call("GET", "/health")["kept"] == 0, 20,
                   "the gateway to let it go")
    finally:
        t.stop()


def test_a_send_is_made_once_per_key_across_processes(gateway: Gateway, tmp_path: Path) -> None:
    """An outbox row sent just before a crash, before it was marked sent, is sent again by the
    next process with the same key: the gateway does not show it twice (gateway/once.js)."""
    alice = gateway.contact("alice")
    first = connect(gateway, tmp_path)
    try:
        first.send_dm(alice, "你的身份：村民", key="g1/5/seat:3")
    finally:
        first.stop()
    second = connect(gateway, tmp_path)
    try:
        second.send_dm(alice, "你的身份：村民", key="g1/5/seat:3")  # no error: taken as sent
        second.send_dm(alice, "你的身份：村民", key="g2/5/seat:3")  # another row, the same text
        second.send_dm(alice, "第二句")  # no key: sent as always
    finally:
        second.stop()
    assert gateway.dms_to(alice) == ["你的身份：村民", "你的身份：村民", "第二句"]


def test_a_long_row_goes_in_parts_each_sent_once_across_processes(gateway: Gateway,
                                                                   tmp_path: Path) -> None:
    """README "Long messages": a row longer than WeChat's `max_text` goes as parts cut at line
    breaks, each under its own key; a process killed after part 1 leaves the row unsent, and
    the next one sends the row again: the gateway shows part 1 once (its key is known) and
    sends part 2, which no earlier key stands for."""
    alice = gateway.contact("alice")
    text = "\n".join(f"第{n}天 " + "公示" * 30 for n in range(60))
    parts = split_text(text, WECHAT_MAX_TEXT)
    assert len(parts) == 2
    row = OutgoingMessage("g1/77/seat:3", "g1", "dm", "seat:3", alice, text)
    first = connect(gateway, tmp_path)
    try:
        first.send_dm(alice, parts[0], key=f"{row.dedupe_key}#1")  # then killed
    finally:
        first.stop()
    second = connect(gateway, tmp_path)
    try:
        TransportCourier(second).send(row)
    finally:
        second.stop()
    assert gateway.dms_to(alice) == parts


def test_send_dm_reaches_the_contact_and_its_echo_is_ignored(
        gateway: Gateway, transport: WechatyTransport, inbox: Inbox) -> None:
    alice = gateway.contact("alice")
    transport.send_dm(alice, "你的座位：3号\n第二行")
    assert gateway.dms_to(alice) == ["你的座位：3号\n第二行"]
    # the puppet echoes the bot's own message as a message event: a later DM is the barrier
    inbox.find(gateway.dm(alice, "收到"))
    assert [m.sender for m in inbox.snapshot()] == [alice]


def test_a_room_with_exact_members_posts_and_room_messages(
        gateway: Gateway, transport: WechatyTransport, inbox: Inbox) -> None:
    a, b, c, d = (gateway.contact(n) for n in ("a", "b", "c", "d"))
    room = transport.create_room("AB12狼群", [a, b, c])
    made = gateway.rooms()[room]
    assert sorted(made["members"]) == sorted([BOT, a, b, c])
    assert made["topic"] == "AB12狼群"
    assert sorted(transport.members(room)) == sorted([a, b, c])  # the bot's own id left out
    transport.post(room, "狼群成员：1号、2号、3号")
    assert [(s["kind"], s["to"], s["text"]) for s in gateway.sent()] == [
        ("post", room, "狼群成员：1号、2号、3号")]
    msg = inbox.find(gateway.say(b, room, "刀 5"))
    assert (msg.sender, msg.text, msg.room) == (b, "刀 5", room)
    transport.add_member(room, d)
    transport.remove_member(room, a)
    assert sorted(transport.members(room)) == sorted([b, c, d])
    second = transport.create_room("AB12情侣群", [a, d])
    assert second != room  # the stock mock answers every roomCreate with one constant id


def test_refused_room_creation_raises_refused(gateway: Gateway,
                                              transport: WechatyTransport) -> None:
    a, b = gateway.contact("a"), gateway.contact("b")
    gateway.refuse_rooms()
    with pytest.raises(Refused):
        transport.create_room("AB12狼群", [a, b])
    gateway.refuse_rooms(False)
    assert transport.create_room("AB12狼群", [a, b]) in gateway.rooms()


def test_a_send_to_an_unknown_contact_is_refused(transport: WechatyTransport) -> None:
    with pytest.raises(Refused):
        transport.send_dm("wxid_nobody", "hi")


def test_the_transport_reconnects_after_the_gateway_restarts(
        gateway: Gateway, tmp_path: Path, inbox: Inbox) -> None:
    reconnects: list[int] = []
    t = connect(gateway, tmp_path, inbox, on_reconnect=lambda: reconnects.append(1))
    try:
        alice = gateway.contact("alice")
        inbox.find(gateway.dm(alice, "一"))
        gateway.kill()
        wait_until(lambda: not t.connected, 20, "the transport to notice the drop")
        with pytest.raises(Refused):
            t.send_dm(alice, "lost")
        gateway.start()  # same ports, same token, a fresh WeChat
        assert t.wait_logins(2, 30), "no reconnect:\n" + gateway.log()
        alice = gateway.contact("alice")
        msg = inbox.find(gateway.dm(alice, "二"))
        assert (msg.sender, msg.text) == (alice, "二")
        t.send_dm(alice, "又连上了")
        assert gateway.dms_to(alice) == ["又连上了"]
        wait_until(lambda: reconnects == [1], 10, "on_reconnect")
    finally:
        t.stop()


def test_a_classic_game_deals_roles_by_dm_over_wechaty(gateway: Gateway,
                                                       tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    migrate(url)
    service = Service(url)
    judge = gateway.contact("judge")
    players = [gateway.contact(f"p{i}") for i in range(1, 13)]
    transport = WechatyTransport(gateway.endpoint, gateway.token,
                                 cache_dir=str(tmp_path / "wechaty"))
    seeds = itertools.count(1)
    bot = ChatBot(service, transport, judges=[judge], time_zone="Asia/Shanghai",
                  export_dir=tmp_path / "exports", seeds=lambda: f"{next(seeds):064x}")
    transport.handler = bot.handle
    transport.start()
    try:
        assert transport.wait_ready(30), gateway.log()
        gateway.dm(judge, "新游戏 经典")

        def code() -> str | None:
            m = next((CODE.search(t) for t in gateway.dms_to(judge) if CODE.search(t)), None)
            return m.group(1) if m else None

        game = wait_until(code, 30, "the game code")
        for i, p in enumerate(players, 1):
            gateway.dm(p, f"报名 {game} 马甲{i}")
        wait_until(lambda: all(gateway.dms_to(p) for p in players), 60, "the join replies")
        assert all("报名成功" in "\n".join(gateway.dms_to(p)) for p in players)
        gateway.dm(judge, "开始")

        def dealt() -> bool:
            return all(any("你的座位：" in t and "你的身份：" in t for t in gateway.dms_to(p))
                       for p in players)

        wait_until(dealt, 60, "every player's role DM")
        seats = set()
        for p in players:
            role_dm = next(t for t in gateway.dms_to(p) if "你的座位：" in t)
            seats.add(re.search(r"你的座位：(\d+)号", role_dm).group(1))  # type: ignore[union-attr]
        assert seats == {str(n) for n in range(1, 13)}
    finally:
        transport.stop()
        service.close()
