"""Serving the pages: `wolfjudge web`, and inside `wolfjudge run` (and `console`) when
WOLFJUDGE_WEB_URL is set. Uvicorn on loopback by default, with no access log (a link is a
bearer secret: a request line must never reach a log)."""

from __future__ import annotations

import threading

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.chat.bot import ChatBot
from bot.gametime import utcnow
from bot.service import Service
from bot.store.chat import ChatStore
from bot.web.links import LINK_DAYS, SECRET_NAME, Links, PageLinks, new_secret


class WebSettings(BaseSettings):
    """The pages' settings, from the environment."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    # the public base URL of the pages (what `网页` links start with); empty: pages off
    url: str = Field("", validation_alias=AliasChoices("WOLFJUDGE_WEB_URL"))
    # the key the links are signed with; empty: one made once and kept in the database
    secret: str = Field("", validation_alias=AliasChoices("WOLFJUDGE_WEB_SECRET"))
    host: str = Field("127.0.0.1", validation_alias=AliasChoices("WOLFJUDGE_WEB_HOST"))
    port: int = Field(8790, ge=1, le=65535, validation_alias=AliasChoices("WOLFJUDGE_WEB_PORT"))
    link_days: int = Field(LINK_DAYS, ge=1, le=90,
                           validation_alias=AliasChoices("WOLFJUDGE_WEB_LINK_DAYS"))
    # the push reminders a seat's page offers (`提醒我`); off: the button is not shown
    push: bool = Field(True, validation_alias=AliasChoices("WOLFJUDGE_WEB_PUSH"))
    # the addresses (or networks) of the TLS proxies in front whose X-Forwarded-For is
    # believed (comma-separated, e.g. 127.0.0.1); empty: the connection's address is the
    # client's
    trusted_proxies: str = Field("", validation_alias=AliasChoices(
        "WOLFJUDGE_WEB_TRUSTED_PROXIES"))

    @property
    def proxies(self) -> list[str]:
        return [p.strip() for p in self.trusted_proxies.split(",") if p.strip()]


def page_links(service: Service, settings: WebSettings | None = None) -> PageLinks | None:
    """The links `网页` hands out, or None when WOLFJUDGE_WEB_URL is not set."""
    settings = settings or WebSettings()
    if not settings.url:
        return None
    chats = ChatStore(service.db)
    secret = settings.secret or chats.secret(SECRET_NAME, new_secret)
    return PageLinks(settings.url, Links(secret, utcnow, settings.link_days))


def make_server(service: Service, links: PageLinks, settings: WebSettings,
                bot: ChatBot | None = None) -> object:
    """`bot`: the running chat bot that takes the pages' actions, whose commits and
    deliveries keep the pages live and send the push reminders (None: the pages read)."""
    import uvicorn

    from bot.web.app import create_app
    from bot.web.push import Pusher

    chats = ChatStore(service.db)
    pusher = Pusher(chats, links) if bot is not None and settings.push else None
    app = create_app(service, chats, links.links, bot=bot, base=links.base, pusher=pusher,
                     proxies=settings.proxies)
    # proxy_headers off: whose X-Forwarded-For is believed is WOLFJUDGE_WEB_TRUSTED_PROXIES'
    # alone (the app reads it); uvicorn would believe any from its own loopback
    config = uvicorn.Config(app, host=settings.host, port=settings.port, access_log=False,
                            log_level="warning", lifespan="off", proxy_headers=False,
                            timeout_graceful_shutdown=2)  # (open event streams end then)
    return uvicorn.Server(config)


def serve(service: Service, settings: WebSettings | None = None) -> int:
    """`wolfjudge web`: the pages until Ctrl-C, beside a bot in another process: they read
    (an action from a page needs the bot that makes the rooms and sends: `wolfjudge run`
    with WOLFJUDGE_WEB_URL serves the pages with their actions)."""
    settings = settings or WebSettings()
    links = page_links(service, settings.model_copy(update={"url": settings.url or "/"}))
    assert links is not None
    server = make_server(service, links, settings)
    server.run()  # type: ignore[attr-defined]
    return 0


def serve_in_background(service: Service, links: PageLinks, settings: WebSettings,
                        bot: ChatBot) -> threading.Thread:
    """The pages inside the bot (`wolfjudge run`), actions and all: a daemon thread."""
    server = make_server(service, links, settings, bot)
    thread = threading.Thread(target=server.run, name="wolfjudge-web",  # type: ignore[attr-defined]
                              daemon=True)
    thread.start()
    return thread
