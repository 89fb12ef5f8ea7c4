"""A judge's home (issue 30, item 2): a judge starts without chat.

`wolfjudge judge-link NAME` (on the server, like `migrate`) grants contact NAME the right to
create games (they judge what they create, and nothing else: bot/access.py `may_create`) and
prints a signed link to their home, `/h/TOKEN`, which never expires; `--reset` prints a new one
and the old one is refused from then on (403), `--revoke` takes the right back (and the link).

The home lists their games (each with its judge's page, its join link while players join, its
public page and, once over, its replay), the DMs they were sent, the `新游戏` form of each
ruleset (every option with its Chinese label, its default and the values it may take, from
bot/options_text.py: the form builds the `新游戏` command text and sends it through the same
handler, so it is checked exactly as `新游戏` is) and a send box for any judge command.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from bot import options_text
from bot.chat.lobby import CHAT_DEFAULTS, DEFAULT_PLAYERS, channel_defaults
from bot.gametime import utcnow
from bot.ids import MAX_ID, is_page_contact
from bot.options_text import Option
from bot.store.chat import ChatStore
from bot.store.db import Database
from bot.store.web import HomeGame, WebStore
from bot.texts import ruleset_name, t
from bot.web.links import SECRET_NAME, Links, PageLinks, digest, new_secret
from bot.web.site import Site
from engine.options import duration_minutes
from engine.ruleset import ruleset_names

NAME_MAX = 64  # characters of a judge's name given to `judge-link`
FORM_FIELD = "opt."  # the 新游戏 form's option fields: opt.KEY


class BadName(ValueError):
    pass


def grant(db_url: str | None, name: str, *, reset: bool = False, revoke: bool = False) -> str:
    """`wolfjudge judge-link NAME`: the link to NAME's home (after `reset`, a new one; the old
    one is refused), or, with `revoke`, "" once the right and the links are taken back."""
    from bot.web.server import WebSettings  # (the pages' settings, read from the environment)

    name = name.strip()
    if not 0 < len(name) <= NAME_MAX or len(name) > MAX_ID or any(
            c.isspace() or not c.isprintable() for c in name) or is_page_contact(name):
        raise BadName(f"a judge's name is 1 to {NAME_MAX} printable characters without spaces, "
                      f"not starting with page: ({name[:20]!r})")
    settings = WebSettings()
    if not settings.url:
        raise BadName("WOLFJUDGE_WEB_URL is not set: the pages' public base URL, e.g. "
                      "https://wolf.example.org (README, Playing without WeChat)")
    db = Database(db_url)
    try:
        chats, web = ChatStore(db), WebStore(db)
        if revoke:
            web.withdraw(name)
            chats.revoke_links(name)
            return ""
        web.know(name, digest(name), utcnow(), creates_games=True)
        epoch = chats.revoke_links(name) if reset else chats.link_epoch(name)
        # signed with the pages' key (WOLFJUDGE_WEB_SECRET, or the one kept in the database)
        secret = settings.secret or chats.secret(SECRET_NAME, new_secret)
        links = PageLinks(settings.url, Links(secret, utcnow, settings.link_days))
        return links.url("h", "", name, None, epoch)
    finally:
        db.dispose()


# the 新游戏 form ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Field:
    """One option of the form: its input's name, label, kind, the value shown first (the
    default, as typed), the choices (typed, words) and bounds."""

    name: str
    key: str
    label: str
    kind: str
    value: str
    default_text: str
    choices: tuple[tuple[str, str], ...] = ()
    low: int | None = None
    high: int | None = None
    hint: str = ""


@dataclass(frozen=True)
class GameForm:
    ruleset: str
    title: str
    players: int
    fields: list[Field] = field(default_factory=list)


def _defaults(opt: Option, chat: Mapping[str, str]) -> Option:
    """The option with the platform's own default for a chat option (QQ announces in a
    room: bot/chat/lobby.py `channel_defaults`)."""
    return replace(opt, default=chat[opt.key]) if opt.key in chat else opt


def _shown(opt: Option) -> str:
    """The default as the judge would type it."""
    if opt.kind == "duration":
        return f"{opt.default}min"
    return options_text.typed(opt.default)


def game_forms(chat: Mapping[str, str]) -> list[GameForm]:
    """One form per registered ruleset, every option of it and of the bot (`chat`: the bot's
    options' defaults on this platform)."""
    forms = []
    for ruleset in ruleset_names():
        fields = []
        for key in options_text.keys(ruleset):
            opt = _defaults(options_text.option(key, ruleset), chat)
            hint = ""
            if opt.kind == "duration":
                hint = t("web.form_duration", high=options_text.duration_text(opt.high or 0))
            elif opt.kind == "count":
                hint = t("web.form_count", low=opt.low, high=opt.high)
            elif opt.kind == "form":
                hint = str(_hints().get(key, ""))
            fields.append(Field(FORM_FIELD + key, key, opt.label, opt.kind, _shown(opt),
                                options_text.value_text(key, opt.default, ruleset),
                                tuple((c.typed, c.text) for c in opt.choices),
                                opt.low, opt.high, hint))
        forms.append(GameForm(ruleset, ruleset_name(ruleset),
                              DEFAULT_PLAYERS.get(ruleset, 12), fields))
    return forms


def _hints() -> dict[str, str]:
    from bot.texts import text_data

    return dict(text_data("option_hints"))


class FormRefused(ValueError):
    pass


def new_game_text(fields: dict[str, str], lists: dict[str, list[str]],
                  chat: Mapping[str, str]) -> str:
    """The `新游戏` command the form says: the ruleset, the player count, and each option
    set away from its default (`key=value`, as a judge types it). What no form of ours can
    send (an unknown ruleset or option, a value with a space) is refused, never guessed."""
    ruleset = fields.get("ruleset", "").strip()
    if ruleset not in ruleset_names():
        raise FormRefused(t("web.form_ruleset"))
    players = fields.get("players", "").strip()
    if players and not (players.isascii() and players.isdigit() and len(players) <= 2):
        raise FormRefused(t("web.form_players"))
    known = set(options_text.keys(ruleset))
    words = ["新游戏", ruleset, *([players] if players else [])]
    given = {k[len(FORM_FIELD):] for k in [*fields, *lists] if k.startswith(FORM_FIELD)}
    unknown = sorted(given - known)
    if unknown:
        raise FormRefused(t("web.form_unknown", key=unknown[0][:40]))
    for key in options_text.keys(ruleset):
        if key not in given:
            continue
        opt = _defaults(options_text.option(key, ruleset), chat)
        if opt.kind == "list":
            value = ",".join(v.strip() for v in lists.get(FORM_FIELD + key, []) if v.strip())
        else:
            value = fields.get(FORM_FIELD + key, "").strip()
        if not value or _default(opt, value):
            continue
        if any(c.isspace() or c == "=" for c in value):
            raise FormRefused(t("web.form_value", label=opt.label))
        words.append(f"{key}={value}")
    return " ".join(words)


def _default(opt: Option, value: str) -> bool:
    if opt.kind == "duration":
        try:
            return duration_minutes(value) == opt.default
        except ValueError:
            return False
    return value == options_text.typed(opt.default)


# the page ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GameRow:
    code: str
    title: str
    status: str
    judge_url: str | None
    join_url: str | None
    public_url: str | None
    replay_url: str | None


def _status(g: HomeGame) -> str:
    if g.status == "open":
        return t("web.home_open", joined=g.joined, players=g.players)
    if g.status == "cancelled":
        return t("web.home_cancelled")
    return t("web.home_over") if g.over else t("web.home_started")


def router(site: Site) -> APIRouter:
    api = APIRouter()
    chat = (channel_defaults(site.bot.transport.capabilities) if site.bot is not None
            else CHAT_DEFAULTS)
    forms = game_forms(chat)

    def admitted(token: str) -> str | None:
        """The home's judge, if the link is a home link of the judge's current generation
        and they still may create games (Site.lasting: one read whatever the token)."""
        known = site.lasting(token, "h")
        return known.contact if known is not None and known.creates_games else None

    def rows(contact: str) -> list[GameRow]:
        out = []
        epoch = site.chats.link_epoch(contact)  # (once, not once per game)
        for g in site.web.judged_games(contact):
            started = g.status == "started"
            out.append(GameRow(
                g.code, t("web.home_game", code=g.code, ruleset=ruleset_name(g.ruleset),
                          players=g.players),
                _status(g),
                site.link("j", g.code, contact, epoch=epoch) if g.status != "cancelled" else None,
                site.join_url(g.code, g.join_epoch) if g.status == "open" and site.joins_open
                else None,
                site.url(f"/g/{g.code}") if started else None,
                site.url(f"/replay/{g.code}") if started and g.over else None))
        return out

    def view(token: str, contact: str, answers: list[str] | None = None,
             status: int = 200) -> HTMLResponse:
        return site.page("home.html", status=status, answers=answers, judge=contact,
                         games=rows(contact), forms=forms,
                         inbox=site.inbox(contact, tagged=True),
                         stream=site.stream(f"/h/{token}/events"))

    @api.get("/h/{token}", response_class=HTMLResponse)
    async def home(token: str) -> HTMLResponse:
        contact = await run_in_threadpool(admitted, token)
        if contact is None:
            return site.denied()
        return await run_in_threadpool(view, token, contact)

    @api.get("/h/{token}/events")
    async def home_events(token: str) -> Response:
        """The home's stream: what the judge is sent, and joins to their lobbies."""
        contact = await run_in_threadpool(admitted, token)
        if contact is None:
            return site.denied()
        return site.streaming(await run_in_threadpool(site.own_keys, contact))

    @api.post("/h/{token}", response_class=HTMLResponse)
    async def home_send(token: str, request: Request) -> HTMLResponse:
        contact = await run_in_threadpool(admitted, token)
        if contact is None:
            return site.denied()
        if not site.allowed(("h", contact)):
            return site.page("denied.html", status=429, reason=t("web.too_many"))
        form = await site.form(request)
        lists = await site.lists(request, FORM_FIELD)
        nonce = form.get("nonce", "")
        try:
            text = (new_game_text(form, lists, chat) if "ruleset" in form
                    else form.get("cmd", ""))
        except FormRefused as exc:
            return await run_in_threadpool(view, token, contact, [str(exc)], 400)
        answers = await site.send(contact, text, nonce, {"judge", f"contact:{contact}"})
        return await run_in_threadpool(view, token, contact, answers)

    return api
