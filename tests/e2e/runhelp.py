"""`wolfjudge run --clock …` as a subprocess on the test gateway, and a table of mock contacts
that plays a game through it (tests/e2e/test_run_e2e.py).

The bot's clock is virtual: it moves only by `/clock` and `/advance` lines written to its
standard input, each followed by `/echo N`; the `# N` line on its standard output says the
line was handled. Its sends are asynchronous (one outbox deliverer thread), so after a line
or a contact's message the table waits, with a bounded timeout, until the bot has recorded the
message, its outbox holds nothing it could deliver, and the answer was seen on the gateway.
What the players decide, they decide from what the gateway recorded the bot sending them (the
decision logic is the console game driver's, tests/chat/test_console_game.py).
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gatewayhelp import Gateway, wait_until
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.pool import NullPool

from bot.texts import ruleset_name

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "chat"))
from test_console_game import CAMPS as CAMPS  # noqa: E402  (re-exported for the tests)
from test_console_game import SEEDS as SEEDS  # noqa: E402
from test_console_game import LineProcess, Message, Player, Table  # noqa: E402
from test_console_game import dealt as dealt  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# On the hour: the driver moves the clock by whole hours, so a day's close (21:00) and a shot
# due half an hour after it fall in different steps, and an exiled hunter answers in time.
START = "2026-12-01 07:00"
BOT = "wxid_bot"  # the gateway's mock account
JUDGE = "wxid_judge"
SETTLE_TIMEOUT = 30.0  # seconds for the bot to answer a message and empty its outbox


class BotProcess(LineProcess):
    """`wolfjudge run --clock START` on the gateway, with the pacing off."""

    def __init__(self, gateway: Gateway, db: Path | str, workdir: Path, clock: str = START,
                 host: str = "") -> None:
        """`db`: a SQLite file, or a database URL; `host`: WOLFJUDGE_HOST (several
        accounts on one database)."""
        self.db = db
        self.host = host
        self.url = db if isinstance(db, str) else f"sqlite:///{db}"
        env = {**os.environ, "PYTHONUTF8": "1", "PYTHONPATH": str(ROOT),
               "WECHATY_PUPPET_SERVICE_ENDPOINT": gateway.endpoint,
               "WECHATY_PUPPET_SERVICE_TOKEN": gateway.token,
               "WOLFJUDGE_JUDGES": JUDGE, "WOLFJUDGE_DATABASE_URL": self.url,
               "WOLFJUDGE_HOST": host,
               "WOLFJUDGE_SEND_INTERVAL": "0", "WOLFJUDGE_SEND_JITTER": "0",
               "WOLFJUDGE_ROOM_INTERVAL": "0", "WOLFJUDGE_ROOMS_PER_HOUR": "100",
               "CACHE_DIR": str(workdir / "wechaty-cache")}
        env.pop("WOLFJUDGE_TZ", None)
        self.stderr_path = workdir / "bot-stderr.txt"
        self.stderr = self.stderr_path.open("ab")
        super().__init__(subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "run", "--clock", clock], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.stderr, cwd=workdir, env=env, text=True,
            encoding="utf-8", bufsize=1))

    def context(self) -> str:
        return self.log()

    def ready(self, timeout: float = 60.0) -> list[str]:
        """Connected: `run` reads stdin only once it is logged in (or gave up waiting).
        The notes printed before."""
        return self.send("/echo ready", timeout)

    def kill(self) -> None:
        """SIGKILL: no goodbye, nothing flushed."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self.stderr.close()

    def close(self, timeout: float = 60.0) -> int:
        """End of input: the bot stops."""
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if not self.stderr.closed:
            self.stderr.close()
        return int(self.proc.returncode)

    def log(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")[-4000:]

    def tracebacks(self) -> int:
        """How many tracebacks the bot logged (a bug caught and logged still counts)."""
        return self.stderr_path.read_text(encoding="utf-8", errors="replace").count(
            "Traceback")

    # the database, read only to know that the bot is done ------------------------------------
    def _query(self, sql: str, **params: object) -> list[tuple[Any, ...]]:
        if isinstance(self.db, Path):
            with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=10) as con:
                return list(con.execute(sql, params))
        if self._engine is None:
            self._engine = create_engine(self.db, poolclass=NullPool)
        with self._engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text(sql), params)]

    _engine: Engine | None = None

    def handled(self, msg_id: str) -> bool:
        key = f"{self.host}/{msg_id}" if self.host else msg_id  # bot/chat/bot.py: handle
        return bool(self._query("select 1 from chat_messages where msg_id = :m", m=key))

    def pending(self) -> list[tuple[Any, ...]]:
        """Outbox rows the bot could deliver and has not (a group's rows wait for its room;
        a summary, priority 2, waits for its minute: the judge's `报名 7/12`)."""
        return self._query(
            "select o.id, o.target, o.attempts, o.last_error from outbox o where o.sent_at is "
            "null and o.priority != 2 and (o.address is not null or o.target not like "
            "'group:%' or exists (select 1 from rooms r where r.game_id = o.game_id and "
            "'group:' || r.name = o.target)) and coalesce(case when o.game_id is null then "
            "o.host else (select g.host from games g where g.id = o.game_id) end, '') = :h",
            h=self.host)  # this account's rows (bot/outbox.py)


