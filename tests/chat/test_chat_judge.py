"""The judge's commands through the chat layer (CHAT.md judge table), on a memory transport and
an injected clock: forum votes with their post time, proxy votes, the tally with the sheriff's
weight, pause and resume, substitution, 公示, 导出, ending early."""

from __future__ import annotations

import itertools
import re
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from chathelp import fixed_codes, fixed_seeds

from bot.chat.bot import ChatBot
from bot.service import Service
from bot.store import migrate
from bot.transport import Incoming
from bot.transport.memory import MemoryTransport

TZ = ZoneInfo("Asia/Shanghai")
JUDGE = "J"
_ids = itertools.count()


class Table:
    """A chat bot on a memory transport with a clock the test moves."""

    def __init__(self, tmp_path: Path, *options: str) -> None:
        url = f"sqlite:///{tmp_path / 'chat.db'}"
        migrate(url)
        self.service = Service(url)
        self.transport = MemoryTransport()
        self.bot = ChatBot(self.service, self.transport, seeds=fixed_seeds(), codes=fixed_codes(),
                           judges=[JUDGE],
                           export_dir=tmp_path / "exports")
        self.now = datetime(2026, 12, 1, 7, 0, tzinfo=TZ)
        reply = self.say(JUDGE, " ".join(["新游戏 经典", *options]))
        self.code = re.search(r"游戏码 ([A-Z0-9]{4,8})", reply).group(1)  # type: ignore[union-attr]
        for i in range(1, 13):
            self.say(f"p{i}", f"报名 {self.code} 马甲{i}")
        self.say(JUDGE, "开始")
        self.seat_of = {c: n for n, (c, _) in self.players().items()}
        self.contact = {n: c for c, n in self.seat_of.items()}

    def players(self) -> dict[int, tuple[str, str]]:
        from sqlalchemy import select

        from bot.store.models import Player
        with self.service.db.read() as s:
            return {p.seat: (p.contact_id, p.forum_name) for p in s.scalars(
                select(Player).where(Player.game_id == self.code))}

    def say(self, sender: str, text: str, room: str | None = None) -> str:
        """Send `text`; everything DMed to `sender` because of it."""
        before = len(self.transport.sent)
        self.bot.handle(Incoming(msg_id=f"m{next(_ids)}", sender=sender, text=text,
                                 at=self.now, room=room))
        return "\n".join(s.text for s in self.transport.sent[before:]
                         if s.kind == "dm" and s.target == sender)

    def seat(self, n: int, text: str) -> str:
        return self.say(self.contact[n], text)

    def move(self, when: datetime) -> None:
        """The clock moves on; what fell due fires (as the scheduler would)."""
        self.now = when.replace(tzinfo=TZ)
        self.service.advance(self.code, self.now.replace(tzinfo=None))
        self.bot.deliver()

    @property
    def state(self):  # type: ignore[no-untyped-def]
        return self.service.state(self.code)

    def role_seat(self, role: str) -> int:
        return next(s.seat for s in self.state.seats if s.role == role)


@pytest.fixture
def table(tmp_path: Path) -> Table:
    return Table(tmp_path)


def _day1(table: Table) -> None:
    cupid = table.role_seat("cupid")
    table.seat(cupid, "连 1 2")
    table.move(datetime(2026, 12, 1, 9, 0))
    assert table.state.phase == "D1"


def test_forum_vote_keeps_its_post_time(table: Table) -> None:
    _day1(table)
    table.move(datetime(2026, 12, 1, 12, 0))
    reply = table.say(JUDGE, "记票 3 5 10:30")
    assert "记票（10:30）：3号 投票给 5号" in reply
    posts = table.state.votes[3]
    assert posts[-1].at == datetime(2026, 12, 1, 10, 30) and posts[-1].target == 5
    assert "不能晚于现在" in table.say(JUDGE, "记票 4 5 13:00")  # the future
    assert 4 not in table.state.votes
    table.say(JUDGE, "记票 4 弃权")
    assert table.state.votes[4][-1].target is None


def test_player_vote_by_dm_is_refused_in_a_forum_game(table: Table) -> None:
    _day1(table)
    assert "贴吧" in table.seat(3, "投 5")
    assert 3 not in table.state.votes


