"""The QQ transport: OneBot v11 over its forward WebSocket (issue 32). The only module that
speaks OneBot.

    NapCat / LLOneBot (a personal QQ account) ─ universal WebSocket ─> asyncio loop thread
        events ─> queue ─> worker thread ─> handler(Incoming)
        send_dm/post/members/... (any other thread) ─> run_coroutine_threadsafe ─> one API call

One connection carries both directions (the "universal" endpoint): the implementation pushes
events (`post_type` message, notice, request, meta_event) and answers each API call
(`{"action", "params", "echo"}`) with `{"status", "retcode", "data", "message", "echo"}`; the
echo pairs an answer with its call. A contact is the QQ number as text, a room a group number.
The loop and worker threads, the reconnection, calls from other threads, pacing and the life
cycle are `ConnectedTransport`'s (bot/transport/connected.py), as on WeChat; this module is
OneBot's protocol.

Why the `websockets` client (the PyPI package, asyncio API) and no OneBot SDK: the bot is the
client of a forward WebSocket, and the maintained Python SDKs are servers for the reverse
direction (aiocqhttp is a Quart app that waits for the implementation to connect to it; the
NoneBot adapter needs the NoneBot runtime). A client needs fifty lines of framing over a
WebSocket library, and `websockets` is pure Python with no dependencies, so it leaves the
project's pins alone (python-wechaty's `urllib3<2`, `pyee<9`). `proxy=None`: NapCat is on the
same host or network; a proxy from the environment is never wanted on this connection.

What it does for the bot:
- **The token** goes as `Authorization: Bearer TOKEN`. NapCat accepts the handshake and then
  sends `retcode 1403` ("token验证失败") and closes; the OneBot standard answers the handshake
  with 401/403. Both end the connection with `token_refused` set (doctor reports it).
- **Login**: `get_login_info` (the account), `get_status` (online), `get_version_info` (which
  implementation); a heartbeat's `status.online` keeps `online` current. A lost connection (no
  heartbeat or pong: the client's own keepalive pings notice) is reconnected with exponential
  backoff and jitter; after every connection but the first, `on_reconnect` is called.
- **Never losing its place**: QQ keeps each conversation's history, so after every connection
  (the first of a process too: the bot may have been down) the transport reads the latest
  messages of the conversations with a message since its mark (`get_friend_msg_history`,
  `get_group_msg_history`, paging back while the page is full and newer than the mark, at
  most `catchup_pages` pages) and hands those within the replay window to the handler, in
  time order, before the live events that came meanwhile. Which conversations: NapCat's
  `get_recent_contact` (each conversation with its latest message) names those active since
  the mark; an implementation without it (LLOneBot: an unknown action), or a list that may go
  on past what it shows, means every friend and every group. The mark is the newest message
  time the bot had handled everything up to (a message whose handling failed holds it back),
  kept in the database across restarts (`Watermark`, `ChatStore.mark`), a minute of slack
  for clocks; never older than the replay window. The chat layer applies a message id once
  (its handled-message key), so what was handled before is dropped there; this module also
  drops an id it has queued already (an event and its history copy).
- **Hostile text stays text**: every send is one `text` segment with `auto_escape=true`, so a
  马甲 or 遗言 holding `[CQ:at,qq=all]` reaches QQ as those characters. Incoming segments are
  read as their text (`segment_text`): an @ of the bot disappears, other segments become a short
  word from texts.yaml, an unknown one nothing; a malformed one never raises.
- **What QQ cannot do**: a bot account makes no group (`create_room` is `Unsupported`: the judge
  makes it and binds it with `绑定`) and invites nobody (`add_member`); `remove_member` kicks
  (`set_group_kick`) and raises `ByHand` where the bot is not an admin, so the judge is asked;
  a DM reaches friends only: a DM to a non-friend raises `Unreachable` and `on_unreachable`
  is told the contact (the judge learns which seat and how to fix it); a friend request whose
  comment the bot accepts (`on_friend_request`: an open lobby's code) is approved.
- **Pacing and risk control**: the account's pace (`Pacer`) and, per contact and per group, the
  guard (`bot/transport/guard.py`), which stops sending to one conversation before QQ's risk
  control would, and says so once through `on_guarded`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import re
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from bot.capabilities import describe
from bot.texts import text_data
from bot.transport import (
    ByHand,
    Capabilities,
    Incoming,
    Refused,
    TransportError,
    Unreachable,
    Unsupported,
)
from bot.transport.channels import Channel, Setup
from bot.transport.connected import ConnectedTransport, epoch
from bot.transport.guard import Guard, GuardSettings
from bot.transport.pacing import Pacer, PacingSettings

if TYPE_CHECKING:
    from bot.doctor import Checkup

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 30.0
TOKEN_REFUSED = 1403  # NapCat's answer to a wrong token, after the handshake
RECENT_CONTACTS = 100  # conversations asked of get_recent_contact at a catch-up
SLACK = 60  # seconds the catch-up reads back before its mark (clocks, a message in flight)
SEEN_MAX = 50_000  # message ids remembered as queued
MAX_FRAME = 16 * 2**20  # a history page of long messages
# The longest text one QQ send carries: QQNT refuses a text message of more than about 4,500
# characters (NapCat passes the refusal on), in a DM and in a group alike; a longer one goes in
# parts, cut at line breaks (bot/transport: `TransportCourier`), with room to spare.
QQ_MAX_TEXT = 4000
# A personal QQ account: DMs to friends, no group made or joined by the bot, members removed
# where it is an admin; announcements to a group (QQ's risk control watches one text DMed to
# many).
QQ = Capabilities(send_dm=True, create_rooms=False, add_members=False, remove_members=True,
                  list_members=True, nouns="qq", announce_in_room=True)


class OneBotFailed(TransportError):
    """An API call answered `failed` (retcode, NapCat's message)."""

    def __init__(self, action: str, retcode: int, message: str) -> None:
        super().__init__(f"{action}: retcode {retcode}: {message}")
        self.action = action
        self.retcode = retcode


class TokenRefused(TransportError):
    """The implementation refused the token."""


@dataclass(frozen=True)
class Watermark:
    """Where the transport keeps its mark across restarts (the epoch second of the newest
    message it had handled everything up to): `wolfjudge run` keeps it in the database."""

    read: Callable[[], int | None]
    write: Callable[[int], None]


@dataclass(frozen=True)
class Account:
    """What the implementation said at the last login."""

    self_id: str
    nickname: str
    online: bool
    app: str  # app_name app_version (NapCat.Onebot 4.8.95)


def segment_text(segments: Any, self_id: str | None) -> str:
    """A message's text as the bot reads it: text segments as they are, an @ of the bot
    dropped, an @ of someone else as `@name`, other segments as a word (texts.yaml
    `onebot.segments`), anything malformed or unknown as nothing."""
    if isinstance(segments, str):
        return unescape_cq(segments)
    if not isinstance(segments, list):
        return ""
    words: dict[str, str] = text_data("onebot.segments")
    out: list[str] = []
    for seg in segments:
        if not isinstance(seg, dict):
            continue
        kind = seg.get("type")
        raw = seg.get("data")
        data: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if kind == "text":
            out.append(str(data.get("text", "")))
        elif kind == "at":
            qq = str(data.get("qq", ""))
            if qq == "all":
                out.append(words["at_all"])
            elif qq and qq != self_id:
                out.append("@" + str(data.get("name") or qq) + " ")
        elif kind == "image" and data.get("summary"):
            out.append(str(data["summary"]))
        elif isinstance(kind, str) and kind in words:
            out.append(words[kind])
    return "".join(out).strip()


def unescape_cq(raw: str) -> str:
    """A CQ-code string's text: codes dropped, escapes undone (only for an implementation that
    sends `message` as a string)."""
    text = re.sub(r"\[CQ:[^\]]*\]", "", raw)
    return (text.replace("&#44;", ",").replace("&#91;", "[").replace("&#93;", "]")
            .replace("&amp;", "&")).strip()


def _headers(token: str) -> dict[str, str] | None:
    """The handshake's: the access token as a Bearer (none: no header)."""
    return {"Authorization": f"Bearer {token}"} if token else None


def _data(action: str, answer: dict[str, Any]) -> Any:
    """An API call's answer: its `data`, or `OneBotFailed` (retcode 1 is "queued": done)."""
    if answer.get("status") != "ok" and answer.get("retcode") not in (0, 1):
        raise OneBotFailed(action, int(answer.get("retcode") or -1),
                           str(answer.get("message") or answer.get("wording") or ""))
    return answer.get("data")


def _seconds(value: Any) -> int:
    """A time QQ gives (a message's `time`, a recent contact's `msgTime`: `epoch`) in epoch
    seconds; 0 when it is none."""
    sent = epoch(value)
    return int(sent.timestamp()) if sent is not None else 0


def _qq(value: str) -> int | str:
    """A QQ or group number as OneBot's int64 (a non-numeric id goes as it is)."""
    return int(value) if value.isdigit() else value


class OneBotTransport(ConnectedTransport):
    """`url`: the implementation's WebSocket server (`ws://host:port`); `token`: its access
    token (empty: none). Callbacks run on the worker thread, in order with the messages:
    `on_friend_request(user, comment) -> bool` (approve?), `on_unreachable(contact)` (a DM
    failed: not a friend), `on_guarded(conversation, is_room)` (the guard stopped sending to
    it for a while). The threads, the supervision, the calls, pacing and the life cycle:
    `ConnectedTransport`."""

    label = "onebot"
    instant = False
    can_create_rooms = False
    can_manage_members = False  # no invitations; a kick where the bot is admin (remove_member)
    max_text = QQ_MAX_TEXT

    def __init__(self, url: str, token: str = "", *,
                 handler: Callable[[Incoming], None] | None = None,
                 pacer: Pacer | None = None, guard: Guard | None = None,
                 timeout: float = DEFAULT_TIMEOUT, connect_wait: float = 2.0,
                 reconnect_min: float = 0.5, reconnect_max: float = 60.0,
                 replay_window: timedelta = timedelta(hours=24),
                 catchup_count: int = 30, catchup_pages: int = 3,
                 recent_count: int = RECENT_CONTACTS, mark: Watermark | None = None,
                 ping_interval: float | None = 20.0) -> None:
        """`mark`: where the catch-up's mark is kept across restarts (None: in this process
        only; a new one starts from the replay window)."""
        if not url.startswith(("ws://", "wss://")):
            raise ValueError("the OneBot URL is ws://host:port (or wss://)")
        super().__init__(url, handler=handler, pacer=pacer, timeout=timeout,
                         connect_wait=connect_wait, reconnect_min=reconnect_min,
                         reconnect_max=reconnect_max, replay_window=replay_window)
        self.url = url
        self.token = token
        self.capabilities = QQ  # what a QQ account can do, before it says which app it is
        self.guard = guard
        self.catchup_count = catchup_count
        self.catchup_pages = catchup_pages
        self.recent_count = recent_count
        self.mark = mark
        self.ping_interval = ping_interval
        self.account: Account | None = None
        self.token_refused = False
        self._ws: ClientConnection | None = None
        self._answers: dict[str, asyncio.Future[Any]] = {}
        self._echo = itertools.count(1)
        self._catching = False  # a catch-up is under way: live messages wait behind it
        self._held: list[dict[str, Any]] = []
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._friends: set[str] = set()
        self._newest = 0  # the newest message time (epoch seconds) seen, live or caught up
        self._failed: int | None = None  # the oldest message time whose handling failed
        self._kept = 0  # the mark as last kept (`mark`)
        self._unreachable: set[str] = set()  # told once per contact until it is a friend

    @property
    def self_id(self) -> str | None:
        return self.account.self_id if self.account else None

    def _starting(self) -> None:
        assert self.started_at is not None
        self._newest = int((self.started_at - self.replay_window).timestamp())
        if self.mark is not None:
            try:
                kept = self.mark.read()
            except Exception:  # the database is away: from the replay window, as with none
                log.exception("onebot: the catch-up's mark could not be read")
                kept = None
            if kept is not None:
                self._kept = kept
                self._newest = max(self._newest, kept)

    # the connection (on the loop) ----------------------------------------------------------------
    def _connection_failed(self, exc: Exception) -> None:
        if isinstance(exc, TokenRefused):
            self.token_refused = True
            log.error("onebot: %s refused the token (WOLFJUDGE_ONEBOT_TOKEN)", self.url)
        elif isinstance(exc, InvalidStatus):
            code = exc.response.status_code
            self.token_refused = code in (401, 403)
            log.warning("onebot: %s answered the handshake with HTTP %s", self.url, code)
        else:
            super()._connection_failed(exc)

    async def _connect(self) -> None:
        async with connect(self.url, additional_headers=_headers(self.token), proxy=None,
                           open_timeout=self.timeout, ping_interval=self.ping_interval,
                           ping_timeout=self.ping_interval, max_size=MAX_FRAME,
                           compression=None) as ws:
            self._ws = ws
            reader = asyncio.get_running_loop().create_task(self._read(ws))
            try:
                try:
                    await self._login()
                except TransportError:
                    # The reader knows why the connection ended (NapCat's token refusal).
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(reader), 2.0)
                    raise
                await reader
            finally:
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await reader

    async def _teardown(self) -> None:
        self._set_ready(False)
        ws, self._ws = self._ws, None
        for fut in self._answers.values():
            if not fut.done():
                fut.set_exception(Refused("the OneBot connection closed"))
        self._answers.clear()
        if ws is not None:
            with contextlib.suppress(Exception):
                await ws.close()

    async def _read(self, ws: ClientConnection) -> None:
        try:
            await self._frames(ws)
        finally:  # the connection is over: no call waits for an answer that cannot come
            for fut in list(self._answers.values()):
                if not fut.done():
                    fut.set_exception(Refused("the OneBot connection closed"))

    async def _frames(self, ws: ClientConnection) -> None:
        async for frame in ws:
            try:
                data = json.loads(frame)
            except ValueError:
                log.warning("onebot: a frame that is not JSON ignored")
                continue
            if not isinstance(data, dict):
                continue
            if "post_type" in data:
                self._event(data)
                continue
            echo = data.get("echo")
            if data.get("retcode") == TOKEN_REFUSED and not echo:
                raise TokenRefused(str(data.get("message") or "token"))
            fut = self._answers.pop(str(echo), None) if echo is not None else None
            if fut is not None and not fut.done():
                fut.set_result(data)

    async def _api(self, action: str, params: dict[str, Any] | None = None,
                   timeout: float | None = None) -> Any:
        """One call on the live connection: its `data`, or `OneBotFailed`."""
        ws = self._ws
        if ws is None:
            raise Refused(f"{action}: not connected to {self.url}")
        echo = f"wj{next(self._echo)}"
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._answers[echo] = fut
        try:
            await ws.send(json.dumps({"action": action, "params": params or {}, "echo": echo},
                                     ensure_ascii=False))
            answer = await asyncio.wait_for(fut, self.timeout if timeout is None else timeout)
        except ConnectionClosed as exc:
            raise Refused(f"{action}: the OneBot connection closed") from exc
        finally:
            self._answers.pop(echo, None)
        return _data(action, answer)

    async def _login(self) -> None:
        info = await self._api("get_login_info")
        status = await self._api("get_status")
        try:
            version = await self._api("get_version_info")
            app = f"{version.get('app_name', '')} {version.get('app_version', '')}".strip()
        except OneBotFailed:
            app = ""
        self.account = Account(self_id=str(info.get("user_id", "")),
                               nickname=str(info.get("nickname", "")),
                               online=bool((status or {}).get("online", True)), app=app)
        self.token_refused = False
        await self._refresh_friends()
        caps = replace(QQ, puppet=app or None, reported=True, account=self.account.self_id)
        self.capabilities = caps
        self._logged_in()
        self._tell(self.on_capabilities, caps)
        log.info("onebot: logged in as %s (%s)", self.account.self_id, app or "?")
        await self._catch_up()
        self._set_ready(True)

    async def _refresh_friends(self) -> None:
        friends = await self._api("get_friend_list")
        self._friends = {str(f.get("user_id")) for f in friends or [] if isinstance(f, dict)}

    # events --------------------------------------------------------------------------------------
    def _event(self, ev: dict[str, Any]) -> None:
        kind = ev.get("post_type")
        if kind == "message":
            if self._catching:
                self._held.append(ev)
            else:
                self._take(ev)
        elif kind == "meta_event" and ev.get("meta_event_type") == "heartbeat":
            online = bool((ev.get("status") or {}).get("online", True))
            if self.account is not None and online != self.account.online:
                log.warning("onebot: the QQ account is %s", "online" if online else "offline")
                self.account = Account(self.account.self_id, self.account.nickname, online,
                                       self.account.app)
        elif kind == "notice" and ev.get("notice_type") == "friend_add":
            user = str(ev.get("user_id", ""))
            self._friends.add(user)
            self._unreachable.discard(user)
        elif kind == "request" and ev.get("request_type") == "friend":
            self._friend_request(str(ev.get("user_id", "")), str(ev.get("comment") or ""),
                                 str(ev.get("flag", "")))

    def _take(self, ev: dict[str, Any]) -> bool:
        """Queue one message event for the handler; False if it is not one to handle."""
        msg_id = str(ev.get("message_id", ""))
        sender = str(ev.get("user_id", ""))
        if not msg_id or not sender or sender == self.self_id or msg_id in self._seen:
            return False
        sent = epoch(ev.get("time"))
        if sent is not None:
            self._newest = max(self._newest, int(sent.timestamp()))
        at = self._received_at(sent)
        if at is None:
            return False  # too old to act on (README: a day)
        text = segment_text(ev.get("message"), self.self_id)
        if not text and isinstance(ev.get("raw_message"), str):
            text = unescape_cq(ev["raw_message"])
        self._seen[msg_id] = None
        while len(self._seen) > SEEN_MAX:
            self._seen.popitem(last=False)
        if not text:
            return False
        room = str(ev["group_id"]) if ev.get("message_type") == "group" and ev.get(
            "group_id") else None
        self._enqueue(Incoming(msg_id=msg_id, sender=sender, text=text, at=at, room=room))
        return True

    async def _catch_up(self) -> None:
        """The messages sent while the bot was not connected, from QQ's history: the latest of
        each conversation with a message since the mark (less a minute: clocks), those newer
        than it, in time order, then the live ones that came meanwhile."""
        self._catching = True
        since = self._place() - SLACK
        self._failed = None  # read again now (and held back again if it fails again)
        found: dict[str, dict[str, Any]] = {}
        try:
            peers = await self._recent(since)
            if peers is None:  # every friend and every group
                groups = await self._api("get_group_list")
                peers = ([("user_id", f, "get_friend_msg_history")
                          for f in sorted(self._friends)]
                         + [("group_id", str(g.get("group_id")), "get_group_msg_history")
                            for g in groups or [] if isinstance(g, dict)])
            for field, peer, action in peers:
                for ev in await self._history(action, field, peer, since):
                    found.setdefault(str(ev.get("message_id")), ev)
        except (OneBotFailed, Refused) as exc:
            log.warning("onebot: catching up stopped: %s", exc)
        finally:
            self._catching = False
            caught = sorted(found.values(), key=lambda e: (_seconds(e.get("time")),
                                                           e.get("message_id") or 0))
            held, self._held = self._held, []
            taken = sum(self._take(ev) for ev in caught)
            for ev in held:
                self._take(ev)
        if taken:
            log.info("onebot: %d message(s) sent while the bot was away, caught up", taken)

    async def _recent(self, since: int) -> list[tuple[str, str, str]] | None:
        """The conversations with a message at or after `since`, from NapCat's recent contacts
        (each conversation's latest message: `msgTime`, `chatType` 1 a friend, 2 a group), as
        (field, peer, history action); None when they cannot say which: the implementation
        lacks the action (LLOneBot, an old NapCat: an unknown action), or each of the
        `recent_count` it listed is that recent (more may be)."""
        try:
            listed = await self._api("get_recent_contact", {"count": self.recent_count})
        except OneBotFailed as exc:
            log.info("onebot: no recent conversations (%s): every conversation is read", exc)
            return None
        contacts = [c for c in listed or [] if isinstance(c, dict)] if isinstance(
            listed, list) else []
        active = [c for c in contacts if _seconds(c.get("msgTime")) >= since]
        if len(contacts) >= self.recent_count and len(active) == len(contacts):
            return None
        peers: list[tuple[str, str, str]] = []
        for c in active:
            peer = str(c.get("peerUin") or "")
            if not peer.isdigit():
                continue
            if c.get("chatType") == 1:
                peers.append(("user_id", peer, "get_friend_msg_history"))
            elif c.get("chatType") == 2:
                peers.append(("group_id", peer, "get_group_msg_history"))
        return peers

    async def _history(self, action: str, field: str, peer: str, since: int
                       ) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        seq: int | None = None
        for _ in range(self.catchup_pages):
            params: dict[str, Any] = {field: _qq(peer), "count": self.catchup_count}
            if seq is not None:
                params["message_seq"] = seq
            try:
                page = (await self._api(action, params) or {}).get("messages") or []
            except OneBotFailed:
                break  # an empty conversation is an error in NapCat ("消息…不存在")
            msgs = [m for m in page if isinstance(m, dict)]
            out += [m for m in msgs if _seconds(m.get("time")) >= since]
            oldest = min(msgs, key=lambda m: _seconds(m.get("time")), default=None)
            if (oldest is None or len(msgs) < self.catchup_count
                    or _seconds(oldest.get("time")) < since
                    or oldest.get("message_seq") in (None, seq)):
                break
            seq = int(oldest["message_seq"])
        return out

    def _friend_request(self, user: str, comment: str, flag: str) -> None:
        """Asked on the worker thread (the lobby codes are in the database); approved on the
        loop. A request the bot does not approve is left alone (the account owner decides)."""
        decide = self.on_friend_request
        if decide is None or not user or not flag:
            return

        def ask() -> None:
            if not decide(user, comment):
                return
            try:
                self.call("set_friend_add_request", {"flag": flag, "approve": True})
            except Exception as exc:
                log.warning("onebot: approving %s's friend request failed: %s", user, exc)
                return
            self._friends.add(user)
            self._unreachable.discard(user)
            log.info("onebot: friend request from %s approved", user)

        self._enqueue(ask)

    # the mark (on the worker thread) -------------------------------------------------------------
    def _done(self, message: Incoming, committed: bool) -> None:
        if committed or self.handler is None:
            return
        # Not committed (the handler raised): the next catch-up reads it again.
        self._on_loop(self._seen.pop, message.msg_id, None)  # (the loop owns `_seen`)
        when = int(message.at.timestamp())
        self._failed = when if self._failed is None else min(self._failed, when)

    def _drained(self) -> None:
        """Everything handed over is handled: the mark is kept (after the handler's commit),
        so that the next process reads back only to here."""
        place = self._place()
        if self.mark is None or place <= self._kept:
            return
        try:
            self.mark.write(place)
            self._kept = place
        except Exception:  # kept the next time; meanwhile a restart reads back further
            log.exception("onebot: the catch-up's mark could not be kept")

    def _place(self) -> int:
        """The catch-up's mark: the newest message time seen, held back by a failed one."""
        return self._newest if self._failed is None else min(self._newest, self._failed)

    # calls from other threads --------------------------------------------------------------------
    def call(self, action: str, params: dict[str, Any] | None = None,
             timeout: float | None = None) -> Any:
        """One API call from any thread but the loop's; `Refused` when not connected, a
        timeout, or a failed answer (`OneBotFailed`, a `Refused`)."""
        return self._run(action, lambda: self._api(action, params, timeout), timeout)

    def _guarded(self, conversation: str, text: str, *, room: bool) -> None:
        """The guard's word before a send: `Refused` while this conversation rests."""
        if self.guard is None:
            return
        verdict = self.guard.check(conversation, text)
        if verdict.allowed:
            return
        if verdict.tripped:
            self._tell(self.on_guarded, conversation, room)
        raise Refused(f"the risk guard holds sends to {conversation} until "
                      f"{verdict.until:%H:%M:%S} UTC")

    def send_dm(self, contact: str, text: str, *, key: str | None = None) -> None:
        if self._sent_before(key):
            return
        if self._ready.is_set() and contact not in self._friends and not self._is_friend(contact):
            self._not_a_friend(contact)
        self._guarded(contact, text, room=False)
        self._pace(None)
        try:
            self.call("send_private_msg", {"user_id": _qq(contact), "message": [
                {"type": "text", "data": {"text": text}}], "auto_escape": True})
        except OneBotFailed as exc:
            if not self._is_friend(contact):
                self._not_a_friend(contact)
            raise Refused(str(exc)) from exc
        self._sent(key, contact, text)

    def post(self, room: str, text: str, *, key: str | None = None) -> None:
        if self._sent_before(key):
            return
        self._guarded(f"group:{room}", text, room=True)
        self._pace(room)
        try:
            self.call("send_group_msg", {"group_id": _qq(room), "message": [
                {"type": "text", "data": {"text": text}}], "auto_escape": True})
        except OneBotFailed as exc:
            raise Refused(str(exc)) from exc
        self._sent(key, f"group:{room}", text)

    def _sent(self, key: str | None, conversation: str, text: str) -> None:
        if self.guard is not None:
            self.guard.sent(conversation, text)
        self._remember(key)

    def _is_friend(self, contact: str) -> bool:
        """Whether the contact is a friend, the list read again (a friend made elsewhere);
        True when the list cannot be read (the send then says for itself)."""
        try:
            self._run("get_friend_list", self._refresh_friends)
        except Exception:
            return True
        return contact in self._friends

    def _not_a_friend(self, contact: str) -> None:
        """A DM QQ will not deliver: the judge is told once (until the contact is a friend),
        and the row stays queued (it goes once they are)."""
        if contact not in self._unreachable:
            self._unreachable.add(contact)
            self._tell(self.on_unreachable, contact)
        raise Unreachable(f"DM to {contact}: not a friend of the bot's QQ account")

    def create_room(self, name: str, members: list[str]) -> str:
        raise Unsupported("a QQ bot account cannot create groups")

    def add_member(self, room: str, contact: str) -> None:
        raise Unsupported("OneBot v11 cannot invite into a group")

    def remove_member(self, room: str, contact: str) -> None:
        try:
            self.call("set_group_kick", {"group_id": _qq(room), "user_id": _qq(contact),
                                         "reject_add_request": False})
        except OneBotFailed as exc:
            if not self.is_admin(room):
                raise ByHand(f"the bot is not an admin of group {room}") from exc
            raise Refused(str(exc)) from exc

    def is_admin(self, room: str) -> bool:
        """Whether the bot is an admin or the owner of the group (False when unknown)."""
        try:
            me = self.call("get_group_member_info", {"group_id": _qq(room),
                                                     "user_id": _qq(self.self_id or "")})
        except TransportError:
            return False
        return isinstance(me, dict) and me.get("role") in ("admin", "owner")

    def members(self, room: str) -> list[str]:
        """The group's members, the bot left out (read afresh: `no_cache`)."""
        try:
            found = self.call("get_group_member_list", {"group_id": _qq(room),
                                                        "no_cache": True})
        except OneBotFailed as exc:
            raise Refused(str(exc)) from exc
        return [str(m.get("user_id")) for m in found or [] if isinstance(m, dict)
                and str(m.get("user_id")) != self.self_id]

    def groups(self) -> list[tuple[str, str]]:
        """The groups the account is in: (group number, name)."""
        found = self.call("get_group_list")
        return [(str(g.get("group_id")), str(g.get("group_name") or ""))
                for g in found or [] if isinstance(g, dict)]


