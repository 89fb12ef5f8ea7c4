"""README "Playing without WeChat", its three commands as an operator types them: `wolfjudge
migrate`, `wolfjudge judge-link NAME`, `wolfjudge run --channel web` (no WOLFJUDGE_JUDGES, no
gateway), then the pages over a real server on loopback: the judge's home makes a game, a
player joins by its link and opens their key; SIGTERM stops the bot cleanly."""

from __future__ import annotations

import html
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60.0  # seconds at most for the bot to start (never a timing assertion)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cli(*args: str, env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "bot.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def _open(url: str, data: dict[str, str] | None = None) -> tuple[int, str, dict[str, str]]:
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, data=body), timeout=30) as r:
            return r.status, r.read().decode("utf-8", "replace"), dict(r.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8"), dict(exc.headers)


def _links(page: str) -> list[str]:
    return [html.unescape(u) for u in re.findall(r'href="([^"]+)"', page)]


def test_the_three_commands_and_a_game_made_and_joined_over_loopback(tmp_path: Path) -> None:
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WOLFJUDGE_", "WECHATY_"))}
    env.update({"PYTHONUTF8": "1", "PYTHONPATH": str(ROOT), "WOLFJUDGE_WEB_URL": base,
                "WOLFJUDGE_WEB_PORT": str(port),
                "WOLFJUDGE_DATABASE_URL": f"sqlite:///{tmp_path / 'wolfjudge.db'}"})
    _cli("migrate", env=env, cwd=tmp_path)
    home = _cli("judge-link", "老王", env=env, cwd=tmp_path).strip()
    assert home.startswith(f"{base}/h/")
    log_path = tmp_path / "run.txt"
    with log_path.open("wb") as log:
        bot = subprocess.Popen([sys.executable, "-m", "bot.cli", "run", "--channel", "web"],
                               cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=log,
                               stderr=subprocess.STDOUT)
    try:
        end = time.monotonic() + WAIT
        while "wolfjudge: connected" not in log_path.read_text(errors="replace"):
            assert bot.poll() is None and time.monotonic() < end, log_path.read_text()
            time.sleep(0.05)  # (the bot's start-up, not a deadline)
        status, page = 0, ""
        while status != 200 and time.monotonic() < end:  # the pages' server starting
            try:
                status, page, _ = _open(home)
            except urllib.error.URLError:
                time.sleep(0.05)
        assert status == 200 and "新游戏" in page, page[:500]
        status, page, _ = _open(home, {"cmd": "新游戏", "nonce": "g1", "ruleset": "classic",
                                       "players": "12", "opt.votes.channel": "dm"})
        assert status == 200 and "游戏码" in page, page[:800]
        join = next(u for u in _links(page) if "/join/" in u and not u.endswith((".png",
                                                                                 ".svg")))
        assert join.startswith(base)
        status, page, _ = _open(join, {"name": "小明", "nonce": "j1"})
        assert status == 200 and "报名成功" in page, page[:800]
        key = next(u for u in _links(page) if "/k/" in u)
        status, page, _ = _open(key)
        assert status == 200 and "小明" in page and "1/12" in page
        status, png, headers = _open(join + "/qr.png")
        assert status == 200 and headers["content-type"] == "image/png"
        judge = next(u for u in _links(_open(home)[1]) if "/j/" in u)
        status, page, _ = _open(judge)
        assert status == 200 and "小明" in page and "踢出" in page
    finally:
        bot.send_signal(signal.SIGTERM)
        assert bot.wait(60) == 0, log_path.read_text()
    assert "Traceback" not in log_path.read_text(errors="replace")


def test_doctor_checks_the_web_channel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`wolfjudge doctor --channel web`: WOLFJUDGE_WEB_URL is required (WOLFJUDGE_JUDGES is
    not), a plain-HTTP public address is warned of, and a database with no judge granted yet
    names `wolfjudge judge-link`."""
    import io

    from bot.doctor import doctor
    from bot.store import migrate

    for name in list(os.environ):
        if name.startswith(("WOLFJUDGE_", "WECHATY_")):
            monkeypatch.delenv(name)
    url = f"sqlite:///{tmp_path / 'w.db'}"
    migrate(url)
    monkeypatch.setenv("WOLFJUDGE_DATABASE_URL", url)
    out = io.StringIO()
    assert doctor(out, channel="web") == 1
    assert "WOLFJUDGE_WEB_URL 没有设置" in out.getvalue()
    assert "WOLFJUDGE_JUDGES" not in out.getvalue()
    monkeypatch.setenv("WOLFJUDGE_WEB_URL", "http://wolf.example.org")
    out = io.StringIO()
    assert doctor(out, channel="web") == 1
    assert "不是 https" in out.getvalue() and "judge-link" in out.getvalue()
    _cli("judge-link", "老王", env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=tmp_path)
    monkeypatch.setenv("WOLFJUDGE_WEB_URL", "https://wolf.example.org")
    out = io.StringIO()
    assert doctor(out, channel="web") == 0, out.getvalue()
    assert "已授权 1 位法官" in out.getvalue()
