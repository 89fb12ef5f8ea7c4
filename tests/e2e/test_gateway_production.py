"""The gateway's production mode (the Docker image): GATEWAY_PUPPET names the puppet to serve.
Here the puppet is wechaty-puppet-mock loaded by name, as a real puppet would be; the gRPC
service listens, the control API (tests only) does not, the session directory is used."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

from gatewayhelp import GATEWAY_DIR, free_port, need_gateway, wait_until


def _open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_a_named_puppet_is_served_without_the_control_api(tmp_path: Path) -> None:
    node = need_gateway()
    grpc, http = free_port(), free_port()
    env = {**os.environ, "GATEWAY_PUPPET": "wechaty-puppet-mock",
           "WECHATY_PUPPET_SERVICE_TOKEN": "t", "GATEWAY_GRPC_PORT": str(grpc),
           "GATEWAY_HTTP_PORT": str(http), "WECHATY_PUPPET_SESSION_DIR": str(tmp_path),
           "WECHATY_LOG": "warn"}
    log = tmp_path / "gateway.log"
    with log.open("w") as out:
        proc = subprocess.Popen([node, "gateway.js"], cwd=GATEWAY_DIR, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: "gateway ready" in log.read_text(), 30, "the gateway to listen")
        assert "puppet=wechaty-puppet-mock" in log.read_text()
        assert _open(grpc) and not _open(http)
    finally:
        proc.kill()
        proc.wait(timeout=10)
