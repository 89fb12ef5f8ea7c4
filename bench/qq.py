"""The message economy on QQ (issue 32): whole games over the OneBot v11 protocol against our
fake NapCat (tests/qq/onebotfake.py, a real WebSocket on loopback), counted on the wire.

    python bench/qq.py                 # a classic and a standard game, a table of figures
    python bench/qq.py --json out.json

The games are the QQ tests' (tests/qq/qqtable.py): twelve QQ friends and a judge, the judge
making and binding each QQ group the bot asks for, the announcements in the community's group
(QQ's default, `public.channel=room`), the demo's scripted players. For each game, from what
the fake received (send_private_msg and send_group_msg):

- sends: DMs and group posts, the most any one recipient got, the judge's DMs, the largest
  burst (the sends one step caused: one message handled, or one firing of deadlines);
- `doubled`: steps in which a recipient got two messages (the goal: none);
- the waits at QQ's default pacing (2 s + up to 1.5 s jitter a send: 2.75 s on average),
  computed, not slept: the last recipient of the largest burst, and an answer written while
  the burst's second send is going out (its place in the queue measured with the installed
  `bot.outbox.deliver`, as bench/messages.py does for WeChat).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "qq"), str(ROOT / "bench")]

GAMES = [("classic", 3), ("standard", 5)]


def measure(ruleset: str, seed: int) -> dict[str, Any]:
    from messages import economy
    from onebotfake import FakeOneBot
    from qqtable import JUDGE_QQ, QQTable

    from bot.transport.onebot import QQ_PACING

    fake = FakeOneBot()
    fake.start()
    try:
        with tempfile.TemporaryDirectory(prefix="wj-bench-qq-") as tmp:
            table = QQTable(ruleset, seed, fake, f"sqlite:///{Path(tmp) / 'qq.db'}")
            try:
                winner = table.run()
            finally:
                table.stop_bot()
    finally:
        fake.stop()
    steps = [[(s.kind, s.to) for s in step] for step in table.steps if step]
    return {"game": ruleset, "winner": winner, "steps": len(table.steps),
            **economy(steps, JUDGE_QQ, interval=QQ_PACING.interval, jitter=QQ_PACING.jitter,
                      posts="group_posts")}


def main() -> int:
    from messages import table

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    results = [measure(r, s) for r, s in GAMES]
    table(results, ["game", "sends", "dms", "group_posts", "judge_dms", "most_to_one",
                    "largest_burst", "doubled_steps", "answer_after_sends"])
    if args.json:
        args.json.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
