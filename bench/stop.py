"""How long `wolfjudge run` takes to stop on SIGTERM with a queue (issue 21).

    python bench/stop.py                      # this checkout's bot, 3 runs
    python bench/stop.py --root /path/to/old  # another checkout's bot (the "before" figure)
    python bench/stop.py --runs 5 --json out.json

Each run: the gateway of this checkout with its mock puppet (gateway/, installed by the
tests' helper), a fresh SQLite database, a judge and twelve players who fill a classic game
(the bot sends without pacing for that), then the bot again at the default pacing
(`WOLFJUDGE_SEND_INTERVAL` 1.5 s + up to 1 s jitter) and the judge's `开始`: once the start's
first two messages are out, SIGTERM, and the seconds until the process has exited. Also
reported: the exit status and how many of the start's messages were still unsent (they go
after the restart).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "tests" / "e2e"))

from gatewayhelp import Gateway, need_gateway, wait_until  # noqa: E402

JUDGE = "wxid_judge"
CODE = re.compile(r"游戏码[ ：:]?([A-Z0-9]{4,8})")


def bot(root: Path, gateway: Gateway, db: Path, work: Path, *, paced: bool
        ) -> tuple[subprocess.Popen[bytes], Path]:
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONUTF8": "1",
           "WECHATY_PUPPET_SERVICE_ENDPOINT": gateway.endpoint,
           "WECHATY_PUPPET_SERVICE_TOKEN": gateway.token, "WOLFJUDGE_JUDGES": JUDGE,
           "WOLFJUDGE_DATABASE_URL": f"sqlite:///{db}", "WOLFJUDGE_ROOMS_PER_HOUR": "100",
           "CACHE_DIR": str(work / "wechaty-cache")}
    if not paced:
        env |= {"WOLFJUDGE_SEND_INTERVAL": "0", "WOLFJUDGE_SEND_JITTER": "0",
                "WOLFJUDGE_ROOM_INTERVAL": "0"}
    log = work / f"bot-{time.monotonic_ns()}.txt"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "run"], cwd=work, env=env,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    wait_until(lambda: "wolfjudge: connected" in log.read_text(errors="replace"), 90,
               "the bot to connect")
    return proc, log


def one_run(root: Path, node: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="wj-stop-") as tmp:
        work = Path(tmp)
        db = work / "wolfjudge.db"
        subprocess.run([sys.executable, "-m", "bot.cli", "migrate", "--db", f"sqlite:///{db}"],
                       cwd=work, env={**os.environ, "PYTHONPATH": str(root)}, check=True,
                       capture_output=True)
        gateway = Gateway(node, work)
        gateway.start()
        try:
            judge = gateway.contact("judge", JUDGE)
            players = [gateway.contact(f"p{i}", f"wxid_p{i}") for i in range(1, 13)]
            proc, _ = bot(root, gateway, db, work, paced=False)
            gateway.dm(judge, "新游戏 经典")
            wait_until(lambda: any(CODE.search(t) for t in gateway.dms_to(judge)), 30, "a code")
            code = next(m[1] for t in gateway.dms_to(judge) if (m := CODE.search(t)))
            for i, p in enumerate(players, 1):
                gateway.dm(p, f"报名 {code} 马甲{i:02d}")
                wait_until(lambda p=p: gateway.dms_to(p), 30, "a seat")
            proc.send_signal(signal.SIGTERM)
            proc.wait(120)
            proc, _ = bot(root, gateway, db, work, paced=True)
            before = len(gateway.sent())
            gateway.dm(judge, "开始")
            wait_until(lambda: len(gateway.sent()) >= before + 2, 60, "the start")
            t0 = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            status = proc.wait(120)
            seconds = time.monotonic() - t0
            with sqlite3.connect(db) as con:
                unsent = con.execute("select count(*) from outbox where sent_at is null"
                                     ).fetchone()[0]
            return {"seconds": round(seconds, 2), "status": status, "unsent": unsent}
        finally:
            gateway.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=HERE, help="the checkout whose bot runs")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    node = need_gateway()
    runs = [one_run(args.root.resolve(), node) for _ in range(args.runs)]
    secs = [r["seconds"] for r in runs]
    print(f"SIGTERM to exit, {len(runs)} runs: median {statistics.median(secs):.2f} s, "
          f"max {max(secs):.2f} s; exit status {sorted({r['status'] for r in runs})}; "
          f"unsent at the stop {[r['unsent'] for r in runs]}")
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
