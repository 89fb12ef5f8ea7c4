"""Channels (issue 33, "the transport interface declares all that the runner uses"): a channel
is one module plus one line of bot/transport/channels.py; `wolfjudge run` and `wolfjudge
doctor` drive it through the `Transport` interface alone and name no platform; WeChat's
settings are required only when the channel is WeChat.

This module is itself a channel (`fake`), registered by the tests the way a new one is: its
`CHANNEL` and one line in `CHANNELS`."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from astnames import names
from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.doctor import Checkup, doctor
from bot.texts import t
from bot.transport import Capabilities, Incoming, Transport
from bot.transport import channels as registry
from bot.transport.channels import Channel, Setup

ROOT = Path(__file__).resolve().parents[2]
BOT = ROOT / "bot"
JUDGE = "judge-1"
WECHAT_SETTINGS = ("WECHATY_PUPPET_SERVICE_ENDPOINT", "WECHATY_PUPPET_SERVICE_TOKEN",
                   "WOLFJUDGE_GATEWAY_STATUS")
WAIT = 30.0  # seconds at most for the bot's deliverer thread (never a timing assertion)


class FakeSettings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    fake_room: str = Field("the-room", validation_alias=AliasChoices("WOLFJUDGE_FAKE_ROOM"))


@dataclass
class Sent:
    to: str
    text: str


class FakeTransport(Transport):
    """Implements the interface and nothing more: what the runner calls of it is recorded."""

    def __init__(self, settings: FakeSettings, setup: Setup) -> None:
        self.settings = settings
        self.setup = setup
        self.calls: list[str] = []
        self.sent: list[Sent] = []
        self.answered = threading.Event()
        self.inbox = [Incoming(msg_id="m1", sender=JUDGE, text="帮助", at=datetime.now(UTC))]

    def start(self) -> None:
        self.calls.append("start")
        assert self.handler is not None and self.on_capabilities is not None
        assert self.on_reconnect is not None
        self.capabilities = Capabilities(create_rooms=False, reported=True)
        self.on_capabilities(self.capabilities)
        for msg in self.inbox:
            self.handler(msg)
        self.on_reconnect()

    def wait_ready(self, timeout: float | None = None) -> bool:
        self.calls.append("wait_ready")
        return True

    def wait_settled(self, limit: float = 30.0) -> bool:
        self.calls.append("wait_settled")
        return True

    def halt(self) -> None:
        self.calls.append("halt")

    def stop(self) -> None:
        self.calls.append("stop")

    def send_dm(self, contact: str, text: str, *, key: str | None = None) -> None:
        self.sent.append(Sent(contact, text))
        if _all_told(self.dms(JUDGE)):
            self.answered.set()

    def dms(self, contact: str) -> list[str]:
        return [s.text for s in self.sent if s.to == contact]

    def post(self, room: str, text: str, *, key: str | None = None) -> None:
        self.sent.append(Sent("@" + room, text))


def _all_told(texts: list[str]) -> bool:
    """The capabilities report, the answer to 帮助 and the reconnection notice."""
    return (any("不可用：建群" in text for text in texts)
            and t("channels.wechat.reconnected") in texts
            and any("新游戏" in text for text in texts))


BUILT: list[FakeTransport] = []


def build(settings: FakeSettings, setup: Setup) -> FakeTransport:
    BUILT.append(FakeTransport(settings, setup))
    return BUILT[-1]


def checks(check: Checkup, values: Mapping[str, Any]) -> None:
    check.ok("setting", name="WOLFJUDGE_FAKE_ROOM", value=values["fake_room"])


CHANNEL = Channel(settings=FakeSettings, build=build, checks=checks)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """The `fake` channel registered (one line), WeChat's settings absent."""
    monkeypatch.setitem(registry.CHANNELS, "fake", __name__)
    for name in WECHAT_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv(registry.ENVIRONMENT, raising=False)
    monkeypatch.delenv("WOLFJUDGE_HOST", raising=False)
    monkeypatch.setenv("WOLFJUDGE_JUDGES", JUDGE)
    monkeypatch.setenv("WOLFJUDGE_DATABASE_URL", f"sqlite:///{tmp_path / 'w.db'}")
    BUILT.clear()
    yield
    BUILT.clear()


class Input:
    """`run --clock`'s standard input: one line, then the end once the judge was told all
    (the deliverer is a thread of its own; a bounded wait, never a timing assertion)."""

    def __iter__(self) -> Iterator[str]:
        yield "/echo started\n"
        [transport] = BUILT  # built by now: run reads its input after starting it
        assert transport.answered.wait(WAIT), transport.sent


