"""Instructions per whole game and per handle() call, counted by valgrind (cachegrind).

    python bench/icount.py                # classic-12, 3 games
    python bench/icount.py --case anomaly-12 --games 3
    python bench/icount.py --no-gc        # the same without the cyclic garbage collector

The machine this project is benchmarked on is shared: wall-clock figures move by ±20 % and more
from run to run with the other sessions' load. An instruction count does not: it is the same on
every run (within a few hundred instructions), so it says whether a change made the engine do
less work, whatever the load. It is not a time (an instruction of a dict copy is not one of a
pydantic validation), so bench/engine.py's games per second stay the figures that count; this
is the check that a change moved them for real.

It runs the same games as bench/engine.py (seeds 0 …, default options, the driver's input check
off) under `valgrind --tool=cachegrind --cache-sim=no` twice, with and without the games, and
reports the difference per game and per handle() call. Needs valgrind on PATH.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import gc, random, sys
if {no_gc}:
    gc.disable()
sys.path[:0] = [{root!r}, {root!r} + "/tests"]
import randomplay, randomplay_anomaly
ruleset, players, games, play = {ruleset!r}, {players}, {games}, {play}
cls = randomplay_anomaly.AnomalyDriver if ruleset == "anomaly" else randomplay.Driver
calls = 0
handle = randomplay.handle
def counted(*a, **k):
    global calls
    calls += 1
    return handle(*a, **k)
randomplay.handle = counted
def one(i):
    d = cls(random.Random(i), seed=f"bench-{{i}}", ruleset=ruleset, players=players)
    d.verify_input = False
    d.play()
one(99)  # warm up: imports, compiled copiers, caches
calls = 0
if play:
    for i in range(games):
        one(i)
print("calls", calls, file=sys.stderr)
"""

CASES = {"classic-12": ("classic", 12), "anomaly-12": ("anomaly", 12),
         "anomaly-13": ("anomaly", 13), "anomaly-14": ("anomaly", 14)}


def count(root: str, ruleset: str, players: int, games: int, play: bool,
          no_gc: bool = False) -> tuple[int, int]:
    code = CHILD.format(root=root, ruleset=ruleset, players=players, games=games, play=play,
                        no_gc=no_gc)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    out = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                          "--cachegrind-out-file=/dev/null", sys.executable, "-c", code],
                         capture_output=True, text=True, env=env, check=True).stderr
    refs = int(re.search(r"I\s+refs:\s+([\d,]+)", out).group(1).replace(",", ""))  # type: ignore[union-attr]
    calls = int(re.search(r"calls (\d+)", out).group(1))  # type: ignore[union-attr]
    return refs, calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", default="classic-12", choices=sorted(CASES))
    ap.add_argument("--games", type=int, default=3)
    ap.add_argument("--root", default=str(ROOT), help="the checkout to measure (default: this)")
    ap.add_argument("--no-gc", action="store_true",
                    help="without the cyclic GC: when it runs depends on how many objects were "
                    "made, so any code change moves its share by a few 100 k instructions per "
                    "game; without it, small steps compare exactly")
    args = ap.parse_args()
    ruleset, players = CASES[args.case]
    base, _ = count(args.root, ruleset, players, args.games, False, args.no_gc)
    full, calls = count(args.root, ruleset, players, args.games, True, args.no_gc)
    games = full - base
    where = f"{args.root}, no GC" if args.no_gc else args.root
    print(f"{args.case} ({where}): {games / args.games / 1e6:.1f} M instructions per whole "
          f"game, {games / calls / 1e3:.0f} k per handle() call (driver included), "
          f"{calls / args.games:.1f} calls per game")


if __name__ == "__main__":
    main()
