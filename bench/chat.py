"""Chat benchmark: what one chat message costs, end to end through `ChatBot.handle`.

    python bench/chat.py                             # SQLite and PostgreSQL, 3 runs each
    python bench/chat.py --backends sqlite --games 100 --messages 1000 --runs 5
    python bench/chat.py --root /tmp/before          # the same messages, another checkout's bot
    python bench/chat.py --against /tmp/before --rounds 3   # this checkout and that one, by turns
    python bench/chat.py --profile                   # and a cProfile of one more SQLite run

`--games` classic games (votes by DM) are made through the chat, as a judge and twelve players
make them (新游戏, 报名 × 12, `#CODE 开始`), in a fresh database. Then the players play, game
after game in turn, one message each: the cupid's 连 before day 1, every living seat's 投 and
every other one's 改票 by day (and one 改票 too many, refused), at night every seat the night
asks (its slots): the guard's 守, the wolves' 刀, the witch's 不救 and 不毒, the seer's 验
(the seats are dealt at random: who sits where is read from the store); between two phases
the clock moves on and every game's deadlines fire (not measured). The moves are chosen from
the game's state with a seeded random, so every checkout is sent the very same messages
(their outcomes are counted: the same counts, the same games).

A message's time runs from the call of `ChatBot.handle` to its return: the Sender look-up, the
parse, the message's transaction (its unit, where it has one), the service's commit, the handled
mark and the answer, and the end of the outbox's turn (its rows sealed). The deliverer is woken
as on WeChat (`ChatBot.on_deliver`: another thread's job) and the rows are sent after the
message, not measured. CPU: this process's, per message (the PostgreSQL server's own CPU is not
in it). The baseline, in the same run and on the same engine: bare transactions of one
single-row INSERT and a COMMIT (bench/service.py).

`--root DIR`: the bot of the checkout in DIR (another commit's worktree: the "before" figures)
measured by this script, run again with that checkout's packages first on its path (this
checkout's bench/service.py gives the databases, each migrated by that checkout's own
scripts). `--against DIR` alternates whole runs of this checkout and DIR's, in one session,
and prints both: the machine is shared and noisy, compare only such pairs. Never put a
timed assertion in a test; this script reports, it does not judge.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import itertools
import json
import logging
import os
import pstats
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

HERE = Path(__file__).resolve().parent.parent
ROOT_ENV = "WOLFJUDGE_BENCH_ROOT"
# The checkout measured: this one, or `--root`'s (the script run again with it in the env).
CHECKOUT = Path(os.environ.get(ROOT_ENV) or HERE).resolve()
sys.path[:0] = [str(CHECKOUT), str(HERE / "bench")]
# The checkout's packages imported first, so that bench/service.py (this checkout's: the
# databases and the baseline, the same for both) runs on them rather than on its own.
PACKAGES = ("bot", "engine", "rulesets", "migrations")
for _name in PACKAGES:
    if Path(__import__(_name).__file__ or "").resolve().parents[1] != CHECKOUT:
        raise SystemExit(f"the {_name} imported is not the one of {CHECKOUT}")

import service as svc  # noqa: E402

from bot.chat.bot import ChatBot  # noqa: E402
from bot.outbox import deliver  # noqa: E402
from bot.service import Service  # noqa: E402
from bot.transport import Incoming  # noqa: E402
from bot.transport.memory import MemoryTransport  # noqa: E402

TZ = "Asia/Shanghai"
ZONE = ZoneInfo(TZ)
JUDGE = "bench-judge"
START = datetime(2026, 12, 1, 7, 30, tzinfo=ZONE)  # before day 1 opens (09:00)
DAY_AT, NIGHT_AT = (10, 0), (21, 5)  # when a phase's messages are sent (no deadline due)


class Platform(MemoryTransport):
    """A chat platform that takes its time, as WeChat's does: the bot wakes its deliverer
    rather than sending in the message's thread (`ChatBot.deliver`)."""

    instant = False


class Sink:
    """The deliverer's courier between two messages (not measured): every due row, at once."""

    instant = True

    def send(self, message: Any) -> None:
        return None


Message = tuple[str, str]  # (sender's contact, text)


