"""The chat layer's tables on both databases (SQLite and PostgreSQL): a lobby, a deal, a room,
a replayed message id, a substitution token."""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo

from sqlalchemy import select

from bot.chat.bot import ChatBot
from bot.service import Service
from bot.store.models import ChatMessage, LobbyPlayer, Player, RoomMember
from bot.transport import Incoming
from bot.transport.memory import MemoryTransport

TZ = ZoneInfo("Asia/Shanghai")


def test_chat_tables(service: Service) -> None:
    transport = MemoryTransport()
    bot = ChatBot(service, transport, judges=["J"])
    now = datetime(2026, 12, 1, 7, 0, tzinfo=TZ)
    n = 0

    def say(sender: str, text: str, msg_id: str | None = None) -> str:
        nonlocal n
        n += 1
        before = len(transport.sent)
        bot.handle(Incoming(msg_id=msg_id or f"m{n}", sender=sender, text=text, at=now))
        return "\n".join(s.text for s in transport.sent[before:] if s.target == sender)

    code = re.search(r"游戏码 ([A-Z0-9]{4,8})", say("J", "新游戏 经典")).group(1)  # type: ignore[union-attr]
    for i in range(1, 13):
        assert "报名成功" in say(f"p{i}", f"报名 {code} 马甲{i}", msg_id=f"join{i}")
    assert say("p1", f"报名 {code} 马甲1", msg_id="join1") == ""  # a replayed id: once
    assert "已经有人" in say("x", f"报名 {code} 马甲2")
    say("J", "开始")
    state = service.state(code)
    cupid = next(s.seat for s in state.seats if s.role == "cupid")
    with service.db.read() as s:
        assert len(list(s.scalars(select(LobbyPlayer).where(LobbyPlayer.code == code)))) == 12
        assert s.get(ChatMessage, "join1") is not None
    with service.db.read() as s:
        who = s.scalar(select(Player.contact_id).where(Player.game_id == code,
                                                       Player.seat == cupid))
    assert who is not None
    a, b = [st.seat for st in state.seats if st.role == "villager"][:2]
    say(who, f"连 {a} {b}")  # two villagers: both rooms are made, whatever the deal
    with service.db.read() as s:
        rooms = {r.room for r in s.scalars(select(RoomMember).where(RoomMember.game_id == code))}
    assert rooms == {"wolves", "lovers"}
    token = re.search(r"接替 (\S+)", say("J", "替补 3")).group(1)  # type: ignore[union-attr]
    assert "已接替" in say("newcomer", f"接替 {token}")
