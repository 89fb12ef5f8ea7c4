"""`wolfjudge run`: the bot on a chat platform (issue 9), the channel chosen by `--channel` or
WOLFJUDGE_CHANNEL (default `wechat`: a Wechaty puppet service; bot/transport/channels.py).

    platform ─ the channel's Transport ─ ChatBot ─ Service ─ outbox ─ one Deliverer
                                                       └─ DeadlineScheduler (real clock)

Settings come from the environment: the channel's own (WeChat's: `WechatSettings`) and the
common ones (`LiveSettings`); a missing one is named. This module names no platform: it drives
the channel's transport through the `Transport` interface (start, wait_ready, wait_settled,
halt, stop, and the handler and callbacks it sets). The outbox has one deliverer thread (a
transport whose sends can time out must not have two, or a row could go twice); everything that
wants delivery wakes it. After a reconnect the judges are told that messages sent meanwhile may
be lost; at each report of what the account can do, what that is.

`--clock "YYYY-MM-DD HH:MM"` (tests): the clock is virtual and moves only by `/clock` and
`/advance` lines on standard input, as on the console; the scheduler does not run.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any, TextIO

from pydantic import AliasChoices, Field, ValidationError, field_validator
from pydantic_settings import SettingsConfigDict

from bot.capabilities import dedupe_key, describe
from bot.chat.bot import ChatBot
from bot.chat.clocked import ClockedBot, VirtualClock, parse_clock
from bot.chat.reach import Reach
from bot.gametime import instant_of, zone
from bot.outbox import Courier, deliver
from bot.records.settings import RecordsSettings
from bot.scheduler import DeadlineScheduler, SystemClock
from bot.service import Service
from bot.store.settings import database_url
from bot.texts import t
from bot.transport import Capabilities
from bot.transport.channels import Channel, Setup, UnknownChannel, channel, chosen
from bot.transport.pacing import PacingSettings
from bot.web.server import WebSettings, page_links, serve_in_background

log = logging.getLogger(__name__)


class LiveSettings(RecordsSettings):
    """What `wolfjudge run` reads from the environment whatever the channel (a channel's own
    settings are its module's: bot/transport/channels.py), the records' with them
    (WOLFJUDGE_RANK_MIN_GAMES)."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    judges: str = Field(validation_alias=AliasChoices("WOLFJUDGE_JUDGES"), min_length=1)
    database_url: str = Field("sqlite:///wolfjudge.db",
                              validation_alias=AliasChoices("WOLFJUDGE_DATABASE_URL"))
    time_zone: str = Field("Asia/Shanghai", validation_alias=AliasChoices("WOLFJUDGE_TZ"))
    # The pacing (bot/transport/pacing.py): unset, the channel's own defaults (`Channel.pacing`:
    # WeChat 1.5 s + 1 s, QQ 2 s + 1.5 s between sends …).
    send_interval: float | None = Field(
        None, ge=0, validation_alias=AliasChoices("WOLFJUDGE_SEND_INTERVAL"))
    send_jitter: float | None = Field(None, ge=0,
                                      validation_alias=AliasChoices("WOLFJUDGE_SEND_JITTER"))
    room_interval: float | None = Field(
        None, ge=0, validation_alias=AliasChoices("WOLFJUDGE_ROOM_INTERVAL"))
    daily_cap: int | None = Field(None, ge=1,
                                  validation_alias=AliasChoices("WOLFJUDGE_DAILY_CAP"))
    rooms_per_hour: int | None = Field(
        None, ge=0, validation_alias=AliasChoices("WOLFJUDGE_ROOMS_PER_HOUR"))
    # The account's name when several share one database (ARCHITECTURE.md "Scale"): each bot
    # hosts, schedules and sends only its own games. Empty: the single account.
    host: str | None = Field(None, pattern=r"^[A-Za-z0-9_-]{1,64}$",
                             validation_alias=AliasChoices("WOLFJUDGE_HOST"))

    @field_validator("host", mode="before")
    @classmethod
    def _empty_host(cls, value: object) -> object:
        return None if value == "" else value

    @property
    def judge_list(self) -> list[str]:
        return [j.strip() for j in self.judges.split(",") if j.strip()]

    def pacing(self, defaults: PacingSettings) -> PacingSettings:
        """The channel's pacing `defaults`, with each setting given in the environment."""
        def given(value: float | None, default: float) -> float:
            return default if value is None else value

        d = defaults
        return PacingSettings(
            interval=given(self.send_interval, d.interval),
            jitter=given(self.send_jitter, d.jitter),
            room_interval=given(self.room_interval, d.room_interval),
            daily_cap=d.daily_cap if self.daily_cap is None else self.daily_cap,
            rooms_per_hour=d.rooms_per_hour if self.rooms_per_hour is None
            else self.rooms_per_hour)


class GrantedJudgesSettings(LiveSettings):
    """`LiveSettings` of a channel that grants its judges itself (`needs_judges` False: the
    pages' `wolfjudge judge-link`): WOLFJUDGE_JUDGES may be empty."""

    judges: str = Field("", validation_alias=AliasChoices("WOLFJUDGE_JUDGES"))


def common_settings(chosen_channel: Channel[Any]) -> type[LiveSettings]:
    """The common settings' model for `chosen_channel`."""
    return LiveSettings if chosen_channel.needs_judges else GrantedJudgesSettings


def load_settings(chosen_channel: Channel[Any]) -> tuple[LiveSettings, Any]:
    """The common settings and the channel's, or a SystemExit naming each missing or bad one
    (the channel's first)."""
    problems: list[str] = []
    loaded: list[Any] = []
    for model in (chosen_channel.settings, common_settings(chosen_channel)):
        try:
            loaded.append(model())  # from the environment
        except ValidationError as exc:
            for err in exc.errors():
                # (pydantic names a field by its alias: the environment variable itself)
                name = str(err["loc"][0]) if err["loc"] else "?"
                problems.append(f"{name} is not set" if err["type"] == "missing"
                                else f"{name}: {err['msg']}")
    if problems:
        raise SystemExit("wolfjudge run: " + "; ".join(problems)
                         + " (see .env.example and the README's deployment section)")
    own, common = loaded
    return common, own


class Deliverer:
    """The outbox's only deliverer: a thread woken by `poke`, and every few seconds for
    retries that came due."""

    def __init__(self, service: Service, courier: Courier, every: float = 5.0) -> None:
        self.service = service
        self.courier = courier
        self.every = every
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="outbox", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def poke(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.every)
            self._wake.clear()
            try:
                deliver(self.service.db, self.courier)
            except Exception:  # the database is away: try again on the next wake
                log.exception("outbox delivery failed")


def tell_capabilities(bot: ChatBot, judges: list[str], today: Callable[[], date]
                      ) -> Callable[[Capabilities], None]:
    """At login: the judges learn what the account can do and what falls back (once a day
    for a given report: bot/capabilities.py)."""
    def told(caps: Capabilities) -> None:
        day = today()
        host = bot.service.host
        text = describe(caps, host)
        for judge in judges:
            bot.tell_once(dedupe_key(judge, caps, day, host), judge, text)
    return told


def tell_judges(bot: ChatBot, judges: list[str]) -> Callable[[], None]:
    """After a reconnect: the judges learn what became of the messages sent meanwhile (in the
    platform's words: kept by the gateway, or caught up from QQ's history)."""
    def told() -> None:
        text = t(f"channels.{bot.transport.capabilities.nouns}.reconnected")
        for judge in judges:
            bot.tell(judge, text)
    return told


def run(*, clock: str | None = None, channel_name: str | None = None,
        inp: TextIO = sys.stdin, out: TextIO = sys.stdout) -> int:
    """`channel_name`: `--channel` (None: WOLFJUDGE_CHANNEL, else `wechat`)."""
    name = chosen(channel_name)
    try:
        entry = channel(name)
    except UnknownChannel as exc:
        raise SystemExit(f"wolfjudge run: {exc}") from None
    settings, own = load_settings(entry)
    url = database_url(settings.database_url)
    prepare_schema(url)
    service = Service(url, judges=settings.judge_list, host=settings.host,
                      rank_min_games=settings.rank_min_games)
    transport = entry.build(own, Setup(service=service, judges=tuple(settings.judge_list),
                                       host=settings.host,
                                       pacing=settings.pacing(entry.pacing)))
    stop = threading.Event()
    virtual = None
    if clock is not None:
        start = instant_of(parse_clock(clock), zone(settings.time_zone)).astimezone(UTC)
        virtual = VirtualClock(start)
    else:
        # A clean stop at any point (issue 21): no new send starts, the one in flight ends.
        def stopping(_sig: int, _frame: object) -> None:
            stop.set()
            transport.halt()

        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, stopping)
    web_settings = WebSettings()
    web = page_links(service, web_settings)  # the pages, with WOLFJUDGE_WEB_URL (issue 24)
    clocked = ClockedBot(service, out, judges=settings.judge_list, clock=virtual,
                      time_zone=settings.time_zone, transport=transport, web=web)
    if web is not None:
        serve_in_background(service, web, web_settings, clocked.bot)
    bot = clocked.bot
    deliverer = Deliverer(service, bot.courier)
    bot.on_deliver = deliverer.poke
    service.on_commit.append(lambda _gid: deliverer.poke())
    transport.handler = clocked.incoming  # with --clock, messages come at the virtual time
    transport.on_reconnect = tell_judges(bot, settings.judge_list)
    today = lambda: datetime.now(zone(settings.time_zone)).date()  # noqa: E731
    transport.on_capabilities = tell_capabilities(bot, settings.judge_list, today)
    reach = Reach(bot, today, me=lambda: transport.capabilities.account)
    transport.on_friend_request = reach.friend_request
    transport.on_unreachable = reach.unreachable
    transport.on_guarded = reach.guarded
    if virtual is not None:
        clocked.align_clock()  # before a message (a replayed one too) can come in
    deliverer.start()
    transport.start()
    try:
        if not _wait(stop, transport.wait_ready, 60):
            if not stop.is_set():
                log.warning("channel %s: not connected yet; still trying", name)
        elif virtual is None:
            # What the platform kept while the bot was away is applied at its own time before
            # the deadlines that passed meanwhile fire (a night action sent in time counts).
            transport.wait_settled()
        if virtual is not None:
            clocked.run_virtual(inp)  # /clock and /advance lines; end of input stops
        elif not stop.is_set():
            asyncio.run(_serve(service, bot, stop))
    finally:
        transport.halt()  # no new send; a pacing wait ends at once
        deliverer.stop()  # the send in flight finishes; the rest stays queued
        transport.stop()
        service.close()
    return 0


def prepare_schema(url: str) -> None:
    """A new database gets its schema (as the console's does); an older one is refused by
    the service, which names `wolfjudge migrate` (a migration is the operator's step)."""
    from bot.store import migrate
    from bot.store.db import schema_state

    if schema_state(url).state == "new":
        migrate(url)


def _wait(stop: threading.Event, ready: Callable[[float], bool], limit: float) -> bool:
    """`ready(timeout)` polled until it is true, `stop` is set or `limit` seconds pass (a
    signal handler can run between two polls)."""
    end = time.monotonic() + limit
    while not stop.is_set() and time.monotonic() < end:
        if ready(0.2):
            return True
    return False


async def _serve(service: Service, bot: ChatBot, stop: threading.Event) -> None:
    """Deadlines, and the forum vote threads' reads, on the real clock until SIGINT or
    SIGTERM."""
    sched = DeadlineScheduler(service, SystemClock())
    sched.start()
    bot.forum.schedule(sched.scheduler)
    print("wolfjudge: connected; Ctrl-C stops", file=sys.stderr, flush=True)
    try:
        await asyncio.get_running_loop().run_in_executor(None, stop.wait)
    finally:
        sched.stop()
