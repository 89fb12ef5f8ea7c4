"""`设置` and `角色` before the start (issue 25, part 4; docs/rules-judge.md P-LOBBY-1..3): the
judge changes a lobby's options and role set, checked as `新游戏` checks them; whoever joined
is told; after the start they are refused."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from chathelp import fixed_codes, fixed_seeds
from test_chat_judge import JUDGE, _ids

from bot.chat.bot import ChatBot
from bot.service import Service
from bot.store import migrate
from bot.transport import Incoming
from bot.transport.memory import MemoryTransport


class Lobby:
    def __init__(self, tmp_path: Path, ruleset: str = "经典") -> None:
        url = f"sqlite:///{tmp_path / 'chat.db'}"
        migrate(url)
        self.service = Service(url)
        self.transport = MemoryTransport()
        self.bot = ChatBot(self.service, self.transport, seeds=fixed_seeds(),
                           codes=fixed_codes(), judges=[JUDGE], export_dir=tmp_path / "x")
        reply = self.say(JUDGE, f"新游戏 {ruleset}")
        self.code = re.search(r"游戏码 ([A-Z0-9]{4,8})", reply).group(1)  # type: ignore[union-attr]

    def say(self, sender: str, text: str) -> str:
        from datetime import datetime
        from zoneinfo import ZoneInfo
        before = len(self.transport.sent)
        self.bot.handle(Incoming(msg_id=f"m{next(_ids)}", sender=sender, text=text,
                                 at=datetime(2026, 12, 1, 7, 0, tzinfo=ZoneInfo("Asia/Shanghai"))))
        return "\n".join(s.text for s in self.transport.sent[before:]
                         if s.kind == "dm" and s.target == sender)

    def join(self, n: int, first: int = 1) -> None:
        for i in range(first, n + 1):
            assert "报名成功" in self.say(f"p{i}", f"报名 {self.code} 马甲{i}")

    @property
    def lobby(self):  # type: ignore[no-untyped-def]
        return self.bot.chats.lobby(self.code)


@pytest.mark.rules("P-LOBBY-1")
def test_options_change_before_the_start_and_the_game_uses_them(tmp_path: Path) -> None:
    lobby = Lobby(tmp_path)
    lobby.join(3)
    reply = lobby.say(JUDGE, "设置 votes.channel=dm cards.yellow_to_red=3")
    assert "投票方式：私聊机器人投票" in reply and "黄牌累计成红牌：3张" in reply, reply
    assert lobby.lobby.chat_options["votes.channel"] == "dm"
    assert "法官修改了本局设置" in "\n".join(lobby.transport.dms("p1"))
    shown = lobby.say(JUDGE, "设置")  # alone: the rules as they are
    assert f"【{lobby.code}】" in shown and "投票方式：私聊机器人投票" in shown, shown
    lobby.join(12, first=4)
    lobby.say(JUDGE, "开始")
    state = lobby.service.state(lobby.code)
    assert state.options["cards.yellow_to_red"] == 3


@pytest.mark.rules("P-LOBBY-1")
def test_a_bad_option_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    lobby = Lobby(tmp_path)
    before = (dict(lobby.lobby.options), dict(lobby.lobby.chat_options))
    reply = lobby.say(JUDGE, "设置 no.such.key=1")
    assert "选项 no.such.key 无效" in reply and "写法：设置" in reply, reply
    assert "无效" in lobby.say(JUDGE, "设置 votes.channel=carrier-pigeon")
    assert (lobby.lobby.options, lobby.lobby.chat_options) == before
    lobby.join(1)
    assert "只有法官" in lobby.say("p1", "设置 votes.channel=dm")
    assert lobby.lobby.chat_options == before[1]


@pytest.mark.rules("P-LOBBY-2")
def test_the_judge_sets_the_roles_and_they_are_dealt(tmp_path: Path) -> None:
    lobby = Lobby(tmp_path)
    reply = lobby.say(JUDGE, "角色 狼人×4 预言家 女巫 守卫 丘比特 村民×4")
    assert "狼人×4" in reply and "村民×4" in reply, reply
    assert Counter(lobby.lobby.roles) == Counter(
        {"wolf": 4, "seer": 1, "witch": 1, "guard": 1, "cupid": 1, "villager": 4})
    lobby.join(12)
    lobby.say(JUDGE, "开始")
    state = lobby.service.state(lobby.code)
    assert Counter(s.role for s in state.seats) == Counter(lobby.lobby.roles)
    # dealt with the seed, not in the order written
    assert [s.role for s in state.seats] != lobby.lobby.roles


@pytest.mark.rules("P-LOBBY-2")
def test_a_bad_role_set_is_refused(tmp_path: Path) -> None:
    lobby = Lobby(tmp_path)
    assert "不认识「法师」" in lobby.say(JUDGE, "角色 狼人×3 法师 村民×8")
    assert "没有 11 人的配置" in lobby.say(JUDGE, "角色 狼人×3 预言家 村民×7")
    assert lobby.lobby.roles is None and lobby.lobby.players == 12
    anomaly = Lobby(tmp_path / "a", ruleset="异常") if (tmp_path / "a").mkdir() is None else None
    assert anomaly is not None
    reply = anomaly.say(JUDGE, "角色 狼头 预言家 女巫 长老 守卫 猎人 村民×7")
    assert "13人局" in reply and anomaly.lobby.players == 13, reply


@pytest.mark.rules("P-LOBBY-2")
@pytest.mark.parametrize("ruleset, command, said", [
    ("经典", "角色 狼人×3", "经典没有 3 人的配置"),
    ("经典", "新游戏 经典 5人", "经典没有 5 人的配置"),
    ("经典", "新游戏 标准 13人", "标准没有 13 人的配置"),
    ("异常", "角色 狼头", "异常没有 1 人的配置")])
def test_a_seat_count_with_no_game_is_refused_in_the_rulesets_own_name(
        tmp_path: Path, ruleset: str, command: str, said: str) -> None:
    """Every text a person sees is Chinese (README): the ruleset by its name, not its id."""
    reply = Lobby(tmp_path, ruleset=ruleset).say(JUDGE, command)
    assert said in reply, reply
    assert not re.search(r"[a-z]{4,}", reply), reply


@pytest.mark.rules("P-LOBBY-2")
@pytest.mark.parametrize("ruleset", ["经典", "标准", "异常"])
def test_a_bad_role_set_shows_how_to_write_one_of_the_lobbys_ruleset(
        tmp_path: Path, ruleset: str) -> None:
    """A bad command is answered with how to write it: the example of a refused `角色` is a
    set of the lobby's own ruleset, one `角色` takes as it is."""
    lobby = Lobby(tmp_path, ruleset=ruleset)
    reply = lobby.say(JUDGE, "角色 法师")
    example = re.search(r"写法：(角色 [^（\n]+)", reply)
    assert example is not None, reply
    answer = lobby.say(JUDGE, example[1].strip())
    assert "无效" not in answer and lobby.lobby.roles is not None, (example[1], answer)


