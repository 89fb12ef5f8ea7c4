"""Random messages at a started game (night 1, the prompts out): whatever anyone sends, in a DM
or a room, `ChatBot.handle` never fails, every DM gets a Chinese reply, what strangers and
forged messages send changes nothing, a replayed message id changes nothing, and nothing a seat
has had accepted tonight is lost to someone else's message."""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from chathelp import CJK, JUDGE, ZONE, Table
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.transport import Incoming

TRIED = {"n": 0, "messages": 0, "changed": 0}
FORGED_SEATS = ("0", "13", "99", "-1", "一百")
STRANGERS = ["陌生人", "stranger", "P99", "J2", "法官"]
PLAYER_VERBS = ["刀", "杀", "验", "查", "守", "救", "毒", "连", "移交", "投", "改票", "更正",
                "感染", "血睿", "过载", "净化", "格式化", "防火墙", "粉碎", "开枪", "遗言"]
BARE = ["空刀", "锁定", "空守", "不救", "不毒", "过", "跳过", "弃权", "状态", "帮助", "?", "？",
        "退出", "救", "改票 弃权"]
JUDGE_WORDS = ["踢出 马甲1", "记票", "改票", "更正", "废票", "代投", "确认更正", "驳回更正",
               "票型", "黄牌", "红牌", "报备", "联系", "关门 22:00", "开门 10:00",
               "作息 09:00-21:00", "延时", "替补", "暂停", "继续", "公示", "新游戏 经典", "开始",
               "绑定 {code} 狼群", "绑定 {code} 情侣群"]
NUMBERS = ["0", "13", "99", "-1", "1", "5", "12", "五", "十二", "５号", "一百", "3 4", "1 1", ""]
MIXED = ["Привет 刀 3", "مرحبا 验 2", "こんにちは", "안녕 投 5", "🐺🐺 刀 4", "刀👍5", "ℌ𝔢𝔩𝔩𝔬",
         "\u200b刀\u200b3", "刀\n3", "\x00\x01", "#", "##", "# 刀 3", "ｓｔａｔｕｓ", "状态\u0301"]


