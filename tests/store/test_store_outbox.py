"""The outbox: rows per recipient in the command's transaction, delivery, backoff, crashes."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlalchemy import select
from storehelp import at, classic_game

from bot.gametime import utcnow
from bot.outbox import OutgoingMessage, backoff, deliver
from bot.render import render_event
from bot.service import Service, event_of
from bot.store.models import OutboxRow
from engine.commands import Vote


class Transport:
    """A fake transport that, like a real one must, drops a dedupe key it has delivered."""

    def __init__(self) -> None:
        self.calls: list[OutgoingMessage] = []  # every send call
        self.delivered: dict[str, OutgoingMessage] = {}  # what the players saw

    def send(self, message: OutgoingMessage) -> None:
        self.calls.append(message)
        self.delivered.setdefault(message.dedupe_key, message)


class Crash(BaseException):
    """The process dies (not an error the deliverer may catch)."""


def rows(service: Service) -> list[OutboxRow]:
    with service.db.read() as s:
        return list(s.scalars(select(OutboxRow).order_by(OutboxRow.id)))


def test_rows_per_recipient(service: Service) -> None:
    """One row per recipient per commit (bot/router.py), each where its events' audiences
    allow; the judge's feed (法官通知 全部) has a row for every commit."""
    classic_game(service, rooms={"public": "room-pub", "lovers": "room-love"},
                 judge_feed="all")
    service.advance("g1", at(1, 9))
    out = rows(service)
    keys = [r.dedupe_key for r in out]
    assert len(keys) == len(set(keys))
    log = {r.seq: r for r in service.log("g1")}
    for r in out:
        if r.seq is None or r.target == "judge":
            continue
        aud = log[r.seq].audience
        if r.channel == "public":
            assert aud["public"] and r.target == "public"
        elif r.channel == "group":
            assert r.target == f"group:{aud['group']}" and aud["group"] == "lovers"
        else:  # a DM: to a seat the event reaches (a group without a room: each member)
            assert r.channel == "dm" and int(r.target.split(":")[1]) in aud["seats"]
    # The wolves have no room: their group message went to each wolf by DM, in the one
    # message of that commit to each wolf.
    formed = [e for e in log.values() if e.type == "GroupFormed" and e.audience["group"] ==
              "wolves"]
    said = render_event(event_of(formed[0].body), "classic")
    assert formed and {r.target for r in out if said in r.text} == {
        f"seat:{n}" for n in formed[0].audience["seats"]}
    commits = [0] + [e.seq for e in log.values() if e.kind == "command"]
    for head in commits:  # one row per recipient per commit
        mine = [r.target for r in out if r.seq is not None and (
            r.seq == head if r.target == "judge"
            else head < r.seq and not any(head < c < r.seq for c in commits))]
        assert len(mine) == len(set(mine)), (head, mine)
    # (the deadlines one `advance` fires are one step: one judge's message, a title each)
    assert sum(r.text.count("【g1】") for r in out if r.target == "judge") == 1 + sum(
        e.kind == "command" for e in log.values())


def test_deliver_sends_once_and_marks(service: Service) -> None:
    classic_game(service)
    service.advance("g1", at(1, 9))
    t = Transport()
    report = deliver(service.db, t)
    assert report.sent == len(rows(service)) and report.failed == 0
    assert all(r.sent_at is not None and r.address for r in rows(service))
    assert deliver(service.db, t).sent == 0
    assert len(t.calls) == len(t.delivered)
    dm = next(m for m in t.calls if m.target == "seat:4")
    assert dm.address == "wx-g1-4" and dm.channel == "dm"


def test_crash_between_send_and_mark_resends_the_same_key(service: Service) -> None:
    classic_game(service)
    sent_before_crash: list[str] = []

    class Dying(Transport):
        def send(self, message: OutgoingMessage) -> None:
            super().send(message)
            sent_before_crash.append(message.dedupe_key)
            if len(sent_before_crash) == 5:
                raise Crash  # sent, but the process dies before marking it

    t = Dying()
    with pytest.raises(Crash):
        deliver(service.db, t)
    assert sum(r.sent_at is not None for r in rows(service)) == 4
    t2 = Transport()
    t2.delivered = t.delivered  # the same transport, after the restart
    deliver(service.db, t2)
    assert t2.calls[0].dedupe_key == sent_before_crash[-1]  # resent, same key
    assert set(t.delivered) == {r.dedupe_key for r in rows(service)}
    assert len(t.calls) + len(t2.calls) == len(rows(service)) + 1  # one resend, one key


