"""Games before they start: `新游戏`, `报名`, `退出`, `踢出`, `开始` (CHAT.md).

A lobby is checked completely when it is made: the ruleset, the player count and every option
go through `engine.new_game` once with a throwaway seed (the engine is pure), so a bad key is
refused at `新游戏`, never at night 3. The real seed is drawn at `开始`; the seats are drawn from
it too (`seat_order`), so the deal and the seating can both be checked once the seed is
revealed at the end.
"""

from __future__ import annotations

import logging
import re
import secrets
import unicodedata
from collections.abc import Mapping
from datetime import date, datetime, time, timedelta
from functools import cache
from typing import Any

from bot import options_text
from bot.commands.numbers import NUMBER_RUN
from bot.commands.parse import ParseError, parse
from bot.texts import camp_name, role_name, ruleset_name, t, texts
from bot.transport import Capabilities
from engine import new_game, rng
from engine.game import RoleSetError, check_role_set
from engine.options import MAX_MINUTES, OptionError
from engine.ruleset import get_ruleset
from rulesets.data import load

log = logging.getLogger(__name__)

# The bot's own options (CHAT.md), kept apart from the engine's (RULES.md §5).
CHAT_OPTIONS: dict[str, tuple[str, ...]] = {
    # forum: the judge enters forum votes; forum-auto: the bot reads the vote thread (bot/forum)
    "votes.channel": ("forum", "dm", "forum-auto"),
    "groups.mode": ("auto", "judge", "relay"),
    "groups.judges_in_rooms": ("true", "false"),
    "deal.seats": ("seed", "join"),
    # dm: public announcements by DM to each seat; room: once, in a room of all seats and
    # the judge (made by the bot, or by the judge and bound: 绑定 CODE 公告群)
    "public.channel": ("dm", "room"),
    # whether seats that are out still get the public announcements by DM
    "public.dm_out": ("false", "true"),
}
CHAT_DEFAULTS = {"votes.channel": "forum", "groups.mode": "auto",
                 "groups.judges_in_rooms": "true", "deal.seats": "seed",
                 "public.channel": "dm", "public.dm_out": "false"}
RULESETS = {"classic": "classic", "anomaly": "anomaly", "standard": "standard"}
DEFAULT_PLAYERS = {"classic": 12, "anomaly": 12, "standard": 12}
CODE_CHARS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud and retyped
OPEN, CLOSE = time(9, 0), time(21, 0)
END_CONFIRM = timedelta(minutes=10)  # `结束 确认` within this of `结束`


class LobbyError(ValueError):
    """A refusal: `key` names the text in texts.yaml, `fields` fill it in."""

    def __init__(self, key: str, /, **fields: Any) -> None:  # a field may be called `key`
        super().__init__(key)
        self.key = key
        self.fields = fields


TOKEN_CHARS = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def new_token() -> str:
    """A one-time substitution token: 12 letters and digits (about 70 bits).

    No punctuation: `_` or `-` at the start would read as a separator after `接替`."""
    return "".join(secrets.choice(TOKEN_CHARS) for _ in range(12))


def new_code() -> str:
    """A game code: 6 characters of A–Z and 2–9 (CHAT.md allows 4–8 of A–Z and 0–9)."""
    return "".join(secrets.choice(CODE_CHARS) for _ in range(6))


def _value(raw: str) -> Any:
    low = raw.lower()
    if low in ("true", "false"):
        return low == "true"
    if raw.isdigit() and raw.isascii():
        return int(raw)
    if "," in raw:
        return [_value(x) for x in raw.split(",") if x]
    return raw


def split_options(items: list[str], defaults: dict[str, str] | None = None
                  ) -> tuple[dict[str, Any], dict[str, str]]:
    """`key=value` words into (engine options, chat options); a key given twice is refused
    (which value was meant?). `defaults`: the chat options' (CHAT_DEFAULTS, or the channel's:
    `channel_defaults`)."""
    engine: dict[str, Any] = {}
    chat: dict[str, str] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key or not raw.strip():
            raise LobbyError("bad_option", key=item[:40], detail=t("option_form"))
        if key in engine or key in chat:
            raise LobbyError("bad_option", key=key[:40], detail=t("option_twice"))
        if key in CHAT_OPTIONS:
            if raw.lower() not in CHAT_OPTIONS[key]:
                raise LobbyError("bad_option", key=options_text.named(key), detail=t(
                    "option_values", values=options_text.values_hint(key)))
            chat[key] = raw.lower()
        else:
            engine[key] = _value(raw.strip())
    return engine, {**(defaults or CHAT_DEFAULTS), **chat}


def channel_defaults(caps: Capabilities) -> dict[str, str]:
    """The chat options' defaults on a platform that can do what `caps` says: announcements in
    a room where its risk control watches one text DMed to many (QQ)."""
    return {**CHAT_DEFAULTS, **({"public.channel": "room"} if caps.announce_in_room else {})}


