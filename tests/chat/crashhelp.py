"""A kill at every point of a message's handling (issue 33 item 12's follow-up): the test runs a
command once undisturbed, then again on a table set up the same way with the process "killed"
after the k-th database commit made while the message is handled (up to and including its
handled mark), for every k, and hands the same message to a bot restarted on that database.
The database and what was sent must be what the undisturbed run left: applied once, answered
once, as the first time.

A kill is `Killed` (a BaseException, nothing the bot catches) raised from SQLAlchemy's
`after_commit` of a session: after that transaction committed (or, inside the message's one
transaction, its savepoint was released). What a game command commits on a bare connection
(the pipeline's hot path) is not counted: its replay is the service's (its inbox)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from chathelp import JUDGE, ZONE, Table
from sqlalchemy import event, select
from sqlalchemy.orm import Session

from bot.store.models import (
    ChatMessage,
    Game,
    InboxMessage,
    JudgeSetting,
    Lobby,
    LobbyPlayer,
    OutboxRow,
    Player,
    RecordPrivacy,
    Room,
    RoomMember,
    Season,
    SeatToken,
    Snapshot,
    WebLink,
)
from bot.transport import Incoming

# A scenario sets a table up and returns the message to kill the bot on.
Setup = Callable[[Table], Incoming]
# What is random in a text even with fixed seeds: a game's signing key (its encoding, its
# fingerprint) and what it is part of (the commitment), a substitution token.
RANDOM = re.compile(r"[0-9a-f]{16,}|[A-Za-z0-9+/=_-]{40,}|(?<=接替 )[A-Za-z0-9]{12}"
                    r"|(?<=口令：)[A-Za-z0-9]{12}")


class Killed(BaseException):
    """The process dies here (nothing the bot catches)."""


@contextmanager
def commits(kill_at: int | None = None) -> Iterator[list[int]]:
    """Count the sessions' commits (the list holds the count); with `kill_at`, the process
    dies right after that one."""
    count = [0]

    def after(_session: Session) -> None:
        count[0] += 1
        if count[0] == kill_at:
            raise Killed

    event.listen(Session, "after_commit", after)
    try:
        yield count
    finally:
        event.remove(Session, "after_commit", after)


def _text(value: Any) -> str:
    return RANDOM.sub("#", value if isinstance(value, str) else json.dumps(
        value, sort_keys=True, ensure_ascii=False))


def world(table: Table) -> dict[str, Any]:
    """What the database holds that a command can change, and everything sent so far."""
    with table.service.db.read() as s:
        out: dict[str, Any] = {
            "lobbies": sorted(_text([x.code, x.status, x.judge, x.players, x.options,
                                     x.chat_options, x.roles, x.restarted_as, x.undo,
                                     x.end_requested_at is not None])
                              for x in s.scalars(select(Lobby))),
            "joined": sorted((x.code, x.contact_id, x.forum_name, x.joined)
                             for x in s.scalars(select(LobbyPlayer))),
            "games": sorted((x.id, x.status, x.judge_feed) for x in s.scalars(select(Game))),
            "versions": sorted((x.game_id, x.version) for x in s.scalars(select(Snapshot))),
            "seats": sorted((x.game_id, x.seat, x.contact_id or "")
                            for x in s.scalars(select(Player))),
            "rooms": sorted((x.game_id, x.name, x.room_id) for x in s.scalars(select(Room))),
            "members": sorted((x.game_id, x.room, x.contact_id)
                              for x in s.scalars(select(RoomMember))),
            "inbox": sorted((x.game_id, x.outcome, x.version)
                            for x in s.scalars(select(InboxMessage))),
            "outbox": sorted((x.channel, x.target, x.address or "", _text(x.text), x.priority)
                             for x in s.scalars(select(OutboxRow))),
            "feeds": sorted((x.contact_id, x.judge_feed)
                            for x in s.scalars(select(JudgeSetting))),
            "links": sorted((x.contact_id, x.epoch) for x in s.scalars(select(WebLink))),
            "tokens": sorted((x.game_id, x.seat, x.used_by or "")
                             for x in s.scalars(select(SeatToken))),
            "seasons": sorted((x.name, x.ended_at is not None)
                              for x in s.scalars(select(Season))),
            "hidden": sorted((x.contact_id, x.hidden) for x in s.scalars(select(RecordPrivacy))),
            "handled": len(list(s.scalars(select(ChatMessage.msg_id)))),
        }
    out["sent"] = [(x.kind, x.target, _text(x.text), x.members) for x in table.transport.sent]
    return out


def _diff(got: dict[str, Any], expected: dict[str, Any]) -> str:
    """What differs, by key: what is there too many times, and what is missing."""
    out = []
    for key, want in expected.items():
        have = got[key]
        if have == want:
            continue
        if isinstance(want, list):
            extra = [x for x in have if have.count(x) > want.count(x)]
            missing = [x for x in want if want.count(x) > have.count(x)]
            out.append(f"{key}: extra {extra}, missing {missing}")
        else:
            out.append(f"{key}: {have} != {want}")
    return "; ".join(out)


def kill_everywhere(tmp_path: Path, setup: Setup,
                    make: Callable[[Path], Table] | None = None) -> int:
    """The command `setup` leads to, killed after each of its commits in turn, then handed to
    a restarted bot: each time the world the undisturbed run made. How many kill points."""
    def fresh(name: str) -> Table:
        where = tmp_path / name
        where.mkdir()
        return (make or Table)(where)

    clean = fresh("clean")
    try:
        msg = setup(clean)
        marked: list[int] = []
        handled = clean.bot.chats.handled

        def marking(*args: Any, **kwargs: Any) -> bool:
            done = handled(*args, **kwargs)
            marked.append(count[0])
            return done

        clean.bot.chats.handled = marking  # type: ignore[method-assign]
        with commits() as count:
            clean.handle(msg)
        assert marked, "the message was not marked handled"
        points = marked[0]  # the commits up to and including the handled mark
        expected = world(clean)
    finally:
        clean.close()
    assert points >= 1
    for k in range(1, points + 1):
        table = fresh(f"kill{k}")
        try:
            msg = setup(table)
            with commits(kill_at=k), pytest.raises(Killed):
                table.handle(msg)
            table.restart()
            table.handle(msg)  # the message comes again (the channel kept it)
            got = world(table)
            assert got == expected, f"killed after commit {k} of {points}: " + _diff(
                got, expected)
            table.handle(msg)  # marked handled: a third time is nothing
            assert world(table) == expected
        finally:
            table.close()
    return points


# every chat-layer command that writes -----------------------------------------------------------
def lobby(t: Table, joined: int = 3) -> str:
    code = t.new_game()
    t.fill(code, joined)
    return code


def kicked(t: Table) -> Incoming:
    lobby(t)
    t.reply(JUDGE, "踢出 马甲2")
    return t.incoming(JUDGE, "撤销 踢出")


def by_hand(t: Table) -> Incoming:
    """A game whose wolves' room the judge makes and binds (groups.mode=judge)."""
    code = t.game("新游戏 经典 groups.mode=judge")
    t.link(code)
    wolves = [t.contact(code, n) for n in t.seats_with(code, "wolf")]
    t.transport.rooms["hand"] = [*wolves, JUDGE]
    return t.incoming(JUDGE, f"绑定 {code} 狼群", room="hand")


