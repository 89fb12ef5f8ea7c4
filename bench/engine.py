"""Engine benchmark: whole random games per second, commands per second, and a profile.

    python bench/engine.py                  # every case, 5 runs each, then a profile
    python bench/engine.py --games 20 --runs 3 --case classic-12
    python bench/engine.py --no-profile
    python bench/engine.py --case classic-12 --runs 1 --kinds   # engine time per kind of command

Each case plays the same `--games` random whole games (seeds 0, 1, …) with the random driver of
tests/randomplay.py (tests/randomplay_anomaly.py for anomaly), under the default options, on a
simulated clock, pinned to one core. The driver's own input check (a deep copy of the state
before every command, to prove handle() leaves it alone) is switched off here: it costs more
than the engine and the tests keep doing it.

Reported per case, as min / median / max over `--runs` runs:
- games/s: whole games per second, the driver's own work (choosing commands) included;
- engine games/s: the same games counting only the time spent in new_game() and handle();
- µs/command: engine time per handle() call (accepted, refused and stale ticks alike).

The digest is a hash of every game's final snapshot (model_dump_json, seat statuses as bare
values) and event count: equal digests before and after a change say the engine played the very
same games.

Never put a timed assertion in a test; this script reports, it does not judge.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import hashlib
import io
import os
import pickle
import platform
import pstats
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import randomplay  # noqa: E402  (tests/ holds the shared random driver)
import randomplay_anomaly  # noqa: E402

import engine.dispatch  # noqa: E402
from engine.clone import clone  # noqa: E402
from engine.commands import Tick  # noqa: E402
from engine.events import Rejection  # noqa: E402
from engine.model import GameState  # noqa: E402

# How handle() copies the state it works on: the engine's own mechanism, or an alternative to
# compare it with. "none" works on the caller's state itself: it breaks the engine's contract
# (a refusal would leave its half-done changes behind) and only shows the floor, what the rest of
# the engine costs, i.e. the best that validate-then-mutate or a change journal could reach.
COPIES: dict[str, Any] = {
    "engine": engine.dispatch.working_copy,
    "clone": clone,  # every seat copied for every command (the mechanism before SeatsOnDemand)
    "deepcopy": lambda s: s.model_copy(deep=True),
    "dump-validate": lambda s: GameState.model_validate(s.model_dump()),
    "pickle": lambda s: pickle.loads(pickle.dumps(s, pickle.HIGHEST_PROTOCOL)),
    "none": lambda s: s,
}

CASES: dict[str, tuple[str, int]] = {
    "classic-12": ("classic", 12),
    "anomaly-12": ("anomaly", 12),
    "anomaly-13": ("anomaly", 13),
    "anomaly-14": ("anomaly", 14),
}


class Timer:
    """Wraps handle() and new_game() as the driver module sees them, adding up their time."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - t0
                self.calls += 1
        return timed


@dataclass
class Run:
    seconds: float  # wall time of the whole games
    engine_seconds: float  # inside new_game() and handle()
    commands: int  # handle() calls
    games: int
    digest: str


def _driver_class(ruleset: str) -> type[randomplay.Driver]:
    return randomplay_anomaly.AnomalyDriver if ruleset == "anomaly" else randomplay.Driver


def _snapshot(state: GameState) -> str:
    """The final snapshot as the digest hashes it: model_dump_json, with each seat status as
    its bare value, as snapshots stored statuses before they were typed (engine.model.Status),
    so that digests taken before and after that change compare."""
    seats = [dataclasses.replace(st, statuses={k: getattr(v, "value", v)
                                               for k, v in st.statuses.items()})
             for st in state.seats]
    return state.model_copy(update={"seats": seats}).model_dump_json(warnings=False)


def _driver(ruleset: str, players: int, i: int) -> randomplay.Driver:
    """The driver of game `i` (seed i), its input check off."""
    driver = _driver_class(ruleset)(random.Random(i), seed=f"bench-{i}", ruleset=ruleset,
                                    players=players)
    driver.verify_input = False
    return driver


def play_games(ruleset: str, players: int, games: int) -> Run:
    """Play `games` whole games (seeds 0 …) and time them."""
    handle_timer, new_timer = Timer(), Timer()
    orig_handle, orig_new = randomplay.handle, randomplay.new_game
    randomplay.handle = handle_timer.wrap(orig_handle)
    randomplay.new_game = new_timer.wrap(orig_new)
    digest = hashlib.sha256()
    try:
        t0 = time.perf_counter()
        for i in range(games):
            trace = _driver(ruleset, players, i).play()
            assert trace.final is not None
            digest.update(_snapshot(trace.final).encode())
            digest.update(str(len(trace.events)).encode())
        wall = time.perf_counter() - t0
    finally:
        randomplay.handle, randomplay.new_game = orig_handle, orig_new
    return Run(wall, handle_timer.seconds + new_timer.seconds, handle_timer.calls, games,
               digest.hexdigest()[:16])


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    return (f"{cpu}, {os.cpu_count()} cores (load average {load}); "
            f"Python {platform.python_version()} ({platform.python_implementation()}); "
            f"pydantic {_version('pydantic')}")


def _version(module: str) -> str:
    try:
        return __import__(module).VERSION
    except Exception:  # noqa: BLE001  (a report, not a check)
        return "?"


def pin_one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        cpu = sorted(os.sched_getaffinity(0))[-1]
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    return "not pinned"


