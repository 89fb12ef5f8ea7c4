"""Push reminders (issue 30, part 5): Web Push to the browsers that tapped `提醒我`.

A player's page asks its browser for a push subscription (the page's script and our service
worker, bot/web/static/sw.js) and posts it here; it is kept per contact (PushSubscription).
When a DM that asks its reader to act is delivered to a contact (the outbox row's `asks`: a
role card, a duty, a reminder, a card, `代行`'s notice; declared by the templates' `asks:`),
each of the contact's browsers gets a notification that carries no secret: only
"CODE：有新消息，点开查看" and the link of the seat's page, encrypted for that browser (RFC
8291, aes128gcm) and signed with our VAPID key (RFC 8292: made once, kept in the database like
the links' key). What the message says stays on the page.

Pushes go from a thread of their own, after the row is marked sent (never inside a commit),
paced (`every` seconds apart), and never hold up a DM: the queue is bounded and a full queue
drops the reminder, not the message. A push service's 404 or 410 means the browser dropped
the subscription: it is deleted.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from bot.outbox import OutgoingMessage
from bot.store.chat import ChatStore
from bot.texts import t
from bot.web.links import PageLinks

log = logging.getLogger(__name__)
VAPID_SECRET = "web-push-vapid"  # the `secrets` row of the VAPID private key (raw, base64url)
MAX_ENDPOINT = 1000
# The push services of the browsers (Chrome and Android, Firefox, Edge, Safari and iOS): a
# subscription pointing anywhere else is refused (the server would post to it).
PUSH_HOSTS = ("fcm.googleapis.com", "android.googleapis.com", "push.services.mozilla.com",
              "notify.windows.com", "push.apple.com")
GONE = (404, 410)


class BadSubscription(ValueError):
    """A subscription we will not keep: its `reason` is a key of the texts (web.push_bad_*)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Subscription:
    """A browser's push subscription: where to post, and its keys (base64url)."""

    endpoint: str
    p256dh: str
    auth: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.endpoint.encode()).hexdigest()

    def info(self) -> dict[str, Any]:
        return {"endpoint": self.endpoint, "keys": {"p256dh": self.p256dh, "auth": self.auth}}


