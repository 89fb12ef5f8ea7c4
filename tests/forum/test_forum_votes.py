"""The vote thread read by the bot (issue 11): every case on a fake forum (built protobuf
responses read by aiotieba), each day's result compared with the same votes entered by hand
(`记票`, `改票`, `更正`, `废票`) in an identical game (same seed, same seats)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from chathelp import JUDGE, ZONE, Table
from forumhelp import JUDGE_ACCOUNT, TID, FakeForum, Floor
from sqlalchemy import func, select

from bot.forum.reader import TiebaSource, thread_id
from bot.store.models import ForumLine, InboxMessage, Player

DAY1 = datetime(2026, 12, 1, 9, 0, tzinfo=ZONE)  # day 1 opens (the table starts at 07:30)


def at(hhmm: str) -> datetime:
    h, m = hhmm.split(":")
    return DAY1.replace(hour=int(h), minute=int(m))


@dataclass
class Pair:
    """Game `auto` reads the thread; game `hand` gets the same votes typed by the judge."""

    auto: Table
    hand: Table
    forum: FakeForum
    code: str
    accounts: dict[int, int] = field(default_factory=dict)  # seat -> forum user id

    def uid(self, seat: int) -> int:
        return self.accounts[seat]

    def move_to(self, when: datetime) -> None:
        self.auto.move_to(when)
        self.hand.move_to(when)

    def judge(self, text: str) -> str:
        return self.auto.reply(JUDGE, text)

    def by_hand(self, text: str) -> str:
        return self.hand.reply(JUDGE, text)

    def read(self) -> None:
        self.auto.bot.forum.read(self.code)
        self.auto.bot.deliver()

    def votes(self, table: Table) -> dict[int, list[tuple[str, int | None, bool, bool]]]:
        return {n: [(p.at.strftime("%H:%M"), p.target, p.change, p.void) for p in posts]
                for n, posts in table.state(self.code).votes.items() if posts}

    def same(self) -> None:
        assert self.votes(self.auto) == self.votes(self.hand)
        a, h = self.auto.state(self.code), self.hand.state(self.code)
        assert a.phase == h.phase and a.sheriff == h.sheriff
        assert [(s.alive, s.yellow, s.red) for s in a.seats] == [
            (s.alive, s.yellow, s.red) for s in h.seats]

    def lines(self) -> dict[str, ForumLine]:
        day = self.auto.state(self.code).day
        return {(str(r.floor) if r.sub == 0 else f"{r.floor}-{r.sub}"): r
                for r in self.auto.bot.forum.lines(self.code, day)}


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Pair]:
    (tmp_path / "a").mkdir()
    (tmp_path / "h").mkdir()
    auto, hand = Table(tmp_path / "a"), Table(tmp_path / "h")
    code = auto.game("新游戏 经典 votes.channel=forum-auto")
    assert hand.game("新游戏 经典") == code  # same code, same seed: the same game
    with auto.service.db.read() as s:
        names = dict(s.execute(select(Player.seat, Player.forum_name).where(
            Player.game_id == code)).all())
    accounts = {seat: 1000 + seat for seat in names}
    forum = FakeForum({uid: names[seat] for seat, uid in accounts.items()})
    auto.bot.forum.source = TiebaSource(forum.client)
    auto.bot.forum.clock = lambda: auto.now
    p = Pair(auto, hand, forum, code, accounts)
    p.move_to(DAY1)
    forum.post(JUDGE_ACCOUNT, at("09:00"), "第1天投票贴：请按格式投票")
    assert "已绑定投票贴" in p.judge(f"投票贴 https://tieba.baidu.com/p/{TID}?see_lz=1")
    yield p
    auto.close()
    hand.close()


def vote(p: Pair, seat: int, hhmm: str, text: str, hand: str | None) -> Floor:
    floor = p.forum.post(p.uid(seat), at(hhmm), text)
    if hand:
        p.by_hand(hand)
    return floor


def everyone_votes(p: Pair, skip: tuple[int, ...] = ()) -> None:
    for seat in range(1, 13):
        if seat in skip:
            continue
        target = 12 if seat != 12 else 11
        vote(p, seat, "10:00", f"投{target}号 理由：发言有问题", f"记票 {seat} {target} 10:00")


def close_day(p: Pair) -> None:
    p.move_to(at("21:05"))


def test_thread_ids() -> None:
    assert thread_id("8123456789") == 8123456789
    assert thread_id("https://tieba.baidu.com/p/8123456789?pn=2") == 8123456789
    assert thread_id("https://tieba.baidu.com/mo/q/m?kz=8123456789") == 8123456789
    assert thread_id("看这里") is None


def test_a_normal_day(pair: Pair) -> None:
    p = pair
    p.move_to(at("10:30"))
    everyone_votes(p, skip=(7,))
    vote(p, 7, "10:10", "弃权", "记票 7 弃权 10:10")
    p.read()
    lines = p.lines()
    assert lines["1"].verdict == "talk" and lines["1"].seat is None  # the judge's opening
    assert all(r.applied for r in lines.values() if r.verdict == "vote")
    assert not any(r.needs_judge for r in lines.values())
    told = [s.text for s in p.auto.transport.sent if s.target == JUDGE]
    assert any("新读到 12 条" in x for x in told)
    p.same()
    close_day(p)
    p.same()
    assert p.auto.state(p.code).sheriff == 12


def test_a_change_by_reply_confirmed_by_the_judge(pair: Pair) -> None:
    p = pair
    p.move_to(at("12:00"))
    everyone_votes(p)
    floor3 = p.forum.floors[3]  # seat 3's floor (floor 4)
    p.forum.reply(floor3, p.uid(3), at("11:00"), "改票 11号 想了想")
    p.read()
    line = p.lines()["4-1"]
    assert line.needs_judge and line.verdict == "change" and not line.applied
    assert "4-1楼" in p.judge("核票") and "建议算作改票" in p.judge("核票")
    assert p.votes(p.auto)[3] == [("10:00", 12, False, False)]  # nothing counted unseen
    assert "已计入" in p.judge("判 4-1 改票")
    p.by_hand("改票 3 11 11:00")
    p.same()
    assert "没有需要裁定" in p.judge("核票")
    close_day(p)
    p.same()


def test_a_correction_keeps_the_original_time(pair: Pair) -> None:
    p = pair
    p.move_to(at("12:00"))
    everyone_votes(p)
    p.forum.reply(p.forum.floors[5], p.uid(5), at("11:30"), "更正 10号，刚才打错了")
    p.read()
    assert p.lines()["6-1"].reason == "proposed_correct"
    p.judge("判 6-1 更正")
    p.by_hand("更正 5 10")
    p.same()
    assert p.votes(p.auto)[5] == [("10:00", 10, False, False)]
    close_day(p)
    p.same()


def test_a_second_change_is_refused(pair: Pair) -> None:
    p = pair
    p.move_to(at("14:00"))
    everyone_votes(p)
    floor = p.forum.floors[2]
    p.forum.reply(floor, p.uid(2), at("11:00"), "改票 10")
    p.forum.reply(floor, p.uid(2), at("13:00"), "改票 9")
    p.read()
    p.judge("判 3-1 改票")
    p.by_hand("改票 2 10 11:00")
    assert "已经改过一次票" in p.judge("判 3-2 改票")
    assert p.lines()["3-2"].verdict == "refused" and not p.lines()["3-2"].applied
    p.same()
    close_day(p)
    p.same()


def test_a_change_in_the_last_hour_is_refused(pair: Pair) -> None:
    p = pair
    p.move_to(at("20:40"))
    everyone_votes(p)
    p.forum.reply(p.forum.floors[4], p.uid(4), at("20:30"), "改票 1号")
    p.read()
    line = p.lines()["5-1"]
    assert line.needs_judge and line.reason == "last_hour"
    assert "关门前一小时内不能改票" in p.judge("判 5-1 改票")
    p.by_hand("改票 4 1 20:30")  # the engine refuses it too
    p.same()
    close_day(p)
    p.same()


def test_a_vote_after_the_close_is_refused(pair: Pair) -> None:
    p = pair
    p.move_to(at("20:00"))
    everyone_votes(p, skip=(9,))
    p.read()
    p.forum.post(p.uid(9), at("21:02"), "投1")  # read only by the closing read
    close_day(p)
    lines = p.auto.bot.forum.lines(p.code, 1)
    late = next(r for r in lines if r.seat == 9)
    assert late.verdict == "refused" and late.reason == "after_close" and not late.applied
    p.same()
    assert p.auto.state(p.code).seats[8].yellow == 1  # did not vote: a yellow card


def test_a_void_post_fixed_by_a_correction(pair: Pair) -> None:
    p = pair
    p.move_to(at("12:00"))
    everyone_votes(p, skip=(6,))
    floor = vote(p, 6, "10:20", "投 大家好呀", "废票 6 10:20")
    p.read()
    ref = str(floor.floor)
    assert p.lines()[ref].verdict == "void" and p.lines()[ref].applied
    p.forum.reply(floor, p.uid(6), at("11:40"), "投 八号")
    p.read()
    assert p.lines()[f"{ref}-1"].reason == "proposed_correct"
    p.judge(f"判 {ref}-1 更正")
    p.by_hand("更正 6 8")
    p.same()
    assert p.votes(p.auto)[6] == [("10:20", 8, False, False)]
    close_day(p)
    p.same()


def test_an_author_who_is_not_a_player(pair: Pair) -> None:
    p = pair
    p.move_to(at("12:00"))
    everyone_votes(p)
    p.forum.post(4242, at("10:30"), "投3号")
    p.read()
    stranger = next(r for r in p.lines().values() if r.author_id == 4242)
    assert stranger.seat is None and stranger.reason == "not_player" and not stranger.applied
    assert "不是本局玩家" in p.judge("票型")
    p.same()


def test_pages_of_thirty_floors(pair: Pair) -> None:
    p = pair
    p.move_to(at("12:00"))
    for i in range(40):  # the thread fills with talk by onlookers first
        p.forum.post(5000 + i, at("09:30"), f"围观{i}")
    everyone_votes(p)
    p.forum.requests.clear()
    p.read()
    assert p.forum.rn == 30
    assert p.forum.requests.count("/c/f/pb/page") == 2  # 53 floors: pages 1 and 2
    assert len(p.lines()) == 53
    p.same()
    close_day(p)
    p.same()


def test_the_read_failing_at_the_close(pair: Pair) -> None:
    p = pair
    p.move_to(at("15:00"))
    everyone_votes(p, skip=(1, 2))
    p.read()
    p.forum.post(p.uid(1), at("16:00"), "投5")  # never read: the forum fails from here on
    p.forum.post(p.uid(2), at("16:00"), "投5")
    p.forum.fail = "server"
    p.move_to(at("20:30"))
    p.auto.bot.forum.poll()  # a failed read in the last hour is told at once
    p.auto.bot.deliver()
    before = len(p.auto.transport.sent)
    close_day(p)
    told = [s.text for s in p.auto.transport.sent[:before] if s.target == JUDGE]
    assert any("离关门不到一小时" in x for x in told)
    at_close = [s.text for s in p.auto.transport.sent[before:] if s.target == JUDGE]
    assert any("关门时投票贴" in x and "读取失败" in x and "15:00" in x for x in at_close)
    assert {r.seat for r in p.auto.bot.forum.lines(p.code, 1)} >= {3, 4}
    assert not any(r.gone for r in p.auto.bot.forum.lines(p.code, 1))  # unknown, not gone
    p.same()


def test_never_counted_twice_after_a_restart(pair: Pair, tmp_path: Path) -> None:
    p = pair
    p.move_to(at("12:00"))
    everyone_votes(p)
    p.read()
    with p.auto.service.db.write() as s:  # a crash between the commit and the ledger's mark
        for r in s.scalars(select(ForumLine)):
            r.applied = False
    restarted = Table(tmp_path / "a")  # the same database, a new bot
    restarted.now = p.auto.now
    restarted.bot.forum.source = TiebaSource(p.forum.client)
    restarted.bot.forum.clock = lambda: restarted.now
    restarted.bot.forum.read(p.code)
    restarted.bot.forum.read(p.code)
    assert all(r.applied for r in restarted.bot.forum.lines(p.code, 1) if r.verdict == "vote")
    with restarted.service.db.read() as s:
        assert s.scalar(select(func.count()).select_from(InboxMessage).where(
            InboxMessage.msg_id.like("tieba:%"))) == 12
    assert p.votes(restarted) == p.votes(p.hand)
    restarted.close()


def test_a_deleted_floor_stays_in_the_ledger(pair: Pair) -> None:
    p = pair
    p.move_to(at("12:00"))
    everyone_votes(p)
    p.read()
    p.forum.delete(p.forum.floors[8])
    p.read()
    gone = [r for r in p.lines().values() if r.gone]
    assert len(gone) == 1 and gone[0].applied
    assert "已删除" in p.judge("票型")
    p.same()


def test_only_a_forum_auto_game_has_a_thread(tmp_path: Path) -> None:
    t = Table(tmp_path)
    t.game()
    t.move_to(DAY1)
    assert "不是自动读投票贴" in t.reply(JUDGE, f"投票贴 {TID}")
    t.close()


def test_a_decision_waits_until_the_close_and_lapses(pair: Pair) -> None:
    p = pair
    p.move_to(at("12:00"))
    everyone_votes(p)
    p.forum.reply(p.forum.floors[1], p.uid(1), at("11:00"), "改票 3")
    p.read()
    close_day(p)
    told = [s.text for s in p.auto.transport.sent if s.target == JUDGE]
    assert any("仍未裁定" in x for x in told)
    p.same()  # undecided: not counted, like a lapsed 更正 request


def test_reading_is_timed(pair: Pair) -> None:
    p = pair
    forum = p.auto.bot.forum
    p.move_to(at("10:00"))
    forum.poll()
    n = len(p.forum.requests)
    forum.poll()  # within the interval: not read again
    assert len(p.forum.requests) == n
    p.move_to(at("10:00") + timedelta(minutes=11))
    forum.poll()
    assert len(p.forum.requests) > n


def test_the_judges_page_shows_the_thread_as_read(pair: Pair) -> None:
    """Issue 24: with forum-auto, the judge's page has the ledger with its open lines."""
    import html
    import re

    from fastapi.testclient import TestClient

    from bot.web.app import create_app
    from bot.web.links import Links

    p = pair
    p.move_to(at("10:30"))
    everyone_votes(p, skip=(7,))
    p.read()
    links = Links("s", lambda: p.auto.now.replace(tzinfo=None))
    client = TestClient(create_app(p.auto.service, p.auto.bot.chats, links,
                                   now=lambda: p.auto.now.replace(tzinfo=None),
                                   bot=p.auto.bot))
    page = client.get("/j/" + links.make("j", p.code, JUDGE, None, 0)).text
    m = re.search(r'<section id="ledger">.*?<pre>(.*?)</pre>', page, re.S)
    assert m is not None
    day = p.auto.state(p.code).day
    assert html.unescape(m.group(1)) == p.auto.bot.forum.ledger_text(p.code, day)