class Night:
    """A classic game on night 1 (prompts sent), the clock stopped before any deadline."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.code = table.game()
        table.link(self.code)
        table.move_to(datetime(2026, 12, 1, 21, 5, tzinfo=ZONE))
        self.other = table.new_game("新游戏 异常")  # another game, open
        state = table.state(self.code)
        assert state.night is not None and state.next_deadline().due > table.wall()
        self.contacts = table.contacts(self.code)
        self.seat_of = {c: n for n, c in self.contacts.items()}
        self.rooms = [r for r in (table.room(self.code, "wolves"),
                                  table.room(self.code, "lovers")) if r]
        self.used: list[Incoming] = []


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Night]:
    table = Table(Path(tmp_path_factory.mktemp("fuzz")))
    yield Night(table)
    table.close()


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "emoji", "huge", "mixed", "verb", "bare", "judge",
                                 "prefix"]))
    if kind == "text":
        text = draw(st.text(max_size=60))
    elif kind == "emoji":
        text = draw(st.text(st.characters(min_codepoint=0x1F300, max_codepoint=0x1FAFF),
                            max_size=20)) + draw(st.sampled_from(BARE + PLAYER_VERBS))
    elif kind == "huge":
        text = draw(st.sampled_from(["刀 3 ", "啊", "x", "遗言 "])) * draw(
            st.integers(1000, 5000))
    elif kind == "mixed":
        text = draw(st.sampled_from(MIXED)) + draw(st.text(max_size=5))
    elif kind == "verb":
        text = draw(st.sampled_from(PLAYER_VERBS)) + draw(st.sampled_from(["", " "])) + "{n}"
    elif kind == "bare":
        text = draw(st.sampled_from(BARE))
    elif kind == "judge":
        text = draw(st.sampled_from(JUDGE_WORDS)) + " " + draw(st.sampled_from(NUMBERS))
    else:
        text = "#{prefix} " + draw(st.sampled_from(PLAYER_VERBS + BARE + JUDGE_WORDS)) + " " + \
            draw(st.sampled_from(NUMBERS))
    return {
        "kind": kind, "text": text,
        "prefix": draw(st.sampled_from(["code", "other", "ZZZZ99", "abc", "X" * 20])),
        "sender": draw(st.sampled_from(["stranger", "player", "player", "player", "judge"])),
        "stranger": draw(st.sampled_from(STRANGERS)),
        "number": draw(st.sampled_from(NUMBERS)),
        "seat": draw(st.integers(1, 12)),
        "room": draw(st.sampled_from([None, None, None, "room", "nowhere"])),
        "which_room": draw(st.integers(0, 1)),
        "replay": draw(st.integers(0, 9)) == 0,
    }


class Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def slots(state: Any) -> dict[str, Any]:
    night = state.night
    return {} if night is None else {k: (dataclasses.asdict(s.sub) if s.sub else None, s.final)
                                     for k, s in night.slots.items()}


@settings(max_examples=int(os.environ.get("CHAT_FUZZ_EXAMPLES", "120")), deadline=None,
          derandomize=os.environ.get("CI") == "true",
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(batch=st.lists(messages(), min_size=1, max_size=4))
def test_random_messages(night: Night, batch: list[dict[str, Any]]) -> None:
    TRIED["n"] += 1
    table, code = night.table, night.code
    errors = Errors()
    logging.getLogger("bot").addHandler(errors)
    try:
        for m in batch:
            TRIED["messages"] += 1
            check_one(night, m)
    finally:
        logging.getLogger("bot").removeHandler(errors)
    assert not errors.records, [r.getMessage() for r in errors.records]
    assert table.state(code).version >= 0


def check_one(night: Night, m: dict[str, Any]) -> None:
    table, code = night.table, night.code
    if m["sender"] == "stranger":
        sender = m["stranger"]
    elif m["sender"] == "judge":
        sender = JUDGE
    else:
        sender = night.contacts[m["seat"]]
    prefix = {"code": code, "other": night.other}.get(m["prefix"], m["prefix"])
    text = m["text"].replace("#{prefix}", f"#{prefix}").replace("{code}", code).replace(
        "{n}", m["number"])
    if sender == JUDGE and text.lstrip("#" + prefix + " ").startswith("结束"):
        text = "票型"  # the judge does not end the game under test
    room = None
    if m["room"] == "room" and night.rooms:
        room = night.rooms[m["which_room"] % len(night.rooms)]
    elif m["room"] == "nowhere":
        room = "not-a-room"
    if m["replay"] and night.used:
        msg = night.used[len(night.used) // 2]
    else:
        msg = table.incoming(sender, text, room)
    replay = msg in night.used
    sender, room = msg.sender, msg.room
    table.move_to(table.now)  # settle what the judge's time commands made due
    before_state = table.state(code)
    before = before_state.model_dump(mode="json")
    before_slots = slots(before_state)
    sent = table.handle(msg)
    night.used.append(msg)
    after_state = table.state(code)
    after = after_state.model_dump(mode="json")
    replies = [s.text for s in sent if s.kind == "dm" and s.target == sender]
    if replay:
        assert sent == [] and after == before, (msg, sent)
        return
    if room is None:
        assert replies, (msg, sent)
    for r in replies:
        assert CJK.search(r), (msg, r)
    forged = (sender not in night.seat_of and sender != JUDGE) or (
        m["prefix"] != "code" and text.startswith("#")) or (
        sender != JUDGE and m["kind"] in ("judge",)) or room == "not-a-room" or (
        m["kind"] == "verb" and m["number"] in FORGED_SEATS and sender != JUDGE)
    if forged:
        assert after == before, (msg, sent)
    TRIED["changed"] += after != before
    # nothing a seat had accepted tonight changes but by that seat's own message
    seat = night.seat_of.get(sender)
    after_slots = slots(after_state)
    for key, was in before_slots.items():
        if after_slots.get(key) != was and sender != JUDGE:
            slot = before_state.night.slots[key]  # type: ignore[union-attr]
            assert seat in slot.seats, (key, was, after_slots.get(key), msg)


def test_fuzz_count() -> None:
    """Say how many were tried (run after the property: file order)."""
    print(f"\nchat fuzz: {TRIED['n']} batches, {TRIED['messages']} messages tried, "
          f"{TRIED['changed']} changed the game")