def _b64(value: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        return b""


def parse_subscription(endpoint: str, p256dh: str, auth: str, *,
                       hosts: tuple[str, ...] = PUSH_HOSTS,
                       insecure: bool = False) -> Subscription:
    """A subscription as a browser makes it, checked: an https endpoint of a known push
    service (`insecure`: also plain http, for a test's own push service on loopback), a
    P-256 public key and a 16-byte secret. BadSubscription otherwise."""
    endpoint, p256dh, auth = endpoint.strip(), p256dh.strip(), auth.strip()
    if not endpoint or not p256dh or not auth:
        raise BadSubscription("push_bad_empty")
    if len(endpoint) > MAX_ENDPOINT or len(p256dh) > 200 or len(auth) > 64:
        raise BadSubscription("push_bad_long")
    url = urlsplit(endpoint)
    host = (url.hostname or "").lower()
    known = any(host == h or host.endswith("." + h) for h in hosts)
    if not (url.scheme == "https" or (insecure and url.scheme == "http")) or not known:
        raise BadSubscription("push_bad_endpoint")
    point, secret = _b64(p256dh), _b64(auth)
    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
    except ValueError:
        raise BadSubscription("push_bad_keys") from None
    if len(point) != 65 or len(secret) != 16:
        raise BadSubscription("push_bad_keys")
    return Subscription(endpoint, p256dh, auth)


def vapid_private_key(chats: ChatStore) -> str:
    """Our VAPID private key (raw, base64url): made once, kept in the database."""
    def make() -> str:
        key = ec.generate_private_key(ec.SECP256R1())
        raw = key.private_numbers().private_value.to_bytes(32, "big")
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    return chats.secret(VAPID_SECRET, make)


def application_server_key(private: str) -> str:
    """The public half, as a page gives it to `pushManager.subscribe` (base64url)."""
    value = int.from_bytes(_b64(private), "big")
    public = ec.derive_private_key(value, ec.SECP256R1()).public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return base64.urlsafe_b64encode(public).rstrip(b"=").decode()


class Pusher:
    """Sends the push reminders of delivered rows that ask to act (a `Notifying` listener,
    bot/web/live.py). `post`: the Web Push call (pywebpush's by default); `every`: seconds
    between two pushes."""

    QUEUE = 1000

    def __init__(self, chats: ChatStore, links: PageLinks, *, every: float = 0.2,
                 hosts: tuple[str, ...] = PUSH_HOSTS, insecure: bool = False,
                 post: Callable[[Subscription, str, str, str], int] | None = None) -> None:
        self.chats = chats
        self.links = links
        self.every = every
        self.hosts = hosts
        self.insecure = insecure
        self.private = vapid_private_key(chats)
        self.public = application_server_key(self.private)
        self.subject = links.base if links.base.startswith("https://") else (
            "mailto:wolfjudge@example.invalid")
        self._post = post or self._webpush
        self._queue: queue.Queue[tuple[str, str] | None] = queue.Queue(self.QUEUE)
        self._thread: threading.Thread | None = None
        self._session: Any = None

    # the subscriptions -------------------------------------------------------------------------
    def parse(self, endpoint: str, p256dh: str, auth: str) -> Subscription:
        return parse_subscription(endpoint, p256dh, auth, hosts=self.hosts,
                                  insecure=self.insecure)

    # sending -----------------------------------------------------------------------------------
    def delivered(self, message: OutgoingMessage) -> None:
        """A row marked sent: a reminder to its contact's browsers if it asks to act."""
        if not message.asks or message.game_id is None or message.channel not in ("dm",):
            return
        try:
            self._queue.put_nowait((message.game_id, message.address))
        except queue.Full:
            log.warning("push reminders: the queue is full, one reminder dropped")
        self._start()

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="web-push", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout=10)
            self._thread = None

    def drain(self) -> None:
        """Send what is queued now, in this thread (tests, and a stop)."""
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is not None:
                self.push(*item)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            try:
                self.push(*item)
            except Exception:  # a push service away: the reminder is lost, the DM is not
                log.exception("push reminder failed")
            time.sleep(self.every)

    def push(self, game: str, contact: str) -> int:
        """One reminder to each of `contact`'s browsers about `game`; how many took it."""
        subs = [Subscription(*row) for row in self.chats.push_subscriptions(contact)]
        if not subs:
            return 0
        seat = next((n for n, c in self.chats.contacts(game).items() if c == contact), None)
        if seat is None:
            return 0
        url = self.links.url("p", game, contact, seat, self.chats.link_epoch(contact),
                             self.chats.hand_overs(game, seat))
        body = json.dumps({"title": t("web.site"), "body": t("web.push_body", code=game),
                           "url": url, "tag": game}, ensure_ascii=False)
        took = 0
        for sub in subs:
            status = self._post(sub, body, self.private, self.subject)
            if status in GONE:
                self.chats.drop_push(contact, sub.endpoint)
            elif 200 <= status < 300:
                took += 1
            else:
                log.warning("push service answered %s", status)
        return took

    def _webpush(self, sub: Subscription, body: str, private: str, subject: str) -> int:
        """pywebpush's post (RFC 8291 encryption, a VAPID signature); the service's status."""
        import requests
        from py_vapid import Vapid02
        from pywebpush import WebPushException, webpush

        if self._session is None:
            self._session = requests.Session()
        try:
            response = webpush(sub.info(), data=body,
                               vapid_private_key=Vapid02.from_raw(private.encode()),
                               vapid_claims={"sub": subject}, ttl=12 * 3600, timeout=10,
                               requests_session=self._session)
        except WebPushException as exc:
            return exc.response.status_code if exc.response is not None else 0
        except requests.RequestException:
            return 0
        return int(getattr(response, "status_code", 0))