class Tables:
    """`games` classic games made and played through one `ChatBot`, their messages handed out
    one at a time (`take`), game after game; the clock moves on when a phase's are all out."""

    def __init__(self, url: str, games: int, seed: int = 7) -> None:
        self.service = Service(url)
        self.exports = tempfile.TemporaryDirectory(prefix="wj-bench-exports-")
        self.platform = Platform()
        counter = itertools.count(1)
        seeds = itertools.count(1)
        self.bot = ChatBot(self.service, self.platform, judges=[JUDGE], time_zone=TZ,
                           seeds=lambda: f"{next(seeds):064x}",
                           codes=lambda: f"G{next(counter):05d}",
                           export_dir=self.exports.name)
        self.bot.on_deliver = lambda: None  # the deliverer's: sent between messages
        self.sink = Sink()
        self.rng = random.Random(seed)
        self.now = START
        self.n = 0
        self.codes: list[str] = []
        self.contacts: dict[str, dict[int, str]] = {}
        self.queue: list[list[Message]] = []  # per game, what its players still send
        self.turn = 0
        for g in range(1, games + 1):
            self._make(g)
        self._drain()
        self._plan()

    def close(self) -> None:
        self.service.close()
        self.exports.cleanup()

    # talking -----------------------------------------------------------------------------------
    def message(self, sender: str, text: str) -> Incoming:
        self.n += 1
        return Incoming(msg_id=f"bench{self.n}", sender=sender, text=text, at=self.now)

    def say(self, sender: str, text: str) -> None:
        """A message of the setting up (not measured)."""
        self.bot.handle(self.message(sender, text))

    def _drain(self) -> None:
        """The deliverer's work: every row due sent (not measured)."""
        while deliver(self.service.db, self.sink).sent:
            pass
        self.platform.sent.clear()

    def _make(self, g: int) -> None:
        code = f"G{g:05d}"
        self.say(JUDGE, "新游戏 经典 votes.channel=dm")
        for i in range(1, 13):
            self.say(f"bench-{g}-{i}", f"报名 {code} 马甲{i}")
        self.say(JUDGE, f"#{code} 开始")
        if self.service.state(code).phase != "SETUP":
            raise SystemExit(f"{code} did not start")
        # the seats are dealt at random: who sits where, as the store has it
        players = [f"bench-{g}-{i}" for i in range(1, 13)]
        self.contacts[code] = {self.service.seat_of(code, c) or 0: c for c in players}
        self.codes.append(code)

    # what the players send -----------------------------------------------------------------------
    def _plan(self) -> None:
        """Every active game's messages for its phase, in a fixed order."""
        self.queue = [self._moves(code) for code in self.codes]

    def _moves(self, code: str) -> list[Message]:
        state = self.service.state(code)
        if state.over:
            return []
        rng, contact = self.rng, self.contacts[code]
        alive = [s.seat for s in state.seats if s.alive]
        roles = {s.seat: s.role for s in state.seats if s.alive}

        def other(seat: int) -> int:
            return rng.choice([n for n in alive if n != seat])

        out: list[Message] = []
        if state.phase == "SETUP":
            cupid = next((n for n, r in roles.items() if r == "cupid"), None)
            if cupid is not None:
                a, b = rng.sample([n for n in alive if n != cupid], 2)
                out.append((contact[cupid], f"连 {a} {b}"))
        elif state.phase.startswith("D"):
            out += [(contact[n], f"投 {other(n)}") for n in alive]
            out += [(contact[n], f"改票 {other(n)}") for n in alive[::2]]
            if alive:
                out.append((contact[alive[0]], f"改票 {other(alive[0])}"))  # refused: once
        elif state.phase.startswith("N") and state.night is not None:
            slots = state.night.slots  # who is asked what tonight
            good = [n for n in alive if roles[n] != "wolf"] or alive
            for key in ("guard", "kill", "witch", "see"):
                for n in slots[key].seats if key in slots else ():
                    if key == "witch":
                        out += [(contact[n], "不救"), (contact[n], "不毒")]
                    elif key == "kill":
                        out.append((contact[n], f"刀 {rng.choice(good)}"))
                    else:
                        out.append((contact[n], f"{'守' if key == 'guard' else '验'} {other(n)}"))
        return out

    def _next_phase(self) -> bool:
        """The clock to the next phase's hour, every deadline on the way fired (not
        measured); False when no game is left."""
        wall = self.now.replace(tzinfo=None)
        day = START.date() + timedelta(days=(wall.date() - START.date()).days)
        at = datetime.combine(day, datetime.min.time()).replace(hour=DAY_AT[0],
                                                                minute=DAY_AT[1])
        if wall >= at:
            at = at.replace(hour=NIGHT_AT[0], minute=NIGHT_AT[1])
        if wall >= at:
            at = (at + timedelta(days=1)).replace(hour=DAY_AT[0], minute=DAY_AT[1])
        self.now = at.replace(tzinfo=ZONE)
        active = [c for c in self.codes if not self.service.state(c).over]
        for code in active:
            self.service.advance(code, at)
        self._drain()
        self.codes = [c for c in active if not self.service.state(c).over]
        self._plan()
        return bool(self.codes)

    def take(self, n: int) -> Iterator[Incoming]:
        """The next `n` messages (fewer when every game is over), game after game in turn."""
        given = 0
        while given < n:
            if not any(self.queue):
                if not self._next_phase():
                    return
                continue
            q = self.queue[self.turn % len(self.queue)]
            self.turn += 1
            if q:
                sender, text = q.pop(0)
                given += 1
                yield self.message(sender, text)