# the channel (bot/transport/channels.py) ----------------------------------------------------------
# QQ's pace: a little slower than WeChat's between two sends of the account, faster in a group
# (a group is where the announcements go), fewer a day (WOLFJUDGE_SEND_INTERVAL … override).
QQ_PACING = PacingSettings(interval=2.0, jitter=1.5, room_interval=3.0, daily_cap=2000,
                           rooms_per_hour=2)


class OneBotSettings(BaseSettings):
    """What the QQ channel reads from the environment (besides `LiveSettings`)."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    onebot_url: str = Field(validation_alias=AliasChoices("WOLFJUDGE_ONEBOT_URL"),
                            pattern=r"^wss?://\S+$")
    onebot_token: str = Field(validation_alias=AliasChoices("WOLFJUDGE_ONEBOT_TOKEN"),
                              min_length=1, repr=False)
    # The risk guard (bot/transport/guard.py): sends to one conversation before it rests.
    guard_per_minute: int = Field(15, ge=1, validation_alias=AliasChoices(
        "WOLFJUDGE_ONEBOT_GUARD_PER_MINUTE"))
    guard_per_ten_minutes: int = Field(45, ge=1, validation_alias=AliasChoices(
        "WOLFJUDGE_ONEBOT_GUARD_PER_TEN_MINUTES"))
    guard_same_text: int = Field(2, ge=1, validation_alias=AliasChoices(
        "WOLFJUDGE_ONEBOT_GUARD_SAME_TEXT"))
    guard_rest: float = Field(300.0, ge=0, validation_alias=AliasChoices(
        "WOLFJUDGE_ONEBOT_GUARD_REST"))

    @property
    def guard(self) -> GuardSettings:
        return GuardSettings(per_minute=self.guard_per_minute,
                             per_ten_minutes=self.guard_per_ten_minutes,
                             same_text=self.guard_same_text, rest=self.guard_rest)


def build(settings: OneBotSettings, setup: Setup) -> OneBotTransport:
    """`wolfjudge run`'s transport: paced at QQ's pace, guarded per conversation, its
    catch-up's mark kept in the database."""
    from bot.store.chat import ChatStore

    chats = ChatStore(setup.service.db)
    name = f"onebot/{setup.host or ''}"  # one mark per account
    return OneBotTransport(settings.onebot_url, settings.onebot_token,
                           pacer=Pacer(setup.pacing), guard=Guard(settings.guard),
                           mark=Watermark(lambda: chats.mark(name),
                                          lambda value: chats.set_mark(name, value)))


