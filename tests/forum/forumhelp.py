"""A forum without a network: a thread of floors and 楼中楼 replies answered as 贴吧 would,
as serialised protobuf responses (PbPageResIdl for pages of floors, PbFloorResIdl for a
floor's replies) handed to a real aiotieba Client through its transport (`NetCore.send`),
so aiotieba's own parsers, and its `.err` handling, read them."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import aiohttp
import aiotieba
from aiotieba.api.get_comments.protobuf import PbFloorReqIdl_pb2, PbFloorResIdl_pb2
from aiotieba.api.get_posts.protobuf import PbPageReqIdl_pb2, PbPageResIdl_pb2

TID = 8123456789
JUDGE_ACCOUNT = 999


@dataclass
class Reply:
    pid: int
    author: int
    at: datetime
    text: str


@dataclass
class Floor:
    pid: int
    floor: int
    author: int
    at: datetime
    text: str
    replies: list[Reply] = field(default_factory=list)


class FakeForum:
    """Thread TID: floor 1 is the judge's opening post. `accounts`: user id -> 马甲."""

    def __init__(self, accounts: dict[int, str]) -> None:
        self.accounts = {JUDGE_ACCOUNT: "法官号", **accounts}
        self.floors: list[Floor] = []
        self.pids = itertools.count(150_000_000_001)
        self.fail: str | None = None  # "server": an errorno; "network": the send raises
        self.fail_comments = False
        self.requests: list[str] = []
        self.rn = 30

    # the thread --------------------------------------------------------------------------------
    def post(self, author: int, at: datetime, text: str) -> Floor:
        f = Floor(next(self.pids), len(self.floors) + 1, author, at, text)
        self.floors.append(f)
        return f

    def reply(self, floor: Floor, author: int, at: datetime, text: str) -> Reply:
        r = Reply(next(self.pids), author, at, text)
        floor.replies.append(r)
        return r

    def delete(self, floor: Floor) -> None:
        self.floors.remove(floor)

    # the responses -----------------------------------------------------------------------------
    def _user(self, proto: Any, uid: int) -> None:
        proto.id = uid
        proto.name = f"user{uid}"
        proto.name_show = self.accounts.get(uid, f"路人{uid}")
        proto.portrait = f"tb.1.{uid:08x}"

    def page(self, tid: int, pn: int, rn: int) -> bytes:
        res = PbPageResIdl_pb2.PbPageResIdl()
        if self.fail == "server":
            res.error.errorno = 4
            res.error.errmsg = "服务繁忙"
            return res.SerializeToString()
        data = res.data
        data.thread.id = tid
        data.thread.author_id = JUDGE_ACCOUNT
        data.forum.id = 1
        data.forum.name = "狼人杀"
        total = max(1, -(-len(self.floors) // rn))
        chunk = self.floors[(pn - 1) * rn:pn * rn]
        authors: set[int] = set()
        for f in chunk:
            p = data.post_list.add()
            p.id, p.floor, p.time, p.author_id = f.pid, f.floor, int(f.at.timestamp()), f.author
            p.sub_post_number = len(f.replies)
            frag = p.content.add()
            frag.type, frag.text = 0, f.text
            authors.add(f.author)
        for uid in sorted(authors):  # user_list holds every author (aiotieba looks them up)
            self._user(data.user_list.add(), uid)
        data.page.current_page, data.page.total_page = pn, total
        data.page.page_size = rn
        data.page.has_more = int(pn < total)
        data.page.has_prev = int(pn > 1)
        return res.SerializeToString()

    def comments(self, tid: int, pid: int, pn: int) -> bytes:
        res = PbFloorResIdl_pb2.PbFloorResIdl()
        if self.fail_comments:
            res.error.errorno = 1989002
            res.error.errmsg = "加载数据失败"
            return res.SerializeToString()
        floor = next(f for f in self.floors if f.pid == pid)
        data = res.data
        data.thread.id = tid
        data.post.id, data.post.floor = floor.pid, floor.floor
        size = 10
        total = max(1, -(-len(floor.replies) // size))
        for r in floor.replies[(pn - 1) * size:pn * size]:
            c = data.subpost_list.add()
            c.id, c.time, c.author_id = r.pid, int(r.at.timestamp()), r.author
            self._user(c.author, r.author)
            frag = c.content.add()
            frag.type, frag.text = 0, r.text
        data.page.current_page, data.page.total_page = pn, total
        data.page.page_size = size
        data.page.total_count = len(floor.replies)
        return res.SerializeToString()

    # the transport -----------------------------------------------------------------------------
    async def send(self, request: aiohttp.ClientRequest, *_: Any) -> bytes:
        path = request.url.path
        self.requests.append(path)
        if self.fail == "network":
            raise aiohttp.ClientConnectionError("connection reset")
        body = _proto_bytes(request)
        if path.endswith("/pb/page"):
            req = PbPageReqIdl_pb2.PbPageReqIdl()
            req.ParseFromString(body)
            assert not req.data.with_floor  # no login, so no with_comments
            self.rn = req.data.rn
            return self.page(req.data.kz, req.data.pn, req.data.rn)
        if path.endswith("/pb/floor"):
            freq = PbFloorReqIdl_pb2.PbFloorReqIdl()
            freq.ParseFromString(body)
            return self.comments(freq.data.kz, freq.data.pid, freq.data.pn)
        raise AssertionError(f"the bot asked the forum for {path}: it only reads threads")

    def client(self) -> aiotieba.Client:
        forum = self

        class Client(aiotieba.Client):
            async def __aenter__(self) -> Client:
                await super().__aenter__()
                self._http_core.net_core.send = forum.send  # type: ignore[method-assign]
                return self

        return Client()


def _proto_bytes(request: aiohttp.ClientRequest) -> bytes:
    """The protobuf inside aiotieba's multipart request body."""
    writer = request.body
    parts = getattr(writer, "_parts", None)
    if parts:
        return bytes(parts[0][0]._value)
    raise AssertionError("unexpected request body")
