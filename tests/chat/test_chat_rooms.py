"""The game's rooms (CHAT.md "Rooms", bot/chat/rooms.py): over whole games played through the
chat layer, no room ever holds a contact not entitled to it and no room post carries what one
of its members may not know; the judge-made path (groups.mode=judge, a transport that cannot
make rooms), and groups.mode=relay."""

from __future__ import annotations

import io
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from chathelp import JUDGE, ZONE, Table, dm_texts

from bot.chat.demo import JUDGE as DEMO_JUDGE
from bot.chat.demo import Demo
from bot.render import render_event
from bot.service import event_of
from bot.texts import t
from bot.transport.memory import MemoryTransport
from engine.ruleset import ruleset_names

NOTICES = [re.compile(".+".join(map(re.escape, t(key, **{f: "\0" for f in fields}).split("\0"))))
           for key, fields in (("room_members", ("code", "room", "members")),
                               ("room_out", ("seat",)))]


class CheckedDemo(Demo):
    """The demo game, checked after every message and every deadline fired."""

    def __init__(self, ruleset: str, seed: int, db_url: str) -> None:
        super().__init__(ruleset, seed, io.StringIO(), db_url)
        self.transport = self.console.transport
        self.posts: list[tuple[str, str, list[str]]] = []  # room, text, members then
        self.died_after: dict[int, int] = {}  # seat -> the last log seq before it went out
        self.checks = 0
        post = self.transport.post

        def recording_post(room: str, text: str, *, key: str | None = None) -> None:
            self.posts.append((room, text, list(self.transport.rooms.get(room, []))))
            post(room, text, key=key)

        self.transport.post = recording_post  # type: ignore[method-assign]
        self.head = 0
        advance = self.service.advance

        def checked_advance(gid: str, until: datetime) -> Any:
            out = advance(gid, until)
            self.check()
            return out

        self.service.advance = checked_advance  # type: ignore[method-assign]

    def say(self, name: str, text: str, room: str | None = None) -> str:
        out = super().say(name, text, room)
        self.check()
        return out

    def check(self) -> None:
        if not self.code:
            return
        try:
            state = self.service.state(self.code)
        except Exception:  # not started yet
            return
        log = self.service.log(self.code)
        contacts = {n: self.contact(n) for n in range(1, len(state.seats) + 1)}
        seat_of = {c: n for n, c in contacts.items()}
        for st in state.seats:
            if not st.alive and st.seat not in self.died_after:
                self.died_after[st.seat] = self.head
        self.head = max((r.seq for r in log), default=0)
        public_after = [r.seq for r in log if r.kind == "event" and (r.audience or {}).get(
            "public")]
        self.checks += 1
        for group, seats in state.groups.items():
            room = self.room(group)
            if room is None or state.over:
                continue
            allowed = {contacts[n] for n in seats if state.seat(n).alive} | {DEMO_JUDGE}
            for n in seats:  # out, but not yet told in public: may still be there
                if not state.seat(n).alive and not any(
                        q > self.died_after[n] for q in public_after):
                    allowed.add(contacts[n])
            members = set(self.transport.rooms.get(room, []))
            assert members <= allowed, (group, members - allowed, state.phase)
        # every room post so far, line by line (one post per step merges what the step
        # said): a notice, or an event every member then may read
        events = [event_of(row.body) for row in log if row.kind == "event"]
        for room, text, members in self.posts[self._posts_checked:]:
            seats = {seat_of[c] for c in members if c in seat_of}
            for line in text.split("\n"):
                if any(p.fullmatch(line) for p in NOTICES):
                    continue
                ok = any(line in render_event(ev, state.ruleset).split("\n") and all(
                    ev.audience.reaches(n) for n in seats) for ev in events)
                assert ok, (room, line, sorted(seats))
        self._posts_checked = len(self.posts)

    _posts_checked = 0


# Every registered ruleset, and more seeds of classic (its rooms: the killers', the lovers').
@pytest.mark.parametrize("ruleset, seed", [(r, s) for r in ruleset_names() for s in (1, 2)]
                         + [("classic", 3), ("classic", 7)])
def test_rooms_hold_only_the_entitled_and_what_they_may_know(tmp_path: Path, ruleset: str,
                                                             seed: int) -> None:
    demo = CheckedDemo(ruleset, seed, f"sqlite:///{tmp_path / 'demo.db'}")
    winner = demo.run()
    assert winner != "none"
    assert demo.checks > 50
    if ruleset == "classic":
        assert demo.posts, "the classic game made its rooms and posted in them"


