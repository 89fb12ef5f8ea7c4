"""The outbox's steps and queue (issue 20): one message per recipient per step, held until the
step ends and merged in one transaction; the answer to a person's command first; a summary
that waits for its time without holding anyone back."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import select
from storehelp import at, classic_game

from bot.gametime import utcnow
from bot.outbox import (
    DIGEST,
    NORMAL,
    REPLY,
    TURN_HOLD,
    OutgoingMessage,
    deliver,
    plan,
    turn,
)
from bot.service import Service
from bot.store.chat import chat_row
from bot.store.models import OutboxRow
from engine.commands import Vote


class Slow:
    """A transport that takes time to send (WeChat): not instant; `during` runs at a send."""

    instant = False

    def __init__(self, during: dict[int, Any] | None = None) -> None:
        self.calls: list[OutgoingMessage] = []
        self.during = during or {}

    def send(self, message: OutgoingMessage) -> None:
        self.calls.append(message)
        hook = self.during.get(len(self.calls))
        if hook is not None:
            hook()


def rows(service: Service) -> list[OutboxRow]:
    with service.db.read() as s:
        return list(s.scalars(select(OutboxRow).order_by(OutboxRow.id)))


def add(service: Service, to: str, text: str, *, priority: int = NORMAL,
        key: str | None = None) -> None:
    with service.db.write() as s:
        s.add(chat_row(key or f"t/{to}/{text}", to, text, None, priority=priority))


def test_a_step_leaves_as_one_message_per_recipient(service: Service) -> None:
    """A commit's DM to a seat and the chat layer's reply to the same contact, written in one
    step, leave as one message: the first row's key, the texts in order, the answer's
    priority; nothing leaves before the step ends."""
    classic_game(service)
    deliver(service.db, Slow())  # the creation's messages
    sent_before = len(rows(service))
    with turn(service.db, "step-1"):
        service.advance("g1", at(1, 9))  # set-up ends, day 1 opens
        add(service, "wx-g1-3", "已记录。", priority=REPLY)
        add(service, "wx-g1-3", "第二句。")
        assert deliver(service.db, Slow()).sent == 0  # held until the step ends
    after = rows(service)[sent_before:]
    to_three = [r for r in after if r.target == "seat:3" or r.address == "wx-g1-3"]
    assert len(to_three) == 1
    merged = to_three[0]
    assert merged.dedupe_key.startswith("g1/") and merged.address == "wx-g1-3"
    # (the deadlines fired tell the wolf at seat 3 its mates; the day's post is the room's)
    assert merged.text == "狼群已建立，成员：1号、2号、3号。\n已记录。\n第二句。"
    assert merged.priority == REPLY and merged.next_attempt_at <= utcnow()
    assert len({(r.target, r.address) for r in after}) == len(after)


def test_a_step_that_never_ends_lets_its_rows_go_as_they_were(service: Service) -> None:
    """A crash inside a step: its rows are never merged, and go out once each after
    TURN_HOLD (never lost, never half of a merged text)."""
    classic_game(service)
    deliver(service.db, Slow())
    token = turn(service.db, "crashed")
    token.__enter__()  # the step begins ...
    add(service, "wx-g1-1", "一")
    add(service, "wx-g1-1", "二")
    # ... and the process dies: the block never ends (the context variable is reset here
    # only so that this test's later writes are not part of it).
    from bot.outbox import _TURN

    _TURN.set(None)
    t = Slow()
    assert deliver(service.db, t).sent == 0
    later = utcnow() + TURN_HOLD + timedelta(seconds=1)
    assert deliver(service.db, t, now=later).sent == 2
    assert [m.text for m in t.calls] == ["一", "二"]


def test_the_answer_leaves_before_a_queued_burst(service: Service) -> None:
    """Issue 20: a stranger's `帮助` written while the start's burst goes out leaves next,
    not behind it; every recipient's own messages keep their order."""
    for n in range(12):
        add(service, f"seat{n}", f"开局 {n}")
    t = Slow(during={2: lambda: add(service, "stranger", "帮助的回答", priority=REPLY)})
    deliver(service.db, t)
    order = [m.address for m in t.calls]
    assert order.index("stranger") == 2  # right after the send during which it came
    assert len(order) == 13


def test_an_answer_lifts_its_recipients_earlier_messages_with_it(service: Service) -> None:
    for n in range(5):
        add(service, f"seat{n}", f"公告 {n}")
    add(service, "seat3", "回答", priority=REPLY)
    t = Slow()
    deliver(service.db, t)
    assert [m.text for m in t.calls][:2] == ["公告 3", "回答"]  # in order, but first


def test_a_waiting_summary_holds_nobody_back(service: Service) -> None:
    now = utcnow()
    with service.db.write() as s:
        s.add(OutboxRow(dedupe_key="lobby/X/joins/2", game_id=None, seq=None, channel="dm",
                        target="contact:judge", address="judge", text="报名 7/12",
                        created_at=now, attempts=0, next_attempt_at=now + timedelta(seconds=50),
                        priority=DIGEST))
    add(service, "judge", "已开始")
    t = Slow()
    report = deliver(service.db, t)
    assert [m.text for m in t.calls] == ["已开始"] and report.waiting == 1
    deliver(service.db, t, now=now + timedelta(minutes=1))
    assert [m.text for m in t.calls] == ["已开始", "报名 7/12"]


def test_plan_keeps_each_recipients_order_and_puts_secrets_first(service: Service) -> None:
    classic_game(service)
    service.advance("g1", at(1, 9))
    assert service.submit("g1", Vote(seat=1, target=2), now=at(1, 10)).accepted
    pending = rows(service)
    order, waiting = plan(pending, {}, utcnow())
    assert order == [] and waiting == len(pending)  # no recipient bound yet: all wait
    known: dict[tuple[str | None, str], str] = {
        ("g1", f"seat:{n}"): f"wx{n}" for n in range(1, 13)} | {("g1", "judge"): "j"} | {
        ("g1", "public"): "room"}
    order, waiting = plan(pending, known, utcnow())
    assert waiting == 0
    channels = [r.channel for r, _ in order]
    assert channels == sorted(channels, key=lambda c: {"dm": 0, "judge": 0, "group": 1}.get(
        c, 2))
    ids = {}
    for r, _ in order:
        assert ids.get(r.target, 0) < r.id
        ids[r.target] = r.id
