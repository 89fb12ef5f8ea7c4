"""Crash test: a driver process fed a long command stream is SIGKILLed at random points.

After every kill: each acknowledged command is in the inbox exactly once with the acknowledged
outcome, and (when accepted) in the log exactly once; the log of every game is a prefix of the
game's accepted commands, in order, with contiguous seqs; the snapshot's version counts its
commands; every command's outbox rows were written with it (nothing half-applied); at most one
command is committed but unacknowledged. At the end the driver finishes the stream, and every
game equals a clean in-memory replay, rebuilds from its log, and every outbox row was sent.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from randomgames import finished_games
from sqlalchemy import func, select
from storehelp import OPTION_SETS

from bot.service import Service
from bot.store.codec import encode
from bot.store.models import InboxMessage, LogEntry, OutboxRow, Snapshot
from engine.model import GameState

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
GAMES = 6
KILLS = 22
TIME_LIMIT = 50.0  # seconds for the kill rounds; the test must stay under a minute


def make_stream(rnd: random.Random) -> tuple[dict[str, Any], dict[str, GameState],
                                              dict[str, str]]:
    """Random whole games, played in memory; their commands merged into one stream."""
    per_game: list[list[tuple[str, str, str, Any]]] = []
    games, finals, expected = [], {}, {}
    for game in finished_games(rnd, GAMES, "crash", OPTION_SETS):
        gid = game.args["game_id"]
        assert game.final is not None
        games.append(encode(game.args))
        finals[gid] = game.final
        items = []
        for n, step in enumerate(game.steps):
            msg = f"{gid}#{n}"
            expected[msg] = step.status
            items.append((gid, msg, step.now.isoformat(), encode(step.command.model_dump())))
        per_game.append(items)
    stream: list[tuple[str, str, str, Any]] = []
    while any(per_game):  # a random interleaving that keeps each game's order
        queue = rnd.choice([q for q in per_game if q])
        stream.append(queue.pop(0))
    return {"games": games, "stream": stream}, finals, expected


def start_driver(url: str, files: list[Path]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, str(HERE / "crash_driver.py"), url,
                             *map(str, files)], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def read_acks(path: Path) -> list[list[str]]:
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    return [line.split() for line in text[: text.rfind("\n") + 1].splitlines()]


def check(service: Service, stream: dict[str, Any], expected: dict[str, str],
          acks: list[list[str]]) -> int:
    """The invariants after a kill; returns how many commands were committed in all."""
    order = [item[1] for item in stream["stream"]]
    game_of = {item[1]: item[0] for item in stream["stream"]}
    for n, (i, msg, status, _version) in enumerate(acks):
        assert int(i) == n and order[n] == msg, "acknowledgements out of order"
        assert status == expected[msg], (msg, status, expected[msg])
    with service.db.read() as s:
        inbox = {(r.game_id, r.msg_id): r for r in s.scalars(select(InboxMessage))}
        commands = defaultdict(list)
        seqs = defaultdict(list)
        for gid, seq, kind, msg in s.execute(select(LogEntry.game_id, LogEntry.seq,
                                                    LogEntry.kind, LogEntry.msg_id)
                                             .order_by(LogEntry.game_id, LogEntry.seq)):
            seqs[gid].append(seq)
            if kind == "command":
                commands[gid].append(msg)
        snaps = {r.game_id: r for r in s.scalars(select(Snapshot))}
        judge_rows = Counter(s.scalars(select(OutboxRow.game_id).where(
            OutboxRow.target == "judge", OutboxRow.seq.is_not(None))))
        pending = s.scalar(select(func.count()).select_from(OutboxRow)
                           .where(OutboxRow.sent_at.is_(None)))
    # The committed messages are exactly a prefix of the stream: none lost, none reordered.
    committed = len(inbox)
    assert {(game_of[m], m) for m in order[:committed]} == set(inbox)
    assert len(acks) <= committed <= len(acks) + 1
    for _, msg, status, version in acks:
        row = inbox[(game_of[msg], msg)]
        assert (row.outcome, row.version) == (status, int(version))
    for gid, snap in snaps.items():
        accepted = [m for m in order[:committed]
                    if game_of[m] == gid and expected[m] == "accepted"]
        assert commands[gid] == accepted  # each accepted command once, in order
        assert seqs[gid] == list(range(1, len(seqs[gid]) + 1)) and snap.last_seq == len(
            seqs[gid])
        assert snap.version == len(commands[gid])
        assert judge_rows[gid] == len(commands[gid]) + 1  # its outbox rows came with it
    assert pending is not None
    return committed


def test_sigkill_many_times(db_url: str, tmp_path: Path) -> None:
    rnd = random.Random(4242)
    stream, finals, expected = make_stream(rnd)
    assert len(stream["stream"]) > 500
    files = [tmp_path / "stream.json", tmp_path / "acks.txt", tmp_path / "sent.txt"]
    files[0].write_text(json.dumps(stream), encoding="utf-8")
    service = Service(db_url)
    began = time.monotonic()
    kills = finished_early = unacked = 0
    progress: list[int] = []
    try:
        for k in range(KILLS):
            if time.monotonic() - began > TIME_LIMIT:
                break
            proc = start_driver(db_url, files)
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.startswith("ready"), line + (proc.stderr.read() if proc.stderr else "")
            time.sleep(rnd.uniform(0.0, 0.35))
            proc.send_signal(signal.SIGKILL)
            _, err = proc.communicate(timeout=30)
            if proc.returncode != -signal.SIGKILL:
                assert proc.returncode == 0, err
                finished_early += 1
                break
            kills += 1
            acks = read_acks(files[1])
            committed = check(service, stream, expected, acks)
            unacked += committed - len(acks)
            progress.append(committed)
            if k % 6 == 5:
                for gid in finals:
                    assert service.rebuild(gid).ok
        print(f"{kills} kills at {progress} of {len(stream['stream'])} commands; "
              f"{unacked} committed but not acknowledged when killed")
        assert kills >= 10, f"only {kills} kills"
        # The last run goes to the end of the stream.
        proc = start_driver(db_url, files)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and "done" in out, err
        acks = read_acks(files[1])
        assert len(acks) == len(stream["stream"])
        assert check(service, stream, expected, acks) == len(acks)
        for gid, final in finals.items():
            assert service.state(gid).model_dump() == final.model_dump()
            report = service.rebuild(gid)
            assert report.ok, report.problems
        sent = Counter(files[2].read_text(encoding="utf-8").split())
        with service.db.read() as s:
            rows = list(s.scalars(select(OutboxRow)))
        assert all(r.sent_at is not None for r in rows)
        assert set(sent) == {r.dedupe_key for r in rows}  # each (event, recipient) one key
        assert sum(sent.values()) - len(sent) <= kills  # a resend only after a kill
    finally:
        service.close()
