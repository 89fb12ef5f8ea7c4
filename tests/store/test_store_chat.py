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


def test_the_sender_in_one_statement(service: Service) -> None:
    """Issue 33: `ChatStore.sender` answers who sent a message and where, on both databases:
    seats (over or not), joined lobbies, judged lobbies and games (the cancelled left out,
    the over marked), the room's game and group, and whether the message id was handled."""
    from sqlalchemy import event, update
    from storehelp import at, classic_game

    from bot.store.chat import ChatStore
    from bot.store.models import Game

    chats = ChatStore(service.db)
    lobby = {"ruleset": "classic", "players": 12, "options": {}, "chat_options": {},
             "time_zone": "Asia/Shanghai", "created_at": at(1, 8), "judge": "wx-judge"}
    for code, status in (("g1", "started"), ("g2", "started"), ("OPEN", "open"),
                         ("GONE", "cancelled")):
        assert chats.open_lobby(lambda code=code: code, status=status, **lobby) == code
    classic_game(service, "g1")
    classic_game(service, "g2", bindings={5: ("wx-g1-3", None)}, rooms={})
    with service.db.write() as s:
        s.execute(update(Game).where(Game.id == "g2").values(status="over"))
    assert chats.join("OPEN", "wx-g1-3", "马甲")
    assert chats.handled("k1", "wx-g1-3", at(1, 9).replace(tzinfo=None), [])
    statements: list[str] = []

    def listen(*args: object) -> None:
        statements.append(str(args[2]))

    event.listen(service.db.engine, "before_cursor_execute", listen)
    try:
        who = chats.sender("wx-g1-3", "room-g1", "k1")
    finally:
        event.remove(service.db.engine, "before_cursor_execute", listen)
    assert len([s for s in statements if "UNION ALL" in s.upper()]) == 1, statements
    assert dict(who.seats) == {"g1": 3, "g2": 5} and who.playing == {"g1"}
    assert who.games() == ["OPEN", "g1"] and who.seats_playing() == [("g1", 3)]
    assert (who.room_game, who.room_group, who.handled) == ("g1", "public", True)
    assert who.judged == () and not who.active_judged()
    judge = chats.sender("wx-judge", "elsewhere", "k2")
    assert judge.judged == ("OPEN", "g1", "g2") and judge.judged_over == {"g2"}
    assert judge.active_judged() == ["OPEN", "g1"] and judge.room_game is None
    assert not judge.handled and not judge.seats
