"""The gateway (gateway/, with its mock puppet) driven from tests: start it, kill it, restart
it on the same ports, and its HTTP control API (mock contacts, their DMs and room messages,
what the bot sent, the rooms). Its npm packages are installed here on first use (`npm ci`,
once, under a file lock), so the README's test command runs these tests on any machine with
Node."""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from bot.transport import Incoming

GATEWAY_DIR = Path(__file__).resolve().parents[2] / "gateway"
T = TypeVar("T")


def _npm(done: Path, args: list[str], timeout: float) -> str | None:
    """`npm ARGS` in gateway/ unless `done` exists (one process at a time: a lock file, and
    `done` looked at again once it is held); what went wrong, or None."""
    if done.is_file():
        return None
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed"
    with (GATEWAY_DIR / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if done.is_file():
                return None  # another test process did it meanwhile
            ran = subprocess.run([npm, *args, "--no-audit", "--no-fund", "--loglevel=error"],
                                 cwd=GATEWAY_DIR, capture_output=True, text=True,
                                 timeout=timeout)
            if ran.returncode != 0:
                return f"`npm {' '.join(args)}` in gateway/ failed: {ran.stderr[-500:]}"
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return None


def install_gateway() -> str | None:
    """`npm ci` in gateway/ unless done; what went wrong, or None."""
    return _npm(GATEWAY_DIR / "node_modules" / ".package-lock.json", ["ci"], 600)


def real_puppet() -> str:
    """The default real puppet, pinned in gateway/package.json (`wolfjudge.realPuppet`)."""
    spec = json.loads((GATEWAY_DIR / "package.json").read_text(encoding="utf-8"))
    return str(spec["wolfjudge"]["realPuppet"])


def install_puppet(spec: str) -> str | None:
    """`npm install --no-save SPEC` in gateway/ unless installed (after `install_gateway`);
    what went wrong, or None."""
    missing = install_gateway()
    if missing is not None:
        return missing
    name = spec.rsplit("@", 1)[0] if spec.rfind("@") > 0 else spec
    return _npm(GATEWAY_DIR / "node_modules" / name / "package.json",
                ["install", "--no-save", spec], 900)


def need_gateway() -> str:
    """The node binary, with the gateway's packages installed; skip when node is missing or the
    install fails, except under CI=true, where that fails."""
    node = shutil.which("node")
    missing = "node is not installed" if node is None else install_gateway()
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing} (CI=true: the real-protocol tests must run)")
        pytest.skip(missing)
    assert node is not None
    return node


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(check: Callable[[], T], timeout: float, what: str, every: float = 0.05) -> T:
    """Poll `check` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(every)


class Gateway:
    def __init__(self, node: str, log_dir: Path, *, without: str = "") -> None:
        self.node = node
        self.without = without  # methods the mock pretends not to have: "roomCreate,..."
        self.grpc_port = free_port()
        self.http_port = free_port()
        self.token = "test-" + secrets.token_hex(8)
        self.log_path = log_dir / "gateway.log"
        self.mailbox = log_dir / "mailbox.json"  # kept across a restart, as in the volume
        self.proc: subprocess.Popen[bytes] | None = None
        self.contacts: dict[str, str] = {}  # name -> id: made again when it restarts

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def start(self, timeout: float = 60.0) -> None:
        env = {**os.environ, "WECHATY_PUPPET_SERVICE_TOKEN": self.token, "WECHATY_LOG": "warn",
               "GATEWAY_MAILBOX": str(self.mailbox), "GATEWAY_MOCK_WITHOUT": self.without,
               "GATEWAY_CONTACTS": json.dumps([{"id": i, "name": n}
                                               for n, i in self.contacts.items()])}
        with self.log_path.open("ab") as out:
            self.proc = subprocess.Popen(
                [self.node, "gateway.js", "--grpc-port", str(self.grpc_port),
                 "--http-port", str(self.http_port)],
                cwd=GATEWAY_DIR, env=env, stdout=out, stderr=subprocess.STDOUT)

        def up() -> bool:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(f"the gateway exited ({self.proc.returncode}):\n"
                                     + self.log())
            try:
                return bool(self.call("GET", "/health").get("ok"))
            except (urllib.error.URLError, ConnectionError):
                return False

        wait_until(up, timeout, "the gateway to listen", every=0.1)

    def kill(self) -> None:
        """SIGKILL: the connection drops without a goodbye."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            self.call("POST", "/shutdown")
            self.proc.wait(10)
        except Exception:
            self.kill()

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-4000:]

    # control API ------------------------------------------------------------------------------
    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{self.http_port}{path}", data=data,
                                     method=method,
                                     headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.load(resp)

    def contact(self, name: str, id: str | None = None) -> str:
        made = str(self.call("POST", "/contacts", {"name": name, "id": id or f"wxid_{name}"})
                   ["id"])
        self.contacts[name] = made
        return made

    def dm(self, sender: str, text: str, timestamp_ms: int | None = None) -> str:
        body: dict[str, Any] = {"from": sender, "text": text}
        if timestamp_ms is not None:
            body["timestamp"] = timestamp_ms
        return str(self.call("POST", "/dm", body)["id"])

    def say(self, sender: str, room: str, text: str) -> str:
        return str(self.call("POST", "/say", {"from": sender, "room": room, "text": text})["id"])

    def sent(self, since: int = 0) -> list[dict[str, Any]]:
        return list(self.call("GET", f"/sent?since={since}"))

    def dms_to(self, contact: str) -> list[str]:
        return [s["text"] for s in self.sent() if s["kind"] == "dm" and s["to"] == contact]

    def rooms(self) -> dict[str, dict[str, Any]]:
        return {r["id"]: r for r in self.call("GET", "/rooms")}

    def make_room(self, owner: str, members: list[str], topic: str = "") -> str:
        """A room `owner` made by hand with `members` and the bot; its id."""
        return str(self.call("POST", "/rooms", {"owner": owner, "members": members,
                                                "topic": topic})["id"])

    def refuse_rooms(self, refuse: bool = True) -> None:
        self.call("POST", "/refuse-rooms", {"refuse": refuse})


class Inbox:
    """What the transport handed to its handler, in order (filled on the worker thread)."""

    def __init__(self) -> None:
        self.items: list[Incoming] = []
        self._lock = threading.Lock()

    def __call__(self, msg: Incoming) -> None:
        with self._lock:
            self.items.append(msg)

    def find(self, msg_id: str, timeout: float = 20.0) -> Incoming:
        def hit() -> Incoming | None:
            with self._lock:
                return next((m for m in self.items if m.msg_id == msg_id), None)

        return wait_until(hit, timeout, f"message {msg_id} to arrive")

    def snapshot(self) -> list[Incoming]:
        with self._lock:
            return list(self.items)