# measuring -----------------------------------------------------------------------------------
def play(tables: Tables, n: int, outcomes: Counter[str] | None = None
         ) -> tuple[list[float], float]:
    """`n` messages: each one's seconds, handle to return, and the CPU seconds of them all
    (the deliveries between them, and the clock's moves, left out)."""
    times: list[float] = []
    cpu = 0.0
    for msg in tables.take(n):
        c0, t0 = time.process_time(), time.perf_counter()
        tables.bot.handle(msg)
        times.append(time.perf_counter() - t0)
        cpu += time.process_time() - c0
        if outcomes is not None:
            outcomes[tables.bot.chats.outcome(msg.msg_id) or "answered"] += 1
        tables._drain()
    return times, cpu


def run_backend(name: str, url: str, args: argparse.Namespace) -> dict[str, Any]:
    made = time.perf_counter()
    tables = Tables(url, args.games)
    made = time.perf_counter() - made
    outcomes: Counter[str] = Counter()
    try:
        play(tables, args.warmup)  # caches, pools
        rates: list[float] = []
        cpu: list[float] = []
        p50: list[float] = []
        p99: list[float] = []
        base: list[float] = []
        base_cpu: list[float] = []
        for _ in range(args.runs):
            b_rate, b_cpu = svc.baseline(tables.service, args.baseline)
            base.append(b_rate)
            base_cpu.append(b_cpu)
            times, used = play(tables, args.messages, outcomes)
            if not times:
                break
            rates.append(len(times) / sum(times))
            cpu.append(used * 1000 / len(times))
            p50.append(svc.pct(times, 50) * 1000)
            p99.append(svc.pct(times, 99) * 1000)
        if args.profile == name:
            prof = cProfile.Profile(time.process_time) if args.profile_cpu else cProfile.Profile()
            prof.enable()
            play(tables, args.messages)
            prof.disable()
            buf = io.StringIO()
            stats = pstats.Stats(prof, stream=buf)
            stats.sort_stats("cumulative").print_stats(args.profile_lines)
            stats.sort_stats("tottime").print_stats(args.profile_lines)
            print(buf.getvalue())
    finally:
        tables.close()
    if not rates:
        raise SystemExit(f"{name}: no message to measure (more --games?)")
    rate, b = statistics.median(rates), statistics.median(base)
    return {"backend": name, "checkout": revision(CHECKOUT), "root": str(CHECKOUT),
            "setup_s": made,
            "rate": rate, "baseline": b, "ratio": rate / b,
            "p50": statistics.median(p50), "p99": statistics.median(p99),
            "cpu": statistics.median(cpu), "base_cpu": statistics.median(base_cpu),
            "runs": len(rates), "rates": rates, "cpus": cpu, "p50s": p50, "p99s": p99,
            "ratios": [r / b for r, b in zip(rates, base, strict=False)],
            "outcomes": dict(sorted(outcomes.items()))}


def revision(root: Path) -> str:
    with contextlib.suppress(OSError, subprocess.CalledProcessError):
        return subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                              check=True, capture_output=True, text=True).stdout.strip()
    return root.name


def table(results: list[dict[str, Any]]) -> None:
    print(f"{'backend':<11} {'checkout':<9} {'msgs/s':>7} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'CPU ms/msg':>10} {'base tx/s':>9} {'CPU ms/tx':>9} {'ratio':>6}"
          "   (runs: CPU ms/msg; p99 ms)")
    for r in results:
        cpus = " ".join(f"{x:.2f}" for x in r["cpus"])
        p99s = " ".join(f"{x:.1f}" for x in r["p99s"])
        print(f"{r['backend']:<11} {r['checkout']:<9} {r['rate']:>7.1f} {r['p50']:>7.2f} "
              f"{r['p99']:>7.2f} {r['cpu']:>10.2f} {r['baseline']:>9.0f} "
              f"{r['base_cpu']:>9.3f} {r['ratio']:>6.3f}   ({cpus}; {p99s})")


