"""`wolfjudge doctor` (issue 21): a judge setting up learns, in Chinese, what is missing or wrong
(settings, database, schema, gateway, WeChat login) and what the account can do, before
`wolfjudge run`. Over the real protocol on loopback: the mock gateway's status page
(gateway/status.js), read while a bot runs without disturbing it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gatewayhelp import Gateway, free_port
from runhelp import JUDGE, ROOT, BotProcess, GatewayTable
from test_run_e2e import LOGGED_IN, start_table

from bot.store import migrate
from bot.store.db import head_revision

SETTINGS = ("WECHATY_PUPPET_SERVICE_ENDPOINT", "WECHATY_PUPPET_SERVICE_TOKEN", "WOLFJUDGE_JUDGES",
            "WOLFJUDGE_DATABASE_URL", "WOLFJUDGE_HOST", "WOLFJUDGE_GATEWAY_STATUS")


def doctor(workdir: Path, **env: str) -> tuple[int, str]:
    """`wolfjudge doctor` with exactly these settings: its exit code and what it printed."""
    environ = {k: v for k, v in os.environ.items()
               if k not in SETTINGS and not k.startswith("WOLFJUDGE_")}
    done = subprocess.run([sys.executable, "-m", "bot.cli", "doctor"], cwd=workdir,
                          env={**environ, "PYTHONPATH": str(ROOT), "PYTHONUTF8": "1", **env},
                          capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout


def settings(gateway: Gateway, db: Path) -> dict[str, str]:
    return {"WECHATY_PUPPET_SERVICE_ENDPOINT": gateway.endpoint,
            "WECHATY_PUPPET_SERVICE_TOKEN": gateway.token, "WOLFJUDGE_JUDGES": JUDGE,
            "WOLFJUDGE_DATABASE_URL": f"sqlite:///{db}",
            "WOLFJUDGE_GATEWAY_STATUS": f"127.0.0.1:{gateway.http_port}"}


def test_doctor_names_each_missing_setting_and_what_it_is(tmp_path: Path) -> None:
    code, out = doctor(tmp_path, WECHATY_PUPPET_SERVICE_ENDPOINT="127.0.0.1:1",
                       WOLFJUDGE_SEND_INTERVAL="x")
    assert code == 1
    assert "✗ WECHATY_PUPPET_SERVICE_TOKEN 没有设置" in out, out
    assert "✗ WOLFJUDGE_JUDGES 没有设置：法官的联系人号" in out, out
    assert "✗ WOLFJUDGE_SEND_INTERVAL 的值不对：应是一个数" in out, out
    # A new database is not a problem (run makes it), and doctor does not make it.
    assert "✓ 新数据库" in out and not (tmp_path / "wolfjudge.db").exists(), out
    assert "✗ 连不上网关" in out, out
    assert "有 4 个问题" in out, out


def test_doctor_refuses_an_old_schema_and_names_migrate(tmp_path: Path, gateway: Gateway) -> None:
    db = tmp_path / "old.db"
    migrate(f"sqlite:///{db}", revision="0006")
    code, out = doctor(tmp_path, **settings(gateway, db))
    assert code == 1
    assert f"✗ 表结构是旧版本 0006，这个 wolfjudge 需要 {head_revision()}" in out, out
    assert "wolfjudge migrate" in out, out
    assert "✓ 网关可以连接" in out, out
    # Before any bot connected, the mock account is not logged in: the judge is told to scan.
    assert "✗ 微信还没有登录" in out and "扫码" in out, out
    # The token is never printed.
    assert gateway.token not in out


def test_doctor_tells_a_wrong_token(tmp_path: Path, gateway: Gateway) -> None:
    code, out = doctor(tmp_path, **{**settings(gateway, tmp_path / "new.db"),
                                    "WECHATY_PUPPET_SERVICE_TOKEN": "wrong"})
    assert code == 1 and "✗ 网关拒绝了口令" in out, out


def test_doctor_beside_a_running_bot_is_all_green_and_does_not_disturb_it(
        tmp_path: Path) -> None:
    from gatewayhelp import need_gateway

    gateway = Gateway(need_gateway(), tmp_path, without="roomCreate")
    gateway.start()
    db = tmp_path / "wolfjudge.db"
    migrate(f"sqlite:///{db}")
    bot = BotProcess(gateway, db, tmp_path)
    try:
        table: GatewayTable = start_table(bot, gateway, "classic", 4)
        code, out = doctor(tmp_path, **settings(gateway, db))
        assert code == 0, out
        assert f"✓ 可以连接；表结构是最新的（{head_revision()}）" in out, out
        assert "✓ 微信已登录" in out and "✓ 机器人已连接网关" in out, out
        # What the account can do, in the words the judge got at login.
        assert LOGGED_IN in out and "不可用：建群" in out and "绑定" in out, out
        assert "一切就绪" in out, out
        # The bot still answers: doctor opened no event stream of its own.
        got = table.say(table.judge, "帮助", expect="")
        assert any(m.to == table.judge for m in got), got
        # Without the status page (an older gateway), what the bot last told the judges.
        code, out = doctor(tmp_path, **{**settings(gateway, db),
                                        "WOLFJUDGE_GATEWAY_STATUS": f"127.0.0.1:{free_port()}"})
        assert "! 读不到网关状态页" in out and "机器人上次登录时" in out, out
        assert "不可用：建群" in out, out
    finally:
        assert bot.close() == 0
        gateway.stop()
    assert bot.tracebacks() == 0, bot.log()