def test_dm_votes_and_tally_show_the_sheriff_weight(tmp_path: Path) -> None:
    table = Table(tmp_path, "votes.channel=dm")
    _day1(table)
    reply = table.seat(3, "投 5")
    assert "已记录你的投票：5号" in reply
    table.seat(4, "投5号")
    table.seat(6, "弃权")
    tally = table.say(JUDGE, "票型")
    assert "5号：2票（3号、4号）" in tally and "弃权：1票（6号）" in tally
    assert "未投票" in tally
    table.seat(4, "改票 6")
    assert table.state.votes[4][-1].change


def test_proxy_vote_and_cards(table: Table) -> None:
    _day1(table)
    table.move(datetime(2026, 12, 1, 12, 0))
    table.say(JUDGE, "代投 7 8")
    assert table.state.votes[7][-1].by_judge
    table.say(JUDGE, "黄牌 9 发言违规")
    assert table.state.seat(9).yellow == 1
    table.say(JUDGE, "报备 10")
    assert table.state.seat(10).notice


def test_pause_and_resume_shift_the_deadlines(table: Table) -> None:
    _day1(table)
    close = table.state.schedule.close_at(1)
    table.move(datetime(2026, 12, 1, 12, 0))
    assert table.state.paused_at is None
    table.say(JUDGE, "暂停")
    assert table.state.paused_at is not None
    table.move(datetime(2026, 12, 1, 14, 0))
    table.say(JUDGE, "继续")
    assert table.state.paused_at is None
    assert table.state.schedule.close_at(1) == close + timedelta(hours=2)


def test_end_needs_confirmation(table: Table) -> None:
    assert "结束 确认" in table.say(JUDGE, "结束")
    assert not table.state.over
    table.say(JUDGE, "结束 确认")
    assert table.state.over and table.state.winner is None
    for n in range(1, 13):
        assert any("游戏结束" in t for t in table.transport.dms(table.contact[n]))


def test_end_confirm_without_request_is_refused(table: Table) -> None:
    assert "先发送" in table.say(JUDGE, "结束 确认")
    assert not table.state.over


def test_substitute_hands_over_the_seat_and_its_history(table: Table) -> None:
    seer = table.role_seat("seer")
    old = table.contact[seer]
    reply = table.say(JUDGE, f"替补 {seer}")
    token = re.search(r"接替 (\S+)", reply).group(1)  # type: ignore[union-attr]
    took = table.say("newcomer", f"接替 {token}")
    assert f"{seer}号" in took and "你的身份：预言家" in took  # the seat's private history
    assert table.players()[seer][0] == "newcomer"
    assert "替补" in "\n".join(table.transport.dms(old))
    assert "无效" in table.say("other", f"接替 {token}")  # one time only
    assert "你的身份：预言家" in table.say("newcomer", "状态")
    assert "不在任何一局" in table.say(old, "状态")


def test_publish_gives_the_day_text(table: Table) -> None:
    _day1(table)
    text = table.say(JUDGE, "公示")
    assert "第1天讨论日开始" in text and "公示" in text


def test_export_writes_the_log(table: Table, tmp_path: Path) -> None:
    reply = table.say(JUDGE, "导出")
    files = list((tmp_path / "exports").glob("*.json"))
    assert len(files) == 1 and str(files[0]) in reply


def test_judge_status_shows_every_seat(table: Table) -> None:
    text = table.say(JUDGE, "状态")
    for n in range(1, 13):
        assert f"\n{n}号 " in text
    assert "预言家" in text and "狼人" in text


def test_witch_save_without_number_takes_the_reported_target(table: Table) -> None:
    _day1(table)
    table.move(datetime(2026, 12, 1, 21, 0))
    assert table.state.phase == "N1"
    night = table.state.night
    assert night is not None
    killer = night.slots["kill"].seats[0]
    target = next(s.seat for s in table.state.seats if s.role == "villager"
                  and s.lover_of is None)
    table.seat(killer, f"刀 {target}")
    table.seat(killer, "锁定")
    witch = table.role_seat("witch")
    reply = table.seat(witch, "救")
    assert f"{target} 号使用救药" in reply



def test_a_substitute_takes_the_old_contacts_place_in_the_rooms(table: Table) -> None:
    _day1(table)  # the link made the rooms
    room = next(r for r, members in table.transport.rooms.items() if "狼群" in r)
    wolf = next(n for n in table.state.groups["wolves"])
    old = table.contact[wolf]
    assert old in table.transport.rooms[room]
    token = re.search(r"接替 (\S+)", table.say(JUDGE, f"替补 {wolf}")).group(1)  # type: ignore[union-attr]
    table.say("newwolf", f"接替 {token}")
    assert "newwolf" in table.transport.rooms[room] and old not in table.transport.rooms[room]
