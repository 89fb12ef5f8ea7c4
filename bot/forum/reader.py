"""Reading a 贴吧 vote thread, read-only and without login, with aiotieba (4.8).

`get_posts` gives the thread's floors page by page (30 a page, without `with_comments`: that
needs a login and gives only some replies); `get_comments` gives each floor's 楼中楼 replies,
page by page. aiotieba does not raise: a failed call returns an empty result with `.err` set.
Any such error makes the whole read *unknown* (`ThreadRead.error`): an empty page is never
taken for "no votes", and a part of a thread is never taken for the whole of it.

The bot never posts to the forum (posting gets accounts banned): nothing here writes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

MAX_PAGES = 200  # 6000 floors: far more than a vote thread has; a bound on a runaway read

TID = re.compile(r"\d{5,20}")


@dataclass(frozen=True)
class ForumPost:
    """A floor (`sub` 0) or its `sub`-th 楼中楼 reply, as the forum gave it."""

    pid: int
    floor: int
    sub: int
    parent_pid: int | None
    author_id: int
    user_name: str
    nick_name: str
    create_time: int  # unix seconds
    text: str


@dataclass(frozen=True)
class ThreadRead:
    """A whole read of a thread, or `error` (then `posts` is whatever was read: not used)."""

    tid: int
    posts: tuple[ForumPost, ...] = ()
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class ThreadSource(Protocol):
    def read(self, tid: int) -> ThreadRead:
        """The thread as it is now."""
        ...


def thread_id(text: str) -> int | None:
    """A thread id from what a judge pastes: `8123456789`, or a link to the thread
    (`https://tieba.baidu.com/p/8123456789?pn=2`)."""
    text = text.strip()
    if TID.fullmatch(text):
        return int(text)
    m = re.search(r"/p/(\d{5,20})", text)
    if m:
        return int(m.group(1))
    m = re.search(r"[?&]kz=(\d{5,20})", text)
    return int(m.group(1)) if m else None


def _error(result: Any) -> str | None:
    err = getattr(result, "err", None)
    return None if err is None else f"{type(err).__name__}: {err}"[:300]


def _names(user: Any) -> tuple[str, str]:
    return (str(getattr(user, "user_name", "") or ""),
            str(getattr(user, "nick_name_new", "") or getattr(user, "show_name", "") or ""))


async def read_thread(client: Any, tid: int) -> ThreadRead:
    """Every floor and every 楼中楼 reply of thread `tid`, through an open aiotieba Client."""
    out: list[ForumPost] = []
    for pn in range(1, MAX_PAGES + 1):
        page = await client.get_posts(tid, pn, rn=30)
        if (why := _error(page)) is not None:
            return ThreadRead(tid, tuple(out), why)
        for post in page:
            user, nick = _names(post.user)
            out.append(ForumPost(post.pid, post.floor, 0, None, post.author_id, user, nick,
                                 post.create_time, post.text))
            if post.reply_num > 0:
                got = await _replies(client, tid, post.pid, post.floor)
                if isinstance(got, str):
                    return ThreadRead(tid, tuple(out), got)
                out.extend(got)
        if not page.has_more:
            return ThreadRead(tid, tuple(out))
    return ThreadRead(tid, tuple(out), f"more than {MAX_PAGES} pages")


async def _replies(client: Any, tid: int, pid: int, floor: int) -> list[ForumPost] | str:
    out: list[ForumPost] = []
    for pn in range(1, MAX_PAGES + 1):
        page = await client.get_comments(tid, pid, pn)
        if (why := _error(page)) is not None:
            return why
        for c in page:
            user, nick = _names(c.user)
            out.append(ForumPost(c.pid, floor, len(out) + 1, pid, c.author_id, user, nick,
                                 c.create_time, c.text))
        if not page.has_more:
            return out
    return f"floor {floor}: more than {MAX_PAGES} pages of replies"


def _run(coro_factory: Callable[[], Any]) -> Any:
    """Run a coroutine to the end from sync code, also where an event loop runs already
    (a scheduler job, a transport's handler): then on a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro_factory())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(coro_factory())).result()


class TiebaSource:
    """The real forum, through aiotieba without an account. `client_factory` makes the
    (async context manager) client: aiotieba.Client by default; tests give one whose
    transport answers from built protobuf responses."""

    def __init__(self, client_factory: Callable[[], Any] | None = None) -> None:
        self.client_factory = client_factory

    def _client(self) -> Any:
        if self.client_factory is not None:
            return self.client_factory()
        import aiotieba

        return aiotieba.Client()

    def read(self, tid: int) -> ThreadRead:
        async def go() -> ThreadRead:
            try:
                async with self._client() as client:
                    return await read_thread(client, tid)
            except Exception as exc:  # aiotieba catches its own; this is anything else
                return ThreadRead(tid, (), f"{type(exc).__name__}: {exc}"[:300])

        result: ThreadRead = _run(go)
        return result
