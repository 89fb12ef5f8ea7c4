"""`wolfjudge run` on the real clock (issue 21): a new database gets its schema; SIGTERM stops
it cleanly whatever its queue (exit 0, the rows not yet sent stay unsent without a failure
counted, and go after the restart, each once). How fast it stops is measured in
bench/stop.py, not here. Over the real protocol, on the gateway with its mock puppet."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from gatewayhelp import Gateway, wait_until
from runhelp import JUDGE, ROOT

from bot.store import migrate

CODE = re.compile(r"游戏码[ ：:]?([A-Z0-9]{4,8})")


class LiveBot:
    """`wolfjudge run` without --clock: the real clock, stopped by a signal."""

    def __init__(self, gateway: Gateway, db: Path, workdir: Path, *, interval: float) -> None:
        env = {**os.environ, "PYTHONUTF8": "1", "PYTHONPATH": str(ROOT),
               "WECHATY_PUPPET_SERVICE_ENDPOINT": gateway.endpoint,
               "WECHATY_PUPPET_SERVICE_TOKEN": gateway.token,
               "WOLFJUDGE_JUDGES": JUDGE, "WOLFJUDGE_DATABASE_URL": f"sqlite:///{db}",
               "WOLFJUDGE_SEND_INTERVAL": str(interval), "WOLFJUDGE_SEND_JITTER": "0",
               "WOLFJUDGE_ROOM_INTERVAL": "0", "WOLFJUDGE_ROOMS_PER_HOUR": "100",
               "CACHE_DIR": str(workdir / "wechaty-cache")}
        self.log_path = workdir / f"run-{len(list(workdir.glob('run-*.txt')))}.txt"
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "run"], cwd=workdir,
                                         env=env, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT)
        wait_until(lambda: "wolfjudge: connected" in self.log() or self.proc.poll() is not None,
                   60, "the bot to connect")
        assert self.proc.poll() is None, self.log()

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def terminate(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(60)


def outbox(db: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        con.row_factory = sqlite3.Row
        return [dict(r) for r in con.execute("select * from outbox order by id")]


def test_a_new_database_gets_its_schema_and_an_old_one_names_migrate(
        gateway: Gateway, tmp_path: Path) -> None:
    fresh = tmp_path / "new.db"
    bot = LiveBot(gateway, fresh, tmp_path, interval=0)
    assert bot.terminate() == 0, bot.log()
    old = tmp_path / "old.db"
    migrate(f"sqlite:///{old}", revision="0006")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WOLFJUDGE_JUDGES": JUDGE,
           "WECHATY_PUPPET_SERVICE_ENDPOINT": gateway.endpoint,
           "WECHATY_PUPPET_SERVICE_TOKEN": gateway.token,
           "WOLFJUDGE_DATABASE_URL": f"sqlite:///{old}"}
    done = subprocess.run([sys.executable, "-m", "bot.cli", "run"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0 and "wolfjudge migrate" in done.stderr, done.stderr


def test_sigterm_while_a_12_seat_start_is_sent_stops_cleanly_and_loses_nothing(
        gateway: Gateway, tmp_path: Path) -> None:
    db = tmp_path / "wolfjudge.db"
    judge = gateway.contact("judge", JUDGE)
    players = [gateway.contact(f"p{i}", f"wxid_p{i}") for i in range(1, 13)]
    bot = LiveBot(gateway, db, tmp_path, interval=0)
    gateway.dm(judge, "新游戏 经典")
    wait_until(lambda: any(CODE.search(t) for t in gateway.dms_to(judge)), 30, "a game code")
    code = next(m[1] for t in gateway.dms_to(judge) if (m := CODE.search(t)))
    for i, p in enumerate(players, 1):
        gateway.dm(p, f"报名 {code} 马甲{i:02d}")
        wait_until(lambda p=p: gateway.dms_to(p), 30, f"{p}'s seat")
    assert bot.terminate() == 0, bot.log()  # an empty queue: a plain stop

    # One send every two seconds: the start's messages queue up behind each other.
    bot = LiveBot(gateway, db, tmp_path, interval=2)
    before = len(gateway.sent())
    gateway.dm(judge, "开始")
    wait_until(lambda: len(gateway.sent()) >= before + 2, 60, "the start to be under way")
    assert bot.terminate() == 0, bot.log()
    assert "Traceback" not in bot.log(), bot.log()
    unsent = [r for r in outbox(db) if r["sent_at"] is None]
    assert unsent, "the whole queue went out before the stop: nothing was tested"
    # A row left behind by the stop is not a failed send: no attempt, no error, no back-off.
    assert all(r["attempts"] == 0 and r["last_error"] is None for r in unsent), unsent

    bot = LiveBot(gateway, db, tmp_path, interval=0)
    try:
        wait_until(lambda: all(r["sent_at"] for r in outbox(db)), 60, "the rest to be sent")
        for p in players:  # each player's role, once
            roles = [t for t in gateway.dms_to(p) if "你的身份" in t]
            assert len(roles) == 1, (p, gateway.dms_to(p))
    finally:
        assert bot.terminate() == 0, bot.log()
