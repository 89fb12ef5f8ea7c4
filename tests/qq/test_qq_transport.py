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

from bot.outbox import OutgoingMessage
from bot.transport import ByHand, Incoming, TransportCourier, Unreachable, Unsupported
from bot.transport.guard import Guard, GuardSettings
from bot.transport.onebot import QQ_MAX_TEXT, OneBotTransport, Watermark, segment_text

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


# the catch-up: only the conversations with a message since the mark ---------------------------
class Kept:
    """A `Watermark` in memory (the database's, as `wolfjudge run` keeps it)."""

    def __init__(self) -> None:
        self.value: int | None = None

    def mark(self) -> Watermark:
        return Watermark(lambda: self.value, self.write)

    def write(self, value: int) -> None:
        self.value = value


def old_crowd(people: FakeOneBot, friends: int = 40, groups: int = 10) -> list[str]:
    """Friends and groups whose last message is two days old: their conversations."""
    import time as clock

    now = people.now
    people.now = lambda: clock.time() - 2 * 86400
    try:
        crowd = [people.user(str(30001 + n), f"老朋友{n}") for n in range(friends)]
        for qq in crowd:
            people.dm(qq, "你好")
        for n in range(groups):
            people.say(crowd[n], people.group(str(600001 + n), f"旧群{n}", [crowd[n]]), "早")
    finally:
        people.now = now
    return crowd


@contextlib.contextmanager
def restarted(people: FakeOneBot, inbox: Callable[[Incoming], None], kept: Kept,
              **options: Any) -> Iterator[OneBotTransport]:
    """A new process's transport, its mark kept in `kept`, once it has caught up."""
    with running(people, handler=inbox, mark=kept.mark(), **options) as t:
        assert t.wait_settled(15)
        yield t


@pytest.mark.parametrize("recent", [True, False], ids=["recent_contacts", "without"])
def test_the_catch_up_reads_the_conversations_active_since_the_mark(
        people: FakeOneBot, inbox: Inbox, recent: bool) -> None:
    """README "Restarts, dropped connections, and messages sent meanwhile": NapCat's recent
    contacts name the conversations with a message since the mark; an implementation without
    them (LLOneBot) has every friend and group read. Each message is handed over once."""
    crowd = old_crowd(people)
    if not recent:
        people.lacks.add("get_recent_contact")
    kept = Kept()
    people.group("500005", "狼群", [P1, P2, JUDGE])
    with restarted(people, inbox, kept) as first:
        handled = people.dm(P1, "验 3")
        assert inbox.wait(lambda got: [m.msg_id for m in got] == [handled])
        assert first.wait_settled(5) and kept.value is not None  # kept once all is handled
    meanwhile = [people.dm(P2, "投 5"), people.say(P1, "500005", "刀 7"),
                 people.dm(JUDGE, "状态")]
    calls = len(people.calls)
    with restarted(people, inbox, kept):
        # (the one handled before may come again, within the slack: the chat layer drops it)
        assert [m.msg_id for m in inbox.got if m.msg_id != handled] == meanwhile
        read = [p for a, p in people.calls[calls:] if a.endswith("_msg_history")]
        peers = {str(p.get("user_id") or p.get("group_id")) for p in read}
        if recent:
            assert peers <= {P1, P2, JUDGE, "500005"} and len(read) <= 4, read
            assert len(people.called("get_recent_contact")) == 2  # once a connection
        else:
            assert set(crowd) <= peers


def test_more_active_conversations_than_listed_are_all_read(people: FakeOneBot,
                                                            inbox: Inbox) -> None:
    """Each of the recent contacts listed newer than the mark: more may be, so every friend and
    group is read (nothing sent meanwhile is missed)."""
    crowd = old_crowd(people, friends=10, groups=0)
    sent = [people.dm(qq, "状态") for qq in (P1, P2, JUDGE)]
    with restarted(people, inbox, Kept(), recent_count=2):
        assert [m.msg_id for m in inbox.got] == sent
        read = {str(p.get("user_id")) for a, p in people.calls if a == "get_friend_msg_history"}
        assert set(crowd) <= read


def test_the_catch_up_reads_times_in_milliseconds_as_such(people: FakeOneBot,
                                                          inbox: Inbox) -> None:
    """An implementation giving message times in milliseconds (in the history and the recent
    contacts' `msgTime` text alike, `connected.epoch`): the conversations quiet for two days
    are not read, what was sent meanwhile is handed over in time order, at its time."""
    import time as clock

    people.now = lambda: (clock.time() - 2 * 86400) * 1000
    crowd = [people.user(str(30001 + n), f"老朋友{n}") for n in range(5)]
    for qq in crowd:
        people.dm(qq, "你好")
    people.now = lambda: clock.time() * 1000
    sent = [people.dm(P1, "验 3"), people.dm(P2, "投 5")]
    with restarted(people, inbox, Kept()):
        assert [m.msg_id for m in inbox.got] == sent
        assert abs(inbox.got[0].at.timestamp() - clock.time()) < 60
        read = {str(p.get("user_id")) for a, p in people.calls if a == "get_friend_msg_history"}
        assert read == {P1, P2}


def test_a_message_whose_handling_failed_holds_the_mark_back(people: FakeOneBot) -> None:
    """A message not committed (its handler failed) is read again by the next catch-up: the
    mark stays before it."""
    inbox = Inbox()
    failing = {"坏": 1}

    def handler(msg: Incoming) -> None:
        if failing.get(msg.text, 0) > 0:
            failing[msg.text] -= 1
            raise RuntimeError("the database is away")
        inbox(msg)

    import time as clock

    kept = Kept()
    with restarted(people, handler, kept) as t:
        people.now = lambda: clock.time() - 120  # sent two minutes before the next one
        bad = people.dm(P1, "坏")
        people.now = clock.time
        later = people.dm(P2, "好")
        assert inbox.wait(lambda got: [m.msg_id for m in got] == [later])
        assert t.wait_settled(5)
    with restarted(people, handler, kept):
        # handed again (the one handled may come again too: the chat layer drops it)
        assert [m.msg_id for m in inbox.got if m.msg_id != later] == [bad]


# long texts: QQ refuses one of more than some 4,500 characters ---------------------------------
def test_a_long_text_goes_to_qq_in_parts_cut_at_line_breaks(qq: OneBotTransport,
                                                            people: FakeOneBot) -> None:
    """README "Long messages": each part at most 4,000 characters, in order, each a send of its
    own under its own key (part 2 is no repeat of part 1); sent again, nothing is repeated."""
    people.group("500006", "公告群", [P1, P2, JUDGE])
    text = "\n".join(f"{n}. 第{n}天 " + "公示内容" * 20 for n in range(160))
    assert len(text) > 3 * QQ_MAX_TEXT
    courier = TransportCourier(qq)
    for key, channel, to in (("row-1", "dm", P1), ("row-2", "public", "500006")):
        courier.send(OutgoingMessage(key, "G1", channel, "x", to, text))
        courier.send(OutgoingMessage(key, "G1", channel, "x", to, text))  # a retry
    for got in (people.dms_to(P1), people.posts_in("500006")):
        assert len(got) == 4 and all(len(part) <= QQ_MAX_TEXT for part in got)
        assert "\n".join(got) == text
