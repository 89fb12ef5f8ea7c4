"""Options whose bounds are the rules' own, refused at `新游戏` and `设置` with the real bound
in Chinese (docs/rules-judge.md P-REVIEW-4, P-LOBBY-1; README "Options")."""

from __future__ import annotations

import pytest
from chathelp import JUDGE, Table


@pytest.mark.rules("P-REVIEW-4", "P-LOBBY-1")
def test_the_review_minutes_are_refused_with_their_bound(table: Table) -> None:
    answer = table.reply(JUDGE, "新游戏 经典 resolve.review_minutes=241")
    assert "无效" in answer and "4小时" in answer and "游戏码" not in answer, answer
    assert "7 天" not in answer  # not the bound of other durations
    assert "游戏码" in table.reply(JUDGE, "新游戏 经典 resolve.review_minutes=240")


@pytest.mark.rules("P-LOBBY-1")
@pytest.mark.parametrize("option", [
    "deadlines.night_action=0", "deadlines.night_action=0min", "classic.guard_deadline=0",
    "deadlines.witch=0min"])
def test_a_night_deadline_of_no_length_is_refused(table: Table, option: str) -> None:
    answer = table.reply(JUDGE, f"新游戏 经典 {option}")
    assert "无效" in answer and "至少 1 分钟" in answer and "游戏码" not in answer, answer


@pytest.mark.rules("P-LOBBY-1")
def test_a_night_deadline_of_no_length_is_refused_by_the_settings_too(table: Table) -> None:
    code = table.new_game("新游戏 标准")
    answer = table.reply(JUDGE, "设置 deadlines.night_action=0")
    assert "无效" in answer and "至少 1 分钟" in answer, answer
    lobby = table.bot.chats.lobby(code)
    assert lobby is not None and "deadlines.night_action" not in lobby.options


@pytest.mark.rules("P-LOBBY-1")
@pytest.mark.parametrize("option", [
    "deadlines.after_exile=0", "deadlines.after_exile=0min", "deadlines.revote=0",
    "deadlines.revote=0h"])
def test_a_day_deadline_after_the_close_of_no_length_is_refused(table: Table,
                                                                 option: str) -> None:
    """The handover and shot of a seat exiled at the close, and a PK revote, are due that
    long after the close: 0 would make them due at once (a random handover with a card, a
    lost shot, a revote nobody can cast), so it is refused with the bound, in Chinese."""
    answer = table.reply(JUDGE, f"新游戏 经典 {option}")
    assert "无效" in answer and "至少 1 分钟" in answer and "游戏码" not in answer, answer
    assert "游戏码" in table.reply(JUDGE, f"新游戏 经典 {option.split('=')[0]}=1min")


@pytest.mark.rules("P-LOBBY-1")
def test_the_zero_that_means_none_is_still_taken(table: Table) -> None:
    """Where 0 means something (no reminder, no freeze on changes, proxies until the close),
    it stays accepted."""
    answer = table.reply(JUDGE, "新游戏 标准 reminders.before=0 deadlines.change_freeze=0 "
                                "deadlines.proxy_cutoff=0")
    assert "游戏码" in answer, answer


@pytest.mark.rules("P-LOBBY-1", "S-SHERIFF-3")
def test_options_refused_together_are_named_with_their_labels(table: Table) -> None:
    """README "Options" (issue 33, polish): each option a refusal names is shown with its
    Chinese label, as a single bad option is."""
    answer = table.reply(JUDGE, "新游戏 标准 standard.sheriff_signup=15:00 "
                                "standard.sheriff_withdraw=14:00")
    assert "无效" in answer and "游戏码" not in answer, answer
    assert "上警截止" in answer and "退水截止" in answer, answer


@pytest.mark.rules("P-LOBBY-1")
def test_several_bad_options_are_each_refused_with_their_own_reason(table: Table) -> None:
    """Each option refused at once gets the reason it gets alone (its bound), not just its
    name in a list."""
    answer = table.reply(JUDGE, "新游戏 经典 deadlines.night_action=0 votes.channel=dm "
                                "resolve.review_minutes=241 no.such=1")
    assert "无效" in answer and "游戏码" not in answer, answer
    assert "至少 1 分钟" in answer and "4小时" in answer and "没有这个选项" in answer, answer
    assert "投票方式" not in answer, answer  # a good option is not named
    code = table.new_game("新游戏 标准")
    answer = table.reply(JUDGE, "设置 deadlines.night_action=0 deadlines.revote=0")
    assert answer.count("至少 1 分钟") == 2, answer
    lobby = table.bot.chats.lobby(code)
    assert lobby is not None and "deadlines.night_action" not in lobby.options


@pytest.mark.rules("P-LOBBY-1", "S-SHERIFF-3")
def test_options_refused_together_each_say_why(table: Table) -> None:
    """Options each fine alone but not together: those that clash are named, each with its
    bound (the withdrawal not before the sign-up's close), the others are not."""
    answer = table.reply(JUDGE, "新游戏 标准 standard.sheriff_signup=15:00 votes.channel=dm "
                                "standard.sheriff_withdraw=14:00")
    assert "放在一起不成立" in answer and "游戏码" not in answer, answer
    assert "不早于上警截止" in answer and "不能早于开门" in answer, answer
    assert "投票方式" not in answer, answer


@pytest.mark.rules("P-LOBBY-1", "A-HUNTER-2")
@pytest.mark.parametrize("option", [
    "anomaly.hunter_deadline_day=0", "anomaly.hunter_deadline_day=0min",
    "anomaly.hunter_deadline_night=0", "anomaly.hunter_deadline_night=0h"])
def test_a_hunter_shot_window_of_no_length_is_refused(table: Table, option: str) -> None:
    """Anomaly's hunter shoots within this long of the close or of the night's resolution: 0
    would end the window as it opens (a lost shot), so it is refused with the bound, in
    Chinese, as the other deadlines people act by are."""
    answer = table.reply(JUDGE, f"新游戏 异常 {option}")
    assert "无效" in answer and "至少 1 分钟" in answer and "游戏码" not in answer, answer
    assert "游戏码" in table.reply(JUDGE, f"新游戏 异常 {option.split('=')[0]}=1min")


@pytest.mark.rules("P-LOBBY-1", "A-HUNTER-2")
@pytest.mark.parametrize("key", ["anomaly.hunter_deadline_day", "anomaly.hunter_deadline_night"])
def test_a_hunter_shot_window_of_no_length_is_refused_by_the_settings_too(table: Table,
                                                                          key: str) -> None:
    code = table.new_game("新游戏 异常")
    answer = table.reply(JUDGE, f"设置 {key}=0")
    assert "无效" in answer and "至少 1 分钟" in answer, answer
    lobby = table.bot.chats.lobby(code)
    assert lobby is not None and key not in lobby.options
