"""Recovery benchmark: from process start to handling messages, with many active games stored.

    python bench/recovery.py                       # 1,000 games on SQLite, 3 restarts
    python bench/recovery.py --games 1000 --backends sqlite,postgresql --runs 3

A fresh database gets `--games` active classic games, each a few commands in (the opening
commands of a handful of random games, tests/store/randomgames.py, replayed under new game ids
with the same seeds). Then a new Python process is started, `--runs` times, and does what the
bot does on start-up: imports, `Service`, `DeadlineScheduler.start` (catch up passed deadlines,
one job per deadline of every active game), loads every active game's snapshot (the cache the
first messages are served from, when the service has one; not with `--lazy`, as the bot
itself does not), and handles one message. Reported:
seconds from the parent's spawn to the answer of that first message, the child's own split,
and the resident memory per active game (RSS after loading minus RSS before, over the games).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
T_SPAWN = time.time()  # first thing: the child's own start


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def child(url: str, spawned: float, lazy: bool = False) -> None:
    """The restarted bot (run in a fresh interpreter)."""
    t_main = time.time()
    sys.path.insert(0, str(HERE.parent))
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    from bot.gametime import instant_of, zone
    from bot.scheduler import DeadlineScheduler
    from bot.service import Service
    from engine.commands import Vote

    logging.disable(logging.WARNING)
    t_imports = time.time()
    info = json.loads(os.environ["WOLFJUDGE_BENCH_INFO"])
    clock_at = instant_of(datetime.fromisoformat(info["clock"]), zone("Asia/Shanghai"))

    class Fixed:
        def now(self) -> datetime:
            return clock_at.astimezone(UTC)

    async def boot() -> dict[str, Any]:
        rss0 = rss_kib()
        service = Service(url, judges=())
        t0 = time.time()
        sched = DeadlineScheduler(service, Fixed(), AsyncIOScheduler(timezone=UTC),
                                  watchdog_minutes=None)
        fired = sched.start(paused=True)
        t1 = time.time()
        ids = service.game_ids(active_only=True)
        for gid in [] if lazy else ids:
            service.state(gid)  # every snapshot loaded (and cached, if the service caches)
        t2 = time.time()
        rss1 = rss_kib()
        gid = info["probe"]
        out = sched.receive(gid, Vote(seat=info["seat"], target=None),
                            msg_id=f"probe-{time.time_ns()}", sender=f"wx-{gid}-{info['seat']}")
        t3 = time.time()
        jobs = len(sched.scheduler.get_jobs())
        sched.stop()
        service.close()
        return {"service": t0 - t_imports, "scheduler": t1 - t0, "snapshots": t2 - t1,
                "first": t3 - t2, "ready": t3, "games": len(ids), "jobs": jobs,
                "fired": len(fired), "status": out.status, "rss0": rss0, "rss1": rss1}

    res = asyncio.run(boot())
    res.update(interp=t_main - spawned, imports=t_imports - t_main)
    print(json.dumps(res))


def seed_db(url: str, games: int) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    from service import JUDGE, sender_of

    from bot.service import Service

    sys.path.insert(0, str(HERE.parent / "tests" / "store"))
    from randomgames import play

    rnd = random.Random(11)
    streams = [play(rnd, f"r{n}") for n in range(8)]
    service = Service(url, judges=())
    last = datetime(2100, 1, 1)
    try:
        for n in range(games):
            src = streams[n % len(streams)]
            gid = f"g{n:04d}"
            args = dict(src.args, game_id=gid)
            service.create_game(**args, bindings={s: (f"wx-{gid}-{s}", None)
                                                  for s in range(1, 13)},
                                rooms={"public": f"room-{gid}"}, judge_contact=JUDGE)
            steps = src.steps[:12]  # a few commands in: day 1, the deal and the first votes
            for i, step in enumerate(steps):
                service.submit(gid, step.command, now=step.now, msg_id=f"{gid}#{i}",
                               sender=sender_of(gid, step.command))
            last = min(last, steps[-1].now)
    finally:
        service.close()
    del last
    return probe_info(url)


def probe_info(url: str) -> dict[str, Any]:
    """The restart's clock and the first message's sender, from the stored games."""
    from sqlalchemy import func, select

    from bot.service import Service
    from bot.store.models import Snapshot

    service = Service(url, judges=())
    try:
        with service.db.read() as s:
            clock = s.scalar(select(func.min(Snapshot.clock)))
        ids = service.game_ids(active_only=True)
        seat = next(st.seat for st in service.state(ids[0]).living())
    finally:
        service.close()
    # The clock of the restart: no later than any game's last command, so nothing is overdue
    # and the start-up is the loading, not the firing of missed deadlines.
    assert clock is not None
    return {"clock": clock.isoformat(), "probe": ids[0], "seat": seat}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backends", default="sqlite")
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--db", help="a database seeded before (SQLite URL): restart on it only")
    ap.add_argument("--lazy", action="store_true",
                    help="do not load every snapshot before the first message (the bot does "
                         "not: a game's snapshot is loaded on its first command)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--spawned", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, args.spawned, args.lazy)
        return 0
    sys.path.insert(0, str(HERE))
    from service import databases, header, load

    logging.disable(logging.WARNING)
    header("recovery: process start to the first message handled")
    with databases([] if args.db else args.backends.split(",")) as makers:
        targets = {"given": lambda: args.db} if args.db else makers
        for name, make in targets.items():
            url = make()
            t0 = time.time()
            if args.db:
                info = probe_info(url)
                print(f"\n{name} database {url}")
            else:
                info = seed_db(url, args.games)
                print(f"\n{name}: {args.games} active games stored in "
                      f"{time.time() - t0:.0f} s")
            results = []
            for _ in range(args.runs):
                spawned = time.time()
                proc = subprocess.run(
                    [sys.executable, __file__, "--child", url, "--spawned", str(spawned),
                     *(["--lazy"] if args.lazy else [])],
                    capture_output=True, text=True, check=True,
                    env={**os.environ, "WOLFJUDGE_BENCH_INFO": json.dumps(info)})
                res = json.loads(proc.stdout.strip().splitlines()[-1])
                res["total"] = res["ready"] - spawned
                results.append(res)
            med = {k: statistics.median(r[k] for r in results)
                   for k in ("total", "interp", "imports", "service", "scheduler", "snapshots",
                             "first")}
            r0 = results[0]
            per_game = statistics.median((r["rss1"] - r["rss0"]) / max(1, r["games"])
                                         for r in results)
            print("runs (s, spawn to first message answered): "
                  + " ".join(f"{r['total']:.2f}" for r in results))
            print(f"median {med['total']:.2f} s = interpreter {med['interp']:.2f} + imports "
                  f"{med['imports']:.2f} + Service {med['service']:.2f} + scheduler start "
                  f"{med['scheduler']:.2f} + snapshots {med['snapshots']:.2f} + first message "
                  f"{med['first'] * 1000:.0f} ms")
            print(f"{r0['games']} active games, {r0['jobs']} jobs, {r0['fired']} ticks caught "
                  f"up, first message {r0['status']}; RSS {r0['rss0'] / 1024:.0f} MiB before "
                  f"the games, {r0['rss1'] / 1024:.0f} MiB after: {per_game:.1f} KiB per game")
    print(f"load average at end: {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