@pytest.mark.rules("P-LOBBY-2")
@pytest.mark.parametrize("ruleset", ["经典", "标准", "异常"])
def test_角色_alone_names_the_presets_roles_a_judge_can_copy(
        tmp_path: Path, ruleset: str) -> None:
    """`角色` alone in a lobby on its preset shows the roles the preset deals for its count
    (with its options), written as `角色` takes them: copied back, the lobby keeps that set."""
    lobby = Lobby(tmp_path, ruleset=ruleset)
    shown = lobby.say(JUDGE, "角色")
    found = re.search(r"角色：按人数的标准配置（([^）]+)）", shown)
    assert found is not None, shown
    lobby.say(JUDGE, f"角色 {found[1]}")
    dealt = lobby.lobby.roles
    assert dealt is not None and len(dealt) == lobby.lobby.players, (found[1], dealt)


@pytest.mark.rules("P-LOBBY-2")
def test_角色s_usage_line_names_no_role_a_ruleset_lacks() -> None:
    """The `角色` usage line is the vocabulary's (a form refused before any lobby is known
    shows it), the same in every ruleset: it names no role one of them lacks (a refused set
    is answered with the lobby's own ruleset's example, above)."""
    from bot.commands.parse import usage
    from rulesets.data import load

    names = {r: set(load(r, "data")["role_names"].values())
             for r in ("classic", "standard", "anomaly")}
    everywhere = set.intersection(*names.values())
    named = {n for ns in names.values() for n in ns if n in usage("set_roles")}
    assert named <= everywhere, (usage("set_roles"), named - everywhere)