def bound(t: Table) -> Incoming:
    t.handle(by_hand(t))
    return t.incoming(JUDGE, "撤销 绑定")


def token(t: Table) -> Incoming:
    t.game()
    answer = t.reply(JUDGE, "替补 3")
    return t.incoming("NEW", "接替 " + answer.split("接替 ")[1].split()[0])


# (by the verbs' names in bot/commands/vocabulary.yaml)
SCENARIOS: dict[str, Callable[[Table], Incoming]] = {
    "new_game": lambda t: t.incoming(JUDGE, "新游戏 经典"),
    "restart": lambda t: t.incoming(JUDGE, f"重开 {t.ended()}"),
    "start": lambda t: (lobby(t, 12), t.incoming(JUDGE, "开始"))[1],
    "join": lambda t: t.incoming("P9", f"报名 {lobby(t)} 马甲9"),
    "leave": lambda t: (lobby(t), t.incoming("P2", "退出"))[1],
    "kick": lambda t: (lobby(t), t.incoming(JUDGE, "踢出 马甲2"))[1],
    "undo_kick": kicked,
    "set_options": lambda t: (lobby(t), t.incoming(JUDGE, "设置 votes.channel=dm"))[1],
    "set_roles": lambda t: (lobby(t), t.incoming(
        JUDGE, "角色 狼人×4 预言家 女巫 守卫 丘比特 村民×4"))[1],
    "cancel": lambda t: (lobby(t), t.incoming(JUDGE, "结束"))[1],
    "bind": by_hand,
    "unbind": bound,
    "substitute": lambda t: (t.game(), t.incoming(JUDGE, "替补 3"))[1],
    "take_seat": token,
    "end": lambda t: (t.game(), t.incoming(JUDGE, "结束"))[1],
    "end_confirm": lambda t: (t.game(), t.reply(JUDGE, "结束"), t.incoming(JUDGE, "结束 确认"))[2],
    "undo": lambda t: (t.game(), t.reply(JUDGE, "黄牌 3"), t.incoming(JUDGE, "撤销"))[2],
    "feed": lambda t: t.incoming(JUDGE, "法官通知 全部"),
    "web_reset": lambda t: t.incoming("P1", "网页 重置"),
    "season_start": lambda t: t.incoming(JUDGE, "赛季 开始 第一季"),
    "season_end": lambda t: (t.reply(JUDGE, "赛季 开始 第一季"),
                             t.incoming(JUDGE, "赛季 结束"))[1],
    "records_hide": lambda t: (t.ended(), t.incoming("P1", "战绩 隐藏"))[1],
    "vote": lambda t: (t.game("新游戏 经典 votes.channel=dm"),
                     t.move_to(datetime(2026, 12, 1, 9, 0, tzinfo=ZONE)),
                     t.incoming("P1", "投 2"))[2],
}
