"""`wolfjudge run --channel onebot` and `wolfjudge doctor --channel onebot` (issue 32, items 1
and 5) as subprocesses against our fake NapCat on loopback: the bot logs in with the token,
tells the judge what QQ can do in QQ's words, answers over QQ, stops at the end of its input,
and when started again answers once what was sent while it was away; the doctor says whether
NapCat is reachable, the token right, the account online, which implementation, and each bound
group with whether the bot is its admin, in Chinese, exit 0 only when all is well."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from onebotfake import BOT_QQ, FakeOneBot

from bot.store import migrate

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "chat"))
from test_console_game import LineProcess  # noqa: E402

JUDGE_QQ = "20000"
PLAYER = "10001"


def environment(fake: FakeOneBot, db: str, **more: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("WOLFJUDGE_", "WECHATY_"))}
    return {**base, "PYTHONPATH": str(ROOT), "PYTHONUTF8": "1", "WOLFJUDGE_CHANNEL": "onebot",
            "WOLFJUDGE_ONEBOT_URL": fake.url, "WOLFJUDGE_ONEBOT_TOKEN": fake.token,
            "WOLFJUDGE_JUDGES": JUDGE_QQ, "WOLFJUDGE_DATABASE_URL": db,
            "WOLFJUDGE_SEND_INTERVAL": "0", "WOLFJUDGE_SEND_JITTER": "0",
            "WOLFJUDGE_ROOM_INTERVAL": "0", **more}


class RunProcess(LineProcess):
    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.err = (cwd / "stderr.txt").open("ab")
        super().__init__(subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "run", "--channel", "onebot", "--clock",
             "2026-12-01 07:30"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.err, cwd=cwd, env=env, text=True, encoding="utf-8", bufsize=1))
        self.cwd = cwd

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(60)
        self.err.close()
        assert "Traceback" not in (self.cwd / "stderr.txt").read_text(encoding="utf-8")
        return code


def wait_for(what: Callable[[], bool], timeout: float = 30.0,
             where: FakeOneBot | None = None) -> None:
    end = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < end, ("not within the time allowed", where and [
            (s.to, s.text[:60]) for s in where.sent])
        time.sleep(0.02)


@pytest.fixture
def world(onebot: FakeOneBot) -> FakeOneBot:
    onebot.user(JUDGE_QQ, "法官")
    onebot.user(PLAYER, "阿一")
    return onebot


def crowd(fake: FakeOneBot, friends: int = 60, groups: int = 20) -> int:
    """Friends and groups of the bot's account that last wrote two days ago: how many
    conversations."""
    now = fake.now
    fake.now = lambda: time.time() - 2 * 86400
    try:
        for n in range(friends):
            qq = fake.user(str(30001 + n), f"老朋友{n}")
            fake.dm(qq, "你好")
        for n in range(groups):
            gid = fake.group(str(600001 + n), f"旧群{n}", [str(30001 + n)])
            fake.say(str(30001 + n), gid, "大家好")
    finally:
        fake.now = now
    return friends + groups


@pytest.mark.parametrize("recent", [True, False], ids=["recent_contacts", "without"])
def test_run_on_qq_answers_and_a_restart_answers_what_came_meanwhile_once(
        world: FakeOneBot, tmp_path: Path, recent: bool) -> None:
    """README "Restarts, dropped connections, and messages sent meanwhile": with NapCat's
    recent contacts the catch-up reads only the conversations with a message since the last
    one the bot had handled (its mark, kept in the database); without them (LLOneBot), every
    friend's and group's. Either way each message sent meanwhile is answered once."""
    old = crowd(world)
    if not recent:
        world.lacks.add("get_recent_contact")
    db = f"sqlite:///{tmp_path / 'run.db'}"
    env = environment(world, db)
    bot = RunProcess(env, tmp_path)
    try:
        bot.send("/echo ready", 60)  # read only once it is connected
        wait_for(lambda: any("机器人已登录QQ" in t for t in world.dms_to(JUDGE_QQ)))
        login = next(t for t in world.dms_to(JUDGE_QQ) if "机器人已登录QQ" in t)
        assert "NapCat.Onebot" in login and "私聊只能发给机器人的QQ好友" in login
        assert "微信" not in login
        world.dm(JUDGE_QQ, "新游戏 经典")
        wait_for(lambda: any("已创建新游戏" in t for t in world.dms_to(JUDGE_QQ)))
        made = next(t for t in world.dms_to(JUDGE_QQ) if "已创建新游戏" in t)
        code = made.split("游戏码 ")[1][:6]
        world.dm(PLAYER, f"报名 {code} 阿一")
        wait_for(lambda: any("报名成功" in t for t in world.dms_to(PLAYER)), where=world)
    finally:
        assert bot.close() == 0
    # While the bot is down, the player writes twice; started again, each gets one answer.
    sent = len(world.sent)
    world.dm(PLAYER, "状态")
    world.dm(PLAYER, "帮助")
    calls = len(world.calls)
    again = RunProcess(env, tmp_path)
    try:
        again.send("/echo ready", 60)
        wait_for(lambda: len([s for s in world.sent[sent:] if s.to == PLAYER]) >= 2)
        time.sleep(0.5)  # (nothing more may come: checked below, not timed)
    finally:
        assert again.close() == 0
    answers = [s for s in world.sent[sent:] if s.to == PLAYER]
    assert len(answers) == 2, [s.text[:30] for s in answers]
    assert not any("报名成功" in s.text for s in answers)  # the old 报名 was not applied again
    read = [p for a, p in world.calls[calls:] if a.endswith("_msg_history")]
    if recent:  # the player's conversation and the judge's, not the old crowd's
        assert 1 <= len(read) <= 3, read
    else:
        assert len(read) > old, len(read)


def doctor(fake: FakeOneBot, cwd: Path, db: str, **more: str) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-m", "bot.cli", "doctor", "--channel", "onebot"],
                          cwd=cwd, env=environment(fake, db, **more), capture_output=True,
                          text=True, encoding="utf-8", timeout=60)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout


def test_doctor_on_qq_says_all_is_well(world: FakeOneBot, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'd.db'}"
    migrate(db)
    code, out = doctor(world, tmp_path, db)
    assert code == 0, out
    assert "✓ WOLFJUDGE_CHANNEL：onebot" in out and "WOLFJUDGE_ONEBOT_TOKEN：已设置" in out, out
    assert world.token not in out
    assert "✓ NapCat 可以连接，token 正确" in out
    assert f"✓ 登录的QQ号：{BOT_QQ}" in out and "✓ QQ 在线" in out, out
    assert "✓ OneBot 实现：NapCat.Onebot，版本 4.8.95" in out, out
    assert "还没有绑定的QQ群" in out and "私聊只能发给机器人的QQ好友" in out
    assert world.api_connections == 1 and world.connections == 0  # the API-only endpoint


def test_doctor_on_qq_names_each_problem(world: FakeOneBot, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'd.db'}"
    code, out = doctor(world, tmp_path, db, WOLFJUDGE_ONEBOT_TOKEN="wrong")
    assert code == 1 and "✗ NapCat 拒绝了 token" in out, out
    world.online = False
    code, out = doctor(world, tmp_path, db)
    assert code == 1 and "✗ QQ 不在线" in out, out
    code, out = doctor(world, tmp_path, db, WOLFJUDGE_ONEBOT_URL="ws://127.0.0.1:1")
    assert code == 1 and "✗ 连不上 NapCat" in out, out
    code, out = doctor(world, tmp_path, db, WOLFJUDGE_ONEBOT_URL="http://x")
    assert code == 1 and "WOLFJUDGE_ONEBOT_URL" in out, out
    code, out = doctor(world, tmp_path, db, WOLFJUDGE_ONEBOT_TOKEN="")
    assert code == 1 and "✗ WOLFJUDGE_ONEBOT_TOKEN 的值不对" in out, out
    assert "【QQ】" not in out  # nothing to connect with


def test_doctor_on_qq_names_each_bound_group_and_whether_the_bot_is_admin(
        onebot: FakeOneBot, tmp_path: Path) -> None:
    from qqtable import JUDGE_QQ as TABLE_JUDGE
    from qqtable import QQTable


    db = f"sqlite:///{tmp_path / 'g.db'}"
    table = QQTable("classic", 3, onebot, db, admin_in=("狼群", "公告群"))
    try:
        table.deal()
        table.play(until=lambda st: st.phase == "N1")  # the groups are bound by now
    finally:
        table.stop_bot()
    lovers = table.made["QQ03CL情侣群"]
    code, out = doctor(onebot, tmp_path, db, WOLFJUDGE_JUDGES=TABLE_JUDGE)
    assert code == 0, out
    assert f"✓ 【QQ03CL】狼群：QQ群 {table.made['QQ03CL狼群']}，机器人是管理员" in out, out
    assert "✓ 【QQ03CL】公告群：QQ群 700000，机器人是管理员" in out, out
    assert f"! 【QQ03CL】情侣群：QQ群 {lovers}，机器人不是管理员" in out, out
    onebot.groups[lovers].members.pop(onebot.self_id)  # the bot was removed from a group
    code, out = doctor(onebot, tmp_path, db, WOLFJUDGE_JUDGES=TABLE_JUDGE)
    assert code == 1 and f"✗ 【QQ03CL】情侣群：机器人不在QQ群 {lovers} 里了" in out, out