# the judge-made path ---------------------------------------------------------------------------
def linked(table: Table, code: str) -> tuple[int, int]:
    """Cupid links two villagers (so no wolf is also a lover)."""
    cupid = table.seats_with(code, "cupid")[0]
    a, b = table.seats_with(code, "villager")[:2]
    table.send(table.contact(code, cupid), f"连 {a} {b}")
    return a, b


def by_hand(table: Table, text: str) -> str:
    code = table.game(text)
    sent_before = len(table.transport.sent)
    linked(table, code)
    told = dm_texts(table.transport.sent[sent_before:], JUDGE)
    assert len(told) == 1, told  # one message to the judge for the step
    asks = [x for x in told[0].split("\n") if "手动" in x]
    assert len(asks) == 2, asks  # the wolves' room and the lovers' room
    wolves = table.seats_with(code, "wolf")
    ask = next(x for x in asks if "狼群" in x)
    assert f"{code}狼群" in ask and all(f"{n}号" in ask for n in wolves)
    assert f"绑定 {code} 狼群" in ask
    assert table.room(code, "wolves") is None
    assert not [s for s in table.transport.sent if s.kind == "create"]
    return code


def bind_wolves(table: Table, code: str) -> None:
    wolves = table.seats_with(code, "wolf")
    contacts = [table.contact(code, n) for n in wolves]
    villager = table.contact(code, table.seats_with(code, "villager")[0])
    transport = table.transport
    assert isinstance(transport, MemoryTransport)
    transport.rooms["hand"] = [contacts[0], villager, JUDGE]
    answer = table.reply(JUDGE, f"绑定 {code} 狼群", room="hand")
    assert f"{wolves[1]}号" in answer and f"{wolves[2]}号" in answer  # missing
    assert "不应" in answer and table.seats_with(code, "villager")[0] in [
        int(x) for x in re.findall(r"(\d+)号 不应", answer)], answer
    assert table.room(code, "wolves") is None
    refused = table.reply(contacts[0], f"绑定 {code} 狼群", room="hand")
    assert "法官" in refused and table.room(code, "wolves") is None
    transport.rooms["hand"] = [*contacts, JUDGE]
    answer = table.reply(JUDGE, f"绑定 {code} 狼群", room="hand")
    assert "已绑定" in answer, answer
    assert table.room(code, "wolves") == "hand"
    night = table.move_to(datetime(2026, 12, 1, 21, 5, tzinfo=ZONE))
    assert any(s.kind == "post" and s.target == "hand" and "指杀" in s.text for s in night)
    assert not any("指杀" in x for c in contacts for x in dm_texts(night, c))
    sent = table.send(contacts[1], f"刀 {table.seats_with(code, 'villager')[0]}", room="hand")
    assert any(s.kind == "post" and s.target == "hand" for s in sent)


def test_groups_mode_judge(table: Table) -> None:
    code = by_hand(table, "新游戏 经典 groups.mode=judge")
    bind_wolves(table, code)


def test_transport_without_rooms_degrades_to_the_judge(tmp_path: Path) -> None:
    table = Table(tmp_path, transport=MemoryTransport(rooms_allowed=False))
    code = by_hand(table, "新游戏 经典")
    bind_wolves(table, code)
    table.close()


def test_bind_outside_a_room_and_unknown_code(table: Table) -> None:
    code = by_hand(table, "新游戏 经典 groups.mode=judge")
    assert "群里" in table.reply(JUDGE, f"绑定 {code} 狼群")
    assert "ZZZZ99" in table.reply(JUDGE, "绑定 ZZZZ99 狼群", room="hand")


def test_groups_mode_relay(table: Table) -> None:
    code = table.game("新游戏 经典 groups.mode=relay")
    linked(table, code)
    assert not [s for s in table.transport.sent if s.kind == "create"]
    assert table.room(code, "wolves") is None
    wolves = table.seats_with(code, "wolf")
    contacts = table.contacts(code)
    sent = table.send(contacts[wolves[0]], "今晚刀谁？")
    for n in wolves[1:]:
        assert dm_texts(sent, contacts[n]) == [f"【狼群】{wolves[0]}号：今晚刀谁？"]
    assert dm_texts(sent, JUDGE) == [f"【狼群】{wolves[0]}号：今晚刀谁？"]
    told = {s.target for s in sent if s.kind == "dm"}
    assert told == {contacts[n] for n in wolves[1:]} | {JUDGE}  # the sender is not echoed
    assert not [s for s in sent if s.kind == "post"]
    # a villager's chatter is relayed to nobody
    villager = contacts[table.seats_with(code, "villager")[-1]]
    sent = table.send(villager, "今晚刀谁？")
    assert {s.target for s in sent} == {villager}


