"""Options in words: every option key of every registered ruleset (its option model) and of the
bot's own (bot/chat/lobby.py CHAT_OPTIONS), with its Chinese label, each value as a person reads
it (`法官核对夜晚结算：开`), its default and the values it may take, read from the models (a
Literal's choices, true/false, a bounded duration or count). The words are data
(bot/options.yaml). The lobby's replies (新游戏, 设置, 角色) show options through it, and a web
form can build its fields from `option`; `key=value` stays only in a line that shows how to type.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, time
from functools import cache
from pathlib import Path
from typing import Any, Literal, cast, get_args, get_origin

from pydantic import BeforeValidator
from pydantic.fields import FieldInfo

from engine.options import MAX_MINUTES, MAX_YELLOWS, duration_minutes
from engine.ruleset import get_ruleset, ruleset_names
from rulesets.data import load, read_yaml

Kind = Literal["choice", "list", "duration", "count", "form"]
HHMM = re.compile(r"(\d{1,2}):(\d{2})")


@dataclass(frozen=True)
class Choice:
    """One value an option may take: `typed` as the judge types it after `key=`, `text` as a
    person reads it."""

    typed: str
    text: str


@dataclass(frozen=True)
class Option:
    """An option as a form shows it. `kind`: `choice` (one of `choices`), `list` (several of
    them, comma-separated), `duration` (minutes from `low` to `high`, typed `90min`, `1.5h`),
    `count` (a whole number from `low` to `high`), `form` (one of `choices`, or a value of the
    `forms` it accepts: `time` HH:MM, `duration`, `camp`)."""

    key: str
    label: str
    kind: Kind
    default: Any
    choices: tuple[Choice, ...] = ()
    low: int | None = None
    high: int | None = None
    forms: tuple[str, ...] = ()


@cache
def words() -> dict[str, Any]:
    return cast(dict[str, Any], read_yaml(
        (Path(__file__).parent / "options.yaml").read_text(encoding="utf-8")))


def _chat() -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    # (imported here: bot.chat.lobby words its replies with this module)
    from bot.chat.lobby import CHAT_DEFAULTS, CHAT_OPTIONS
    return CHAT_OPTIONS, CHAT_DEFAULTS


def typed(value: Any) -> str:
    """A value as the judge types it: true/false, 1.5 (never 1.0 for 1), a list with commas."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list | tuple):
        return ",".join(typed(v) for v in value)
    return str(value)


# the keys --------------------------------------------------------------------------------------
def keys(ruleset: str) -> list[str]:
    """Every option key of `ruleset` (its model's, in the stored order), then the bot's own."""
    return [*get_ruleset(ruleset).options_model.keys(), *_chat()[0]]


def all_keys() -> list[str]:
    """Every option key of every registered ruleset and the bot's own, once each."""
    return list(dict.fromkeys(k for rs in ruleset_names() for k in keys(rs)))


def _field(key: str, ruleset: str | None) -> tuple[str, FieldInfo] | None:
    """The model field of `key` (in `ruleset`, else in the first ruleset that has it)."""
    for name in ([ruleset] if ruleset else ruleset_names()):
        model = get_ruleset(name).options_model
        for field in model.model_fields.values():
            if field.alias == key:
                return name, field
    return None


def _spec(key: str) -> dict[str, Any]:
    return cast(dict[str, Any], words()["options"].get(key) or {})


def label(key: str) -> str:
    """The option's name in Chinese (the key itself only for a key nobody gave words to)."""
    return str(_spec(key).get("label", key))


def named(key: str) -> str:
    """The key as the judge types it, with its label: `votes.channel（投票方式）`."""
    spec = _spec(key)
    return str(words()["typed"]).format(typed=key, text=spec["label"]) if "label" in spec else key


@cache
def option(key: str, ruleset: str | None = None) -> Option:
    """Everything a form needs of `key` (KeyError for a key no ruleset and not the bot has)."""
    chat, chat_defaults = _chat()
    if key in chat:
        return Option(key, label(key), "choice", chat_defaults[key],
                      tuple(Choice(v, _value_word(key, v)) for v in chat[key]))
    found = _field(key, ruleset)
    if found is None:
        raise KeyError(key)
    name, field = found
    default = get_ruleset(name).options_model.model_validate({}).model_dump(by_alias=True)[key]
    spec = _spec(key)
    ann = field.annotation
    given = tuple(Choice(typed(v), _value_word(key, v)) for v in spec.get("values", {}))
    if get_origin(ann) is Literal or ann is bool:
        values = get_args(ann) if ann is not bool else (True, False)
        return Option(key, label(key), "choice", default,
                      tuple(Choice(typed(v), _value_word(key, v)) for v in values))
    if get_origin(ann) is list:
        (inner,) = get_args(ann)
        return Option(key, label(key), "list", default,
                      tuple(Choice(typed(v), _value_word(key, v)) for v in get_args(inner)))
    least = 1 if key in _at_least_a_minute(name) else 0  # (a deadline of no length: refused)
    if ann is int and any(isinstance(m, BeforeValidator) for m in field.metadata):
        low, high = _bounds(field, least, MAX_MINUTES)
        return Option(key, label(key), "duration", default, low=low, high=high)
    if ann is int:
        low, high = _bounds(field, 0, MAX_YELLOWS)  # (the engine's bound of a count)
        return Option(key, label(key), "count", default, low=low, high=high)
    if "camp" in spec:
        camps = get_ruleset(name).camps
        given += tuple(Choice(c, _value_word(key, c, name)) for c in camps)
    forms = tuple(f for f in ("time", "duration", "camp") if f in spec)
    return Option(key, label(key), "form" if forms else "choice", default, given,
                  low=least if "duration" in forms else None,
                  high=MAX_MINUTES if "duration" in forms else None, forms=forms)


