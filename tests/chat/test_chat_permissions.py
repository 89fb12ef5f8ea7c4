"""Who may send what (CHAT.md "People"): every judge command of CHAT.md's judge table, tried by
a seated player by DM, by a stranger by DM and by a player inside the wolves' room, is refused
(a Chinese reply by DM, never a word in the room), logged, and changes nothing. A player's 状态
shows their own role only; a `#CODE` prefix of another game reveals nothing of it."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from chathelp import CJK, JUDGE, Table, dm_texts

from bot.texts import role_name

# One form of every command of CHAT.md's judge table ({code}: the game's code).
JUDGE_COMMANDS = [
    "新游戏 经典", "开始", "踢出 马甲1", "记票 1 2", "记票 1 弃权 08:00", "改票 1 2", "更正 1 2",
    "废票 1", "代投 1 2", "代投 1 弃权", "确认更正 1", "驳回更正 1", "票型", "黄牌 1 迟到",
    "红牌 1", "报备 1", "联系 1", "关门 20:00", "开门 10:00", "作息 09:00-21:00",
    "延时 1 22:00", "替补 1", "暂停", "继续", "公示", "导出", "结束", "结束 确认",
    "绑定 {code} 狼群",
]
ROLE_WORDS = ("狼人", "预言家", "女巫", "守卫", "丘比特")


class Game:
    """A classic game after Cupid's link: the wolves' and lovers' rooms exist."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.code = table.game()
        table.link(self.code)
        self.room = table.room(self.code, "wolves")
        assert self.room is not None
        self.wolf = table.contact(self.code, table.seats_with(self.code, "wolf")[0])
        self.villager = table.contact(self.code, table.seats_with(self.code, "villager")[0])


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Game]:
    table = Table(Path(tmp_path_factory.mktemp("perm")))
    yield Game(table)
    table.close()


def refused(game: Game, sender: str, text: str, room: str | None,
            caplog: pytest.LogCaptureFixture) -> list[str]:
    """Send it; check nothing changed and the attempt was logged; the DMs to the sender."""
    table = game.table
    before = table.dump(game.code)
    with caplog.at_level(logging.WARNING):
        caplog.clear()
        sent = table.send(sender, text.format(code=game.code), room)
    assert table.dump(game.code) == before, text
    assert not [s for s in sent if s.kind in ("post", "create", "add", "remove")], (text, sent)
    assert any(sender in r.getMessage() and r.levelno >= logging.WARNING
               for r in caplog.records), (text, [r.getMessage() for r in caplog.records])
    others = [s for s in sent if s.kind == "dm" and s.target not in (sender,)]
    assert not others, (text, others)  # the judge's digest would mean something was applied
    return dm_texts(sent, sender)


@pytest.mark.parametrize("text", JUDGE_COMMANDS)
def test_player_dm_refused(game: Game, text: str, caplog: pytest.LogCaptureFixture) -> None:
    replies = refused(game, game.villager, text, None, caplog)
    assert len(replies) == 1 and CJK.search(replies[0]), replies
    assert "法官" in replies[0]


@pytest.mark.parametrize("text", JUDGE_COMMANDS)
def test_stranger_dm_refused(game: Game, text: str, caplog: pytest.LogCaptureFixture) -> None:
    replies = refused(game, "陌生人", text, None, caplog)
    assert len(replies) == 1 and CJK.search(replies[0]), replies


@pytest.mark.parametrize("text", JUDGE_COMMANDS)
def test_stranger_with_prefix_refused(game: Game, text: str,
                                      caplog: pytest.LogCaptureFixture) -> None:
    replies = refused(game, "陌生人", f"#{game.code} {text}", None, caplog)
    assert len(replies) == 1 and CJK.search(replies[0]), replies


@pytest.mark.parametrize("text", JUDGE_COMMANDS)
def test_in_room_refused(game: Game, text: str, caplog: pytest.LogCaptureFixture) -> None:
    """In a room: nothing is posted there; the sender is told by DM (at most one line)."""
    replies = refused(game, game.wolf, text, game.room, caplog)
    assert len(replies) <= 1 and all(CJK.search(r) for r in replies), replies


def test_player_status_shows_only_their_own_role(game: Game) -> None:
    table, code = game.table, game.code
    state = table.state(code)
    contacts = table.contacts(code)
    for st in state.seats:
        mine = role_name("classic", st.role)
        answer = table.reply(contacts[st.seat], "状态")
        assert f"你的座位：{st.seat}号" in answer and mine in answer, answer
        roles_only = answer  # camp names hold role words (村民阵营): not a role
        for camp in ("狼人阵营", "村民阵营", "黑情侣阵营", "异常阵营", "正常阵营"):
            roles_only = roles_only.replace(camp, "")
        for word in ROLE_WORDS:
            if word != mine and not (word == "狼人" and st.role == "wolf"):
                assert word not in roles_only, (st.seat, answer)
        others = answer.replace(code, "")  # a random code may spell a contact (9REP2B)
        for n, c in contacts.items():
            if n != st.seat:
                assert c not in others
    judge = table.reply(JUDGE, "状态")
    for st in state.seats:
        assert contacts[st.seat] in judge and role_name("classic", st.role) in judge


def test_other_games_code_reveals_nothing(tmp_path: Path) -> None:
    table = Table(tmp_path)
    first = Game(table)
    second = table.new_game("新游戏 经典")
    table.fill(second, 12, first=20)
    table.send(JUDGE, f"#{second} 开始")
    other = table.state(second)
    secrets = [table.contact(second, n) for n in range(1, 13)] + [
        f"马甲{n}" for n in range(20, 32)] + list(ROLE_WORDS)
    before = table.dump(second)
    for text in ("状态", "帮助", "验 3", "刀 3", "投 3", "票型", "公示", "暂停", "替补 1",
                 "导出", "过"):
        replies = table.ask(first.villager, f"#{second} {text}")
        assert len(replies) == 1 and CJK.search(replies[0]), (text, replies)
        assert not any(s in replies[0] for s in secrets), (text, replies)
    assert table.dump(second) == before
    assert other.version == table.state(second).version
    table.close()
