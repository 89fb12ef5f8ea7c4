"""Push reminders (issue 30, part 5), against a push service of our own on loopback that
speaks the protocol (RFC 8030: a POST of the encrypted message, 201; 410 for a subscription
gone): `提醒我` keeps a browser's subscription for the seat's contact; a DM that asks its
reader to act (here: a card) is followed by a push whose payload, decrypted with the browser's
private key made in the test (RFC 8291, http_ece), says only "CODE：有新消息，点开查看" and the
page's link, signed by our VAPID key; a 410 drops the subscription; a DM that asks nothing
pushes nothing; bad input is refused in Chinese and changes nothing."""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import http_ece
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from test_chat_judge import JUDGE, _day1
from test_web_pages import BASE, WebTable

from bot.render import asks
from bot.store.models import OutboxRow
from bot.web.links import PageLinks
from bot.web.push import Pusher, parse_subscription

WAIT = 20.0  # seconds: the longest the test waits for a push it expects


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class FakePushService:
    """A push service on loopback: records each message; `/gone/…` answers 410."""

    received: list[Received] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)
    server: Any = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def push_service() -> Iterator[FakePushService]:
    service = FakePushService()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the library's name)
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            service.received.append(Received(
                self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(410 if self.path.startswith("/gone/") else 201)
            self.send_header("Content-Length", "0")
            self.end_headers()
            service.arrived.set()

        def log_message(self, *_: Any) -> None:
            pass

    service.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=service.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield service
    finally:
        service.server.shutdown()
        service.server.server_close()
        thread.join(5)


@dataclass
class Browser:
    """A browser's push keys, made in the test (the private half never leaves it)."""

    key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    auth: bytes = field(default_factory=lambda: os.urandom(16))

    @property
    def p256dh(self) -> str:
        raw = self.key.public_key().public_bytes(serialization.Encoding.X962,
                                                 serialization.PublicFormat.UncompressedPoint)
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    @property
    def auth_b64(self) -> str:
        return base64.urlsafe_b64encode(self.auth).rstrip(b"=").decode()

    def decrypt(self, body: bytes) -> dict[str, Any]:
        text = http_ece.decrypt(body, private_key=self.key, auth_secret=self.auth,
                                version="aes128gcm")
        return dict(json.loads(text.decode()))


@pytest.fixture
def web(tmp_path: Path) -> Iterator[WebTable]:
    table = WebTable(tmp_path)
    table.pusher = None
    table.pages_on()  # (replaced below with the pusher once the bot's store exists)
    table.pusher = Pusher(table.bot.chats, PageLinks(BASE, table.links), every=0,
                          hosts=("127.0.0.1",), insecure=True)
    table.pages_on()
    _day1(table)
    yield table
    table.pusher.stop()


def _subscribe(web: WebTable, link: str, endpoint: str, browser: Browser) -> Any:
    return web.client.post(link + "/push", data={"endpoint": endpoint, "p256dh": browser.p256dh,
                                                 "auth": browser.auth_b64, "nonce": "n"})


def test_a_card_reaches_the_subscribed_browser_as_a_push_without_a_secret(
        web: WebTable, push_service: FakePushService) -> None:
    seat = 5
    contact = web.contact[seat]
    link = web.link(contact)
    browser, gone = Browser(), Browser()
    r = _subscribe(web, link, f"{push_service.base}/push/abc", browser)
    assert r.status_code == 200 and r.json() == {"ok": True, "text": r.json()["text"]}
    assert "已开启提醒" in r.json()["text"]
    assert _subscribe(web, link, f"{push_service.base}/gone/old", gone).status_code == 200
    assert len(web.bot.chats.push_subscriptions(contact)) == 2
    # a DM that asks nothing (the answer to 状态) pushes nothing
    web.seat(seat, "状态")
    assert push_service.received == []
    web.say(JUDGE, f"黄牌 {seat} 发言违规")  # the card: a DM that asks its reader to act
    assert push_service.arrived.wait(WAIT)
    for _ in range(100):  # both posts are made by the one push thread, in order
        if len(push_service.received) == 2:
            break
        push_service.arrived.clear()
        push_service.arrived.wait(WAIT)
    assert sorted(x.path for x in push_service.received) == ["/gone/old", "/push/abc"]
    sent = next(x for x in push_service.received if x.path == "/push/abc")
    assert sent.headers["content-encoding"] == "aes128gcm"
    assert sent.headers["authorization"].startswith("vapid t=")
    assert f"k={web.pusher.public}" in sent.headers["authorization"]
    payload = browser.decrypt(sent.body)
    assert payload["body"] == f"{web.code}：有新消息，点开查看"
    assert payload["url"].startswith(f"{BASE}/p/") and set(payload) == {"title", "body", "url",
                                                                        "tag"}
    opened = web.client.get(payload["url"].removeprefix(BASE))  # the link opens the seat's page
    assert opened.status_code == 200 and "黄牌" in opened.text
    text = json.dumps(payload, ensure_ascii=False)
    assert "黄牌" not in text and "发言违规" not in text  # the content stays on the page
    for st in web.state.seats:
        assert web.state.ruleset and st.role not in text
    # the push service said 410: that subscription is gone, the other stays
    assert [e for e, *_ in web.bot.chats.push_subscriptions(contact)] == [
        f"{push_service.base}/push/abc"]


def test_a_browser_can_stop_its_reminders(web: WebTable, push_service: FakePushService) -> None:
    link = web.link(web.contact[2])
    browser = Browser()
    endpoint = f"{push_service.base}/push/x"
    assert _subscribe(web, link, endpoint, browser).json()["ok"]
    r = web.client.post(link + "/push/remove", data={"endpoint": endpoint, "nonce": "n"})
    assert r.json()["ok"] and "已关闭" in r.json()["text"]
    assert web.bot.chats.push_subscriptions(web.contact[2]) == []
    again = web.client.post(link + "/push/remove", data={"endpoint": endpoint, "nonce": "n"})
    assert not again.json()["ok"] and "无需关闭" in again.json()["text"]


def test_bad_subscriptions_are_refused_and_change_nothing(
        web: WebTable, push_service: FakePushService) -> None:
    contact = web.contact[3]
    link = web.link(contact)
    browser = Browser()
    good = {"endpoint": f"{push_service.base}/push/y", "p256dh": browser.p256dh,
            "auth": browser.auth_b64, "nonce": "n"}
    cases = {
        "empty": ({}, 400, "不完整"),
        "another host": ({**good, "endpoint": "https://evil.example/push"}, 400, "推送服务"),
        "not a url": ({**good, "endpoint": "javascript:alert(1)"}, 400, "推送服务"),
        "bad key": ({**good, "p256dh": base64.urlsafe_b64encode(b"\x04" + b"1" * 64).decode()},
                    400, "密钥"),
        "short auth": ({**good, "auth": "AAAA"}, 400, "密钥"),
        "200 KB": ({**good, "endpoint": good["endpoint"] + "x" * 200_000}, 413, "太大"),
    }
    for name, (data, status, word) in cases.items():
        r = web.client.post(link + "/push", data=data)
        assert r.status_code == status, name
        assert word in r.text, (name, r.text[:300])
    # another game's token, a forged one, a judge's: 403, nothing kept
    other = web.links.make("p", "OTHER1", contact, 3, 0)
    for path in (f"/p/{other}/push", "/p/forged/push", web.link(JUDGE, "/j/") + "/push"):
        r = web.client.post(path, data=good)
        assert r.status_code in (403, 404, 405), path
    assert web.bot.chats.push_subscriptions(contact) == []


def test_a_subscription_must_be_a_browsers() -> None:
    browser = Browser()
    parsed = parse_subscription("https://fcm.googleapis.com/fcm/send/abc", browser.p256dh,
                                browser.auth_b64)
    assert parsed.endpoint.startswith("https://fcm.googleapis.com/")
    for endpoint in ("http://fcm.googleapis.com/x", "https://fcm.googleapis.com.evil.example/",
                     "https://127.0.0.1/x"):
        with pytest.raises(ValueError):
            parse_subscription(endpoint, browser.p256dh, browser.auth_b64)


def test_what_asks_to_act_is_declared_by_the_templates(web: WebTable) -> None:
    """The role cards dealt at the start ask to act; an answer to 状态 does not."""
    from sqlalchemy import select

    with web.service.db.read() as s:
        rows = list(s.scalars(select(OutboxRow).where(OutboxRow.game_id == web.code)))
    dealt = [r for r in rows if "你的身份" in r.text]
    assert dealt and all(r.asks for r in dealt)
    web.seat(1, "状态")
    with web.service.db.read() as s:
        latest = s.scalars(select(OutboxRow).where(OutboxRow.address == web.contact[1])
                           .order_by(OutboxRow.id.desc()).limit(1)).one()
    assert not latest.asks
    from types import SimpleNamespace

    for ruleset in ("classic", "anomaly", "standard"):
        assert asks(SimpleNamespace(type="YellowCard"), ruleset)  # type: ignore[arg-type]
        assert asks(SimpleNamespace(type="NightPrompt"), ruleset)  # type: ignore[arg-type]
        assert not asks(SimpleNamespace(type="DayOpened"), ruleset)  # type: ignore[arg-type]


def test_a_reset_ends_the_reminders_subscribed_through_the_old_links(
        web: WebTable, push_service: FakePushService) -> None:
    """README "Web pages": `网页 重置` ends every link given before. A push carries a fresh
    link to the seat's page, so a browser that subscribed through an old link (one that was
    forwarded, or seen over a shoulder) would go on receiving working links after the reset:
    the reset ends the contact's subscriptions too (the player taps 提醒我 again)."""
    seat = 6
    contact = web.contact[seat]
    stolen = web.link(contact)
    assert _subscribe(web, stolen, f"{push_service.base}/push/other", Browser()).json()["ok"]
    said = web.seat(seat, "网页 重置")
    assert "已重置" in said and "提醒" in said  # told that its reminders ended too
    assert "提醒" not in web.seat(seat, "网页 重置")  # (none left to end)
    assert web.client.get(stolen).status_code == 403
    assert web.bot.chats.push_subscriptions(contact) == []
    web.say(JUDGE, f"黄牌 {seat} 发言违规")  # a DM that asks to act
    web.pusher.drain()
    assert push_service.received == []