@pytest.mark.rules("P-LOBBY-2")
def test_roles_for_fewer_seats_than_joined_are_refused(tmp_path: Path) -> None:
    lobby = Lobby(tmp_path, ruleset="异常")
    assert "13人局" in lobby.say(JUDGE, "角色 狼头 预言家 女巫 长老 守卫 猎人 村民×7")
    lobby.join(13)
    reply = lobby.say(JUDGE, "角色 狼头 预言家 女巫 长老 守卫 猎人 村民×6")
    assert "多于 12 个座位" in reply, reply
    assert lobby.lobby.players == 13


@pytest.mark.rules("P-LOBBY-3")
def test_after_the_start_options_and_roles_are_refused(tmp_path: Path) -> None:
    lobby = Lobby(tmp_path)
    lobby.join(12)
    lobby.say(JUDGE, "开始")
    assert "已经开始，不能再修改选项" in lobby.say(JUDGE, "设置 votes.channel=dm")
    assert "已经开始，不能再修改角色" in lobby.say(JUDGE, "角色 狼人×4 预言家 村民×7")


@pytest.mark.rules("P-LOBBY-4")
def test_a_finished_game_restarts_with_its_rules_and_players(tmp_path: Path) -> None:
    lobby = Lobby(tmp_path)
    lobby.say(JUDGE, "角色 狼人×4 预言家 女巫 守卫 丘比特 村民×4")
    lobby.say(JUDGE, "设置 votes.channel=dm")
    lobby.join(12)
    lobby.say(JUDGE, "开始")
    assert "没有可以重开的游戏" in lobby.say(JUDGE, "重开")  # not over yet
    lobby.say(JUDGE, "结束")
    lobby.say(JUDGE, "结束 确认")
    reply = lobby.say(JUDGE, "重开")
    m = re.search(r"游戏码 ([A-Z0-9]{4,8})", reply)
    assert m and m[1] != lobby.code and "12/12 人已自动报名" in reply, reply
    new = lobby.bot.chats.lobby(m[1])
    assert new is not None and new.roles == lobby.lobby.roles
    assert new.chat_options["votes.channel"] == "dm"
    members = {x.contact_id: x.forum_name for x in lobby.bot.chats.members(m[1])}
    assert members == {f"p{i}": f"马甲{i}" for i in range(1, 13)}
    assert "你已自动报名（马甲 马甲3）" in "\n".join(lobby.transport.dms("p3"))
    assert "只有法官" in lobby.say("p1", f"重开 {lobby.code}")
    lobby.say(JUDGE, f"#{m[1]} 开始")
    state = lobby.service.state(m[1])
    assert Counter(s.role for s in state.seats) == Counter(new.roles)


@pytest.mark.rules("P-LOBBY-4")
def test_only_a_game_that_is_over_restarts(tmp_path: Path) -> None:
    lobby = Lobby(tmp_path)
    assert "没有可以重开的游戏" in lobby.say(JUDGE, f"重开 {lobby.code}")  # not even started
    assert "没有可以重开的游戏" in lobby.say(JUDGE, "重开 NOSUCH")


@pytest.mark.rules("P-LOBBY-2")
@pytest.mark.parametrize("ruleset, roles, reason", [
    ("经典", "村民×12", "没有狼人阵营"),
    ("经典", "狼人×12", "没有村民阵营"),
    ("经典", "丘比特×12", "丘比特只能有一个"),
    ("经典", "预言家 女巫 守卫 丘比特 村民×8", "没有狼人阵营"),
    ("经典", "狼人×3 预言家×2 女巫 守卫 丘比特 村民×4", "预言家只能有一个"),
    ("经典", "狼人×3 丘比特 村民×8", "村民阵营开局就已判负"),
    ("经典", "狼人×6 预言家 女巫 守卫 丘比特 村民×2", "狼人阵营开局就已获胜"),
    ("异常", "预言家 女巫 长老 守卫 猎人 村民×7", "没有异常阵营"),
    ("异常", "狼头×2 预言家 女巫 长老 守卫 村民×6", "狼头只能有一个"),
    ("异常", "狼头 预言家 女巫 长老 守卫 猎人 猎人 村民×5", "猎人只能有一个"),
    ("标准", "狼人×4 村民×8", "村民阵营开局就已判负"),
    ("标准", "狼人×4 预言家 女巫 女巫 猎人 村民×4", "女巫只能有一个"),
])
def test_a_role_set_that_makes_no_game_is_refused_with_the_reason(
        tmp_path: Path, ruleset: str, roles: str, reason: str) -> None:
    """The set must make a game as `新游戏`'s presets do: every camp the win conditions need,
    each role the ruleset deals once at most once, no camp lost or won at the deal."""
    lobby = Lobby(tmp_path, ruleset=ruleset)
    reply = lobby.say(JUDGE, f"角色 {roles}")
    assert "角色设置无效" in reply and reason in reply, reply
    assert lobby.lobby.roles is None


