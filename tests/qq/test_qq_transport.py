"""The OneBot v11 transport (bot/transport/onebot.py) against our fake NapCat on a real
WebSocket on loopback (tests/qq/onebotfake.py): login, the token, messages in and out, hostile
text kept as text, what QQ cannot do, friend requests, the guard, a dropped connection and a
restarted implementation caught up from QQ's history, each message handed over once."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from onebotfake import BOT_QQ, FakeOneBot

from bot.transport import ByHand, Incoming, Unreachable, Unsupported
from bot.transport.guard import Guard, GuardSettings
from bot.transport.onebot import OneBotTransport, segment_text

P1, P2, STRANGER, JUDGE = "10001", "10002", "19999", "20001"


class Inbox:
    def __init__(self) -> None:
        self.got: list[Incoming] = []
        self.cond = threading.Condition()

    def __call__(self, msg: Incoming) -> None:
        with self.cond:
            self.got.append(msg)
            self.cond.notify_all()

    def wait(self, what: Callable[[list[Incoming]], bool], timeout: float = 10.0) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: what(self.got), timeout)


@pytest.fixture
def people(onebot: FakeOneBot) -> FakeOneBot:
    for qq, name in ((P1, "阿一"), (P2, "阿二"), (JUDGE, "法官")):
        onebot.user(qq, name)
    onebot.user(STRANGER, "路人", friend=False)
    return onebot


@pytest.fixture
def inbox() -> Inbox:
    return Inbox()


@contextlib.contextmanager
def running(people: FakeOneBot, token: str | None = None, *,
            callbacks: dict[str, Callable[..., Any]] | None = None,
            **options: Any) -> Iterator[OneBotTransport]:
    """A transport on the fake NapCat (its token unless `token`), its `callbacks` set, started;
    halted and stopped after."""
    t = OneBotTransport(people.url, people.token if token is None else token, **options)
    for name, callback in (callbacks or {}).items():
        setattr(t, name, callback)
    t.start()
    try:
        yield t
    finally:
        t.halt()
        t.stop()


@pytest.fixture
def qq(people: FakeOneBot, inbox: Inbox) -> Iterator[OneBotTransport]:
    with running(people, handler=inbox, reconnect_min=0.05, reconnect_max=0.2,
                 timeout=5) as t:
        assert t.wait_ready(10)
        yield t


def test_it_logs_in_with_the_token_and_says_what_qq_can_do(people: FakeOneBot,
                                                           inbox: Inbox) -> None:
    told: list[Any] = []
    with running(people, handler=inbox, callbacks={"on_capabilities": told.append}) as t:
        assert t.wait_ready(10) and t.wait_settled(10)
        assert t.self_id == BOT_QQ and t.account is not None and t.account.online
        assert t.account.app == "NapCat.Onebot 4.8.95"
        caps = t.capabilities
        assert caps.reported and caps.nouns == "qq" and caps.send_dm and caps.list_members
        assert not caps.create_rooms and not caps.add_members
        assert told == [caps]
        assert people.connections == 1 and people.refused == 0


@pytest.mark.parametrize("token", ["wrong", ""])
def test_a_refused_token_is_said_and_retried_never_ready(people: FakeOneBot, token: str) -> None:
    with running(people, token, reconnect_min=0.05, reconnect_max=0.1) as t:
        assert people.wait(lambda: people.refused >= 2)
        assert not t.wait_ready(0.3)
        assert t.token_refused


def test_a_login_answered_with_nothing_is_tried_again(people: FakeOneBot) -> None:
    """An implementation that answers `get_login_info` with no data (not logged in yet)
    fails that connection only: the transport connects again, and logs in then."""
    answers = [None]
    real = people._do_get_login_info
    people._do_get_login_info = lambda p: answers.pop() if answers else real(p)  # type: ignore[method-assign]
    with running(people, reconnect_min=0.05, reconnect_max=0.1) as t:
        assert t.wait_ready(10) and t.self_id == BOT_QQ
        assert people.connections == 2


def test_a_message_time_in_milliseconds_is_read_and_breaks_nothing(
        qq: OneBotTransport, people: FakeOneBot, inbox: Inbox) -> None:
    """A message's `time` is epoch seconds; one in milliseconds is read as such, and one that
    is no time at all counts as now: neither ends the connection."""
    import time as clock

    sent = clock.time()
    people.now = lambda: sent * 1000
    first = people.dm(P1, "验 3")
    people.now = lambda: 10.0 ** 30
    second = people.dm(P1, "验 4")
    people.now = clock.time
    third = people.dm(P1, "状态")
    assert inbox.wait(lambda got: len(got) == 3), inbox.got
    assert [m.msg_id for m in inbox.got] == [first, second, third]
    assert abs(inbox.got[0].at.timestamp() - int(sent)) < 2
    assert qq.logins == 1


def test_dms_and_group_lines_reach_the_handler_once_with_their_room(
        qq: OneBotTransport, people: FakeOneBot, inbox: Inbox) -> None:
    people.group("500001", "E4XW9P狼群", [P1, P2, JUDGE])
    a = people.dm(P1, "报名 E4XW9P 马甲1")
    b = people.say(P2, "500001", [{"type": "at", "data": {"qq": BOT_QQ}},
                                  {"type": "text", "data": {"text": " 刀 5"}}])
    assert inbox.wait(lambda got: len(got) == 2)
    first, second = inbox.got
    assert (first.msg_id, first.sender, first.text, first.room) == (a, P1, "报名 E4XW9P 马甲1",
                                                                     None)
    assert (second.msg_id, second.sender, second.text, second.room) == (b, P2, "刀 5", "500001")
    assert first.at.tzinfo is not None


def test_segments_other_than_text_read_as_their_text_and_never_crash() -> None:
    assert segment_text([{"type": "at", "data": {"qq": BOT_QQ}},
                         {"type": "text", "data": {"text": "状态"}}], BOT_QQ) == "状态"
    assert segment_text([{"type": "reply", "data": {"id": "9"}},
                         {"type": "text", "data": {"text": "投 3"}}], BOT_QQ) == "投 3"
    assert segment_text([{"type": "image", "data": {"file": "a.jpg"}}], BOT_QQ) == "[图片]"
    assert segment_text([{"type": "face", "data": {"id": "14"}},
                         {"type": "at", "data": {"qq": "all"}},
                         {"type": "at", "data": {"qq": "123", "name": "阿三"}}], BOT_QQ
                        ) == "[表情]@全体成员@阿三"
    for bad in (None, 5, "x", [None, 3, {"type": 7}, {"type": "text", "data": None},
                               {"type": "text"}, {"data": {"text": "x"}}, {"type": "weird"}]):
        assert isinstance(segment_text(bad, BOT_QQ), str)
    # an implementation that sends `message` as a CQ string: the codes go, the escapes undone
    assert segment_text("[CQ:at,qq=3000000001] 遗言 &#91;CQ:at,qq=all&#93;", BOT_QQ) == (
        "遗言 [CQ:at,qq=all]")


def test_hostile_text_reaches_qq_as_text(qq: OneBotTransport, people: FakeOneBot) -> None:
    people.group("500002", "E4XW9P公告群", [P1, P2, JUDGE])
    hostile = "遗言：[CQ:at,qq=all] 大家好 [CQ:image,file=http://x/y.jpg] &#91;CQ:face,id=1&#93;"
    qq.send_dm(P1, hostile, key="k1")
    qq.post("500002", hostile, key="k2")
    for sent in people.sent:
        assert sent.segments == [{"type": "text", "data": {"text": hostile}}], sent
        assert sent.text == hostile and sent.auto_escape
    # (without the escape the fake, as NapCat, would have made an @all and an image of it)
    assert [s["type"] for s in __import__("onebotfake").cq_decode(hostile)][:2] == ["text", "at"]


def test_a_key_delivered_is_not_sent_again(qq: OneBotTransport, people: FakeOneBot) -> None:
    qq.send_dm(P1, "一", key="same")
    qq.send_dm(P1, "一", key="same")
    assert people.dms_to(P1) == ["一"]


def test_a_dm_to_a_non_friend_says_whom_it_cannot_reach_once(
        qq: OneBotTransport, people: FakeOneBot) -> None:
    told: list[str] = []
    done = threading.Event()
    qq.on_unreachable = lambda c: (told.append(c), done.set())
    for _ in range(3):
        with pytest.raises(Unreachable):
            qq.send_dm(STRANGER, "你的座位：3号")
    assert done.wait(5) and told == [STRANGER]
    assert people.dms_to(STRANGER) == []


def test_a_friend_request_with_a_good_comment_is_approved_others_left_alone(
        qq: OneBotTransport, people: FakeOneBot) -> None:
    asked: list[tuple[str, str]] = []

    def decide(user: str, comment: str) -> bool:
        asked.append((user, comment))
        return "E4XW9P" in comment

    qq.on_friend_request = decide
    people.user("30001", "新人", friend=False)
    people.user("30002", "广告", friend=False)
    people.friend_request("30002", "加我看广告")
    people.friend_request("30001", "报名狼人杀 E4XW9P")
    assert people.wait(lambda: people.users["30001"].friend)
    assert len(people.called("set_friend_add_request")) == 1
    assert not people.users["30002"].friend and len(people.requests) == 1
    assert ("30002", "加我看广告") in asked
    qq.send_dm("30001", "欢迎")  # a friend now
    assert people.dms_to("30001") == ["欢迎"]


def test_rooms_are_made_by_people_members_read_and_kicked_where_admin(
        qq: OneBotTransport, people: FakeOneBot) -> None:
    with pytest.raises(Unsupported):
        qq.create_room("E4XW9P狼群", [P1, P2])
    people.group("500003", "狼群", [P1, P2, JUDGE], bot="admin")
    people.group("500004", "情侣群", [P1, P2, JUDGE])
    assert sorted(qq.members("500003")) == sorted([P1, P2, JUDGE])
    with pytest.raises(Unsupported):
        qq.add_member("500003", P1)
    qq.remove_member("500003", P2)
    assert sorted(people.members("500003")) == sorted([P1, JUDGE])
    with pytest.raises(ByHand):
        qq.remove_member("500004", P2)
    assert P2 in people.members("500004")


def test_the_guard_holds_a_conversation_before_risk_control_and_says_so_once(
        people: FakeOneBot) -> None:
    told: list[tuple[str, bool]] = []
    with running(people, guard=Guard(GuardSettings(per_minute=3, same_text=2)),
                 callbacks={"on_guarded": lambda c, room: told.append((c, room))}) as t:
        assert t.wait_ready(10)
        t.send_dm(P1, "没听懂")
        t.send_dm(P1, "没听懂")
        for _ in range(2):
            with pytest.raises(Exception, match="risk guard"):
                t.send_dm(P1, "没听懂")
        t.send_dm(P2, "没听懂")  # another conversation is not held
        assert t.wait_settled(5)
        assert people.wait(lambda: told == [(P1, False)])
        assert people.dms_to(P1) == ["没听懂", "没听懂"] and people.dms_to(P2) == ["没听懂"]


def test_a_dropped_connection_is_restored_and_what_came_meanwhile_caught_up_once(
        qq: OneBotTransport, people: FakeOneBot, inbox: Inbox) -> None:
    people.group("500005", "狼群", [P1, P2, JUDGE])
    before = people.dm(P1, "验 3")
    assert inbox.wait(lambda got: len(got) == 1)
    reconnected = threading.Event()
    qq.on_reconnect = reconnected.set
    people.stop()  # NapCat restarted: meanwhile people keep writing (kept in QQ's history)
    assert not qq.wait_ready(0) or people.connected == 0
    meanwhile = [people.dm(P2, "投 5"), people.say(P1, "500005", "刀 7")]
    people.start()
    assert qq.wait_logins(2, 15) and reconnected.wait(5)
    after = people.dm(P1, "状态")
    assert inbox.wait(lambda got: len(got) == 4)
    assert [m.msg_id for m in inbox.got] == [before, *meanwhile, after]
    assert [m.room for m in inbox.got] == [None, None, "500005", None]
    people.drop()  # a cut without a goodbye
    assert qq.wait_logins(3, 15)
    assert qq.wait_settled(5) and len(inbox.got) == 4  # nothing twice


def test_catching_up_pages_back_and_drops_what_is_older_than_a_day(people: FakeOneBot,
                                                                   inbox: Inbox) -> None:
    import time as clock

    old = clock.time() - 2 * 86400
    people.now = lambda: old
    people.dm(P1, "很久以前")
    people.now = clock.time
    sent = [people.dm(P1, f"投 {n % 12 + 1}") for n in range(70)]
    with running(people, handler=inbox, catchup_count=20, catchup_pages=5,
                 replay_window=timedelta(hours=24)) as t:
        assert t.wait_settled(10)
        assert [m.msg_id for m in inbox.got] == sent
        assert len(people.called("get_friend_msg_history")) >= 4