def option_hint(ruleset: str, key: str, value: Any) -> str:
    """How the option's value is written, in Chinese (the engine's own message is for the
    log: English, and about the code): its values with their words, or the form and bounds."""
    special = texts()["option_hints"].get(key)
    if special:
        return str(special)
    try:
        opt = options_text.option(key, ruleset)
    except KeyError:
        return t("option_value", value=str(value)[:40])
    if opt.kind in ("choice", "list"):
        return t("option_values", values=options_text.values_hint(key, ruleset))
    if opt.kind == "duration":
        if opt.high == MAX_MINUTES:
            return t("option_duration")
        return t("option_duration_max", max=options_text.duration_text(opt.high or 0))
    if opt.kind == "count":
        return t("option_count", lo=opt.low, hi=opt.high)
    return t("option_value", value=str(value)[:40])


# Letters that show nothing: a 马甲 holding one displays as another name (`小\u200b明` reads as
# `小明`; a direction control reverses what follows). Beyond the categories Cf (format: the
# bidi controls, zero-width space and joiners, the soft hyphen) and Cc (controls): the fillers,
# the combining grapheme joiner, Khmer's invisible vowels and Mongolian's variation selectors
# (the other variation selectors stay: an emoji takes them, `❤️`).
INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f\u17b4\u17b5"
                      "\u180b\u180c\u180d\u180f")


def check_name(name: str) -> None:
    """Whether `name` may be a 马甲 (报名, and a join form on the web): 1 to 32 characters with
    no space, nothing invisible or turning the text's direction (it would display as another
    name), and nothing that reads as a seat, a role, the judge or a command (the judge's list
    reads `N号 马甲`, and the chat reads commands from its words). A LobbyError says why not."""
    if not 0 < len(name) <= 32 or any(c.isspace() for c in name):
        raise LobbyError("name_bad")
    if any(unicodedata.category(c) in ("Cf", "Cc") or c in INVISIBLE for c in name):
        raise LobbyError("name_invisible")
    reads_as = reserved(name)
    if reads_as is not None:
        raise LobbyError("name_reserved", name=name, what=t(f"name_reads_as.{reads_as}"))


@cache
def _names_taken() -> dict[str, str]:
    """Words a 马甲 may not be: every ruleset's role names and ids, and 法官."""
    taken = {"法官": "judge", "judge": "judge"}
    for ruleset in set(RULESETS.values()):
        data = load(ruleset, "data")
        for role, name in (data.get("role_names") or {}).items():
            taken[str(name)] = taken[str(role).lower()] = "role"
    return taken


def reserved(name: str) -> str | None:
    """What a 马甲 would be mistaken for (seat, role, judge, command), or None."""
    text = unicodedata.normalize("NFKC", name).strip()
    if NUMBER_RUN.fullmatch(text):
        return "seat"
    taken = _names_taken().get(text.lower())
    if taken is not None:
        return taken
    try:
        return "command" if parse(text) is not None else None
    except ParseError:
        return "command"  # a verb with arguments that do not fit: still a command word


def parse_roles(ruleset: str, text: str) -> list[str]:
    """`角色 狼人×3 预言家 女巫 守卫 丘比特 村民×5` into role ids, one a seat (a LobbyError
    saying what was wrong): a role by its Chinese name or its id, `×N` (or xN, *N) for N of it."""
    names = load(ruleset, "data").get("role_names", {})
    by_name = {**{v: k for k, v in names.items()}, **{k: k for k in names}}
    roles: list[str] = []
    for token in re.split(r"[\s、，,]+", text.strip()):
        if not token:
            continue
        m = re.fullmatch(r"(.+?)(?:[×xX*＊](\d{1,2}))?", token)
        role = by_name.get(m[1]) if m else None
        if m is None or role is None:
            raise bad_roles(ruleset, t("roles_unknown", name=token[:20],
                                       names="、".join(names.values())))
        roles += [role] * int(m[2] or 1)
    if not roles:
        raise bad_roles(ruleset, t("roles_empty"))
    return roles


def refused(reasons: Mapping[str, str]) -> LobbyError:
    """Options refused, each named with its label and its own reason (the words a single
    bad option gets)."""
    if len(reasons) == 1:
        [(key, why)] = reasons.items()
        return LobbyError("bad_option", key=options_text.named(key), detail=why)
    return LobbyError("bad_option", key="、".join(map(options_text.named, reasons)),
                      detail=_each(reasons))


def _each(reasons: Mapping[str, str]) -> str:
    return "".join(t("options_reason", label=options_text.label(k), reason=why)
                   for k, why in reasons.items())


