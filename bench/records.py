"""Records benchmark (issue 31): reading 1,000 finished games for a leaderboard.

    python bench/records.py                        # SQLite and PostgreSQL, 1,000 games
    python bench/records.py --games 1000 --backends sqlite --runs 20

A fresh database gets a few real finished games (random classic games, tests/store/
randomgames.py), recorded as the bot records them: export, verify (signature, commitment,
deal, draws, a replay of every command), summary row (timed: what a game's end costs once).
Then `--games` finished games' summary rows more, as those real ones look (twelve seats, a
winner, roles, camps, how each went out), over a community of `--players` contacts and two
seasons, each with its game row. Timed, `--runs` times each (median and max):

- `排行`: what the chat's answer reads (the pending games looked for, the leaderboard of all
  games with the counts), and the same for one season;
- `战绩`: one player's record;
- the community page (`/c/SLUG`), rendered by the app (TestClient, no network);
- `wolfjudge stats`' tables (every player's record and every board).

Nothing here reads a game's log: the reads are the summary rows' (two aggregate statements for
a leaderboard). The goal: a leaderboard of 1,000 games in ≤ 200 ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "store"))
sys.path.append(str(ROOT / "bench"))  # (last: bench/engine.py is no `engine`)

from randomgames import finished_games  # noqa: E402
from service import databases, header  # noqa: E402

from bot.records.book import ALL, RecordBook, Scope  # noqa: E402
from bot.records.stats import tables  # noqa: E402
from bot.records.summary import board_key  # noqa: E402
from bot.service import Service  # noqa: E402
from bot.store.records import GameSummary, RecordStore, SeatSummary  # noqa: E402

ROLES = ["wolf"] * 3 + ["seer", "witch", "guard", "cupid"] + ["villager"] * 5
CAUSES = ["vote", "kill", "poison", "lovers", None]


def real_games(service: Service, count: int) -> list[float]:
    """`count` random finished games stored and recorded; the seconds each recording took."""
    took = []
    book = RecordBook(service)
    for game in finished_games(random.Random(3), count, "real", [{}]):
        gid = game.args["game_id"]
        service.create_game(**game.args, bindings={n: (f"wx-p{n}", f"马甲{n}")
                                                   for n in range(1, 13)})
        for n, step in enumerate(game.steps):
            service.submit(gid, step.command, now=step.now, msg_id=f"{gid}#{n}")
        t0 = time.perf_counter()
        assert book.record(gid) == "won"
        took.append(time.perf_counter() - t0)
    return took


def synthetic(service: Service, games: int, players: int, seed: int = 1) -> None:
    """`games` finished games' summary rows (and their game rows) over `players` contacts."""
    rnd = random.Random(seed)
    store = RecordStore(service.db)
    board = board_key("classic", 12, {}, None)
    t0 = datetime(2026, 1, 1, 12)
    for i in range(games):
        gid = f"syn{i:05d}"
        service.create_game(game_id=gid, ruleset="classic", players=12,
                            start=date(2026, 1, 1), seed=f"bench-{i}")
        contacts = rnd.sample(range(players), 12)
        roles = rnd.sample(ROLES, 12)
        winner = rnd.choice(["wolves", "village", "village", "black-lovers"])
        seats = []
        for n, (contact, role) in enumerate(zip(contacts, roles, strict=True), 1):
            camp = "wolves" if role == "wolf" else "village"
            cause = rnd.choice(CAUSES)
            seats.append(SeatSummary(
                n, f"wx-{contact}", f"马甲{contact}" + ("" if rnd.random() < 0.8 else "-二"),
                role, camp, "win" if camp == winner else "loss", cause,
                None if cause is None else f"D{rnd.randint(1, 6)}"))
        ended = t0 + timedelta(hours=8 * i)
        assert store.write(GameSummary(gid, None, "classic", 12, board, "won", winner, 5, ended,
                                       ended.date(), "0" * 64, 100, tuple(seats)))
    store.start_season(None, "S1", t0 + timedelta(hours=8 * games // 2), "wx-judge")


def timed(fn: Callable[[], Any], runs: int) -> tuple[float, float]:
    fn()  # warm: the first read of a connection, imports
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000, max(times) * 1000


def bench(url: str, games: int, players: int, runs: int) -> dict[str, Any]:
    from fastapi.testclient import TestClient

    from bot.chat.desk_records import new_slug
    from bot.store.chat import ChatStore
    from bot.web.app import create_app
    from bot.web.links import Links

    service = Service(url, judges=())
    try:
        recording = real_games(service, 3)
        t0 = time.perf_counter()
        synthetic(service, games, players)
        setup = time.perf_counter() - t0
        book = RecordBook(service)
        season = book.current()
        slug = book.store.slug(None, new_slug)
        app = create_app(service, ChatStore(service.db), Links("x", datetime.now),
                         simulations=lambda board: None)
        client = TestClient(app)

        def ranking(scope: Scope) -> Callable[[], Any]:
            def run() -> Any:
                book.sync()
                return book.leaderboard(scope, top=5), book.counts(scope)
            return run

        def page() -> None:
            assert client.get(f"/c/{slug}?s=全部对局").status_code == 200

        out = {
            "games": games + len(recording), "players": players,
            "record a game at its end (ms, 3 real games)": [round(x * 1000, 1)
                                                            for x in recording],
            "setup (s)": round(setup, 1),
            "排行, all games": timed(ranking(ALL), runs),
            "排行, a season": timed(ranking(Scope(season)), runs),
            "战绩 (one player)": timed(lambda: book.record_of("wx-7"), runs),
            "community page": timed(page, runs),
            "wolfjudge stats tables": timed(lambda: tables(book, ALL), max(3, runs // 4)),
        }
        return out
    finally:
        service.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--players", type=int, default=150)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--backends", default="sqlite,postgresql")
    args = ap.parse_args()
    backends = args.backends.split(",")
    header(f"records: {args.games} finished games, {args.players} players")
    with databases(backends) as made:
        for backend, fresh in made.items():
            result = bench(fresh(), args.games, args.players, args.runs)
            print(f"## {backend}")
            for key, value in result.items():
                if isinstance(value, tuple):
                    print(f"{key}: median {value[0]:.1f} ms, max {value[1]:.1f} ms")
                else:
                    print(f"{key}: {value}")


if __name__ == "__main__":
    main()
