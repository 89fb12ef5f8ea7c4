"""Events -> Chinese text, from the templates in rulesets/*/templates.yaml."""

from __future__ import annotations

import re
import string
from datetime import datetime
from functools import cache
from typing import Any

from bot.options_text import time_text
from engine.events import Event, Rejection
from engine.payloads import PAYLOADS
from engine.ruleset import get_ruleset, ruleset_names
from rulesets.data import load


@cache
def _templates(ruleset: str) -> dict[str, dict[str, Any]]:
    common = load("common", "templates")
    own = load(ruleset, "templates") if ruleset != "common" else {}
    return {part: {**common.get(part, {}), **own.get(part, {})}
            for part in ("events", "rejections", "judge")}


@cache
def _asks(ruleset: str) -> frozenset[str]:
    common = load("common", "templates")
    own = load(ruleset, "templates") if ruleset != "common" else {}
    return frozenset(common.get("asks", [])) | frozenset(own.get("asks", []))


def asks(event: Event, ruleset: str) -> bool:
    """Whether the event's message asks its reader to act (the templates' `asks:`): a role
    card, a duty, a reminder, a card."""
    return event.type in _asks(ruleset)


# The fields of an event that hold a moment, worded as the house words every time people read
# (bot/options_text.time_text: `12-02 08:00`, never with seconds; issue 33).
TIME_FIELDS = ("at", "due", "until")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?")


def short_time(value: Any) -> Any:
    """A moment in the house's short form; a value already worded (`12-02 08:00`, `21:00`)
    as it is. Events keep what they recorded (TimeChanged's `at` is ISO, with seconds), so
    stored games and their digests stay what they were: the wording is the renderer's."""
    if isinstance(value, str) and _ISO.fullmatch(value.strip()):
        value = datetime.fromisoformat(value.strip())
    return time_text(value) if isinstance(value, datetime) else value


def _fields(data: dict[str, Any], ruleset: str) -> dict[str, Any]:
    names = load(ruleset, "data")
    w = load("common", "templates")["words"]
    role_names = names.get("role_names", {})
    camp_names = names.get("camp_names", {})

    def seats(items: Any) -> str:
        items = list(items or [])
        return w["separator"].join(w["seat"].format(n=n) for n in items) or w["nobody"]

    f: dict[str, Any] = dict(data)
    for key in TIME_FIELDS:
        if key in f:
            f[key] = short_time(f[key])
    for key, value in data.items():
        if isinstance(value, list) and all(isinstance(x, int) for x in value):
            f[key] = seats(value)
            f[f"has_{key}"] = bool(value)  # (a wording may depend on whether there are any)
    target = data.get("target")
    f["has_target"] = target is not None
    f["target_text"] = w["seat"].format(n=target) if target is not None else (
        w["abstain"] if "voter" in data else w["nobody"])
    f["post_text"] = ""
    if "post_at" in data:  # the vote post a correction request is about
        post = data.get("post_target")
        f["post_text"] = w["void_post"] if data.get("post_void") else (
            w["seat"].format(n=post) if post is not None else w["abstain"])
    f["has_partner"] = data.get("partner") is not None
    f["has_seat"] = data.get("seat") is not None
    f["proxy_text"] = w["proxy"] if data.get("by_judge") else ""
    f["role_name"] = role_names.get(data.get("role"), data.get("role"))
    f["role_help"] = names.get("role_help", {}).get(data.get("role"), "")
    f["camp_name"] = camp_names.get(data.get("camp"), data.get("camp"))
    f["winner_name"] = camp_names.get(data.get("winner"), data.get("winner"))
    f["stage_name"] = names.get("stage_names", {}).get(data.get("stage"), data.get("stage"))
    f["mode_text"] = w["mode"].format(mode=data["mode"]) if data.get("mode") else ""
    f["mode_hint"] = w["mode_hint"] if data.get("complete") else ""
    pubkey = data.get("signing_pubkey")
    f["pubkey_text"] = w["pubkey"].format(key=pubkey[:16]) if pubkey else ""
    f["ruleset_name"] = load(data["ruleset"], "data").get("name", data["ruleset"]) if data.get(
        "ruleset") else ""
    counts = data.get("counts") or {}
    f["counts_text"] = w["separator"].join(
        w["vote_count"].format(who=w["abstain"] if int(c) == 0 else w["seat"].format(n=c),
                               n=_count(n))
        for c, n in sorted(counts.items(), key=lambda kv: (-kv[1], int(kv[0])))) or w["no_votes"]
    cards = data.get("cards") or []
    f["cards_text"] = w["cards"].format(items=w["separator"].join(
        w["card"][c["color"]].format(n=c["seat"]) for c in cards)) if cards else ""
    roles = data.get("roles") or {}
    f["roles_text"] = w["separator"].join(
        w["role_item"].format(n=n, role=role_names.get(r, r)) for n, r in roles.items())
    f["reason_text"] = w["end_reason"].format(reason=data["reason"]) if data.get(
        "reason") and isinstance(data["reason"], str) else ""
    f["reconfirm"] = w["reconfirm_answered"] if data.get("answered") else w["reconfirm_new"]
    # a reminder to a seat whose earlier answer stands (Reminder.standing) reads otherwise
    f["reminder_case"] = f"{data.get('duty')}_standing" if data.get("standing") else data.get(
        "duty")
    # Internal keys a person may read about, in words (a duty, a cause, a random pick's
    # purpose, a waiver): never the key itself.
    duty = data.get("duty", data.get("reason"))
    f["duty_name"] = _word(w["duties"], duty)
    f["cause_name"] = _word(w["causes"], data.get("cause"))
    f["purpose_name"] = _word(w["purposes"], data.get("purpose"))
    f["waiver_name"] = _word(w["waivers"], data.get("waiver"))
    effective = data.get("effective") or {}
    f["ballots_text"] = w["separator"].join(
        w["ballot"].format(voter=w["seat"].format(n=v), target=w["abstain"] if t is None
                           else w["seat"].format(n=t))
        for v, t in sorted(effective.items(), key=lambda kv: int(kv[0]))) or w["no_votes"]
    return f