def test_a_kill_sent_by_dm_is_answered_by_dm(table: Table) -> None:
    """The killers' room gets the record; the killer who sent it by DM gets it too (CHAT.md:
    every command in a DM gets a direct reply). Before: only the room heard of it."""
    code = table.game()
    linked(table, code)
    table.move_to(datetime(2026, 12, 1, 21, 5, tzinfo=ZONE))
    room = table.room(code, "wolves")
    wolf = table.contact(code, table.seats_with(code, "wolf")[0])
    target = table.seats_with(code, "villager")[0]
    sent = table.send(wolf, f"刀 {target}")
    assert [s for s in sent if s.kind == "post" and s.target == room]
    assert any(f"{target} 号" in x for x in dm_texts(sent, wolf)), sent
    sent = table.send(wolf, "锁定", room=room)
    assert [s for s in sent if s.kind == "post" and s.target == room]
    assert dm_texts(sent, wolf) == []  # said in the room: answered in the room


class _Lossy(MemoryTransport):
    """A platform that silently leaves the last member out of a new room."""

    def create_room(self, name: str, members: list[str]) -> str:
        room = super().create_room(name, members)
        self.rooms[room] = self.rooms[room][:-2] + self.rooms[room][-1:]  # one wolf missing
        return room


def test_room_members_are_audited_after_a_change(tmp_path: Path) -> None:
    """Issue 9: the room's real members are checked after every change; the judge is told
    who is missing, and until it is put right the room gets nothing it should not."""
    table = Table(tmp_path, transport=_Lossy())
    code = table.game()
    linked(table, code)
    warned = [x for x in dm_texts(table.transport.sent, JUDGE) if "成员与应有成员不符" in x]
    assert len(warned) >= 1 and "缺少" in warned[0]


def test_a_stranger_in_a_room_stops_its_posts(table: Table) -> None:
    """A member who is neither a seat nor a judge (slipped in on the platform) means the
    room gets no post: its members are DMed instead."""
    from bot.store.models import RoomMember

    code = table.game()
    linked(table, code)
    room = table.room(code, "wolves")
    assert room is not None
    table.move_to(datetime(2026, 12, 1, 21, 5, tzinfo=ZONE))
    with table.service.db.write() as s:  # as the audit records a room it finds changed
        s.add(RoomMember(game_id=code, room="wolves", contact_id="stranger"))
    table.transport.rooms[room].append("stranger")
    night = table.state(code).night
    assert night is not None
    killer = table.contact(code, night.slots["kill"].seats[0])
    target = table.seats_with(code, "villager")[0]
    sent = table.send(killer, f"刀 {target}")
    assert not [s for s in sent if s.kind == "post" and s.target == room]
    assert any(f"{target} 号" in x for x in dm_texts(sent, killer))
    assert "stranger" not in table.transport.rooms[room]  # and the next sync removes him


def test_a_sync_reads_the_rooms_and_the_contacts_once(table: Table,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The rooms follow every commit (bot/chat/rooms.py): a sync reads the game's rooms with
    their members in one look-up and its contacts once, however many rooms the game has
    (before: each room's id, its members and the contacts twice, room by room)."""
    code = table.game()
    linked(table, code)
    assert table.room(code, "wolves") and table.room(code, "lovers")
    chats = table.bot.chats
    calls: list[str] = []
    for name in ("rooms", "room_id", "room_members", "contacts", "players", "lobby"):
        read = getattr(chats, name, None)
        if read is None:
            continue
        monkeypatch.setattr(chats, name, lambda *a, _n=name, _r=read: calls.append(_n) or _r(*a))
    lobby = table.bot.chats.lobby(code)
    assert lobby is not None
    calls.clear()
    for events in ([], chats.last_events(code)):
        table.bot.rooms.sync(code, table.state(code), events, lobby)
    assert sorted(calls) == ["contacts", "contacts", "rooms", "rooms"]