# the checkouts -------------------------------------------------------------------------------
def child(root: Path, argv: list[str], out: Path | None = None) -> int:
    """This script, run again on the bot of the checkout in `root`."""
    env = {**os.environ, ROOT_ENV: str(root)}
    extra = ["--json", str(out)] if out is not None else []
    return subprocess.call([sys.executable, __file__, *argv, *extra], env=env)


def against(other: Path, argv: list[str], rounds: int) -> int:
    """`rounds` rounds of a whole run of this checkout and one of `other`, alternately (which
    goes first alternates too); both printed, run by run, then side by side."""
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="wj-bench-chat-") as tmp:
        for k in range(rounds):
            order = [CHECKOUT, other] if k % 2 == 0 else [other, CHECKOUT]
            for i, root in enumerate(order):
                out = Path(tmp) / f"{k}-{i}.json"
                if child(root, argv, out) != 0:
                    return 1
                results.extend(json.loads(out.read_text()))
    print(f"\n# {rounds} rounds, alternating {revision(CHECKOUT)} and {revision(other)}")
    for backend in dict.fromkeys(r["backend"] for r in results):
        for root in (CHECKOUT, other):  # by folder: a commit made meanwhile is the same one
            mine = [r for r in results if r["backend"] == backend and r["root"] == str(root)]
            rev = mine[-1]["checkout"]
            m = {key: statistics.median(x for r in mine for x in r[key])
                 for key in ("rates", "ratios", "cpus", "p50s", "p99s")}
            print(f"{backend:<11} {rev:<9} {m['rates']:.1f} msgs/s ({m['ratios']:.3f} of the "
                  f"bare transaction), CPU ms/msg {m['cpus']:.2f}, p50 {m['p50s']:.2f} ms, p99 "
                  f"{m['p99s']:.2f} ms (medians of {sum(len(r['cpus']) for r in mine)} runs); "
                  f"outcomes {mine[0]['outcomes']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backends", default="sqlite,postgresql")
    ap.add_argument("--games", type=int, default=100, help="live games (default 100)")
    ap.add_argument("--messages", type=int, default=1000, help="messages per run")
    ap.add_argument("--warmup", type=int, default=200, help="messages before the runs")
    ap.add_argument("--baseline", type=int, default=1000, help="bare transactions per run")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--root", type=Path, help="measure the bot of the checkout in this folder")
    ap.add_argument("--against", type=Path,
                    help="alternate whole runs of this checkout and the one in this folder")
    ap.add_argument("--rounds", type=int, default=3, help="with --against: rounds (default 3)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--profile", nargs="?", const="sqlite", default=None,
                    choices=["sqlite", "postgresql"],
                    help="cProfile one more run of that backend (default: sqlite)")
    ap.add_argument("--profile-cpu", action="store_true",
                    help="the profile counts this process's CPU time, not the wall clock")
    ap.add_argument("--profile-lines", type=int, default=40, help="rows of each profile")
    ap.add_argument("--durable", action="store_true",
                    help="PostgreSQL with fsync and synchronous commits on (its defaults)")
    raw = list(sys.argv[1:] if argv is None else argv)
    args = ap.parse_args(raw)
    if args.against is not None:
        rest = _without(raw, ("--against", "--rounds", "--json", "--root"))
        return against(args.against.resolve(), rest, args.rounds)
    if args.root is not None and args.root.resolve() != CHECKOUT:
        return child(args.root.resolve(), _without(raw, ("--root",)))
    logging.disable(logging.WARNING)  # the refused 改票 is expected
    svc.header("chat: a message through ChatBot.handle, its unit and its turn")
    print(f"checkout: {CHECKOUT} at {revision(CHECKOUT)}; {args.games} classic games, "
          f"{args.messages} messages and {args.baseline} bare transactions per run, "
          f"{args.runs} runs (medians); PostgreSQL "
          f"{'durable (fsync on)' if args.durable else 'fsync off'}")
    results: list[dict[str, Any]] = []
    with svc.databases(args.backends.split(","), durable=args.durable) as makers:
        for name, make in makers.items():
            results.append(run_backend(name, make(), args))
    table(results)
    for r in results:
        print(f"{r['backend']}: outcomes {r['outcomes']}; games made in {r['setup_s']:.1f} s")
    print(f"load average at end: {svc.load()}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


def _without(argv: list[str], options: tuple[str, ...]) -> list[str]:
    """`argv` without those options (and their values, `--x v` or `--x=v`)."""
    out: list[str] = []
    skip = False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in options:
            skip = True
            continue
        if a.split("=", 1)[0] in options:
            continue
        out.append(a)
    return out


if __name__ == "__main__":
    raise SystemExit(main())
