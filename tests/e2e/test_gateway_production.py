"""The gateway's production mode (the Docker image): GATEWAY_PUPPET names the puppet to serve.

- wechaty-puppet-mock loaded by name, as a real puppet would be: the gRPC service listens, the
  control API (tests only) does not (only the status page `wolfjudge doctor` reads, behind the
  token), and a bot's connection does not stop the puppet (a real puppet's stop logs WeChat
  out: a new QR scan after every bot restart).
- wechaty-puppet-wechat4u, the default real puppet (pinned in gateway/package.json), installed
  from npm into the gateway: with no network to WeChat (every name but localhost fails to
  resolve, tests/e2e/no_network.mjs) the gateway stays up and logs a clear login failure
  instead of hanging or crashing."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from gatewayhelp import (
    GATEWAY_DIR,
    free_port,
    install_puppet,
    need_gateway,
    real_puppet,
    wait_until,
)

from bot.transport.wechaty import WechatyTransport

NO_NETWORK = Path(__file__).resolve().parent / "no_network.mjs"


def status(port: int, token: str | None = "t", path: str = "/status") -> tuple[int, object]:
    """The gateway's HTTP answer: (status code, JSON body)."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=5) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


class Served:
    def __init__(self, node: str, puppet: str, tmp_path: Path, **env: str) -> None:
        self.grpc, self.http = free_port(), free_port()
        self.log_path = tmp_path / "gateway.log"
        environ = {**os.environ, "GATEWAY_PUPPET": puppet, "WECHATY_PUPPET_SERVICE_TOKEN": "t",
                   "GATEWAY_GRPC_PORT": str(self.grpc), "GATEWAY_HTTP_PORT": str(self.http),
                   "WECHATY_PUPPET_SESSION_DIR": str(tmp_path), "WECHATY_LOG": "warn", **env}
        with self.log_path.open("w") as out:
            self.proc = subprocess.Popen([node, "gateway.js"], cwd=GATEWAY_DIR, env=environ,
                                         stdout=out, stderr=subprocess.STDOUT)

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[list[Served]]:
    made: list[Served] = []
    yield made
    for s in made:
        s.stop()


def test_a_named_puppet_is_served_and_a_bot_cannot_stop_it(tmp_path: Path,
                                                           served: list[Served]) -> None:
    gw = Served(need_gateway(), "wechaty-puppet-mock", tmp_path)
    served.append(gw)
    wait_until(lambda: "gateway ready" in gw.log(), 30, "the gateway to listen")
    assert "puppet=wechaty-puppet-mock" in gw.log()
    assert _open(gw.grpc)
    # No control API: only the status page, and only with the token.
    assert status(gw.http, path="/health")[0] == 404
    assert status(gw.http, path="/dm")[0] == 404
    assert status(gw.http, token=None)[0] == 401
    assert status(gw.http, token="wrong")[0] == 401
    code, page = status(gw.http)
    assert code == 200 and isinstance(page, dict), page
    assert page["puppet"] == "wechaty-puppet-mock" and page["botConnected"] is False
    assert page["kept"] == 0 and page["capabilities"]["sendDm"] is True, page
    # The python client stops and starts the puppet each time it connects: ignored here.
    t = WechatyTransport(f"127.0.0.1:{gw.grpc}", "t", cache_dir=str(tmp_path / "wechaty"))
    t.start()
    try:
        wait_until(lambda: "ignored (WeChat stays logged in)" in gw.log(), 30,
                   "the gateway to refuse the bot's stop")
        wait_until(lambda: status(gw.http)[1]["botConnected"], 30,  # type: ignore[index]
                   "the status page to see the bot")
    finally:
        t.stop()
    assert gw.proc.poll() is None, gw.log()


def test_wechat4u_without_network_reports_a_login_failure(tmp_path: Path,
                                                          served: list[Served]) -> None:
    node = need_gateway()
    spec = real_puppet()
    missing = install_puppet(spec)
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing} (CI=true: the real-puppet test must run)")
        pytest.skip(missing)  # no npm registry here
    gw = Served(node, spec.rsplit("@", 1)[0], tmp_path, GATEWAY_LOGIN_TIMEOUT="20",
                NODE_OPTIONS=f"--import {NO_NETWORK}")
    served.append(gw)
    wait_until(lambda: "gateway: login failed" in gw.log() or gw.proc.poll() is not None, 60,
               "a login failure")
    log = gw.log()
    assert gw.proc.poll() is None, log  # still serving: it tries again in a minute
    assert f"puppet={spec.rsplit('@', 1)[0]}" in log and "login.wx.qq.com" in log, log
    assert "Traceback" not in log and "uncaughtException" not in log, log
    # The status page tells the same: not logged in; what wechat4u can do.
    code, page = status(gw.http)
    assert code == 200 and isinstance(page, dict), page
    assert page["loggedIn"] is False, page
    assert all(page["capabilities"][k] for k in (
        "sendDm", "createRooms", "addMembers", "removeMembers", "listMembers")), page
