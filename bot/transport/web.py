"""The web channel (issue 30): a game with no chat account at all. `wolfjudge run --channel web`
(or WOLFJUDGE_CHANNEL=web) is the bot with its pages (bot/web) as its only transport: no
gateway, no platform.

- A DM is its outbox row: delivered at once (marked sent), it is on its recipient's pages (a
  seat's page, a judge's page and home, a player's key page: they show what was delivered to
  their contact) and wakes them; where the recipient asked for reminders, a push notification
  (the pages' deliverer hook, bot/web/app.py).
- A room is a page its members may open (`/p/TOKEN/room/GROUP`, bot/web/rooms.py): its id is
  `web:` and its name, its members are the ones the chat layer records (membership decides
  access on every request: a member taken out loses the page at once), what one member types
  there is posted to the others by the bot (`shows_room_talk` False), and a command typed
  there is handled as in a chat room.
- People have no account anywhere: a judge is granted by `wolfjudge judge-link NAME` on the
  server and players join by a lobby's join link, which makes a contact for their browser
  (`contacts_by_link`); nobody can make a room by hand (`rooms_by_hand` False).

Its settings: WOLFJUDGE_WEB_URL, the pages' public base URL, required (the pages' other
settings are WebSettings', bot/web/server.py); WOLFJUDGE_JUDGES is optional here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.store.chat import ChatStore
from bot.transport import Capabilities, LocalTransport
from bot.transport.channels import Channel, Setup

if TYPE_CHECKING:
    from bot.doctor import Checkup

ROOM_PREFIX = "web:"  # a room's id: never a chat platform's (none has a colon in its ids)
LOOPBACK = ("localhost", "127.0.0.1", "::1")


class WebChannelSettings(BaseSettings):
    """What the web channel reads from the environment (besides `LiveSettings`)."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    # the pages' public base URL: every link the pages and `judge-link` give starts with it
    web_url: str = Field(validation_alias=AliasChoices("WOLFJUDGE_WEB_URL"), min_length=1,
                         pattern=r"^https?://[^\s/?#]+(/[^\s?#]*)?$")


class WebTransport(LocalTransport):
    """The pages as the bot's transport: what is sent is already stored (the outbox row, marked
    sent the moment this takes it), so a send is instant and never fails."""

    instant = True
    shows_room_talk = False
    rooms_by_hand = False
    contacts_by_link = True

    def __init__(self, chats: ChatStore) -> None:
        self.chats = chats
        self.capabilities = Capabilities(reported=True, nouns="web")

    def send_dm(self, contact: str, text: str, *, key: str | None = None) -> None:
        return None  # the row is the message: its contact's pages show it once it is sent

    def post(self, room: str, text: str, *, key: str | None = None) -> None:
        return None  # the room's page shows it to whoever was in the room when it went

    def create_room(self, name: str, members: list[str]) -> str:
        return f"{ROOM_PREFIX}{name}"  # (`name` names the game: one room per game and group)

    def add_member(self, room: str, contact: str) -> None:
        return None  # the chat layer's record of the members is the room (bot/chat/rooms.py)

    def remove_member(self, room: str, contact: str) -> None:
        return None

    def members(self, room: str) -> list[str]:
        where = self.chats.sender(None, room)  # the room's game and group
        if where.room_game is None or where.room_group is None:
            return []
        return self.chats.room_members(where.room_game, where.room_group)


def build(settings: WebChannelSettings, setup: Setup) -> WebTransport:
    return WebTransport(ChatStore(setup.service.db))


def checks(check: Checkup, values: Mapping[str, Any]) -> None:
    """`wolfjudge doctor --channel web`: the pages' address (https, unless on this machine
    only) and whether a judge was granted yet (`wolfjudge judge-link NAME`)."""
    url = str(values.get("web_url") or "")
    if not url:
        return  # (named among the settings)
    check.head("pages", url=url)
    parts = urlsplit(url)
    if parts.scheme != "https" and (parts.hostname or "") not in LOOPBACK:
        check.warn("pages_plain_http")
    if check.database_url is None:
        return
    from bot.store.db import Database
    from bot.store.web import WebStore

    db = Database(check.database_url)
    db.host = check.host
    try:
        judges = WebStore(db).judges()
    finally:
        db.dispose()
    if judges:
        check.ok("pages_judges", n=judges)
    else:
        check.bad("pages_no_judge")


CHANNEL = Channel(settings=WebChannelSettings, build=build, checks=checks, needs_judges=False)
