"""Service benchmark: commands/s and latency through bot/service.py against the bare database.

    python bench/service.py                         # SQLite and PostgreSQL, 3 runs each
    python bench/service.py --backends sqlite --games 100 --commands 1500 --runs 5
    python bench/service.py --profile               # and a cProfile of one SQLite run
    python bench/service.py --backends postgresql --profile postgresql   # of PostgreSQL

`--games` random classic games (tests/store/randomgames.py, played in memory first, so the
driver costs nothing here) are created in a fresh database, every seat bound to a contact and a
public room. Then their command streams are sent round-robin, one game after the other, each
command as the chat layer hands it over: a parsed command with its transport message id and
its sender (the seat's contact, the judge for judge commands and corrections, none for ticks),
through `Service.submit`: permission check, snapshot load, engine, and the one transaction
(log, snapshot, inbox, outbox, mirrors). A command's time runs from the call to its commit.

The baseline, in the same run, on the same database and engine (same pragmas, same pool): bare
transactions of one single-row INSERT and a COMMIT. Runs alternate baseline and pipeline, and
medians are reported; the ratio is pipeline commands/s over baseline transactions/s.

PostgreSQL is a throwaway server on loopback (tests/store/pgserver.py, fsync off as in the
tests; `--durable`: the server's defaults, every COMMIT flushed to disk, as in production),
skipped when no initdb/pg_ctl is found. SQLite runs as the bot runs it (WAL, its default
synchronous=FULL) either way. Never put a timed assertion in a test; this
script reports, it does not judge.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import logging
import os
import platform
import pstats
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "store"))

from pgserver import PostgresServer, find_bindir  # noqa: E402
from randomgames import RandomGame, play  # noqa: E402
from sqlalchemy import text  # noqa: E402

from bot.service import Service  # noqa: E402
from bot.store import migrate  # noqa: E402

JUDGE = "wx-judge"


# the machine ---------------------------------------------------------------------------------
def machine() -> str:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return (f"{platform.node()} · {cpu} · {os.cpu_count()} cores · Python "
            f"{platform.python_version()} · {platform.system()} {platform.release()}")


def load() -> str:
    a, b, c = os.getloadavg()
    return f"{a:.2f} {b:.2f} {c:.2f}"


def header(title: str) -> None:
    print(f"# {title}")
    print(f"machine: {machine()}")
    print(f"load average (1/5/15 min) at start: {load()}")


# databases -----------------------------------------------------------------------------------
@contextlib.contextmanager
def databases(backends: list[str], durable: bool = False) -> Iterator[dict[str, Any]]:
    """Yields a factory per backend: each call makes a fresh, migrated database URL."""
    out: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="wolfjudge-bench-")))
        counter = iter(range(1_000_000))
        if "sqlite" in backends:
            def sqlite_url() -> str:
                url = f"sqlite:///{tmp}/bench{next(counter)}.db"
                migrate(url)
                return url
            out["sqlite"] = sqlite_url
        if "postgresql" in backends:
            bindir = find_bindir()
            if bindir is None:
                print("postgresql: skipped (no initdb/pg_ctl on this machine)")
            else:
                server = PostgresServer(bindir, durable=durable)
                server.start()
                stack.callback(server.stop)

                def pg_url() -> str:
                    name = f"bench{next(counter)}"
                    server.admin(f"CREATE DATABASE {name}")
                    url = server.url(name)
                    migrate(url)
                    return url
                out["postgresql"] = pg_url
        yield out


# games ---------------------------------------------------------------------------------------
def games(count: int, seed: int = 7, prefix: str = "b") -> list[RandomGame]:
    """`count` random games played in memory (their command streams, not yet stored)."""
    rnd = random.Random(seed)
    return [play(rnd, f"{prefix}{n}") for n in range(count)]


def create(service: Service, game: RandomGame) -> None:
    gid = game.args["game_id"]
    service.create_game(**game.args, bindings={n: (f"wx-{gid}-{n}", None) for n in range(1, 13)},
                        rooms={"public": f"room-{gid}"}, judge_contact=JUDGE)


def sender_of(gid: str, cmd: Any) -> str | None:
    """Who sends the command in the chat: ticks come from the scheduler, judge commands and
    vote corrections from the judge, the rest from the seat's own contact."""
    kind = cmd.kind
    if kind == "tick":
        return None
    if kind.startswith("judge_") or getattr(cmd, "mode", "vote") in ("correct", "void"):
        return JUDGE
    seat = getattr(cmd, "seat", None)
    return f"wx-{gid}-{seat}" if seat is not None and 1 <= seat <= 12 else JUDGE


@dataclass
class Stream:
    """The games' commands, round-robin; `take` hands out the next ones across runs."""

    games: list[RandomGame]

    def __post_init__(self) -> None:
        self.pos = [0] * len(self.games)
        self.turn = 0

    def take(self, n: int) -> list[tuple[str, Any, Any, str]]:
        out: list[tuple[str, Any, Any, str]] = []
        idle = 0
        while len(out) < n and idle < len(self.games):
            g = self.turn % len(self.games)
            self.turn += 1
            game = self.games[g]
            if self.pos[g] >= len(game.steps):
                idle += 1
                continue
            idle = 0
            i = self.pos[g]
            self.pos[g] += 1
            step = game.steps[i]
            gid = game.args["game_id"]
            out.append((gid, step.command, step.now, f"{gid}#{i}"))
        return out