@pytest.mark.rules("P-LOBBY-2")
def test_a_role_set_is_checked_again_when_an_option_changes_the_win_conditions(
        tmp_path: Path) -> None:
    """屠城 (standard.win=all) needs no villager (村民); 屠边 does: a set of gods and wolves is
    a game only under 屠城, and 设置 back to 屠边 is refused with the reason."""
    lobby = Lobby(tmp_path, ruleset="标准")
    assert "开局就已判负" in lobby.say(JUDGE, "角色 狼人×8 预言家 女巫 猎人 白痴")
    lobby.say(JUDGE, "设置 standard.win=all")
    assert "狼人×8" in lobby.say(JUDGE, "角色 狼人×8 预言家 女巫 猎人 白痴")
    reply = lobby.say(JUDGE, "设置 standard.win=side")
    assert "村民阵营开局就已判负" in reply, reply
    assert lobby.lobby.options["standard.win"] == "all"


@pytest.mark.rules("P-LOBBY-2")
@pytest.mark.parametrize("ruleset, options", [
    ("classic", {}), ("classic", {"classic.hunter": True}), ("anomaly", {}),
    ("anomaly", {"anomaly.villagers": 8}), ("standard", {}),
    ("standard", {"standard.board": "预女猎守"}), ("standard", {"standard.win": "all"})])
def test_every_preset_makes_a_game_by_the_same_check(ruleset: str, options: dict) -> None:
    """The check holds every ruleset to what its presets are: each preset passes it, and a
    role a preset deals more than once is one the ruleset lets a set hold many times."""
    from bot.chat.lobby import counts
    from engine.game import check_role_set
    from engine.ruleset import get_ruleset

    rs = get_ruleset(ruleset)
    for n in counts(ruleset):
        try:
            preset = rs.preset(n, {**options})
        except ValueError:
            continue
        check_role_set(ruleset=ruleset, roles=preset, options=options)
        repeated = {r for r in preset if preset.count(r) > 1}
        assert repeated <= set(rs.many_roles), (ruleset, repeated)


@pytest.mark.rules("P-LOBBY-4")
def test_a_finished_game_restarts_once_and_a_second_restart_points_to_it(tmp_path: Path) -> None:
    """`重开` of one game makes one lobby: a second (with or without the code) makes none,
    auto-joins nobody again and says which lobby it already made."""
    lobby = Lobby(tmp_path)
    lobby.join(12)
    lobby.say(JUDGE, "开始")
    lobby.say(JUDGE, "结束")
    lobby.say(JUDGE, "结束 确认")
    first = re.search(r"游戏码 ([A-Z0-9]{4,8})", lobby.say(JUDGE, "重开"))
    assert first is not None
    told = len(lobby.transport.dms("p3"))
    for again in ("重开", f"重开 {lobby.code}"):
        reply = lobby.say(JUDGE, again)
        assert f"已重开为 {first[1]}" in reply and "自动报名" not in reply, reply
    assert len(lobby.transport.dms("p3")) == told  # nobody joined or told twice
    assert lobby.bot.chats.lobby(first[1]) is not None
    # the restarted lobby cancelled before its start: the game may be restarted again
    lobby.say(JUDGE, f"#{first[1]} 结束")
    second = re.search(r"游戏码 ([A-Z0-9]{4,8})", lobby.say(JUDGE, f"重开 {lobby.code}"))
    assert second is not None and second[1] != first[1]