def test_failures_back_off_and_keep_order(service: Service) -> None:
    classic_game(service)
    now = utcnow()

    class Flaky(Transport):
        def send(self, message: OutgoingMessage) -> None:
            if message.target == "seat:3":
                raise ConnectionError("WeChat is down")
            super().send(message)

    t = Flaky()
    report = deliver(service.db, t, now=now)
    assert report.failed == 1
    failed = [r for r in rows(service) if r.target == "seat:3"]
    assert failed[0].attempts == 1 and failed[0].last_error.startswith("ConnectionError")
    assert failed[0].next_attempt_at == now + backoff(1)
    assert all(r.sent_at is None for r in failed)  # the later rows for seat 3 wait too
    # Before the backoff nothing is retried; after it, with the transport back, all goes.
    assert deliver(service.db, Transport(), now=now + timedelta(seconds=1)).sent == 0
    ok = Transport()
    assert deliver(service.db, ok, now=now + backoff(1)).sent == len(failed)
    assert [m.dedupe_key for m in ok.calls] == [r.dedupe_key for r in failed]
    assert backoff(1) < backoff(2) < backoff(3) and backoff(40) == timedelta(hours=1)


def test_unbound_recipients_wait_until_bound(service: Service) -> None:
    classic_game(service, bindings={}, rooms={}, judge_contact=None)
    service.advance("g1", at(1, 9))
    t = Transport()
    assert deliver(service.db, t).sent == 0
    service.bind("g1", 5, "wx-five", "五号马甲")
    assert service.seat_of("g1", "wx-five") == 5
    sent = deliver(service.db, t).sent
    assert sent > 0 and {m.target for m in t.calls} == {"seat:5"}
    # A rejection's reply goes to whoever sent the message.
    service.submit("g1", Vote(seat=5, target=99), now=at(1, 10), msg_id="x", sender="wx-five")
    deliver(service.db, t)
    assert t.calls[-1].dedupe_key == "g1/reply/x" and t.calls[-1].address == "wx-five"


class Printer:
    """An instant transport, like the console: what it printed, in order; it remembers
    nothing, so a second print of a key is a duplicate the players would see."""

    instant = True

    def __init__(self, service: Service, lock: threading.Lock) -> None:
        self.service = service
        self.lock = lock
        self.printed: list[str] = []

    def send(self, message: OutgoingMessage) -> None:
        with self.lock:
            self.printed.append(message.dedupe_key)


def test_instant_transport_rows_go_out_once_among_racing_deliverers(service: Service,
                                                                   db_url: str) -> None:
    """Issue 13, point 13: a row is marked sent in the transaction of its send, so deliverers
    racing on one database (two threads here, two processes in the probe) and a restarted
    console (no memory) never print a row twice."""
    classic_game(service)
    service.advance("g1", at(1, 9))
    lock = threading.Lock()
    printers = [Printer(service, lock) for _ in range(2)]
    others = [Service(db_url) for _ in printers]
    try:
        threads = [threading.Thread(target=deliver, args=(svc.db, p))
                   for svc, p in zip(others, printers, strict=True)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        printed = printers[0].printed + printers[1].printed
        assert len(printed) == len(set(printed))
        assert all(r.sent_at is not None for r in rows(service))
        later = Printer(service, lock)  # a new run: nothing is printed again
        deliver(service.db, later)
        assert later.printed == []
    finally:
        for svc in others:
            svc.close()


def test_instant_transport_failure_leaves_the_row_for_later(service: Service) -> None:
    classic_game(service)

    class Broken:
        instant = True

        def send(self, message: OutgoingMessage) -> None:
            raise OSError("stdout closed")

    report = deliver(service.db, Broken())
    assert report.failed >= 1 and report.sent == 0
    assert all(r.sent_at is None for r in rows(service))


def test_secrets_go_before_public_posts(service: Service) -> None:
    """Issue 9: with a long queue, DMs (role cards, feedback) go out before public posts."""
    classic_game(service)
    t = Transport()
    deliver(service.db, t)
    channels = [m.channel for m in t.calls]
    assert "public" in channels
    last_dm = max(i for i, c in enumerate(channels) if c in ("dm", "judge"))
    assert channels.index("public") > last_dm


def test_a_message_failing_for_good_is_reported_to_the_judge_once(service: Service) -> None:
    from bot.outbox import GIVE_UP_AFTER

    classic_game(service)
    now = utcnow()

    class Blocked(Transport):
        def send(self, message: OutgoingMessage) -> None:
            if message.target == "seat:3":
                raise ConnectionError("not a friend any more")
            super().send(message)

    t = Blocked()
    for _ in range(GIVE_UP_AFTER + 2):
        deliver(service.db, t, now=now)
        now += timedelta(hours=2)  # past every backoff
    alerts = [m for m in t.calls if m.target == "judge" and "连续" in m.text]
    assert len(alerts) == 1 and "wx-g1-3" in alerts[0].text
