"""Pages benchmark (issue 30, part 9): live pages under load, and a seat's page render.

    python bench/web.py                                  # 100 games, 1,200 open streams
    python bench/web.py --games 2 --commits 4 --renders 10   # tiny (tests/test_bench_web.py)

`--games` classic games are made in a fresh SQLite database (every seat bound to a contact, no
public room: the public announcements go by DM), and the pages are served by uvicorn on
loopback in a thread, as `wolfjudge run` serves them, with a chat bot whose deliveries wake the
pages (bot/web/live.py). Every seat's page opens its event stream (12 a game: 1,200 for 100
games), held by an asyncio client in another thread that notes when each `changed` event
arrives. Then `--commits` judge's yellow cards, one game after another, each through
`Service.submit` and the outbox's delivery: the carded seat is told by DM and every seat of
the game is told the card in public, so each commit concerns its game's 12 streams (and no
other: a stream of another game woken meanwhile is counted apart, none expected). A
commit's latency to a stream runs from the call to the event's arrival; p50/p95/max over all
(commit, stream) pairs.

A seat's page render: `--renders` GETs of seats' pages (random seats, while every stream is
open), from the request to the last byte; the baseline, in the same run on the same server:
the bare page (a refused link's page: the same template, middleware and link check, no game
read). p50/p99 of each and the ratio.

Never put a timed assertion in a test; this script reports, it does not judge.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import logging
import random
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from service import header, load  # noqa: E402

from bot.chat.bot import ChatBot  # noqa: E402
from bot.outbox import deliver  # noqa: E402
from bot.service import Service  # noqa: E402
from bot.store import migrate  # noqa: E402
from bot.transport.memory import MemoryTransport  # noqa: E402
from bot.web.app import create_app  # noqa: E402
from bot.web.links import Links  # noqa: E402
from engine.commands import JudgeCard  # noqa: E402

ROLES = ["wolf"] * 4 + ["seer", "witch", "guard", "cupid"] + ["villager"] * 4
START = date(2026, 12, 1)
NOW = datetime(2026, 12, 1, 8, 0)
JUDGE = "wx-judge"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


@contextlib.contextmanager
def served(app: Any) -> Iterator[int]:
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=_port(),
                                           access_log=False, log_level="warning",
                                           lifespan="off", timeout_graceful_shutdown=1,
                                           backlog=4096))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(400):
        if server.started:
            break
        time.sleep(0.025)  # (the server's start-up)
    try:
        yield server.config.port
    finally:
        server.should_exit = True
        thread.join(10)


class Streams:
    """The pages' event streams, held by an asyncio client in a thread of its own."""

    def __init__(self, port: int, paths: list[str]) -> None:
        self.port = port
        self.paths = paths
        self.arrived: dict[int, list[float]] = {i: [] for i in range(len(paths))}
        self.hello = 0
        self.lock = threading.Condition()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.tasks: list[Any] = []

    def start(self, timeout: float = 120.0) -> None:
        self.thread.start()
        for i, path in enumerate(self.paths):
            self.tasks.append(asyncio.run_coroutine_threadsafe(self._hold(i, path), self.loop))
        end = time.monotonic() + timeout
        with self.lock:
            while self.hello < len(self.paths) and time.monotonic() < end:
                self.lock.wait(0.5)
        if self.hello < len(self.paths):
            raise RuntimeError(f"only {self.hello} of {len(self.paths)} streams opened")

    async def _hold(self, i: int, path: str) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port, limit=2 ** 16)
        writer.write(f"GET {path} HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n"
                     "\r\n".encode())
        await writer.drain()
        try:
            while line := await reader.readline():
                if line.startswith(b"event: hello"):
                    with self.lock:
                        self.hello += 1
                        self.lock.notify_all()
                elif line.startswith(b"event: changed"):
                    at = time.perf_counter()
                    with self.lock:
                        self.arrived[i].append(at)
                        self.lock.notify_all()
        finally:
            writer.close()

    def wait(self, counts: dict[int, int], timeout: float = 30.0) -> bool:
        """Until stream i has more than counts[i] events, for each i given."""
        end = time.monotonic() + timeout
        with self.lock:
            while any(len(self.arrived[i]) <= n for i, n in counts.items()):
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self.lock.wait(left)
        return True

    def stop(self) -> None:
        async def close() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(close(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def get(port: int, path: str) -> tuple[int, float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    t0 = time.perf_counter()
    conn.request("GET", path)
    response = conn.getresponse()
    response.read()
    took = time.perf_counter() - t0
    conn.close()
    return response.status, took


def run(games: int, commits: int, renders: int, seed: int) -> dict[str, Any]:
    logging.getLogger("bot").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory(prefix="wolfjudge-bench-web-") as tmp:
        url = f"sqlite:///{tmp}/web.db"
        migrate(url)
        service = Service(url, judges=[JUDGE])
        bot = ChatBot(service, MemoryTransport(), judges=[JUDGE])
        codes = [f"W{n:03d}" for n in range(games)]
        for code in codes:
            service.create_game(game_id=code, ruleset="classic", seed=f"seed-{code}",
                                start=START, roles=ROLES, judge_contact=JUDGE,
                                bindings={n: (f"wx-{code}-{n}", f"马甲{n}")
                                          for n in range(1, 13)}, now=NOW)
        links = Links("bench-secret", lambda: NOW + timedelta(hours=1))
        app = create_app(service, bot.chats, links, now=lambda: NOW + timedelta(hours=1),
                         bot=bot)
        # the deals, before anyone watches: all of them (one delivery sends at most 1,000
        # rows; 100 games' deals are 1,300, whose rest would go with the first commit)
        while deliver(service.db, bot.courier).sent:
            pass
        seats = [(code, n) for code in codes for n in range(1, 13)]
        tokens = {s: links.make("p", s[0], f"wx-{s[0]}-{s[1]}", s[1], 0) for s in seats}
        index = {f"wx-{code}-{n}": i for i, (code, n) in enumerate(seats)}
        with served(app) as port:
            streams = Streams(port, [f"/p/{tokens[s]}/events" for s in seats])
            t_open = time.perf_counter()
            streams.start()
            opened = time.perf_counter() - t_open
            hub = app.state.hub
            woken: list[tuple[str, ...]] = []
            wake = hub.wake
            hub.wake = lambda keys: woken.extend(keys := list(keys)) or wake(keys)
            latencies: list[float] = []
            missed = 0
            strays = 0  # streams of another game woken during a commit (none expected)
            rnd = random.Random(seed)
            for i in range(commits):
                code = codes[i % games]
                seat = (i // games) % 12 + 1
                woken.clear()
                before = {j: len(v) for j, v in streams.arrived.items()}
                t0 = time.perf_counter()
                service.submit(code, JudgeCard(seat=seat, color="yellow"),
                               now=NOW + timedelta(minutes=1 + i))
                deliver(service.db, bot.courier)
                reached = {k for k in woken if k[0] == "to" and k[2] in index}
                concerned = {index[k[2]] for k in reached if k[1] == code}
                strays += len(reached) - len(concerned)
                if not streams.wait({j: before[j] for j in concerned}):
                    missed += 1
                latencies.extend(streams.arrived[j][before[j]] - t0 for j in concerned
                                 if len(streams.arrived[j]) > before[j])
            page_times = []
            bare_times = []
            for _ in range(renders):
                s = rnd.choice(seats)
                status, took = get(port, f"/p/{tokens[s]}")
                assert status == 200, status
                page_times.append(took)
                status, took = get(port, "/p/" + "A" * len(tokens[s]))
                assert status == 403, status
                bare_times.append(took)
            open_now = hub.open_streams()
            streams.stop()
        service.close()
    return {"games": games, "streams": len(seats), "open": open_now, "opened_s": opened,
            "commits": commits, "latencies": latencies, "missed": missed, "strays": strays,
            "page": page_times, "bare": bare_times}


def report(r: dict[str, Any]) -> None:
    ms = 1000.0
    lat = r["latencies"]
    print(f"{r['games']} games, {r['streams']} event streams opened in {r['opened_s']:.1f} s "
          f"({r['open']} open at the end)")
    if lat:
        print(f"commit -> stream: {r['commits']} commits, {len(lat)} (commit, stream) pairs; "
              f"p50 {statistics.median(lat) * ms:.0f} ms, p95 {pct(lat, 95) * ms:.0f} ms, "
              f"max {max(lat) * ms:.0f} ms; commits whose streams were not all reached "
              f"within 30 s: {r['missed']}; streams of another game woken: {r['strays']}")
    page, bare = r["page"], r["bare"]
    if page:
        print(f"a seat's page: {len(page)} renders; p50 {statistics.median(page) * ms:.1f} ms, "
              f"p99 {pct(page, 99) * ms:.1f} ms")
        print(f"the bare page (a refused link's): p50 {statistics.median(bare) * ms:.1f} ms, "
              f"p99 {pct(bare, 99) * ms:.1f} ms; seat page / bare at p99: "
              f"{pct(page, 99) / pct(bare, 99):.1f}x")
    print(f"load average (1/5/15 min) at the end: {load()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--renders", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    header("pages: live streams and a seat's page")
    report(run(args.games, args.commits, args.renders, args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
