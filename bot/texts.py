"""The chat layer's Chinese wording (texts.yaml), kept out of the logic."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from bot.ids import is_page_contact
from rulesets.data import load, read_yaml


@cache
def texts() -> dict[str, Any]:
    return read_yaml((Path(__file__).parent / "texts.yaml").read_text(encoding="utf-8"))


def t(key: str, /, **fields: Any) -> str:  # a field may be called `key`
    """The text `key` (a dotted path into texts.yaml) with `fields` filled in."""
    node: Any = texts()
    for part in key.split("."):
        node = node[part]
    return str(node).format(**fields)


def nouns(channel: str) -> dict[str, str]:
    """The words that name a platform's things (texts.yaml `channels.NAME.words`: `app`,
    `chat_group`, `account`), as fields for `t` (`Capabilities.nouns` says which)."""
    return dict(text_data(f"channels.{channel}.words"))


def text_data(key: str) -> Any:
    """A structured entry of texts.yaml (a list, a mapping), as it is."""
    node: Any = texts()
    for part in key.split("."):
        node = node[part]
    return node


def role_name(ruleset: str, role: str) -> str:
    return load(ruleset, "data").get("role_names", {}).get(role, role)


def camp_name(ruleset: str, camp: str) -> str:
    return load(ruleset, "data").get("camp_names", {}).get(camp, camp)


def ruleset_name(ruleset: str) -> str:
    return load(ruleset, "data").get("name", ruleset)


def contact_text(contact: str) -> str:
    """A contact as the judge reads it: a chat platform's id, or, for a player who joined by
    a join link, words saying so (that contact's id is nobody's to see)."""
    return t("words.by_link") if is_page_contact(contact) else contact


def room_name(group: str) -> str:
    return texts()["rooms"].get(group, group)


def seats_text(seats: list[int] | tuple[int, ...]) -> str:
    return "、".join(t("words.seat", n=n) for n in seats) or t("words.none")


def phase_text(phase: str) -> str:
    names = texts()["phase"]
    if phase in names:
        return names[phase]
    if phase[:1] == "D":
        return names["day"].format(n=phase[1:])
    if phase[:1] == "N":
        return names["night"].format(n=phase[1:])
    return phase