def checks(check: Checkup, values: Mapping[str, Any]) -> None:
    """`wolfjudge doctor`: NapCat reachable and the token accepted, the QQ account logged in and
    online, which implementation and version, each bound group and whether the bot is its
    admin, then what QQ can do. On the API-only endpoint (`/api`): a running bot's events are
    not touched."""
    url = str(values.get("onebot_url") or "")
    token = str(values.get("onebot_token") or "")
    if not url or not token:
        return  # (named among the settings)
    check.head("qq", url=url)
    try:
        with _api_connection(url, token, check.timeout) as api:
            info = api("get_login_info")
            check.ok("qq_reachable")
            status = api("get_status")
            version = api("get_version_info")
            self_id = str(info.get("user_id", ""))
            check.ok("qq_account", qq=self_id, nickname=info.get("nickname", ""))
            if status.get("online", True):
                check.ok("qq_online")
            else:
                check.bad("qq_offline")
            check.ok("qq_version", app=version.get("app_name", "?"),
                     version=version.get("app_version", "?"))
            _bound_groups(check, api, self_id)
    except TokenRefused:
        check.bad("qq_token")
        return
    except OneBotFailed as exc:
        check.bad("qq_failed", action=exc.action, error=str(exc)[:200])
        return
    except (OSError, InvalidHandshake, ConnectionClosed, TimeoutError) as exc:
        check.bad("qq_unreachable", error=(str(exc).strip().splitlines() or [""])[0][:200])
        return
    check.note(describe(replace(QQ, reported=True, account=self_id), values.get("host")))


