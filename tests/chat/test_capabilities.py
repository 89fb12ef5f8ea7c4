"""What the account can do, told to the judges at login (issue 21): the Chinese text for a
full account, one without rooms and one whose gateway said nothing; each report once a day
per judge, a new report at once."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest
from chathelp import CJK, JUDGE, Table

from bot.capabilities import describe
from bot.chat.live import tell_capabilities
from bot.transport import Capabilities

FULL = Capabilities(puppet="wechaty-puppet-wechat4u", reported=True)
NO_ROOMS = Capabilities(create_rooms=False, add_members=False, puppet="p", reported=True)


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    t = Table(tmp_path, judges=(JUDGE, "J2"))
    yield t
    t.close()


def test_a_full_account_lists_every_feature_and_no_fallback() -> None:
    text = describe(FULL)
    assert text.startswith("机器人已登录微信（wechaty-puppet-wechat4u）。")
    assert "可用：私聊收发、建群、拉人进群、移出群成员、读取群成员。" in text
    assert "不可用" not in text and "绑定" not in text


def test_an_account_without_rooms_names_what_replaces_them() -> None:
    text = describe(NO_ROOMS)
    assert "不可用：建群、拉人进群。" in text
    assert "绑定 游戏码 狼群" in text and "groups.mode=relay" in text  # rooms by hand, or relay
    assert "手动完成" in text  # members changed by the judge


def test_a_gateway_that_said_nothing_is_assumed_able_and_says_so() -> None:
    text = describe(Capabilities())
    assert "先按全部可用处理" in text and "可用：" not in text


def test_every_line_is_chinese() -> None:
    for caps in (FULL, NO_ROOMS, Capabilities(), Capabilities(
            send_dm=False, list_members=False, remove_members=False, reported=True)):
        for line in describe(caps).splitlines():
            assert CJK.search(line), line


def test_each_judge_is_told_a_report_once_a_day_and_a_new_report_at_once(table: Table) -> None:
    day = [date(2026, 12, 3)]
    told = tell_capabilities(table.bot, [JUDGE, "J2"], lambda: day[0])

    def dms(to: str) -> list[str]:
        return [s.text for s in table.transport.sent if s.kind == "dm" and s.target == to
                and s.text.startswith("机器人已登录微信")]

    told(FULL)
    told(FULL)  # a reconnect with the same account: not told again
    assert dms(JUDGE) == dms("J2") == [describe(FULL)]
    told(NO_ROOMS)  # what the account can do changed: told at once
    assert dms(JUDGE) == [describe(FULL), describe(NO_ROOMS)]
    day[0] = date(2026, 12, 4)
    told(NO_ROOMS)  # the next day: told again (a judge may have missed it)
    assert dms(JUDGE) == [describe(FULL), describe(NO_ROOMS), describe(NO_ROOMS)]
