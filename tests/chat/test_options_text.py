"""Options in words (issue 33, polish): every option of every registered ruleset and of the bot
has a Chinese label and each of its values a text (bot/options_text.py, bot/options.yaml); the
lobby's replies (新游戏, 设置, what the players are told) show options that way, never as
Python (`resolve.judge_review=True`) or `key=value`, except in the line that shows how to type
one; times never with seconds."""

from __future__ import annotations

import re
from datetime import datetime, time

import pytest
from chathelp import JUDGE, Table

from bot import options_text
from bot.chat.lobby import CHAT_OPTIONS
from engine.ruleset import get_ruleset, ruleset_names

CJK = re.compile(r"[\u3400-\u9fff]")
KEY_VALUE = re.compile(r"[a-z_]+\.[a-z_0-9]+\s*[=:]\s*\S+")
SECONDS = re.compile(r"\d:\d\d:\d\d")


def test_every_option_of_every_ruleset_and_of_the_bot_has_words() -> None:
    """A new option without a label, or a value without a text, fails here."""
    missing = []
    for ruleset in ruleset_names():
        for key in options_text.keys(ruleset):
            opt = options_text.option(key, ruleset)
            if not CJK.search(opt.label):
                missing.append(f"{ruleset} {key}: no label")
            for choice in opt.choices:
                if choice.text == choice.typed and not CJK.search(choice.text):
                    missing.append(f"{ruleset} {key}={choice.typed}: no words")
            shown = options_text.value_text(key, opt.default, ruleset)
            if not CJK.search(shown) and not re.fullmatch(r"[\d.]+", shown):
                missing.append(f"{ruleset} {key}: its default reads {shown!r}")
    assert not missing, "\n".join(missing)


def test_every_option_comes_from_the_models_with_its_default_and_values() -> None:
    for ruleset in ruleset_names():
        model = get_ruleset(ruleset).options_model
        defaults = model.model_validate({}).model_dump(by_alias=True)
        assert options_text.keys(ruleset) == [*model.keys(), *CHAT_OPTIONS]
        for key in options_text.keys(ruleset)[:len(model.keys())]:
            assert options_text.default(key, ruleset) == defaults[key]
    judge_review = options_text.option("resolve.judge_review")
    assert judge_review.kind == "choice" and judge_review.default is False
    assert [c.typed for c in judge_review.choices] == ["true", "false"]
    review = options_text.option("resolve.review_minutes")
    assert (review.kind, review.low, review.high) == ("duration", 0, 240)
    assert options_text.option("cards.yellow_to_red").kind == "count"
    # a deadline people act by is at least a minute; where 0 means something, it is offered
    for key, low in (("deadlines.night_action", 1), ("deadlines.after_exile", 1),
                     ("deadlines.revote", 1), ("deadlines.witch", 1),
                     ("reminders.before", 0), ("deadlines.change_freeze", 0)):
        assert options_text.option(key).low == low, key
    assert options_text.option("classic.guard_deadline", "classic").low == 1
    for key in ("anomaly.hunter_deadline_day", "anomaly.hunter_deadline_night"):
        assert options_text.option(key, "anomaly").low == 1, key
    assert [c.typed for c in options_text.choices("votes.channel")] == list(
        CHAT_OPTIONS["votes.channel"])
    assert [c.typed for c in options_text.choices("check.no_unlost_camp", "standard")] == [
        "judge_ruling", "last_event_reverted", "wolves", "village"]


@pytest.mark.parametrize("key, value, text", [
    ("resolve.judge_review", True, "法官核对夜晚结算：开"),
    ("resolve.judge_review", "true", "法官核对夜晚结算：开"),
    ("votes.channel", "dm", "投票方式：私聊机器人投票"),
    ("deadlines.night_action", "90min", "夜间行动时限：关门后1小时30分钟"),
    ("deadlines.witch", "08:00", "女巫答复时限：次日 08:00"),
    ("deadlines.witch", "2h", "女巫答复时限：关门后2小时"),
    ("reminders.before", 0, "截止前提醒：不提醒"),
    ("cards.yellow_to_red", 0, "黄牌累计成红牌：从不"),
    ("cards.yellow_to_red", 3, "黄牌累计成红牌：3张"),
    ("standard.sheriff_weight", 1.5, "警长的票：1.5票"),
    ("standard.sheriff_signup", "3h", "上警截止：第1天开门后3小时"),
    ("anomaly.witch_tongling_stages", ["mature", "complete"], "女巫有通灵的阶段：成熟期、完全体"),
])
def test_an_option_reads_as_its_label_and_its_value(key: str, value: object, text: str) -> None:
    assert options_text.line(key, value) == text


def test_times_are_never_shown_with_seconds() -> None:
    assert options_text.time_text(datetime(2026, 12, 1, 22, 0, 0)) == "12-01 22:00"
    assert options_text.value_text("deadlines.witch", time(8, 0)) == "08:00"
    assert not SECONDS.search(options_text.value_text(
        "deadlines.witch", datetime(2026, 12, 1, 22, 0, 0)))


def test_new_game_shows_its_options_in_words(table: Table) -> None:
    reply = table.reply(JUDGE, "新游戏 经典 resolve.judge_review=true votes.channel=dm")
    assert "法官核对夜晚结算：开" in reply and "投票方式：私聊机器人投票" in reply, reply
    assert "True" not in reply
    how = [line for line in reply.splitlines() if KEY_VALUE.search(line)]
    assert len(how) == 1 and "如 设置" in how[0], reply  # only the line that shows how to type


def test_set_options_and_the_players_read_them_in_words(table: Table) -> None:
    code = table.new_game()
    table.reply("P1", f"报名 {code} 马甲1")
    reply = table.reply(JUDGE, "设置 resolve.judge_review=true deadlines.witch=2h")
    assert "法官核对夜晚结算：开" in reply and "女巫答复时限：关门后2小时" in reply, reply
    assert [line for line in reply.splitlines() if KEY_VALUE.search(line)] == [
        line for line in reply.splitlines() if "如 设置" in line], reply
    told = table.transport.dms("P1")[-1]
    assert "法官核对夜晚结算：开" in told and not KEY_VALUE.search(told), told
    shown = table.reply(JUDGE, "设置")
    assert "法官核对夜晚结算：开" in shown and "投票方式：贴吧投票，法官录入" in shown, shown
    assert not SECONDS.search(shown)


def test_a_bad_value_names_the_values_with_their_words(table: Table) -> None:
    reply = table.reply(JUDGE, "新游戏 经典 votes.channel=pigeon")
    assert "dm（私聊机器人投票）" in reply, reply
    reply = table.reply(JUDGE, "新游戏 经典 resolve.judge_review=maybe")
    assert "true（开）" in reply, reply
    reply = table.reply(JUDGE, "新游戏 经典 resolve.review_minutes=241")
    assert "最长 4小时" in reply, reply