class Feed:
    """What the bot did on the gateway since the last look: sends, and rooms made or changed,
    as the console driver's `Message`s (`to`/`room` are contact and room ids)."""

    def __init__(self, gateway: Gateway) -> None:
        self.gw = gateway
        self.seq = 0
        self.rooms: dict[str, list[str]] = {}  # room id -> members (the bot left out)
        self.all: list[dict[str, Any]] = []  # every send seen

    def reset(self) -> None:
        """A restarted gateway: its records start again, and so do these."""
        self.seq = 0
        self.rooms = {}
        self.all = []

    def new(self) -> list[Message]:
        out: list[Message] = []
        for rid, room in self.gw.rooms().items():
            members = [m for m in room["members"] if m != BOT]
            before = self.rooms.get(rid)
            if before is None:
                out.append(Message("+", None, rid, " ".join(members), made=True))
            else:
                out += [Message("+", None, rid, m) for m in members if m not in before]
                out += [Message("-", None, rid, m) for m in before if m not in members]
            self.rooms[rid] = members
        for s in self.gw.sent(self.seq):
            self.seq = max(self.seq, int(s["seq"]))
            self.all.append(s)
            if s["kind"] == "dm":
                out.append(Message("→", s["to"], None, s["text"]))
            else:
                out.append(Message("→", None, s["to"], s["text"]))
        return out

    def dms_to(self, contact: str) -> list[str]:
        return [s["text"] for s in self.all if s["kind"] == "dm" and s["to"] == contact]

    def posts_in(self, room: str) -> list[str]:
        return [s["text"] for s in self.all if s["kind"] == "post" and s["to"] == room]