@cache
def _at_least_a_minute(ruleset: str) -> frozenset[str]:
    """The duration keys whose 0 the model refuses: the deadlines people must act by."""
    opts = get_ruleset(ruleset).options_model.model_validate({})
    return frozenset({*opts.night_deadlines(), *opts.day_deadlines()})


def _bounds(field: FieldInfo, low: int, high: int) -> tuple[int, int]:
    for m in field.metadata:
        low = max(low, getattr(m, "ge", None) or low)
        high = min(high, getattr(m, "le", None) or high)
    return low, high


def choices(key: str, ruleset: str | None = None) -> list[Choice]:
    """The values `key` may take, with their words (empty for a duration or a count)."""
    return list(option(key, ruleset).choices)


def default(key: str, ruleset: str | None = None) -> Any:
    return option(key, ruleset).default


# the values ------------------------------------------------------------------------------------
def _value_word(key: str, value: Any, ruleset: str | None = None) -> str:
    spec = _spec(key)
    listed = {typed(k): v for k, v in (spec.get("values") or {}).items()}
    word = typed(value)
    if word in listed:
        return str(listed[word])
    if isinstance(value, bool) or word in ("true", "false"):
        return str(words()["switch"][word])
    if "camp" in spec and ruleset is not None and word in get_ruleset(ruleset).camps:
        return str(spec["camp"]).format(camp=load(ruleset, "data").get(
            "camp_names", {}).get(word, word))
    return word


def duration_text(minutes: int) -> str:
    """`90` as 1小时30分钟: days, hours and minutes as a person says them."""
    w = words()
    if minutes and minutes % 1440 == 0:
        return str(w["days"]).format(d=minutes // 1440)
    h, m = divmod(minutes, 60)
    if not h:
        return str(w["minutes"]).format(m=m)
    return str(w["hours"] if not m else w["hours_minutes"]).format(h=h, m=m)


def time_text(value: datetime | date | time) -> str:
    """A time as the house shows it, never with seconds: `12-01 22:00`, `22:00`."""
    if isinstance(value, datetime):
        return value.strftime("%m-%d %H:%M")
    if isinstance(value, time):
        return value.strftime("%H:%M")
    return value.strftime("%m-%d")


def value_text(key: str, value: Any, ruleset: str | None = None) -> str:
    """`value` of `key` as a person reads it: `开`, `私聊机器人投票`, `关门后1小时30分钟`."""
    if isinstance(value, datetime | date | time):
        return time_text(value)
    spec = _spec(key)
    try:
        kind = option(key, ruleset).kind
    except KeyError:
        return typed(value)
    if kind == "list":
        items = value if isinstance(value, list | tuple) else str(value).split(",")
        return str(words()["separator"]).join(_value_word(key, v) for v in items if v != "")
    if kind == "duration":
        return _duration_value(spec, value)
    if kind == "count":
        n = int(value) if str(value).isdigit() else value
        if n == 0 and "zero" in spec:
            return str(spec["zero"])
        return str(spec.get("count", "{n}")).format(n=n)
    word = _value_word(key, value, ruleset or _ruleset_of(key))
    if kind == "form" and word == typed(value):  # not a listed value: a time or a duration
        m = HHMM.fullmatch(str(value).strip())
        if m and "time" in spec:
            return str(spec["time"]).format(time=f"{int(m[1]):02d}:{m[2]}")
        if "duration" in spec:
            return _duration_value(spec, value)
    return word


def _duration_value(spec: Mapping[str, Any], value: Any) -> str:
    try:
        minutes = duration_minutes(value)
    except ValueError:
        return typed(value)
    if minutes == 0 and "zero" in spec:
        return str(spec["zero"])
    return str(spec.get("duration", "{duration}")).format(duration=duration_text(minutes))


def _ruleset_of(key: str) -> str | None:
    found = _field(key, None)
    return found[0] if found else None


def line(key: str, value: Any, ruleset: str | None = None) -> str:
    """`法官核对夜晚结算：开`."""
    return str(words()["line"]).format(label=label(key),
                                       value=value_text(key, value, ruleset))


def describe(options: Mapping[str, Any], ruleset: str | None = None) -> list[str]:
    """One line per option of `options` that is an option (a lobby's own bookkeeping in its
    chat options is left out), in their order."""
    known = set(keys(ruleset)) if ruleset else set(all_keys())
    return [line(k, v, ruleset) for k, v in options.items() if k in known]


def changed(options: Mapping[str, Any], ruleset: str) -> dict[str, Any]:
    """The options of `options` set away from their default."""
    out = {}
    for key, value in options.items():
        if key not in keys(ruleset):
            continue
        opt = option(key, ruleset)
        if opt.kind == "duration":
            try:
                same = duration_minutes(value) == opt.default
            except ValueError:
                same = False
        else:
            same = typed(value) == typed(opt.default)
        if not same:
            out[key] = value
    return out


def values_hint(key: str, ruleset: str | None = None) -> str:
    """The values of a choice as the judge types them, each with its words:
    `dm（私聊机器人投票）、room（发在公告群）`."""
    w = words()
    return str(w["separator"]).join(
        str(w["typed"]).format(typed=c.typed, text=c.text) if c.typed != c.text else c.typed
        for c in choices(key, ruleset))
