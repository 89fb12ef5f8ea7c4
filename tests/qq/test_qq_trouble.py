"""QQ's troubles in a game (issue 32, items 2, 3 and 7): the bot stopped and restarted in the
middle of a night while players kept writing (everything answered, once; the night action
counts), the connection cut and restored, a 遗言 holding CQ codes reaching the community group
as text, a member the bot may not remove removed by the judge, and the lobby of a QQ account:
DMs to friends only, friend requests approved on the game's code."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from onebotfake import FakeOneBot
from qqtable import COMMUNITY, JUDGE_QQ, QQTable

from bot.chat.demo import JUDGE
from bot.outbox import deliver


@pytest.fixture
def table_db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'qq.db'}"


def test_restart_drop_and_hostile_last_words_in_one_game(onebot: FakeOneBot,
                                                         table_db: str) -> None:
    table = QQTable("classic", 3, onebot, table_db, hostile_last_words=True,
                    admin_in=("狼群", "公告群"))  # the lovers' group: the bot no admin
    try:
        table.deal()
        table.play(until=lambda st: st.phase == "N1")
        state = table.service.state(table.code)
        seer = next(s.seat for s in state.seats if s.role == "seer")
        villager = next(s.seat for s in state.seats if s.role == "villager")
        # The bot stops in the middle of night 1; the seer checks and a villager asks, by QQ.
        table.stop_bot()
        sent_before = len(onebot.sent)
        target = next(n for n in range(1, 13) if n != seer)
        meanwhile = {table.contact(seer): onebot.dm(table.contact(seer), f"验 {target}"),
                     table.contact(villager): onebot.dm(table.contact(villager), "状态")}
        table.start_bot()  # catches up from QQ's history before anything else
        table.settle()
        chats = table.console.bot.chats
        assert all(chats.sender(None, msg_key=mid).handled for mid in meanwhile.values())
        after = onebot.sent[sent_before:]
        for contact in meanwhile:
            assert len([s for s in after if s.kind == "dm" and s.to == contact]) == 1, after
        assert any("查验结果" in s.text for s in after if s.to == table.contact(seer))
        assert not any("重新连接" in s.text for s in after)  # a start is not a reconnect
        # A second restart answers nothing again.
        table.stop_bot()
        again = len(onebot.sent)
        table.start_bot()
        table.settle()
        assert [s for s in onebot.sent[again:] if s.to in meanwhile] == []
        # The connection cut under a running bot, a player writing while it is down.
        table.play(until=lambda st: st.phase == "D2")
        logins, before_cut = table.transport.logins, len(onebot.sent)
        onebot.drop()
        cut = onebot.dm(table.contact(villager), "状态")
        assert table.transport.wait_logins(logins + 1, 15)
        table.settle(cut)
        assert len([s for s in onebot.sent[before_cut:] if s.to == table.contact(villager)
                    and s.kind == "dm"]) == 1
        assert any("重新连接上QQ" in t for t in onebot.dms_to(JUDGE_QQ))
        winner = table.play()
    finally:
        table.stop_bot()
    assert winner != "none"
    # Every message was answered once: no DM answered twice over the restarts and the cut.
    # The 遗言 with CQ codes reached the community group as those characters, one text part.
    words = [s for s in onebot.sent if s.kind == "post" and s.to == COMMUNITY
             and "[CQ:at,qq=all]" in s.text]
    assert words, "no last words were posted"
    for s in words:
        assert s.auto_escape and [seg["type"] for seg in s.segments] == ["text"]
        assert "[CQ:image,file=http://x/y.jpg]" in s.text
    # Out members left the groups during the game: kicked where the bot is admin (the
    # wolves' group), removed by the judge when asked where it is not (the lovers').
    kicked = onebot.called("set_group_kick")
    wolves = table.made[f"{table.code}狼群"]
    assert any(str(k["group_id"]) == wolves for k in kicked), kicked
    for k in kicked:
        if str(k["group_id"]) == wolves:
            assert str(k["user_id"]) not in onebot.members(wolves)
    lovers = table.made.get(f"{table.code}情侣群")
    asked = [t for t in onebot.dms_to(JUDGE_QQ) if "移不出" in t]
    if any(str(k["group_id"]) == lovers for k in kicked):
        assert asked and "情侣群" in asked[0] and "QQ群" in asked[0], asked


def test_dms_reach_friends_only_and_friend_requests_carry_the_code(
        onebot: FakeOneBot, table_db: str) -> None:
    table = QQTable("classic", 4, onebot, table_db)
    try:
        table.say(JUDGE, "新游戏 经典 votes.channel=dm")
        code = "QQ04CL"
        newcomer, stranger = "50001", "50002"
        onebot.user(newcomer, "新玩家", friend=False)
        onebot.user(stranger, "陌生人", friend=False)
        # A request without the code is left alone; with it (any case), approved.
        onebot.friend_request(stranger, "你好")
        onebot.friend_request(newcomer, f"狼人杀 {code.lower()} 报名")
        assert onebot.wait(lambda: onebot.users[newcomer].friend)
        assert not onebot.users[stranger].friend
        table.say(newcomer, f"报名 {code} 新人")
        assert any("报名成功" in t for t in onebot.dms_to(newcomer))
        # A non-friend writing through a temporary session: applied, the reply cannot reach
        # them, and the judge is told who and how to fix it, in QQ's words.
        table.say(stranger, f"报名 {code} 路人甲")
        assert onebot.dms_to(stranger) == []
        told = [t for t in onebot.dms_to(JUDGE_QQ) if "私聊不到" in t]
        assert len(told) == 1 and "路人甲" in told[0] and code in told[0], told
        assert "QQ号" in told[0] and table.transport.self_id in told[0]
        # Befriended later (the code in the request): the queued reply goes.
        onebot.friend_request(stranger, code)
        assert onebot.wait(lambda: onebot.users[stranger].friend)
        table.settle()
        for _ in range(100):
            if any("报名成功" in t for t in onebot.dms_to(stranger)):
                break
            bot = table.console.bot  # the retry, as the deliverer makes it when it is due
            deliver(bot.service.db, bot.courier, now=datetime.now(UTC).replace(tzinfo=None)
                    + timedelta(hours=2))
        assert any("报名成功" in t for t in onebot.dms_to(stranger))
        assert len([t for t in onebot.dms_to(JUDGE_QQ) if "私聊不到" in t]) == 1
    finally:
        table.stop_bot()
