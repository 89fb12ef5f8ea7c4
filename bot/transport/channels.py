"""The channels `wolfjudge run` can serve (issue 33): a chat platform's name -> the module that
makes its transport. `wolfjudge run --channel NAME` (or WOLFJUDGE_CHANNEL; default `wechat`)
chooses one; `wolfjudge doctor --channel NAME` checks it. The runner (bot/chat/live.py) and the
doctor (bot/doctor.py) name no platform: they read the chosen channel's settings, build its
transport and drive it through the `Transport` interface (bot/transport/__init__.py).

How to add a channel (one module plus one line here):

1. Write `bot/transport/NAME.py` (the only module that imports the platform's library). A
   platform the bot holds a connection to subclasses `ConnectedTransport`
   (bot/transport/connected.py: the threads, reconnection, calls, pacing and the life cycle
   below are done there; the module writes `_connect`, `_teardown` and the sends):
   - a `Transport` subclass: `send_dm` and `post`; what the platform allows of `create_room`,
     `add_member`, `remove_member`, `members` (else the defaults raise `Unsupported` and the
     bot falls back); `start` (connect in the background, return at once), `wait_ready`,
     `wait_settled`, `halt`, `stop`; each received message handed to `self.handler(Incoming(
     msg_id, sender, text, at, room))` on one thread, in arrival order, `msg_id` unique on the
     account (the bot applies an id once: resend what may not have been handled); after a
     reconnection `self.on_reconnect()`, and what the account can do as `self.capabilities`
     and `self.on_capabilities(caps)` (bot/capabilities.py words it for the judges); the
     longest text one send carries as `max_text` (the courier sends a longer one in parts);
   - its settings: a pydantic `BaseSettings` (`extra="ignore"`, `populate_by_name=True`) whose
     fields each name their environment variable as the first `validation_alias` choice, a
     secret marked `repr=False` (the doctor says it is set, never its value); field names that
     are not `LiveSettings`' (bot/chat/live.py: judges, database_url, host …) and, for a
     required field, its doctor's words `doctor.what.FIELD` in bot/texts.yaml (so name the
     fields after the channel: `onebot_url`);
   - `build(settings, setup) -> Transport`: the transport, not started (`setup`: `Setup` below);
   - optionally `checks(check, values)`: the doctor's checks of the platform, after the
     settings and the database (`check`: bot/doctor.py's `Checkup`; `values`: the settings that
     were good, by field name, a secret's in clear);
   - `CHANNEL = Channel(settings=..., build=..., checks=..., pacing=...)` (`pacing`: the
     pace the platform tolerates, when not WeChat's; WOLFJUDGE_SEND_INTERVAL … override it;
     `needs_judges=False` where WOLFJUDGE_JUDGES is optional: the channel grants judges
     another way).
2. Add `"NAME": "bot.transport.NAME",` to `CHANNELS` below.
3. Test it against a fake of the platform on loopback that speaks the real protocol, and
   through `wolfjudge run --channel NAME` (tests/transport/test_channels.py shows a channel
   registered by a test).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic_settings import BaseSettings

from bot.transport import Transport
from bot.transport.pacing import PacingSettings

if TYPE_CHECKING:
    from bot.doctor import Checkup
    from bot.service import Service

ENVIRONMENT = "WOLFJUDGE_CHANNEL"
DEFAULT = "wechat"

# name -> the module that defines `CHANNEL` (imported only when the channel is chosen)
CHANNELS: dict[str, str] = {
    "wechat": "bot.transport.wechaty",
    "onebot": "bot.transport.onebot",  # QQ through NapCat or LLOneBot (OneBot v11)
    "web": "bot.transport.web",  # no chat account: the pages are the platform (bot/web)
}

S = TypeVar("S", bound=BaseSettings)


@dataclass(frozen=True)
class Setup:
    """What the runner hands a channel's `build` besides the channel's own settings."""

    service: Service  # the bot's service (a channel that serves pages reads through it)
    judges: tuple[str, ...]  # WOLFJUDGE_JUDGES
    host: str | None  # WOLFJUDGE_HOST: this account's name when several share a database
    # WOLFJUDGE_SEND_INTERVAL …: a platform that bans bursts paces with `Pacer(setup.pacing)`
    pacing: PacingSettings


@dataclass(frozen=True)
class Channel(Generic[S]):
    """One chat platform: its settings (read from the environment only when it is chosen),
    how its transport is made, and what `wolfjudge doctor` checks of it."""

    settings: type[S]
    build: Callable[[S, Setup], Transport]
    checks: Callable[[Checkup, Mapping[str, Any]], None] | None = None
    # the pace the platform tolerates, unless WOLFJUDGE_SEND_INTERVAL … say otherwise
    pacing: PacingSettings = field(default_factory=PacingSettings)
    # WOLFJUDGE_JUDGES required: the platform's judges are named by their ids there (False:
    # the channel grants judges itself, as the pages do with `wolfjudge judge-link`)
    needs_judges: bool = True


class UnknownChannel(ValueError):
    pass


def chosen(name: str | None = None) -> str:
    """The channel's name: `--channel`, else WOLFJUDGE_CHANNEL, else `wechat`."""
    return (name or os.environ.get(ENVIRONMENT) or DEFAULT).strip()


def channel(name: str) -> Channel[Any]:
    """The channel called `name` (its module imported now)."""
    if name not in CHANNELS:
        raise UnknownChannel(f"no channel {name!r} (there are: {', '.join(sorted(CHANNELS))})")
    found = importlib.import_module(CHANNELS[name]).CHANNEL
    if not isinstance(found, Channel):
        raise TypeError(f"{CHANNELS[name]}.CHANNEL is not a Channel")
    return found
