"""What every transport with a connection of its own does the same way (the chat platforms:
bot/transport/wechaty.py, bot/transport/onebot.py): `ConnectedTransport`. A channel's module
keeps only its platform's protocol (how it connects, reads, sends and acknowledges).

    platform ─ connection ─> asyncio loop thread ─> queue ─> worker thread ─> handler(Incoming)
    any other thread: a send, a call ─> run_coroutine_threadsafe ─> the loop ─> platform

- **Two threads.** The connection lives on an asyncio loop in a thread of its own. What it
  receives is queued (`_enqueue`: a message, or a callback such as `on_reconnect`), and one
  worker thread hands each message to the handler, or runs the callback, in arrival order and
  off the loop (the handler does database work). `_done(message, committed)` tells the channel
  when the handler is through with a message: committed (it returned) or not (it raised);
  `_drained()` when nothing else is queued (QQ keeps its catch-up's mark there).
- **Supervision.** The channel's `_connect()` holds one connection until it ends; then
  `_teardown()`, and it is tried again after an exponential backoff with jitter (from
  `reconnect_min` doubling to `reconnect_max`, back to the start after a login), until `stop`.
  A channel calls `_logged_in()` at each login: after every one but the first, `on_reconnect`
  is queued.
- **Calls** from any thread but the loop's (`_run`): a coroutine run on the loop and waited
  for; `Interrupted` once the bot is stopping, `Refused` when not connected within
  `connect_wait`, without an answer within `timeout`, or on a failure (`_failure` may say
  otherwise: WeChat's unimplemented call is `Unsupported`).
- **Pacing** (`_pace`): a send first waits for the pacer's turn (not counted in its timeout);
  a stop ends the wait at once, before the send starts.
- **A key sent once** (`_sent_before`, `_remember`): an outbox key this process has delivered
  is not sent again (a resend after an answer lost on the way back).
- **The life cycle** the runner drives (bot/transport/__init__.py): `start`, `wait_ready`,
  `wait_settled`, `halt`, `stop`; and `wait_logins` for tests.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import queue
import random
import threading
import time
from abc import abstractmethod
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from bot.transport import Incoming, Interrupted, Refused, Transport, TransportError
from bot.transport.pacing import Pacer

log = logging.getLogger(__name__)
T = TypeVar("T")
DELIVERED_KEYS = 20_000  # outbox keys remembered as sent (a day of sends, and more)


def epoch(value: object) -> datetime | None:
    """A message's time as a platform gives it: epoch seconds, or milliseconds (some puppets,
    some OneBot implementations), read as either, as a number or as text (NapCat's recent
    contacts); None when it is none, or no time at all (a malformed event counts as received
    now, it never ends the connection)."""
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or not value:
        return None
    seconds = value / 1000 if value > 10**11 else value
    try:
        return datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None


class ConnectedTransport(Transport):
    """`where`: the platform's address, as logs and refusals name it; `label`: the channel's
    name in logs and thread names. `quiet`: how long no message may have arrived before
    `wait_settled` believes that what the platform kept has all come (a platform that says
    when it has handed everything over: 0)."""

    label = "transport"
    quiet = 0.0

    def __init__(self, where: str, *, handler: Callable[[Incoming], None] | None = None,
                 pacer: Pacer | None = None, timeout: float = 30.0, connect_wait: float = 2.0,
                 reconnect_min: float = 0.5, reconnect_max: float = 30.0,
                 replay_window: timedelta = timedelta(hours=24)) -> None:
        self.where = where
        self.handler = handler
        self.pacer = pacer  # None: no pacing (tests); `wolfjudge run` always paces
        self.timeout = timeout
        self.connect_wait = connect_wait
        self.reconnect_min = reconnect_min
        self.reconnect_max = reconnect_max
        self.replay_window = replay_window
        self.logins = 0  # logins so far (the first connection's, then each reconnect's)
        self.started_at: datetime | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: threading.Thread | None = None
        self._worker: threading.Thread | None = None
        self._task: asyncio.Task[None] | None = None
        self._queue: queue.Queue[Incoming | Callable[[], object] | None] = queue.Queue()
        self._ready = threading.Event()  # logged in on a live connection
        self._stopping = threading.Event()
        self._halted = threading.Event()  # no new send starts (the bot is stopping)
        self._cond = threading.Condition()
        self._pending = 0  # messages and callbacks queued or being handled
        self._arrived = time.monotonic()  # when the last message came (`quiet`)
        self._delivered: OrderedDict[str, None] = OrderedDict()  # outbox keys sent

    # what a channel provides ---------------------------------------------------------------------
    @abstractmethod
    async def _connect(self) -> None:
        """One connection, on the loop, until it ends (an exception: it failed)."""

    @abstractmethod
    async def _teardown(self) -> None:
        """On the loop, after each connection: not ready, what it held let go."""

    def _starting(self) -> None:
        """In `start`, before the threads: what the channel sets up for a run."""

    def _done(self, message: Incoming, committed: bool) -> None:
        """On the worker thread: the handler is through with `message`, `committed` (it
        returned) or not (it raised; or there is no handler)."""

    def _drained(self) -> None:
        """On the worker thread, after `_done`: nothing else is queued or being handled (a
        channel that keeps its place keeps it here)."""

    def _connection_failed(self, exc: Exception) -> None:
        """A connection ended by `exc` (it is tried again)."""
        log.warning("%s: connection to %s failed: %s: %s", self.label, self.where,
                    type(exc).__name__, exc)

    def _failure(self, what: str, exc: Exception) -> TransportError:
        """What a call that raised `exc` raises (a `Refused` with its first line)."""
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        return Refused(f"{what}: {type(exc).__name__}: {first}")

    # life cycle ---------------------------------------------------------------------------------
    def start(self) -> None:
        """Connect in the background (loop and worker threads); return at once."""
        if self._loop_thread is not None:
            raise RuntimeError("already started")
        self.started_at = datetime.now(UTC)
        self._starting()
        self._stopping.clear()
        self._worker = threading.Thread(target=self._work, name=f"{self.label}-worker",
                                        daemon=True)
        self._worker.start()
        loop = asyncio.new_event_loop()
        self._loop = loop
        started = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            self._task = loop.create_task(self._supervise())
            started.set()
            try:
                loop.run_until_complete(self._task)
            except asyncio.CancelledError:
                pass
            finally:
                # As asyncio.run ends: what the library left waiting is cancelled and let
                # finish before the loop closes (else a pending `get` complains at exit).
                pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
                for t in pending:
                    t.cancel()
                with contextlib.suppress(Exception):
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                    loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._loop_thread = threading.Thread(target=run, name=f"{self.label}-loop", daemon=True)
        self._loop_thread.start()
        started.wait()

    def stop(self, timeout: float = 10.0) -> None:
        """Disconnect, hand what is queued to the handler (within `timeout`), stop both
        threads."""
        self._stopping.set()
        loop, task = self._loop, self._task
        if loop is not None and task is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(task.cancel)
        if self._loop_thread is not None:
            self._loop_thread.join(timeout)
        self._queue.put(None)
        if self._worker is not None and self._worker is not threading.current_thread():
            self._worker.join(timeout)
        self._loop_thread = self._worker = None
        self._ready.clear()

    def halt(self) -> None:
        """No new send starts from now on (a pacing wait ends with `Interrupted`); the one in
        flight finishes. The first step of a clean stop; safe from a signal handler."""
        self._halted.set()

    @property
    def connected(self) -> bool:
        """Logged in on a live connection."""
        return self._ready.is_set()

    def wait_ready(self, timeout: float | None = None) -> bool:
        return self._ready.wait(timeout)

    def wait_settled(self, limit: float = 30.0) -> bool:
        """Connected, and what the platform kept while the bot was away handled: nothing
        queued or being handled, and no message for `quiet` seconds. `run` starts the
        deadlines after this, so that a night action sent before a deadline that passed
        meanwhile counts. False after `limit` seconds, or once the bot is stopping."""
        end = time.monotonic() + limit
        if not self._ready.wait(limit):
            return False
        with self._cond:
            while not (self._stopping.is_set() or self._halted.is_set()):
                now = time.monotonic()
                if self._pending == 0 and now - self._arrived >= self.quiet:
                    return True
                if now >= end:
                    return False
                self._cond.wait(min(0.1, end - now))  # (a halt does not notify)
        return False

    def wait_logins(self, count: int, timeout: float) -> bool:
        """Until `count` logins have happened (2: the first reconnect) and the transport is
        ready; False on timeout."""
        with self._cond:
            return bool(self._cond.wait_for(
                lambda: self.logins >= count and self._ready.is_set(), timeout))

    def _set_ready(self, ready: bool) -> None:
        with self._cond:
            if ready:
                self._ready.set()
            else:
                self._ready.clear()
            self._cond.notify_all()

    def _logged_in(self) -> None:
        """A login on a new connection: counted; after every one but the first, the runner
        is told (`on_reconnect`, queued behind the messages before it)."""
        with self._cond:
            self.logins += 1
            first = self.logins == 1
            self._cond.notify_all()
        if not first:
            self._tell(self.on_reconnect)

    # supervision (on the loop) ------------------------------------------------------------------
    async def _supervise(self) -> None:
        attempt = 0
        while not self._stopping.is_set():
            before = self.logins
            try:
                await self._connect()
                log.warning("%s: the connection to %s ended", self.label, self.where)
            except asyncio.CancelledError:
                await self._teardown()
                raise
            except Exception as exc:  # a dropped, refused or broken connection: again
                self._connection_failed(exc)
            await self._teardown()
            if self._stopping.is_set():
                break
            if self.logins > before:
                attempt = 0
            delay = min(self.reconnect_max, self.reconnect_min * 2 ** attempt)
            delay *= 1 + random.uniform(0, 0.25)
            attempt += 1
            log.info("%s: reconnecting in %.1f s", self.label, delay)
            await asyncio.sleep(delay)

    def _on_loop(self, fn: Callable[..., None], *args: Any) -> None:
        """From another thread: `fn(*args)` on the loop (nothing once it has closed)."""
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: the bot stopped
                loop.call_soon_threadsafe(fn, *args)

    # the worker ---------------------------------------------------------------------------------
    def _enqueue(self, item: Incoming | Callable[[], object]) -> None:
        """For the worker: a message or a callback (`wait_settled` waits for both)."""
        with self._cond:
            self._pending += 1
        self._queue.put(item)

    def _tell(self, callback: Callable[..., object] | None, *args: Any) -> None:
        """`callback(*args)` on the worker, in order with the messages (None: nothing)."""
        if callback is not None:
            self._enqueue(lambda: callback(*args))

    def _received_at(self, sent: datetime | None) -> datetime | None:
        """When a message sent at `sent` counts: then (a night action sent while the bot was
        away keeps its time), never later than now; None when it is older than the replay
        window (history to drop, not a message to act on)."""
        now = datetime.now(UTC)
        if sent is None:
            return now
        if sent < now - self.replay_window:
            return None
        return min(sent, now)

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            committed = False
            try:
                if isinstance(item, Incoming):
                    if self.handler is not None:
                        self.handler(item)
                        committed = True  # the handler returns once the message is committed
                else:
                    item()
            except Exception:
                log.exception("%s: handling %r failed", self.label,
                              getattr(item, "msg_id", item))
            finally:
                # Before the count drops: once `wait_settled` is through, so are these.
                if isinstance(item, Incoming):
                    self._done(item, committed)
                with self._cond:
                    drained = self._pending == 1  # this one alone
                if drained:
                    self._drained()
                with self._cond:
                    self._pending -= 1
                    self._cond.notify_all()

    # calls from other threads -------------------------------------------------------------------
    def _run(self, what: str, make: Callable[[], Awaitable[T]],
             timeout: float | None = None) -> T:
        """`make()` awaited on the loop, from any other thread, for at most `timeout` seconds
        (None: `self.timeout`)."""
        loop = self._loop
        if loop is None or self._stopping.is_set() or self._halted.is_set():
            raise Interrupted(f"{what}: the transport is stopping")
        if self._loop_thread is threading.current_thread():
            raise RuntimeError(f"{type(self).__name__} blocks: call it off the loop thread")
        if not self._ready.wait(self.connect_wait):
            raise Refused(f"{what}: not connected to {self.where}")
        limit = self.timeout if timeout is None else timeout

        async def run() -> T:
            return await asyncio.wait_for(make(), limit)

        future = asyncio.run_coroutine_threadsafe(run(), loop)
        try:
            return future.result(limit + 1)
        except concurrent.futures.TimeoutError as exc:
            future.cancel()
            raise Refused(f"{what}: no answer within {limit:g} s (it may have happened)"
                          ) from exc
        except TransportError:
            raise
        except Exception as exc:  # the connection went away under the call, or it failed
            raise self._failure(what, exc) from exc

    def _pace(self, room: str | None = None, *, creation: bool = False) -> None:
        """Wait for the pacer's turn to send (in `room`, or to make a room: `creation`); not
        counted in the send's own timeout (a long queue is not a failed send)."""
        loop = self._loop
        if self.pacer is None or loop is None:
            return
        wait = self.pacer.before_create_room() if creation else self.pacer.before_send(room)
        future = asyncio.run_coroutine_threadsafe(wait, loop)
        while True:  # a stop ends the wait at once (the send has not started)
            try:
                future.result(0.1)
                return
            except concurrent.futures.TimeoutError:
                if self._halted.is_set() or self._stopping.is_set():
                    future.cancel()
                    raise Interrupted("the transport is stopping") from None

    def _sent_before(self, key: str | None) -> bool:
        """This process delivered `key` already (its answer was lost on the way back)."""
        return key is not None and key in self._delivered

    def _remember(self, key: str | None) -> None:
        """`key` was delivered."""
        if key is not None:
            self._delivered[key] = None
            while len(self._delivered) > DELIVERED_KEYS:
                self._delivered.popitem(last=False)
