"""The message economy (issue 20): what the bot sends in a whole game, and how long people wait.

    python bench/messages.py                 # the four games below, a table of figures
    python bench/messages.py --json out.json

Games: `wolfjudge demo` of each ruleset (its scripted judge and twelve players, five or so
game days, the default options: public announcements by DM), and the same games with
`public.channel=room` (the announcements once, in a public room). For each:

- sends: every message the bot sent (DMs and room posts), per recipient (the most any one
  got, and the judge's DMs), and the largest burst: the sends one input line caused;
- `doubled`: steps in which a recipient got two messages (the goal: none);
- from the pacer's own schedule at the default settings (`WOLFJUDGE_SEND_INTERVAL` 1.5 s +
  up to 1 s jitter: 2.0 s a send on average, 2.5 s at most), computed, not slept: how long
  the last recipient of the largest burst waits, and how long an answer waits that is
  written while the second send of that burst is going out. The answer's place in the queue
  is measured with the installed `bot.outbox.deliver` itself: the burst's sends are put in a
  fresh outbox, a transport that takes its time (like WeChat's) sends them, and during its
  second send a reply to a stranger's `帮助` is written.

The script only uses what every version of the bot has (the demo, the outbox and `deliver`),
so running it in a checkout of an earlier commit gives the "before" figures.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

INTERVAL, JITTER = 1.5, 1.0  # the pacer's defaults (bot/transport/pacing.py)
GAMES = [("classic", ()), ("anomaly", ()), ("classic", ("public.channel=room",)),
         ("anomaly", ("public.channel=room",))]
SEND = re.compile(r"→ (@?)([^\s:@]+): ")


def transcript(ruleset: str, options: tuple[str, ...]) -> str:
    from bot.chat.demo import Demo

    out = io.StringIO()
    with tempfile.TemporaryDirectory(prefix="wj-bench-") as tmp:
        try:
            demo = Demo(ruleset, 1, out, f"sqlite:///{Path(tmp) / 'demo.db'}", options)
        except TypeError:  # a bot from before `--option`: the default game only
            if options:
                raise SystemExit("this checkout's demo takes no options") from None
            demo = Demo(ruleset, 1, out, f"sqlite:///{Path(tmp) / 'demo.db'}")
        demo.run()
    return out.getvalue()


def steps(text: str) -> list[list[tuple[str, str]]]:
    """The sends of each input line: (kind, recipient) with kind `dm` or `room`."""
    out: list[list[tuple[str, str]]] = []
    for line in text.splitlines():
        m = SEND.match(line)
        if m:
            out[-1].append(("room" if m[1] else "dm", m[2]))
        elif line and not line.startswith(("  ", "+", "-", "#")):
            out.append([])  # an input line (or a /clock): a new step
    return [s for s in out if s]


def reply_wait(burst: int) -> int:
    """How many sends go out, after the one in flight when an answer is written, before the
    answer does (1: it is next), with the installed `deliver`."""
    from sqlalchemy import insert

    from bot.outbox import deliver
    from bot.store import migrate
    from bot.store.db import Database
    from bot.store.models import OutboxRow

    table: Any = OutboxRow.__table__
    sent: list[str] = []

    def row(key: str, to: str, reply: bool) -> dict[str, Any]:
        now = datetime.now(UTC).replace(tzinfo=None)
        values: dict[str, Any] = {
            "dedupe_key": key, "game_id": None, "seq": None, "channel": "dm",
            "target": f"contact:{to}", "address": to, "text": key, "created_at": now,
            "attempts": 0, "next_attempt_at": now}
        if "priority" in table.c:  # this bot knows answers from broadcasts
            values["priority"] = 0 if reply else 1
        return values

    with tempfile.TemporaryDirectory(prefix="wj-bench-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'q.db'}"
        migrate(url)
        db = Database(url)

        class Slow:
            instant = False

            def send(self, message: Any) -> None:
                sent.append(message.dedupe_key)
                if len(sent) == 2:  # a stranger's 帮助 is answered now
                    with db.write() as s:
                        s.execute(insert(table), [row("answer", "stranger", True)])

        with db.write() as s:
            s.execute(insert(table), [row(f"burst/{i}", f"p{i}", False) for i in range(burst)])
        while deliver(db, Slow()).sent:
            pass
        db.dispose()
    return sent.index("answer") - 2  # sends after the one in flight (the 2nd, index 1)


def economy(per_step: list[list[tuple[str, str]]], judge: str, *, interval: float = INTERVAL,
            jitter: float = JITTER, posts: str = "room_posts") -> dict[str, Any]:
    """The figures of a game's sends: `per_step`, each step's (kind, recipient), kind `dm` or a
    post; `judge`: the judge's recipient; the pacing (`interval` + up to `jitter` a send);
    `posts`: what the posts are called (WeChat's rooms, QQ's groups)."""
    sends = [s for step in per_step for s in step]
    recipients = Counter(sends)
    burst = max(len(step) for step in per_step)
    after = reply_wait(burst)
    each, worst = interval + jitter / 2, interval + jitter
    return {
        "sends": len(sends),
        "dms": sum(1 for kind, _ in sends if kind == "dm"),
        posts: sum(1 for kind, _ in sends if kind != "dm"),
        "judge_dms": recipients[("dm", judge)],
        "most_to_one": max(recipients.values()),
        "largest_burst": burst,
        "doubled_steps": sum(1 for step in per_step if len(step) != len(set(step))),
        "last_of_burst_waits_s": {"mean": round((burst - 1) * each, 1),
                                  "max": round((burst - 1) * worst, 1)},
        "answer_after_sends": after,
        # from the start of the send in flight: the sends before it, then its own turn
        "answer_waits_s": {"mean": round((after + 1) * each, 1),
                           "max": round((after + 1) * worst, 1)},
    }


def table(results: list[dict[str, Any]], cols: list[str]) -> None:
    """The figures as a Markdown table (docs/benchmarks.md), the waits as mean (max)."""
    print("| " + " | ".join(cols + ["last of burst waits", "answer waits"]) + " |")
    print("|" + "---|" * (len(cols) + 2))
    for r in results:
        last, ans = r["last_of_burst_waits_s"], r["answer_waits_s"]
        print("| " + " | ".join(str(r[c]) for c in cols)
              + f" | {last['mean']} s ({last['max']} s) | {ans['mean']} s ({ans['max']} s) |")


def measure(ruleset: str, options: tuple[str, ...]) -> dict[str, Any]:
    text = transcript(ruleset, options)
    winner = re.search(r"# winner: (\S+)", text)
    per_step = steps(text)
    return {"game": f"{ruleset} {' '.join(options) or 'public.channel=dm'}",
            "winner": winner[1] if winner else None, "input_lines": len(per_step),
            **economy(per_step, "法官")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--dm-only", action="store_true",
                        help="only the default games (a checkout without public rooms)")
    args = parser.parse_args()
    import logging

    logging.disable(logging.WARNING)
    games = [g for g in GAMES if not (args.dm_only and g[1])]
    results = [measure(r, o) for r, o in games]
    table(results, ["game", "sends", "dms", "room_posts", "judge_dms", "most_to_one",
                    "largest_burst", "doubled_steps", "answer_after_sends"])
    if args.json:
        args.json.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