def _count(n: Any) -> Any:
    """A weighted vote count as a person writes it: 3, 2.5 (never 3.0)."""
    return int(n) if isinstance(n, float) and n.is_integer() else n


def _word(table: dict[str, str], key: Any) -> str:
    """A key's wording, or the table's default (never the key: it is an identifier)."""
    return table.get(str(key), table["default"]) if key is not None else table["default"]


def _pick(template: Any, fields: dict[str, Any]) -> str:
    found = _case(template, fields)
    return "" if found is None else found


def _case(template: Any, fields: dict[str, Any]) -> str | None:
    """The template's text for these fields; None for a case it does not word."""
    if isinstance(template, str):
        return template
    value = fields.get(template["by"])
    key = str(value).lower() if isinstance(value, bool) else str(value)
    cases = template["cases"]
    found = cases.get(key, cases.get("default"))
    return None if found is None else str(found)


def render_event(event: Event, ruleset: str) -> str:
    template = _templates(ruleset)["events"].get(event.type)
    if template is None:
        return ""  # judge-only bookkeeping events have no player wording
    fields = _fields(event.data, ruleset)
    return _pick(template, fields).format(**fields)


def render_rejection(rejection: Rejection, ruleset: str) -> str:
    template = _templates(ruleset)["rejections"].get(
        rejection.code, _templates(ruleset)["rejections"]["unknown"])
    return template.format(**_fields(rejection.data, ruleset))


def render_for_judge(event: Event, ruleset: str) -> str:
    """The event as the judge's feed words it (bot/feed.py). A ruleset's `judge:` template
    speaks of the seats in the third person; an empty one hides the event (it repeats what
    the feed's line for the command says). Without one (or for a case a `by` template leaves
    out), a public or judge-only event reads as the table reads it, and a private one is
    prefixed with whom it was told."""
    fields = _fields(event.data, ruleset)
    w = load("common", "templates")["words"]
    aud = event.audience
    fields["to"] = w["separator"].join(w["seat"].format(n=n) for n in aud.seats) or w["nobody"]
    own = _judge_case(event, ruleset, fields)
    if own is not None:
        return own.format(**fields)
    text = render_event(event, ruleset)
    if not text or aud.public or not aud.seats:
        return text
    return w["told"].format(to=fields["to"], text=text)


def has_judge_wording(event: Event, ruleset: str) -> bool:
    """Whether the ruleset words this event (this case of it) for the judge in a way of its
    own."""
    return _judge_case(event, ruleset, _fields(event.data, ruleset)) is not None


def _judge_case(event: Event, ruleset: str, fields: dict[str, Any]) -> str | None:
    own = _templates(ruleset)["judge"].get(event.type)
    return None if own is None else _case(own, fields)


@cache
def dm_order() -> tuple[frozenset[str], dict[str, str]]:
    """How a seat's texts of one commit read (templates.yaml `dm`): the public event types read
    last, and each public type a seat is not told again after the named one about itself."""
    dm = load("common", "templates").get("dm", {})
    return frozenset(dm.get("last", ())), dict(dm.get("own_words", {}))


def messages_for(event: Event, seat: int, ruleset: str) -> str | None:
    """What seat `seat` reads of this event (directly, in a group, or publicly), if anything."""
    if not event.audience.reaches(seat):
        return None
    return render_event(event, ruleset) or None


# the templates against the payloads -------------------------------------------------------------
class TemplateError(ValueError):
    """A template names a field its event's payload does not have (bot start-up refuses)."""


def _names(template: Any) -> set[str]:
    """The fields a template names: `{name}` in its text (every case of a `by` template),
    and its `by` field."""
    if isinstance(template, dict):
        out = {str(template["by"])}
        for case in template["cases"].values():
            out |= _names(case)
        return out
    return {name.split(".")[0].split("[")[0]
            for _, name, _, _ in string.Formatter().parse(str(template)) if name}


def template_problems(rulesets: list[str] | None = None) -> list[str]:
    """Every event template (players' and judge's) naming a field that is neither in its
    event type's payload model (engine/payloads.py) nor one of the renderer's own words."""
    problems = []
    for rs in rulesets or ruleset_names():
        get_ruleset(rs)  # its payload models are registered with it
        derived = set(_fields({}, rs))
        for part in ("events", "judge"):
            for type_, template in _templates(rs)[part].items():
                model = PAYLOADS.get(type_)
                if model is None:
                    problems.append(f"{rs} {part}.{type_}: no payload model for this event type")
                    continue
                allowed = (set(model.model_fields) | derived
                           | {f"has_{name}" for name in model.model_fields}  # (a list's)
                           | ({"to"} if part == "judge" else set()))
                for name in sorted(_names(template) - allowed):
                    problems.append(f"{rs} {part}.{type_}: {{{name}}} is not a field of "
                                    f"{model.__name__} nor a word of the renderer")
        for type_ in sorted(_asks(rs) - set(_templates(rs)["events"])):
            problems.append(f"{rs} asks.{type_}: no event template of that name")
    return problems


@cache
def check_templates() -> None:
    """At start-up: every template fits its payload (TemplateError otherwise)."""
    problems = template_problems()
    if problems:
        raise TemplateError("; ".join(problems))
