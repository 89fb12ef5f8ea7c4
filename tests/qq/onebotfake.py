"""A OneBot v11 implementation of our own, for tests: NapCat as a bot sees it, on a real
WebSocket on loopback (the `websockets` server, in a thread of its own).

What it speaks, as NapCat 4 does (packages/napcat-onebot: network/websocket-server.ts
and the actions): the universal forward WebSocket (API calls and events on one
connection, any path but `/api`, which answers calls and pushes no event); the token as
`Authorization: Bearer …` or `?access_token=…`, a wrong one answered after the handshake
with `{"status": "failed", "retcode": 1403, "message": "token验证失败"}` and a close; a
`meta_event` `lifecycle`/`connect` first on every connection, then a `heartbeat` every
`heartbeat` seconds (`status.online`); every answer is `{status, retcode, data, message,
wording, echo}` (`ok`/0, or `failed` with 1400 for bad parameters, 1404 for an unknown
action, 1200 when the action failed); message events carry both `message` (an array of
segments) and `raw_message` (CQ code, its text escaped); history
(`get_friend_msg_history`, `get_group_msg_history`: the latest `count`, or those at and
before `message_seq`, oldest first) holds both sides of a conversation, the bot's own
sends included. `get_recent_contact` (NapCat's own action: each conversation with its latest
message, `lastestMsg`, the newest first, at most `count`; `peerUin` and `msgTime` as strings,
`chatType` 1 for a friend, 2 for a group), or its absence (`lacks`: an implementation without
it, LLOneBot, answers 1404 as for any unknown action). A text of more than `MAX_TEXT`
characters is refused as QQ refuses it (retcode 1200).

Its world: users (friends of the bot or not), groups (made by a person: a bot account cannot
create one; the bot a member, an admin or the owner), friend requests. Realistic failures: a
DM to a non-friend fails (retcode 1200), a kick fails unless the bot is admin or owner, a post
fails in a group the bot is not in. While no bot is connected, what people send is kept in the
history only (as QQ does): a bot learns of it by asking for the history.

Tests drive it from their own thread: `dm`, `say`, `friend_request` as the people; `sent`,
`calls` to read what the bot did; `drop` (the connection cut), `stop`/`start` (NapCat
restarted, same port), `online` (the account logged out).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

T = TypeVar("T")
BOT_QQ = "3000000001"
APP = ("NapCat.Onebot", "4.8.95")
MAX_TEXT = 4500  # the longest text QQ delivers in one message (longer: refused)


def cq_escape(text: str, *, param: bool = False) -> str:
    out = text.replace("&", "&amp;").replace("[", "&#91;").replace("]", "&#93;")
    return out.replace(",", "&#44;") if param else out


def cq_unescape(text: str) -> str:
    return (text.replace("&#44;", ",").replace("&#91;", "[").replace("&#93;", "]")
            .replace("&amp;", "&"))


CQ = re.compile(r"\[CQ:([a-zA-Z0-9_-]+)((?:,[^,\]]*)*)\]")


def cq_decode(text: str) -> list[dict[str, Any]]:
    """A CQ-code string as segments (what NapCat does with a string sent without
    `auto_escape`)."""
    out: list[dict[str, Any]] = []
    pos = 0
    for m in CQ.finditer(text):
        if m.start() > pos:
            out.append({"type": "text", "data": {"text": cq_unescape(text[pos:m.start()])}})
        data = {}
        for part in filter(None, m.group(2).split(",")):
            k, _, v = part.partition("=")
            data[k] = cq_unescape(v)
        out.append({"type": m.group(1), "data": data})
        pos = m.end()
    if pos < len(text):
        out.append({"type": "text", "data": {"text": cq_unescape(text[pos:])}})
    return out


def cq_encode(segments: list[dict[str, Any]]) -> str:
    """Segments as a `raw_message` (CQ code, text escaped)."""
    parts = []
    for seg in segments:
        if seg["type"] == "text":
            parts.append(cq_escape(str(seg["data"].get("text", ""))))
        else:
            params = "".join(f",{k}={cq_escape(str(v), param=True)}"
                             for k, v in seg.get("data", {}).items())
            parts.append(f"[CQ:{seg['type']}{params}]")
    return "".join(parts)


def text_of(segments: list[dict[str, Any]]) -> str:
    return "".join(str(s["data"].get("text", "")) for s in segments if s["type"] == "text")


@dataclass
class User:
    qq: str
    nickname: str
    friend: bool = True


@dataclass
class Group:
    group_id: str
    name: str
    members: dict[str, str] = field(default_factory=dict)  # qq -> role (owner/admin/member)


@dataclass
class Sent:
    """One message the bot sent: `kind` dm|post, `to` the user or group, `text` what arrived
    (the text segments), `segments` as QQ holds them."""

    seq: int
    kind: str
    to: str
    text: str
    segments: list[dict[str, Any]]
    auto_escape: bool
    at: float


class FakeOneBot:
    def __init__(self, *, token: str = "onebot-secret", self_id: str = BOT_QQ,
                 nickname: str = "狼人杀法官", heartbeat: float = 30.0,
                 port: int = 0) -> None:
        self.token = token
        self.self_id = self_id
        self.nickname = nickname
        self.heartbeat = heartbeat
        self.port = port
        self.online = True  # the QQ account logged in (get_status, heartbeats)
        self.users: dict[str, User] = {}
        self.groups: dict[str, Group] = {}
        self.requests: dict[str, tuple[str, str]] = {}  # flag -> (user, comment)
        self.history: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.sent: list[Sent] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.connections = 0  # accepted, token checked (the universal endpoint)
        self.api_connections = 0  # on the API-only endpoint (`/api`: no events)
        self.refused = 0  # connections refused for their token
        self.fail: dict[str, int] = {}  # action -> how many next calls fail (retcode 1200)
        self.lacks: set[str] = set()  # actions this implementation does not have (1404)
        self.now: Callable[[], float] = time.time  # the message times (a test may set it)
        self._ids = itertools.count(1001)
        self._lock = threading.RLock()
        self._clients: list[ServerConnection] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: Server | None = None
        self._beat: asyncio.Task[None] | None = None
        self._changed = threading.Condition(self._lock)

    # life cycle ---------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Listen (again, on the same port after a stop)."""
        started = threading.Event()
        loop = asyncio.new_event_loop()
        self._loop = loop

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(self._listen())
            started.set()
            loop.run_forever()
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            with contextlib.suppress(Exception):
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()

        self._thread = threading.Thread(target=run, name="fake-onebot", daemon=True)
        self._thread.start()
        if not started.wait(10):
            raise RuntimeError("the fake OneBot did not start")

    async def _listen(self) -> None:
        self._server = await serve(self._serve, "127.0.0.1", self.port, ping_interval=None,
                                   compression=None)
        self.port = int(list(self._server.sockets)[0].getsockname()[1])
        self._beat = asyncio.get_running_loop().create_task(self._heartbeats())

    def stop(self) -> None:
        """NapCat stops: every connection closed, the port free (history and friends stay)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return

        async def down() -> None:
            if self._beat is not None:
                self._beat.cancel()
            if self._server is not None:
                self._server.close()
                await self._server.wait_closed()

        asyncio.run_coroutine_threadsafe(down(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        self._loop = self._thread = self._server = None
        with self._lock:
            self._clients = []

    def drop(self) -> None:
        """The connection cut without a goodbye (a network fault): the bot must reconnect."""
        async def cut() -> None:
            for ws in list(self._clients):
                ws.transport.abort()
        self._run(cut())

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        assert self._loop is not None, "not started"
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(10)

    @property
    def connected(self) -> int:
        with self._lock:
            return len(self._clients)

    def wait(self, what: Callable[[], bool], timeout: float = 15.0) -> bool:
        """Until `what()` holds (checked at each change the fake sees), or the timeout."""
        with self._changed:
            return self._changed.wait_for(what, timeout)

    def _touch(self) -> None:
        with self._changed:
            self._changed.notify_all()

    # the world ----------------------------------------------------------------------------------
    def user(self, qq: str, nickname: str = "", *, friend: bool = True) -> str:
        with self._lock:
            self.users[qq] = User(qq, nickname or f"用户{qq[-4:]}", friend)
        return qq

    def group(self, group_id: str, name: str, members: list[str], *,
              bot: str = "member", owner: str | None = None) -> str:
        """A group made by a person (`owner`, else the first member), the bot in it as
        `bot` (member, admin, owner)."""
        with self._lock:
            g = Group(group_id, name)
            for m in members:
                g.members[m] = "member"
            first = owner or (members[0] if members else None)
            if first is not None and bot != "owner":
                g.members[first] = "owner"
            g.members[self.self_id] = bot
            self.groups[group_id] = g
        return group_id

    def members(self, group_id: str) -> list[str]:
        with self._lock:
            return [m for m in self.groups[group_id].members if m != self.self_id]

    # the people ---------------------------------------------------------------------------------
    def dm(self, user: str, message: str | list[dict[str, Any]]) -> str:
        """`user` sends the bot a private message (text, or segments); its message_id. Kept
        in the history; pushed to the connected bot."""
        return self._incoming("private", user, None, message)

    def say(self, user: str, group_id: str, message: str | list[dict[str, Any]]) -> str:
        return self._incoming("group", user, group_id, message)

    def _incoming(self, kind: str, user: str, group_id: str | None,
                  message: str | list[dict[str, Any]]) -> str:
        segments = ([{"type": "text", "data": {"text": message}}] if isinstance(message, str)
                    else message)
        with self._lock:
            u = self.users[user]
            mid = next(self._ids)
            ev: dict[str, Any] = {
                "self_id": int(self.self_id), "user_id": int(user), "time": int(self.now()),
                "message_id": mid, "message_seq": mid, "real_id": mid,
                "real_seq": str(mid * 7), "message_type": kind,
                "sender": {"user_id": int(user), "nickname": u.nickname, "card": ""},
                "raw_message": cq_encode(segments), "font": 14,
                "sub_type": "friend" if kind == "private" else "normal",
                "message": segments, "message_format": "array", "post_type": "message"}
            if group_id is not None:
                g = self.groups[group_id]
                assert user in g.members, f"{user} is not in group {group_id}"
                ev["group_id"] = int(group_id)
                ev["group_name"] = g.name
                ev["sender"]["role"] = g.members[user]
                key = ("group", group_id)
            else:
                if not u.friend:
                    ev["sub_type"] = "group"  # a temporary session (not a friend)
                key = ("private", user)
            self.history.setdefault(key, []).append(ev)
        self._push(ev)
        return str(mid)

    def friend_request(self, user: str, comment: str) -> str:
        """`user` asks to become the bot's friend with `comment` (验证消息); the flag."""
        flag = str(int(self.now() * 1000) + len(self.requests))
        with self._lock:
            self.requests[flag] = (user, comment)
        self._push({"time": int(self.now()), "self_id": int(self.self_id),
                    "post_type": "request", "request_type": "friend", "user_id": int(user),
                    "comment": comment, "flag": flag})
        return flag

    def _push(self, event: dict[str, Any]) -> None:
        if self._loop is None:
            return
        data = json.dumps(event, ensure_ascii=False)

        async def send() -> None:
            for ws in list(self._clients):
                with contextlib.suppress(ConnectionClosed):
                    await ws.send(data)
        self._run(send())

    # what the bot did ---------------------------------------------------------------------------
    def dms_to(self, user: str) -> list[str]:
        with self._lock:
            return [s.text for s in self.sent if s.kind == "dm" and s.to == user]

    def posts_in(self, group_id: str) -> list[str]:
        with self._lock:
            return [s.text for s in self.sent if s.kind == "post" and s.to == group_id]

    def called(self, action: str) -> list[dict[str, Any]]:
        with self._lock:
            return [p for a, p in self.calls if a == action]

    # the server ---------------------------------------------------------------------------------
    async def _serve(self, ws: ServerConnection) -> None:
        request = ws.request
        assert request is not None
        query = parse_qs(urlsplit(request.path).query)
        given = (query.get("access_token") or [""])[0] or (
            request.headers.get("Authorization", "").split("Bearer ")[-1])
        if self.token and given != self.token:
            self.refused += 1
            await ws.send(json.dumps(_answer(None, "failed", 1403, "token验证失败", None),
                                     ensure_ascii=False))
            await ws.close()
            self._touch()
            return
        api_only = urlsplit(request.path).path.rstrip("/") == "/api"  # no events there
        with self._lock:
            if api_only:
                self.api_connections += 1
            else:
                self._clients.append(ws)
                self.connections += 1
        self._touch()
        try:
            if not api_only:
                await ws.send(json.dumps({"time": int(self.now()), "self_id": int(self.self_id),
                                          "post_type": "meta_event",
                                          "meta_event_type": "lifecycle", "sub_type": "connect"}))
            async for frame in ws:
                await ws.send(json.dumps(self._api(frame), ensure_ascii=False))
                self._touch()
        except ConnectionClosed:
            pass
        finally:
            with self._lock:
                if ws in self._clients:
                    self._clients.remove(ws)
            self._touch()

    async def _heartbeats(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat)
            beat = json.dumps({"time": int(self.now()), "self_id": int(self.self_id),
                               "post_type": "meta_event", "meta_event_type": "heartbeat",
                               "status": {"online": self.online, "good": True},
                               "interval": int(self.heartbeat * 1000)})
            for ws in list(self._clients):
                with contextlib.suppress(ConnectionClosed):
                    await ws.send(beat)

    def _api(self, frame: str | bytes) -> dict[str, Any]:
        try:
            req = json.loads(frame)
            action, params, echo = str(req["action"]), req.get("params") or {}, req.get("echo")
        except (ValueError, KeyError, TypeError):
            return _answer(None, "failed", 1400, "json解析失败,请检查数据格式", None)
        with self._lock:
            self.calls.append((action, params))
            handler = getattr(self, f"_do_{action}", None)
            if handler is None or action in self.lacks:
                return _answer(None, "failed", 1404, f"不支持的API {action}", echo)
            if self.fail.get(action, 0) > 0:
                self.fail[action] -= 1
                return _answer(None, "failed", 1200, "Timeout: NTEvent serviceAndMethod", echo)
            try:
                return _answer(handler(params), "ok", 0, "", echo)
            except KeyError as exc:
                return _answer(None, "failed", 1400, f"Key: {exc.args[0]}, Message: 缺少参数",
                               echo)
            except _Failed as exc:
                return _answer(None, "failed", 1200, str(exc), echo)

    # actions (called under the lock) -------------------------------------------------------
    def _do_get_login_info(self, _p: dict[str, Any]) -> dict[str, Any]:
        return {"user_id": int(self.self_id), "nickname": self.nickname}

    def _do_get_status(self, _p: dict[str, Any]) -> dict[str, Any]:
        return {"online": self.online, "good": True, "stat": {}}

    def _do_get_version_info(self, _p: dict[str, Any]) -> dict[str, Any]:
        return {"app_name": APP[0], "protocol_version": "v11", "app_version": APP[1]}

    def _do_get_friend_list(self, _p: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"user_id": int(u.qq), "nickname": u.nickname, "remark": ""}
                for u in self.users.values() if u.friend]

    def _do_get_group_list(self, _p: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"group_id": int(g.group_id), "group_name": g.name,
                 "member_count": len(g.members), "max_member_count": 200,
                 "group_all_shut": 0, "group_remark": ""}
                for g in self.groups.values() if self.self_id in g.members]

    def _group(self, p: dict[str, Any]) -> Group:
        g = self.groups.get(str(p["group_id"]))
        if g is None or self.self_id not in g.members:
            raise _Failed(f"Failed to get group member list for group {p['group_id']}")
        return g

    def _do_get_group_info(self, p: dict[str, Any]) -> dict[str, Any]:
        g = self._group(p)
        return {"group_id": int(g.group_id), "group_name": g.name,
                "member_count": len(g.members), "max_member_count": 200}

    def _member(self, g: Group, qq: str) -> dict[str, Any]:
        user = self.users.get(qq)
        return {"group_id": int(g.group_id), "user_id": int(qq),
                "nickname": user.nickname if user else self.nickname, "card": "",
                "role": g.members[qq], "join_time": 0, "last_sent_time": 0}

    def _do_get_group_member_list(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        g = self._group(p)
        return [self._member(g, qq) for qq in g.members]

    def _do_get_group_member_info(self, p: dict[str, Any]) -> dict[str, Any]:
        g = self._group(p)
        qq = str(p["user_id"])
        if qq not in g.members:
            raise _Failed("群成员不存在")
        return self._member(g, qq)

    def _do_set_group_kick(self, p: dict[str, Any]) -> None:
        g = self._group(p)
        qq = str(p["user_id"])
        if g.members.get(self.self_id) not in ("admin", "owner"):
            raise _Failed("kickMember failed: 权限不足")
        if g.members.get(qq) in ("admin", "owner") and g.members[self.self_id] != "owner":
            raise _Failed("kickMember failed: 权限不足")
        g.members.pop(qq, None)

    def _do_set_friend_add_request(self, p: dict[str, Any]) -> None:
        found = self.requests.pop(str(p["flag"]), None)
        if found is None:
            raise _Failed("No such request")
        approve = str(p.get("approve", True)).lower() != "false"
        if approve:
            user = self.users.setdefault(found[0], User(found[0], f"用户{found[0][-4:]}"))
            user.friend = True
            if self._loop is not None:
                ev = {"time": int(self.now()), "self_id": int(self.self_id),
                      "post_type": "notice", "notice_type": "friend_add",
                      "user_id": int(found[0])}
                self._loop.call_soon(lambda: asyncio.ensure_future(self._push_async(ev)))

    async def _push_async(self, event: dict[str, Any]) -> None:
        data = json.dumps(event, ensure_ascii=False)
        for ws in list(self._clients):
            with contextlib.suppress(ConnectionClosed):
                await ws.send(data)

    def _send(self, kind: str, to: str, p: dict[str, Any]) -> dict[str, Any]:
        message = p["message"]
        escape = str(p.get("auto_escape", False)).lower() == "true"
        if isinstance(message, str):
            segments = ([{"type": "text", "data": {"text": message}}] if escape
                        else cq_decode(message))
        elif isinstance(message, dict):
            segments = [message]
        else:
            segments = list(message)
        if len(text_of(segments)) > MAX_TEXT:
            raise _Failed("发送消息失败：消息过长")
        mid = next(self._ids)
        self.sent.append(Sent(len(self.sent) + 1, kind, to, text_of(segments), segments,
                              escape, self.now()))
        key = ("private", to) if kind == "dm" else ("group", to)
        ev = {"self_id": int(self.self_id), "user_id": int(self.self_id),
              "time": int(self.now()), "message_id": mid, "message_seq": mid,
              "real_id": mid, "message_type": "private" if kind == "dm" else "group",
              "sender": {"user_id": int(self.self_id), "nickname": self.nickname},
              "raw_message": cq_encode(segments), "font": 14, "message": segments,
              "message_format": "array", "post_type": "message_sent"}
        if kind == "post":
            ev["group_id"] = int(to)
        self.history.setdefault(key, []).append(ev)
        return {"message_id": mid}

    def _do_send_private_msg(self, p: dict[str, Any]) -> dict[str, Any]:
        qq = str(p["user_id"])
        user = self.users.get(qq)
        if user is None or not user.friend:
            raise _Failed("发送消息失败：对方不是你的好友")
        return self._send("dm", qq, p)

    def _do_send_group_msg(self, p: dict[str, Any]) -> dict[str, Any]:
        g = self._group(p)
        return self._send("post", g.group_id, p)

    def _do_send_msg(self, p: dict[str, Any]) -> dict[str, Any]:
        if p.get("message_type") == "group" or ("group_id" in p and "user_id" not in p):
            return self._do_send_group_msg(p)
        return self._do_send_private_msg(p)

    def _history(self, key: tuple[str, str], p: dict[str, Any]) -> dict[str, Any]:
        msgs = self.history.get(key, [])
        count = int(p.get("count", 20))
        seq = str(p.get("message_seq") or "")
        if seq and seq != "0":
            at = [m for m in msgs if m["message_seq"] <= int(seq)]
            page = at[-count:]
        else:
            page = msgs[-count:]
        if not page:
            raise _Failed(f"消息{p.get('message_seq')}不存在")
        return {"messages": [{**m, "post_type": "message"} for m in page]}

    def _do_get_recent_contact(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        """NapCat's recent conversations: each with its latest message, the newest first."""
        latest = sorted(((msgs[-1], kind, peer) for (kind, peer), msgs in self.history.items()
                         if msgs), key=lambda x: (x[0]["time"], x[0]["message_id"]),
                        reverse=True)
        out = []
        for ev, kind, peer in latest[:int(p.get("count", 10))]:
            name = (self.groups[peer].name if kind == "group" and peer in self.groups
                    else self.users[peer].nickname if peer in self.users else "")
            out.append({"lastestMsg": {**ev, "post_type": "message"}, "peerUin": peer,
                        "remark": "", "msgTime": str(ev["time"]),
                        "chatType": 2 if kind == "group" else 1,
                        "msgId": str(ev["message_id"] * 1000003),
                        "sendNickName": ev["sender"].get("nickname", ""),
                        "sendMemberName": "", "peerName": name})
        return out

    def _do_get_friend_msg_history(self, p: dict[str, Any]) -> dict[str, Any]:
        qq = str(p["user_id"])
        if qq not in self.users:
            raise _Failed(f"记录{qq}不存在")
        return self._history(("private", qq), p)

    def _do_get_group_msg_history(self, p: dict[str, Any]) -> dict[str, Any]:
        g = self._group(p)
        return self._history(("group", g.group_id), p)


class _Failed(Exception):
    """An action that failed the way NapCat reports it (retcode 1200)."""


def _answer(data: Any, status: str, retcode: int, message: str, echo: Any) -> dict[str, Any]:
    return {"status": status, "retcode": retcode, "data": data, "message": message,
            "wording": message, "echo": echo, "stream": "normal-action"}