def spread(values: list[float], fmt: str = "{:.1f}") -> str:
    return " / ".join(fmt.format(v) for v in (min(values), statistics.median(values),
                                              max(values)))


def profile(ruleset: str, players: int, games: int, top: int) -> str:
    prof = cProfile.Profile()
    prof.enable()
    play_games(ruleset, players, games)
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    text = out.getvalue()
    # keep the table, drop pstats' preamble
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
    total = next((line.strip() for line in lines if "function calls" in line), "")
    root = str(ROOT) + "/"
    return "\n".join([total, *(line.replace(root, "") for line in lines[start:] if line.strip())])


def by_kind(ruleset: str, players: int, games: int) -> str:
    """Engine time per kind of command (a tick by its deadline's kind), accepted or refused:
    where a whole game's engine time goes."""
    times: dict[tuple[str, str, bool], list[float]] = {}
    orig = randomplay.handle

    def timed(state: GameState, cmd: Any, now: Any) -> Any:
        t0 = time.perf_counter()
        result = orig(state, cmd, now)
        dt = time.perf_counter() - t0
        dl = state.deadline(cmd.deadline_id) if isinstance(cmd, Tick) else None
        key = (type(cmd).__name__, "" if not isinstance(cmd, Tick) else "stale" if dl is None
               else dl.kind,
               not isinstance(result, Rejection))
        entry = times.setdefault(key, [0.0, 0.0])
        entry[0] += 1
        entry[1] += dt
        return result

    randomplay.handle = timed
    try:
        for i in range(games):
            _driver(ruleset, players, i).play()
    finally:
        randomplay.handle = orig
    total = sum(t for _, t in times.values())
    lines = [f"{'command':<26} {'per game':>8} {'µs each':>8} {'ms/game':>8} {'share':>6}"]
    for (kind, dl_kind, ok), (n, t) in sorted(times.items(), key=lambda kv: -kv[1][1]):
        name = ("Tick (stale)" if dl_kind == "stale"
                else f"{kind}{':' + dl_kind if dl_kind else ''} {'ok' if ok else 'refused'}")
        lines.append(f"{name:<26} {n / games:>8.1f} {1e6 * t / n:>8.1f} "
                     f"{1000 * t / games:>8.2f} {100 * t / total:>5.1f}%")
    return "\n".join(lines)


def copy_costs(ruleset: str, players: int, games: int = 3) -> str:
    """µs per copy of the states a game goes through, for every mechanism that gives a copy."""
    states: list[GameState] = []
    for i in range(games):
        driver = _driver(ruleset, players, i)
        driver.on_step = lambda step: states.append(step.before)
        driver.play()
    sample = states[::10]
    out = []
    for name, fn in COPIES.items():
        if name == "none":
            continue
        t0 = time.perf_counter()
        for state in sample:
            fn(state)
        out.append(f"{name} {1e6 * (time.perf_counter() - t0) / len(sample):.1f}")
    return f"{len(sample)} states, µs per copy: " + ", ".join(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=30, help="games per run (default 30)")
    ap.add_argument("--runs", type=int, default=5, help="runs per case (default 5)")
    ap.add_argument("--case", action="append", choices=sorted(CASES),
                    help="only these cases (repeatable)")
    ap.add_argument("--copy", default="engine", choices=list(COPIES),
                    help="how handle() copies the state (default: the engine's own)")
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--profile-case", default="classic-12", choices=sorted(CASES))
    ap.add_argument("--top", type=int, default=25, help="profile rows (default 25)")
    ap.add_argument("--kinds", action="store_true",
                    help="engine time per kind of command, for the profile case")
    args = ap.parse_args(argv)
    engine.dispatch.working_copy = COPIES[args.copy]

    print(f"machine: {machine()}")
    print(f"process: {pin_one_core()}; state copy per command: {args.copy}")
    print(f"{args.games} games per run, {args.runs} runs per case, min / median / max\n")
    header = (f"{'case':<11} {'games/s':>20} {'engine games/s':>22} {'µs/command':>20} "
              f"{'cmds/game':>9} {'commands/s':>10}  digest")
    print(header)
    print("-" * len(header))
    for name in args.case or list(CASES):
        ruleset, players = CASES[name]
        play_games(ruleset, players, 2)  # warm up: imports, caches
        runs = [play_games(ruleset, players, args.games) for _ in range(args.runs)]
        digests = {r.digest for r in runs}
        assert len(digests) == 1, f"{name}: the runs played different games {digests}"
        gps = [r.games / r.seconds for r in runs]
        egps = [r.games / r.engine_seconds for r in runs]
        us = [1e6 * r.engine_seconds / r.commands for r in runs]
        cps = [r.commands / r.engine_seconds for r in runs]
        per_game = runs[0].commands / runs[0].games
        print(f"{name:<11} {spread(gps):>20} {spread(egps):>22} {spread(us):>20} "
              f"{per_game:>9.1f} {statistics.median(cps):>10.0f}  {runs[0].digest}")
    print()
    for name in args.case or list(CASES):
        print(f"{name}: {copy_costs(*CASES[name])}")
    if args.kinds:
        ruleset, players = CASES[args.profile_case]
        print(f"\nengine time by command: {args.profile_case}, {args.games} games")
        print(by_kind(ruleset, players, args.games))
    if not args.no_profile:
        ruleset, players = CASES[args.profile_case]
        print(f"\nprofile: {args.profile_case}, {args.games} games, top {args.top} by own time "
              "(driver included)")
        print(profile(ruleset, players, args.games, args.top))


if __name__ == "__main__":
    main()
