"""The outbox's steps and queue (issue 20): one message per recipient per step, held until the
step ends and merged in one transaction; the answer to a person's command first; a summary
that waits for its time without holding anyone back."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
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
from bot.store.outbox import addresses
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


class Gateway:
    """A transport that shows a key once, as the gateway does (gateway/once.js): a key it has
    shown is dropped and answered as sent. `lose`: keys whose first send's answer is lost (it
    was shown; the bot hears a timeout)."""

    instant = False

    def __init__(self, lose: set[str]) -> None:
        self.shown: dict[str, str] = {}
        self.lose = lose

    def send(self, message: OutgoingMessage) -> None:
        if message.dedupe_key in self.shown:
            return
        self.shown[message.dedupe_key] = message.text
        if message.dedupe_key in self.lose:
            self.lose.discard(message.dedupe_key)
            raise TimeoutError("no answer within 30 s (it may have happened)")


def test_a_row_tried_during_a_long_step_keeps_its_text(service: Service) -> None:
    """A step that lasts longer than TURN_HOLD: its first row goes as it was, and the answer to
    that send is lost (it was shown). At the step's end its later rows to the same person are
    a message of their own: the tried row's key never carries another text, which a transport
    that shows a key once would drop with everything merged into it."""
    classic_game(service)
    deliver(service.db, Slow())
    gateway = Gateway(lose={"t/wx-g1-1/一"})
    with turn(service.db, "long-step"):
        add(service, "wx-g1-1", "一")
        later = utcnow() + TURN_HOLD + timedelta(seconds=1)
        assert deliver(service.db, gateway, now=later).failed == 1  # shown, not marked
        add(service, "wx-g1-1", "二")
    deliver(service.db, gateway, now=utcnow() + timedelta(hours=1))
    assert list(gateway.shown.values()) == ["一", "二"]
    assert all(r.sent_at is not None for r in rows(service))


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


def test_a_summary_once_tried_keeps_its_text_and_the_newer_one_follows(service: Service) -> None:
    """The judge's `报名 7/12` goes, its answer is lost (it was shown) and its retry is refused
    for a while; a join meanwhile does not rewrite it (under its key the gateway would drop the
    new count): `报名 8/12` follows as a summary of its own."""
    from bot.store.chat import ChatStore
    from bot.transport import Refused

    chats = ChatStore(service.db)
    now = utcnow()
    chats.summary("lobby/X/joins/", "judge", "报名 7/12", now=now, at_once=True)
    gateway = Gateway(lose={"lobby/X/joins/1"})
    assert deliver(service.db, gateway, now=now).failed == 1  # shown, not marked

    class Held:
        instant = False

        def send(self, message: OutgoingMessage) -> None:
            raise Refused("the risk guard holds sends to judge")

    for n in range(1, 4):  # retried and refused: its retry backs off, 10 s, 20 s, 40 s
        deliver(service.db, Held(), now=now + timedelta(seconds=5 * 2 ** n))
    chats.summary("lobby/X/joins/", "judge", "报名 8/12", now=now + timedelta(seconds=41),
                  at_once=False)
    deliver(service.db, gateway, now=now + timedelta(hours=1))
    deliver(service.db, gateway, now=now + timedelta(hours=2))
    assert list(gateway.shown.values()) == ["报名 7/12", "报名 8/12"]


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


# A process killed inside a turn (issue 33) ---------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
NOON = "2099-03-01 12:00"  # the console's virtual clock: no deadline falls due meanwhile
JUDGE = "法官"
OUTPUT_WAIT = 30.0  # seconds for a console's output (far less than TURN_HOLD)


def _console(url: str, cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUTF8": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "console", "--db", url, "--judge", JUDGE, "--clock",
         NOON], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        cwd=cwd, env=env, text=True, encoding="utf-8", bufsize=1)


def _lines(proc: subprocess.Popen[str], until: Callable[[list[str]], bool],
           kill: bool = False) -> list[str]:
    """The console's output lines until `until` holds of them (then SIGKILL it at once, with
    `kill`); fails after OUTPUT_WAIT seconds."""
    got: list[str] = []
    met = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            got.append(line.rstrip("\n"))
            if until(got):
                if kill:
                    proc.kill()
                met.set()
                return
        met.set()

    threading.Thread(target=read, daemon=True).start()
    if not met.wait(OUTPUT_WAIT) or not until(got):
        proc.kill()
        raise AssertionError(f"the console did not print what was awaited in {OUTPUT_WAIT:g} "
                             f"s; it printed: {got[-20:]}")
    return got


def _held(url: str) -> list[OutboxRow]:
    """Rows a turn holds (written inside one that has not ended)."""
    service = Service(url)
    try:
        now = utcnow()
        return [r for r in rows(service) if r.turn and r.sent_at is None
                and r.next_attempt_at > now]
    finally:
        service.close()


def _printed(lines: list[str]) -> list[tuple[str, str]]:
    """(where, text) of each message in console output lines: a contact, or `@ROOM`."""
    out: list[tuple[str, str]] = []
    for line in lines:
        if line.startswith("  ") and out:
            out[-1] = (out[-1][0], out[-1][1] + "\n" + line[2:])
        elif line.startswith("→ "):
            where, _, text = line[2:].partition(": ")
            out.append((where, text))
    return out


def test_a_restart_sends_at_once_what_a_console_killed_inside_a_line_left_held(
        db_url: str, tmp_path: Path) -> None:
    """README "Restarts, stops and messages sent meanwhile": a console SIGKILLed while it prints
    what a line caused (Cupid's link ends the set-up: the rooms are made inside the line's
    turn, before its messages are released) left them held; the restarted console prints them
    at once, each once, merged as the turn would have, before it reads its first input line
    (not TURN_HOLD later)."""
    first = _console(db_url, tmp_path)
    assert first.stdin is not None
    first.stdin.write(f"{JUDGE}: 新游戏 经典\n/echo made\n")
    first.stdin.flush()
    code = re.search(r"游戏码 ([A-Z0-9]{4,8})", "\n".join(
        _lines(first, lambda got: "# made" in got)))
    assert code, "no game code"
    joins = "".join(f"p{n}: 报名 {code[1]} 马甲{n}\n" for n in range(1, 13))
    first.stdin.write(f"{joins}{JUDGE}: 开始\n/echo started\n")
    first.stdin.flush()
    dealt = _printed(_lines(first, lambda got: "# started" in got))
    cupid = next(w for w, text in dealt if "你的身份：丘比特" in text)
    first.stdin.write(f"{cupid}: 连 1 2\n")
    first.stdin.flush()
    # SIGKILL as soon as a room is printed: inside the line's turn.
    _lines(first, lambda got: any(line.startswith("+ @") for line in got), kill=True)
    first.wait(10)
    held = _held(db_url)
    assert held, "the kill came after the turn ended: nothing was tested"
    service = Service(db_url)
    try:
        with service.db.read() as s:
            known = addresses(s, {r.game_id for r in held})
    finally:
        service.close()
    expected: dict[str, list[str]] = {}
    for r in held:
        address = r.address or known.get((r.game_id, r.target))
        if address is not None:  # (a room not recorded before the kill: its rows wait)
            where = f"@{address}" if r.channel in ("group", "public") else address
            expected.setdefault(where, []).append(r.text)
    assert expected, held

    second = _console(db_url, tmp_path)  # no input line is written until it has printed them
    printed = _lines(second, lambda got: set(expected) <= {w for w, _ in _printed(got)})
    assert second.stdin is not None
    second.stdin.write("/echo done\n")
    second.stdin.close()
    printed += _lines(second, lambda got: "# done" in got)
    second.wait(30)
    for where, texts in expected.items():
        assert [t for w, t in _printed(printed) if w == where] == ["\n".join(texts)], where
    assert _held(db_url) == []
