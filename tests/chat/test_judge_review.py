"""The judge's review of the dawn (issue 25, part 1; docs/rules-judge.md P-REVIEW-1..5): with
`resolve.judge_review=true` the night's resolution waits for `天亮` (or the day's open), the
judge sees it first (`预览`) and may correct it; nothing reaches a player before."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from test_chat_judge import JUDGE, Table, _day1

from bot.chat.bot import ChatBot
from bot.service import Service
from engine.flow import reviewing


def _night(table: Table) -> tuple[int, int]:
    """Night 1 with every action in but the witch's: the wolves kill a villager. Returns
    (the witch, the victim)."""
    _day1(table)
    table.move(datetime(2026, 12, 1, 21, 5))
    night = table.state.night
    killer = night.slots["kill"].seats[0]
    victim = next(s.seat for s in table.state.seats if s.role == "villager"
                  and s.lover_of is None)
    table.seat(killer, f"刀 {victim}")
    table.seat(killer, "锁定")
    table.seat(table.role_seat("seer"), f"验 {victim}")
    guard = table.role_seat("guard")
    table.seat(guard, f"守 {guard}")
    return table.role_seat("witch"), victim


def _seat_dms(table: Table) -> int:
    return sum(len(table.transport.dms(c)) for c in table.contact.values())


@pytest.fixture
def review(tmp_path: Path) -> tuple[Table, int, int]:
    """08:01: the witch's deadline fired, the night waits for the judge."""
    table = Table(tmp_path, "resolve.judge_review=true")
    witch, victim = _night(table)
    table.move(datetime(2026, 12, 2, 7, 30))
    before = _seat_dms(table)
    table.move(datetime(2026, 12, 2, 8, 1))
    assert reviewing(table.state)
    assert _seat_dms(table) == before  # nothing to any player yet (P-REVIEW-1)
    return table, witch, victim


@pytest.mark.rules("P-REVIEW-1", "P-REVIEW-2", "P-REVIEW-3")
def test_preview_then_correction_then_dawn_gives_the_corrected_dawn(
        review: tuple[Table, int, int]) -> None:
    table, witch, victim = review
    told = "\n".join(table.transport.dms(JUDGE))
    assert "结算预览（尚未发送给任何玩家）" in told and f"{victim}号" in told, told
    first = table.say(JUDGE, "预览")
    assert f"{victim} 号出局" in first, first  # as it stands: the kill goes through
    assert "【公开】第2天讨论日开始" in first  # and the dawn post it would make
    assert f"{witch}号 未在时限内完成女巫用药" in first
    # the witch's message was lost: she sent 救 at 07:50, the judge enters it
    assert "已代" in table.say(JUDGE, f"代行 {witch} 救 07:50")
    corrected = table.say(JUDGE, "预览")
    assert f"{victim} 号出局" not in corrected and "未在时限内完成女巫用药" not in corrected
    before = len(table.transport.dms(table.contact[victim]))
    published = table.say(JUDGE, "天亮")
    assert "已按你的 天亮 公布" in published, published
    assert table.state.night.resolved and table.state.seat(victim).alive
    table.move(datetime(2026, 12, 2, 9, 0))
    dawn = table.transport.dms(table.contact[victim])[before:]
    assert any("第2天讨论日开始。昨夜至今出局：无。" in m for m in dawn), dawn
    assert table.service.rebuild(table.code).ok


@pytest.mark.rules("P-REVIEW-3")
def test_a_players_action_after_the_deadline_is_refused_during_the_review(
        review: tuple[Table, int, int]) -> None:
    table, witch, _ = review
    assert "时限已过" in table.seat(witch, "救")  # sent at 08:01, after her 08:00 deadline
    assert "不在这项行动的时限内" in table.say(JUDGE, f"代行 {witch} 救 08:01")
    assert table.state.night.slots["witch"].sub is None and reviewing(table.state)


@pytest.mark.rules("P-REVIEW-4")
def test_the_dawn_is_published_as_previewed_at_the_open(review: tuple[Table, int, int]
                                                        ) -> None:
    table, _, victim = review
    before = len(table.transport.dms(JUDGE))
    table.move(datetime(2026, 12, 2, 9, 0))
    assert table.state.phase == "D2" and not table.state.seat(victim).alive
    told = "\n".join(table.transport.dms(JUDGE)[before:])
    assert "核对时间已到" in told, told