class GatewayTable(Table):
    """The console driver's table, its twelve players and judge mock contacts on the gateway
    (`wxid_p1` … `wxid_p12`, `wxid_judge`), its bot `wolfjudge run`."""

    def __init__(self, bot: BotProcess, gateway: Gateway, ruleset: str, seed: int) -> None:
        super().__init__(bot, ruleset, seed)  # type: ignore[arg-type]  # .c: send, transcript
        self.bot = bot
        self.gw = gateway
        self.judge = gateway.contact("judge", JUDGE)
        ids = [gateway.contact(f"p{i}", f"wxid_p{i}") for i in range(1, 13)]
        self.players = {c: Player(c) for c in ids}
        self.feed = Feed(gateway)
        self.log: list[Message] = []  # everything read, in order
        self.steps: list[list[Message]] = []  # what each message sent to the bot caused

    # waiting for the bot ---------------------------------------------------------------------
    def settle(self, msg_id: str | None = None,
               answered: Callable[[list[Message]], bool] | None = None,
               timeout: float = SETTLE_TIMEOUT) -> list[Message]:
        """What the bot sent until it is done: `msg_id` handled, `answered` by what it sent,
        its outbox empty (each checked again after the last send seen)."""
        got: list[Message] = []
        deadline = time.monotonic() + timeout
        while True:
            done = (msg_id is None or self.bot.handled(msg_id)) and not self.bot.pending()
            got += self.feed.new()
            if done and (answered is None or answered(got)):
                got += self.feed.new()  # a reply sent right after the outbox emptied
                self.log += got
                return got
            if time.monotonic() > deadline:
                seen = [(m.to or m.room, m.text[:40]) for m in got]
                raise AssertionError(
                    f"the bot did not settle in {timeout:g} s (message {msg_id}; unsent "
                    f"{self.bot.pending()[:5]}); it sent {seen}:\n{self.bot.log()}")
            if self.bot.proc.poll() is not None:
                raise AssertionError(f"wolfjudge run exited ({self.bot.proc.returncode}):\n"
                                     + self.bot.log())
            time.sleep(0.02)

    # the console driver's moves, over the gateway --------------------------------------------
    def say(self, name: str, text: str, room: str | None = None, *,
            expect: str = "") -> list[Message]:
        """`name` sends `text` by DM (or in `room`); what the bot sent until it answered (a
        DM to `name` or a post in `room`, containing `expect`) and is done. The bot sends a
        direct reply after its outbox is handed over: where the test reads the reply, it
        names it by `expect`."""
        self.sent[name] = self.sent.get(name, 0) + 1
        assert self.sent[name] <= 200, f"{name} keeps sending: {text!r}"
        msg_id = self.gw.dm(name, text) if room is None else self.gw.say(name, room, text)

        def answered(got: list[Message]) -> bool:
            return any(m.head == "→" and (m.to == name or (room and m.room == room))
                       and expect in m.text for m in got)

        got = self.settle(msg_id, answered)
        self.steps.append(got)
        self.read(got)
        return got

    def line(self, line: str) -> list[Message]:
        """A stdin line (`/clock …`, `/advance …`), then what it caused."""
        self.bot.send(line)
        got = self.settle()
        self.read(got)
        return got

    def advance(self) -> None:
        self.line("/advance 1h")

    def play_until(self, due: Callable[[], bool], max_hours: int = 24 * 10) -> None:
        """Play hour by hour until `due()` holds after a clock move, before the players
        answer what it brought (`self.todo` holds their answers)."""
        for _ in range(max_hours):
            self.flush()
            assert not self.over, "the game ended first"
            self.advance()
            if due():
                return
        raise AssertionError(f"not due after {max_hours} hours")

    def night(self) -> bool:
        """The night's prompts came (the players have not answered them yet)."""
        return any(re.match(r"(刀|验|守|防火墙|感染) ", text) for _, text, _ in self.todo)

    def deal(self) -> None:
        got = self.say(self.judge, f"新游戏 {ruleset_name(self.ruleset)} votes.channel=dm")
        m = next((re.search(r"游戏码[ ：]([A-Z0-9]{4,8})", x.text) for x in got
                  if x.to == self.judge and "游戏码" in x.text), None)
        assert m, got
        self.code = m[1]
        for i, name in enumerate(self.players, 1):
            got = self.say(name, f"报名 {self.code} 马甲{i:02d}")
            assert self.replied(got, name, "报名成功"), got
        self.say(self.judge, "开始")

    # what the table knows ---------------------------------------------------------------------
    def seat_of(self, contact: str) -> int:
        return self.players[contact].seat

    def contact_of(self, seat: int) -> str:
        return next(p.name for p in self.players.values() if p.seat == seat)

    def by_role(self, role: str) -> list[Player]:
        return [p for p in self.players.values() if p.role == role]

    def log_members(self, room: str) -> list[str]:
        """The members a room was made with, as first seen on the gateway."""
        return next(m.text.split() for m in self.log if m.made and m.room == room)

    def room_named(self, name: str) -> str | None:
        """The id of the gateway room called `name` (its topic)."""
        return next((rid for rid, r in self.gw.rooms().items() if r["topic"] == name), None)

    def told_the_end(self) -> dict[str, str]:
        """Contact -> the camp it was told won, from the DMs with 游戏结束."""
        told: dict[str, str] = {}
        for s in self.feed.all:
            if s["kind"] == "dm" and "游戏结束" in s["text"]:
                camp = re.search(f"({'|'.join(CAMPS)})胜利", s["text"])
                if camp:
                    told[s["to"]] = camp[1]
        return told


def wait_for_dm(feed: Feed, contact: str, needle: str, timeout: float = 30.0) -> str:
    """The first DM to `contact` containing `needle` (polling the gateway)."""
    def hit() -> str | None:
        feed.new()
        return next((t for t in feed.dms_to(contact) if needle in t), None)

    return str(wait_until(hit, timeout, f"a DM to {contact} with {needle!r}", every=0.05))