def _bound_groups(check: Checkup, api: Callable[..., Any], self_id: str) -> None:
    from bot.store.chat import ChatStore
    from bot.texts import room_name

    rooms = check.read(lambda db: ChatStore(db).bound_rooms())
    if rooms is None:
        return
    if not rooms:
        check.warn("qq_no_groups")
        return
    for code, name, group in rooms:
        shown = {"code": code, "room": room_name(name), "group": group}
        try:
            me = api("get_group_member_info", group_id=_qq(group), user_id=_qq(self_id))
        except OneBotFailed:
            check.bad("qq_group_gone", **shown)
            continue
        if me.get("role") in ("admin", "owner"):
            check.ok("qq_group_admin", **shown)
        else:
            check.warn("qq_group_member", **shown)


@contextlib.contextmanager
def _api_connection(url: str, token: str, timeout: float) -> Iterator[Callable[..., Any]]:
    """A short synchronous connection to the API-only endpoint; yields `call(action,
    **params)` (its data, or `OneBotFailed` / `TokenRefused`)."""
    from websockets.sync.client import connect as connect_sync

    api_url = url.rstrip("/") + "/api"
    try:
        ws = connect_sync(api_url, additional_headers=_headers(token), open_timeout=timeout,
                          proxy=None, compression=None, max_size=MAX_FRAME)
    except InvalidStatus as exc:
        if exc.response.status_code in (401, 403):
            raise TokenRefused(str(exc)) from exc
        raise
    echoes = itertools.count(1)

    def call(action: str, **params: Any) -> Any:
        echo = f"doctor{next(echoes)}"
        with contextlib.suppress(ConnectionClosed):  # closed: what came first says why
            ws.send(json.dumps({"action": action, "params": params, "echo": echo}))
        while True:
            data = json.loads(ws.recv(timeout))
            if not isinstance(data, dict) or "post_type" in data:
                continue  # an event (an implementation that sends them here too)
            if data.get("retcode") == TOKEN_REFUSED and not data.get("echo"):
                raise TokenRefused(str(data.get("message") or "token"))
            if data.get("echo") != echo:
                continue
            return _data(action, data) or {}

    try:
        yield call
    finally:
        ws.close()


CHANNEL = Channel(settings=OneBotSettings, build=build, checks=checks, pacing=QQ_PACING)
