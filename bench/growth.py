"""Growth benchmark: does a command cost more late in a game, and what does a game store?

    python bench/growth.py                    # SQLite, 12 days, 3 games (medians)
    python bench/growth.py --days 10 --games 1 --backends sqlite,postgresql

A long quiet classic game (nobody is exiled, nobody dies at night, the days go on) is played
through `Service.submit` on a fresh database: every living seat votes (some change their
vote, some abstain), the deadlines fire as ticks, the night's actors act and pass. Reported
per game day: the median and p90 milliseconds of its commands, their mean CPU milliseconds
(this process only, what the machine's load inflates least), the snapshot's size at the end
of the day, and the log bytes the day added (events rows: body and audience JSON), and for the
whole game the log and snapshot bytes. The cost must not grow with the game's length.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from service import JUDGE, databases, header, load, pct  # noqa: E402
from sqlalchemy import func, select  # noqa: E402

from bot.service import Service  # noqa: E402
from bot.store.models import LogEntry, Snapshot  # noqa: E402
from engine.commands import Act, Tick, Vote  # noqa: E402
from engine.model import GameState  # noqa: E402

ROLES = ["wolf", "wolf", "wolf", "seer", "witch", "guard", "villager", "villager", "villager",
         "villager", "villager", "villager"]


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


class QuietGame:
    """Sends the commands of a game that never ends (until `days`), measuring each one."""

    def __init__(self, service: Service, gid: str, days: int) -> None:
        self.service, self.gid, self.days = service, gid, days
        self.n = 0
        self.times: dict[int, list[float]] = defaultdict(list)
        self.cpu: dict[int, list[float]] = defaultdict(list)  # process CPU seconds
        self.snapshot_bytes: dict[int, int] = {}
        self.log_bytes: dict[int, int] = {}

    def send(self, cmd: Any, now: datetime) -> GameState:
        day = self.state.day
        seat = getattr(cmd, "seat", None)
        sender = None if cmd.kind == "tick" else f"wx-{self.gid}-{seat}"
        self.n += 1
        t0, c0 = time.perf_counter(), time.process_time()
        out = self.service.submit(self.gid, cmd, now=now, msg_id=f"{self.gid}#{self.n}",
                                  sender=sender)
        self.times[day].append(time.perf_counter() - t0)
        self.cpu[day].append(time.process_time() - c0)
        if out.accepted:
            assert out.state is not None
            self.state = out.state
        return self.state

    def play(self, state: GameState) -> None:
        self.state = state
        now = datetime(2026, 3, 1)  # the creation time: 00:00 of the start day
        while self.state.day <= self.days and not self.state.over:
            day = self.state.day
            st = self.state
            if st.phase.startswith("D"):
                living = [s.seat for s in st.living()]
                for i, n in enumerate(living):
                    if not st.votes.get(n):
                        # abstentions only: nobody is exiled, the game goes on
                        self.send(Vote(seat=n, target=None), now)
                        if i % 4 == 0:
                            self.send(Vote(seat=n, mode="change", target=None), now)
            elif st.phase.startswith("N") and st.night is not None and not st.night.resolved:
                self.quiet_night(now)
            dl = self.state.next_deadline()
            if dl is None:
                break
            now = max(now, dl.due)
            self.send(Tick(deadline_id=dl.id), now)
            if self.state.day != day:
                self.measure(day)

    def quiet_night(self, now: datetime) -> None:
        night = self.state.night
        assert night is not None
        for key, slot in list(night.slots.items()):
            who = slot.seats[0]
            if key == "kill":
                self.send(Act(seat=who, skill="kill", targets=(None,)), now)
                self.send(Act(seat=who, skill="lock"), now)
            elif key == "see":
                target = next(s.seat for s in self.state.living() if s.seat != who)
                self.send(Act(seat=who, skill="see", targets=(target,)), now)
        for key in ("guard", "witch"):
            n = self.state.night
            if n is not None and not n.resolved and key in n.slots:
                self.send(Act(seat=n.slots[key].seats[0], skill="pass"), now)

    def measure(self, day: int) -> None:
        with self.service.db.read() as s:
            snap = s.scalar(select(Snapshot.state).where(Snapshot.game_id == self.gid))
            rows = s.execute(select(LogEntry.body, LogEntry.audience).where(
                LogEntry.game_id == self.gid)).all()
        self.snapshot_bytes[day] = _size(snap)
        self.log_bytes[day] = sum(_size(b) + _size(a) for b, a in rows)


def run(url: str, days: int, gid: str) -> QuietGame:
    service = Service(url, judges=())
    try:
        out = service.create_game(
            game_id=gid, ruleset="classic", seed=f"seed-{gid}",
            start=datetime(2026, 3, 1).date(), roles=ROLES,
            bindings={n: (f"wx-{gid}-{n}", None) for n in range(1, 13)},
            rooms={"public": f"room-{gid}"}, judge_contact=JUDGE)
        assert out.state is not None
        game = QuietGame(service, gid, days)
        game.play(out.state)
        with service.db.read() as s:
            game.total_rows = s.scalar(select(func.count()).select_from(LogEntry).where(
                LogEntry.game_id == gid)) or 0
        return game
    finally:
        service.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backends", default="sqlite")
    ap.add_argument("--days", type=int, default=12)
    ap.add_argument("--games", type=int, default=3, help="games played (medians over them)")
    args = ap.parse_args(argv)
    header("growth: per-command cost and stored bytes over a game's days")
    with databases(args.backends.split(",")) as makers:
        for name, make in makers.items():
            played = [run(make(), args.days, f"long{i}") for i in range(args.games)]
            days = sorted(set.intersection(*(set(g.snapshot_bytes) for g in played)))
            print(f"\n{name}: {args.games} quiet classic games of {args.days} days "
                  f"(medians over the games)")
            print(f"{'day':>4} {'commands':>8} {'p50 ms':>7} {'p90 ms':>7} {'CPU ms':>6} "
                  f"{'snapshot B':>10} {'log B (day)':>11} {'log B (total)':>13}")
            for d in days:
                p50 = statistics.median(pct(g.times[d], 50) * 1000 for g in played)
                p90 = statistics.median(pct(g.times[d], 90) * 1000 for g in played)
                cpu = statistics.median(statistics.fmean(g.cpu[d]) * 1000 for g in played)
                snap = played[0].snapshot_bytes[d]
                total = played[0].log_bytes[d]
                prev = played[0].log_bytes.get(d - 1, 0)
                print(f"{d:>4} {len(played[0].times[d]):>8} {p50:>7.2f} {p90:>7.2f} {cpu:>6.2f} "
                      f"{snap:>10} {total - prev:>11} {total:>13}")
            g = played[0]
            last = max(g.log_bytes)
            print(f"whole game ({last} days, {g.total_rows} log rows): log "
                  f"{g.log_bytes[last]} B, snapshot {g.snapshot_bytes[last]} B")
    print(f"load average at end: {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