def test_run_serves_a_registered_channel_without_wechats_settings(fake: None) -> None:
    from bot.chat.live import run

    out = io.StringIO()
    assert run(clock="2026-12-01 07:30", channel_name="fake", inp=Input(),  # type: ignore[arg-type]
               out=out) == 0
    [transport] = BUILT
    assert transport.setup.judges == (JUDGE,)
    assert transport.calls == ["start", "wait_ready", "halt", "stop"], transport.calls
    # the capabilities report, the answer to 帮助, the reconnection notice: all through it
    assert _all_told(transport.dms(JUDGE)), transport.sent


def test_the_environment_chooses_the_channel(fake: None, monkeypatch: pytest.MonkeyPatch) -> None:
    assert registry.chosen() == "wechat"
    monkeypatch.setenv(registry.ENVIRONMENT, "fake")
    assert registry.chosen() == "fake" and registry.chosen("wechat") == "wechat"
    assert registry.channel("fake") is CHANNEL


def test_an_unknown_channel_is_refused_with_the_known_ones(fake: None) -> None:
    from bot.chat.live import run
    from bot.cli import main

    with pytest.raises(SystemExit) as exc:
        run(channel_name="telegram")
    assert "telegram" in str(exc.value) and "wechat" in str(exc.value)
    with pytest.raises(SystemExit):  # argparse: not one of the choices
        main(["run", "--channel", "telegram"])


def test_wechats_settings_are_required_only_for_wechat(fake: None) -> None:
    from bot.chat.live import load_settings

    common, own = load_settings(registry.channel("fake"))
    assert common.judge_list == [JUDGE] and own.fake_room == "the-room"
    with pytest.raises(SystemExit) as exc:
        load_settings(registry.channel("wechat"))
    assert "WECHATY_PUPPET_SERVICE_ENDPOINT is not set" in str(exc.value)


def test_the_rank_minimum_is_read_with_the_other_settings(
        fake: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """README "Records": WOLFJUDGE_RANK_MIN_GAMES (default 3) is one of `wolfjudge run`'s
    settings, a bad one named like any other, and the service it builds carries it."""
    from bot.chat.live import load_settings

    assert load_settings(registry.channel("fake"))[0].rank_min_games == 3
    monkeypatch.setenv("WOLFJUDGE_RANK_MIN_GAMES", "0")
    with pytest.raises(SystemExit) as exc:
        load_settings(registry.channel("fake"))
    assert "WOLFJUDGE_RANK_MIN_GAMES" in str(exc.value)
    monkeypatch.setenv("WOLFJUDGE_RANK_MIN_GAMES", "5")
    assert load_settings(registry.channel("fake"))[0].rank_min_games == 5
    from bot.chat.live import run

    assert run(clock="2026-12-01 07:30", channel_name="fake", inp=Input(),  # type: ignore[arg-type]
               out=io.StringIO()) == 0
    [transport] = BUILT
    assert transport.setup.service.rank_min_games == 5


def test_doctor_checks_the_chosen_channel(fake: None) -> None:
    out = io.StringIO()
    assert doctor(out, channel="fake") == 0, out.getvalue()
    text = out.getvalue()
    assert "✓ WOLFJUDGE_CHANNEL：fake" in text and "✓ WOLFJUDGE_FAKE_ROOM：the-room" in text
    assert "WECHATY" not in text and "网关" not in text, text
    out = io.StringIO()
    assert doctor(out, channel="wechat") == 1
    assert "✗ WECHATY_PUPPET_SERVICE_ENDPOINT 没有设置" in out.getvalue()


def test_run_and_doctor_name_no_platform() -> None:
    for path in (BOT / "chat" / "live.py", BOT / "doctor.py", BOT / "chat" / "clocked.py"):
        named = [n for n in names(path) if "wechat" in n.lower() or "qrcode" in n.lower()]
        assert not named, f"{path.relative_to(ROOT)} names {named}"


def test_only_the_wechat_channel_imports_wechaty() -> None:
    for path in BOT.rglob("*.py"):
        found = {n for n in names(path) if n.split(".")[0].startswith("wechaty")}
        if path != BOT / "transport" / "wechaty.py":
            assert not found, f"{path.relative_to(ROOT)} imports {found}"


def test_every_registered_channel_is_a_channel() -> None:
    for name in registry.CHANNELS:
        entry = registry.channel(name)
        assert issubclass(entry.settings, BaseSettings) and callable(entry.build), name
