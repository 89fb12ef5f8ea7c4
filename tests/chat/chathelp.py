"""A table for the chat layer's tests: a ChatBot over a MemoryTransport on a fresh SQLite
database, a clock the test moves by hand (aware datetimes, never the real clock), and helpers
to create, fill and start games by sending the words players and judges send."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select

from bot.chat.bot import ChatBot
from bot.gametime import wall_clock
from bot.service import Service
from bot.store import migrate
from bot.store.models import Player, Room
from bot.transport import Incoming
from bot.transport.memory import MemoryTransport, Sent
from engine.model import GameState

TZ = "Asia/Shanghai"
ZONE = ZoneInfo(TZ)
JUDGE = "J"
START = datetime(2026, 12, 1, 7, 30, tzinfo=ZONE)  # before day 1 opens (09:00)
CODE = re.compile(r"游戏码[ ：:]?([A-Z0-9]{4,8})")
CJK = re.compile(r"[\u3400-\u9fff]")
CLASSIC_ROLES = {"狼人", "预言家", "女巫", "守卫", "丘比特", "村民"}
ANOMALY_ROLES = {"狼头", "预言家", "女巫", "长老", "守卫", "猎人", "村民"}


def fixed_codes() -> Callable[[], str]:
    """Fixed game codes (in no contact's name): the same every run."""
    counter = itertools.count(1)
    return lambda: f"G{next(counter):05d}"


def fixed_seeds() -> Callable[[], str]:
    """Fixed seeds, one per game: the same deal every run."""
    counter = itertools.count(1)
    return lambda: f"{next(counter):064x}"


class Table:
    """`url`: the database (a migrated one; by default a new SQLite file in `tmp_path`)."""

    def __init__(self, tmp_path: Path, transport: MemoryTransport | None = None,
                 judges: tuple[str, ...] = (JUDGE,), url: str | None = None) -> None:
        if url is None:
            url = f"sqlite:///{tmp_path / 'chat.db'}"
            migrate(url)
        self.url = url
        self.judges = judges
        self.exports = tmp_path / "exports"
        self.transport = transport if transport is not None else MemoryTransport()
        self.service, self.bot = self._bot()
        self.now = START
        self.n = 0

    def _bot(self) -> tuple[Service, ChatBot]:
        service = Service(self.url)
        return service, ChatBot(service, self.transport, seeds=fixed_seeds(),
                                codes=fixed_codes(), judges=list(self.judges), time_zone=TZ,
                                export_dir=self.exports)

    def restart(self) -> None:
        """The bot killed and started again on the same database and platform: a new service
        and chat bot (the fixed codes and seeds from their start), which sends at once what
        the dead one left unsent."""
        self.service.close()
        self.service, self.bot = self._bot()
        self.bot.deliver()

    def close(self) -> None:
        self.service.close()

    # talking -----------------------------------------------------------------------------------
    def incoming(self, sender: str, text: str, room: str | None = None,
                 msg_id: str | None = None) -> Incoming:
        if msg_id is None:
            self.n += 1
            msg_id = f"m{self.n}"
        return Incoming(msg_id=msg_id, sender=sender, text=text, at=self.now, room=room)

    def handle(self, msg: Incoming) -> list[Sent]:
        before = len(self.transport.sent)
        self.bot.handle(msg)
        return self.transport.sent[before:]

    def send(self, sender: str, text: str, room: str | None = None,
             msg_id: str | None = None) -> list[Sent]:
        """Everything the message caused (DMs, posts, room changes), in order."""
        return self.handle(self.incoming(sender, text, room, msg_id))

    def ask(self, sender: str, text: str, room: str | None = None) -> list[str]:
        """The DMs the message caused to its sender."""
        return [s.text for s in self.send(sender, text, room)
                if s.kind == "dm" and s.target == sender]

    def reply(self, sender: str, text: str, room: str | None = None) -> str:
        return "\n".join(self.ask(sender, text, room))

    # games -------------------------------------------------------------------------------------
    def new_game(self, text: str = "新游戏 经典") -> str:
        answer = self.reply(JUDGE, text)
        m = CODE.search(answer)
        assert m, answer
        return m.group(1)

    def fill(self, code: str, n: int, first: int = 1) -> list[str]:
        contacts = []
        for i in range(first, first + n):
            contact = f"P{i}"
            assert "报名成功" in self.reply(contact, f"报名 {code} 马甲{i}")
            contacts.append(contact)
        return contacts

    def game(self, text: str = "新游戏 经典", players: int = 12) -> str:
        code = self.new_game(text)
        self.fill(code, players)
        assert "已开始" in self.reply(JUDGE, "开始")
        return code

    def ended(self) -> str:
        """A game the judge ended (`结束`, confirmed): over, with no winner."""
        code = self.game()
        self.reply(JUDGE, f"#{code} 结束")
        self.reply(JUDGE, f"#{code} 结束 确认")
        assert self.state(code).ended
        return code

    def link(self, code: str) -> tuple[int, int]:
        """Cupid links the first two other seats: the camps form, the rooms are made."""
        cupid = self.seats_with(code, "cupid")[0]
        a, b = [n for n in range(1, 13) if n != cupid][:2]
        self.send(self.contact(code, cupid), f"连 {a} {b}")
        return a, b

    def state(self, code: str) -> GameState:
        return self.service.state(code)

    def dump(self, code: str) -> dict[str, Any]:
        return self.service.state(code).model_dump(mode="json")

    def contact(self, code: str, seat: int) -> str:
        with self.service.db.read() as s:
            c = s.scalar(select(Player.contact_id).where(Player.game_id == code,
                                                         Player.seat == seat))
        assert c is not None
        return c

    def contacts(self, code: str) -> dict[int, str]:
        with self.service.db.read() as s:
            return {n: c for n, c in s.execute(select(Player.seat, Player.contact_id).where(
                Player.game_id == code)) if c}

    def room(self, code: str, group: str) -> str | None:
        with self.service.db.read() as s:
            return s.scalar(select(Room.room_id).where(Room.game_id == code,
                                                       Room.name == group))

    def seats_with(self, code: str, role: str) -> list[int]:
        return [st.seat for st in self.state(code).seats if st.role == role]

    # the clock ---------------------------------------------------------------------------------
    def wall(self) -> datetime:
        return wall_clock(self.now, ZONE)

    def move_to(self, when: datetime) -> list[Sent]:
        """Move the clock forward to `when`, firing every deadline due on the way."""
        before = len(self.transport.sent)
        assert when.tzinfo is not None and when >= self.now
        self.now = when
        for gid in self.service.game_ids(active_only=True):
            self.service.advance(gid, self.wall())
        self.bot.deliver(self.now)
        return self.transport.sent[before:]

    def advance(self, delta: timedelta) -> list[Sent]:
        return self.move_to(self.now + delta)

    def to_next_deadline(self, code: str) -> list[Sent]:
        dl = self.state(code).next_deadline()
        assert dl is not None
        return self.move_to(max(self.now, dl.due.replace(tzinfo=ZONE)))


def dm_texts(sent: list[Sent], contact: str) -> list[str]:
    return [s.text for s in sent if s.kind == "dm" and s.target == contact]