@pytest.mark.rules("P-REVIEW-4")
def test_the_day_opens_no_sooner_than_the_review_minutes(tmp_path: Path) -> None:
    table = Table(tmp_path, "resolve.judge_review=true", "resolve.review_minutes=90")
    _night(table)
    seat = next(iter(table.contact))
    before = len(table.transport.dms(table.contact[seat]))
    table.move(datetime(2026, 12, 2, 8, 1))
    assert table.state.schedule.open_at(2) == datetime(2026, 12, 2, 9, 30)
    # not told when the night finished (that would tell the table when the last answer came)
    assert table.transport.dms(table.contact[seat])[before:] == []
    table.move(datetime(2026, 12, 2, 9, 0))
    assert reviewing(table.state)
    told = table.transport.dms(table.contact[seat])[before:]
    assert len(told) == 1 and "09:30" in told[0], told  # told at the original open
    assert "法官" not in told[0] and "按本局规则" in told[0], told  # the rules', not the judge's
    table.move(datetime(2026, 12, 2, 9, 30))
    assert table.state.phase == "D2"


@pytest.mark.rules("P-REVIEW-4")
def test_the_moved_open_is_told_at_the_original_open_after_an_early_dawn(
        tmp_path: Path) -> None:
    table = Table(tmp_path, "resolve.judge_review=true", "resolve.review_minutes=90")
    _night(table)
    seat = next(iter(table.contact))
    table.move(datetime(2026, 12, 2, 8, 1))
    before = len(table.transport.dms(table.contact[seat]))
    table.say(JUDGE, "天亮")
    assert not any("09:30" in m for m in table.transport.dms(table.contact[seat])[before:])
    table.move(datetime(2026, 12, 2, 9, 0))
    assert any("09:30" in m for m in table.transport.dms(table.contact[seat])[before:])


@pytest.mark.rules("P-REVIEW-2")
def test_the_nights_dead_keep_their_last_words_when_the_open_publishes(
        review: tuple[Table, int, int]) -> None:
    """Without the review the night resolved at 08:00 and the dead had until the 09:00 open
    for their last words: published at the open, they get that hour from the publication."""
    table, _, victim = review
    before = len(table.transport.dms(table.contact[victim]))
    table.move(datetime(2026, 12, 2, 9, 0))
    assert table.state.phase == "D2" and not table.state.seat(victim).alive
    told = "\n".join(table.transport.dms(table.contact[victim])[before:])
    assert "提交遗言" in told and "遗言时间已过" not in told, told
    dl = table.state.deadline("lastwords:1")
    assert dl is not None and dl.due == datetime(2026, 12, 2, 10, 0)
    table.move(datetime(2026, 12, 2, 9, 40))
    table.seat(victim, "遗言 我是好人")
    assert table.state.last_words[victim] == "我是好人"


@pytest.mark.rules("P-REVIEW-2")
def test_last_words_after_a_dawn_published_by_the_judge_keep_the_hour(
        review: tuple[Table, int, int]) -> None:
    table, _, victim = review
    table.move(datetime(2026, 12, 2, 8, 30))
    table.say(JUDGE, "天亮")
    dl = table.state.deadline("lastwords:1")
    assert dl is not None and dl.due == datetime(2026, 12, 2, 9, 30)  # 08:30 + the hour
    table.move(datetime(2026, 12, 2, 9, 10))
    assert victim in table.state.lastwords_due


@pytest.mark.rules("P-REVIEW-5")
def test_restart_in_the_middle_of_a_review_keeps_it(review: tuple[Table, int, int],
                                                    tmp_path: Path) -> None:
    table, witch, victim = review
    # the bot restarts: a new service and chat bot on the same database
    table.service.close()
    table.service = Service(f"sqlite:///{tmp_path / 'chat.db'}")
    table.bot = ChatBot(table.service, table.transport, judges=[JUDGE],
                        export_dir=tmp_path / "exports")
    assert reviewing(table.state)
    assert f"{victim} 号出局" in table.say(JUDGE, "预览")
    table.say(JUDGE, f"代行 {witch} 救 07:55")
    assert "已按你的 天亮 公布" in table.say(JUDGE, "天亮")
    assert table.state.seat(victim).alive


@pytest.mark.rules("P-REVIEW-2")
def test_dawn_without_a_review_is_refused(tmp_path: Path) -> None:
    table = Table(tmp_path)
    _day1(table)
    assert "没有等待公布" in table.say(JUDGE, "天亮")
    assert "没有等待公布" in table.say(JUDGE, "预览")


@pytest.mark.rules("P-REVIEW-1")
def test_without_the_option_the_night_resolves_at_its_last_deadline(tmp_path: Path) -> None:
    table = Table(tmp_path)
    _, victim = _night(table)
    table.move(datetime(2026, 12, 2, 8, 1))
    assert table.state.night.resolved and not table.state.seat(victim).alive