def conflict(ruleset: str, players: int, options: Mapping[str, Any]) -> LobbyError:
    """Options each fine alone but not together: those that clash (the game opens without
    any one of them; all, if none alone), each named with its label and its bound."""
    clash = [k for k in options if _opens(ruleset, players, {
        o: v for o, v in options.items() if o != k})] or list(options)
    reasons = {k: option_hint(ruleset, k, options[k]) for k in clash}
    return LobbyError("bad_option", key="、".join(map(options_text.named, clash)) or "-",
                      detail=t("option_conflict", detail=_each(reasons)))


def _opens(ruleset: str, players: int, options: dict[str, Any]) -> bool:
    try:
        _trial(ruleset, players, options)
    except (OptionError, ValueError):
        return False
    return True


def bad_roles(ruleset: str, detail: str) -> LobbyError:
    """A refused `角色`, with how to write one: the ruleset's own preset as the example (a set
    of another ruleset's roles would be refused too)."""
    preset = get_ruleset(ruleset).preset(counts(ruleset)[0], {})
    example = " ".join(role_name(ruleset, r) + (f"×{preset.count(r)}" if preset.count(r) > 1
                                                 else "") for r in dict.fromkeys(preset))
    return LobbyError("bad_roles", detail=detail, example=example)


def check_game(ruleset: str, players: int, options: Mapping[str, Any],
               roles: list[str] | None = None) -> None:
    """Everything `开始` will need, checked now (a LobbyError naming the bad key); with
    `roles`, the judge's own role set instead of the preset for `players`."""
    if roles is not None:
        if len(roles) not in counts(ruleset):
            raise LobbyError("bad_count", ruleset=ruleset_name(ruleset), count=len(roles),
                             counts=counts_text(ruleset))
        try:
            check_role_set(ruleset=ruleset, roles=roles, options=dict(options))
        except RoleSetError as exc:
            raise bad_roles(ruleset, role_set_reason(ruleset, exc)) from None
        except (OptionError, ValueError) as exc:
            log.info("roles %r refused: %s", roles, exc)
            raise bad_roles(ruleset, t("roles_refused")) from None
        return
    rs = get_ruleset(ruleset)
    # one at a time, so each refused option is named with its own reason
    reasons: dict[str, str] = {}
    for key, value in options.items():
        if key not in rs.option_spec:
            reasons[key] = t("option_unknown")
            continue
        try:
            _trial(ruleset, players, {key: value})
        except (OptionError, ValueError) as exc:
            if isinstance(exc, OptionError) and "played by" in str(exc):
                break  # the count, not the option: reported below
            log.info("option %s=%r refused: %s", key, value, exc)
            reasons[key] = option_hint(ruleset, key, value)
    if reasons:
        raise refused(reasons)
    try:
        _trial(ruleset, players, dict(options))
    except OptionError as exc:
        if "played by" in str(exc):
            raise LobbyError("bad_count", ruleset=ruleset_name(ruleset), count=players,
                             counts=counts_text(ruleset)) from None
        log.info("options %r refused together: %s", options, exc)
        raise conflict(ruleset, players, options) from None
    except ValueError as exc:
        log.info("options %r refused together: %s", options, exc)
        raise conflict(ruleset, players, options) from None


def role_set_reason(ruleset: str, exc: RoleSetError) -> str:
    """Why a role set makes no game, in Chinese."""
    data = load(ruleset, "data")
    camp = camp_name(ruleset, exc.camp or "")
    needs = data.get("camp_needs", {}).get(exc.camp)
    return t(f"role_set.{exc.reason}", role=role_name(ruleset, exc.role or ""), camp=camp,
             many="、".join(role_name(ruleset, r) for r in get_ruleset(ruleset).many_roles),
             needs=t("role_set.needs", needs=needs) if needs else "")


def counts(ruleset: str) -> list[int]:
    """The seat counts the ruleset plays (those it has a preset for)."""
    ok = []
    for n in range(4, 31):
        try:
            get_ruleset(ruleset).preset(n, {})
        except (OptionError, ValueError, KeyError):
            continue
        ok.append(n)
    return ok


def counts_text(ruleset: str) -> str:
    return "、".join(str(n) for n in counts(ruleset))


def _trial(ruleset: str, players: int, options: dict[str, Any],
           roles: list[str] | None = None) -> None:
    new_game(ruleset=ruleset, game_id="CHECK", seed="0" * 64, start=date(2026, 1, 1),
             players=None if roles else players, roles=roles, options=options)


def seat_order(seed: str, contacts: list[str], how: str) -> list[str]:
    """Who sits where: seat n+1 is the n-th contact. `seed`: a permutation of the join order
    drawn from the game's committed seed (its own stream, `SEED|seats`); `join`: join order."""
    if how == "join":
        return list(contacts)
    return rng.shuffled(f"{seed}|seats", 0, contacts)


def first_day(now: datetime) -> date:
    """Day 1 opens at the next opening time: today's if it has not passed, else tomorrow's."""
    return now.date() if now.time() < OPEN else now.date() + timedelta(days=1)