# measuring -----------------------------------------------------------------------------------
def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def baseline(service: Service, n: int) -> tuple[float, float]:
    """Bare transactions/s, and CPU ms per transaction: one single-row INSERT and a COMMIT
    each, on the pipeline's engine."""
    db = service.db
    key = "INTEGER PRIMARY KEY" if db.sqlite else "SERIAL PRIMARY KEY"  # both autoincrement
    with db._writer.begin() as conn:
        conn.execute(text(f"CREATE TABLE IF NOT EXISTS bench_bare (id {key}, payload "
                          "VARCHAR(64))"))
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(n):
        with db._writer.begin() as conn:
            conn.execute(text("INSERT INTO bench_bare (payload) VALUES (:p)"), {"p": f"row {i}"})
    return n / (time.perf_counter() - t0), (time.process_time() - c0) * 1000 / n


def pipeline(service: Service, batch: list[tuple[str, Any, Any, str]]) -> list[float]:
    """Each command's seconds, call to commit."""
    times: list[float] = []
    for gid, cmd, now, msg_id in batch:
        t0 = time.perf_counter()
        service.submit(gid, cmd, now=now, msg_id=msg_id, sender=sender_of(gid, cmd))
        times.append(time.perf_counter() - t0)
    return times


def run_backend(name: str, url: str, args: argparse.Namespace) -> dict[str, float]:
    service = Service(url, judges=())
    try:
        played = games(args.games)
        for g in played:
            create(service, g)
        stream = Stream(played)
        pipeline(service, stream.take(min(200, args.commands)))  # warm up: caches, pools
        base: list[float] = []
        base_cpu: list[float] = []
        cpu: list[float] = []
        rates: list[float] = []
        p50: list[float] = []
        p99: list[float] = []
        for _ in range(args.runs):
            b_rate, b_cpu = baseline(service, args.baseline)
            base.append(b_rate)
            base_cpu.append(b_cpu)
            batch = stream.take(args.commands)
            if not batch:
                break
            t0, c0 = time.perf_counter(), time.process_time()
            times = pipeline(service, batch)
            rates.append(len(times) / (time.perf_counter() - t0))
            # CPU time of this process per command: what the machine's load inflates least
            # (the database server's own CPU, on PostgreSQL, is not in it)
            cpu.append((time.process_time() - c0) * 1000 / len(times))
            p50.append(pct(times, 50) * 1000)
            p99.append(pct(times, 99) * 1000)
        if args.profile == name:
            batch = stream.take(args.commands)
            # --profile-cpu: this process's CPU time per function (waiting for the server
            # then counts nothing), else the wall clock
            prof = cProfile.Profile(time.process_time) if args.profile_cpu else cProfile.Profile()
            prof.enable()
            pipeline(service, batch)
            prof.disable()
            if args.profile_dump:
                prof.dump_stats(args.profile_dump)
            buf = io.StringIO()
            stats = pstats.Stats(prof, stream=buf)
            stats.sort_stats("cumulative").print_stats(args.profile_lines)
            stats.sort_stats("tottime").print_stats(args.profile_lines)
            print(buf.getvalue())
    finally:
        service.close()
    b, r = statistics.median(base), statistics.median(rates)
    return {"baseline": b, "rate": r, "ratio": r / b, "p50": statistics.median(p50),
            "p99": statistics.median(p99), "runs": len(rates),
            "cpu": statistics.median(cpu), "base_cpu": statistics.median(base_cpu),
            "rates": rates, "bases": base}  # type: ignore[dict-item]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backends", default="sqlite,postgresql")
    ap.add_argument("--games", type=int, default=100, help="live games (default 100)")
    ap.add_argument("--commands", type=int, default=1000, help="commands per run")
    ap.add_argument("--baseline", type=int, default=1000, help="bare transactions per run")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--profile", nargs="?", const="sqlite", default=None,
                    choices=["sqlite", "postgresql"],
                    help="cProfile one more run of that backend (default: sqlite)")
    ap.add_argument("--profile-cpu", action="store_true",
                    help="the profile counts this process's CPU time, not the wall clock")
    ap.add_argument("--profile-dump", help="also write the profile's pstats to this file")
    ap.add_argument("--profile-lines", type=int, default=45, help="rows of each profile")
    ap.add_argument("--durable", action="store_true",
                    help="PostgreSQL with fsync and synchronous commits on (its defaults)")
    args = ap.parse_args(argv)
    logging.disable(logging.WARNING)  # the random streams' refused commands are expected
    header("pipeline: commands through bot/service.py vs bare insert+commit")
    print(f"{args.games} live games, {args.commands} commands and {args.baseline} bare "
          f"transactions per run, {args.runs} runs (medians); PostgreSQL "
          f"{'durable (fsync on)' if args.durable else 'fsync off'}")
    results: dict[str, dict[str, float]] = {}
    with databases(args.backends.split(","), durable=args.durable) as makers:
        for name, make in makers.items():
            results[name] = run_backend(name, make(), args)
    print(f"{'backend':<11} {'baseline tx/s':>13} {'commands/s':>11} {'ratio':>6} "
          f"{'p50 ms':>7} {'p99 ms':>7} {'CPU ms/cmd':>10} {'CPU ms/tx':>9}"
          f"   (runs: commands/s; baseline tx/s)")
    for name, r in results.items():
        runs = " ".join(f"{x:.0f}" for x in r["rates"])  # type: ignore[attr-defined]
        bases = " ".join(f"{x:.0f}" for x in r["bases"])  # type: ignore[attr-defined]
        print(f"{name:<11} {r['baseline']:>13.0f} {r['rate']:>11.1f} {r['ratio']:>6.2f} "
              f"{r['p50']:>7.1f} {r['p99']:>7.1f} {r['cpu']:>10.2f} {r['base_cpu']:>9.3f}"
              f"   ({runs}; {bases})")
    print(f"load average at end: {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
