"""The command vocabulary, loaded from vocabulary.yaml: verbs, aliases, argument forms, usage."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from rulesets.data import read_yaml

SLOTS = {"seat", "target", "time", "range", "mode", "count", "option", "code", "token", "name",
         "text", "choice", "floor"}
WHO = {"player", "judge", "anyone"}
WHERE = {"dm", "killers_room", "room"}
# Slots that take the rest of the line, so nothing may follow them.
REST_SLOTS = {"text", "name"}


@dataclass(frozen=True)
class Slot:
    kind: str
    optional: bool = False
    repeat: bool = False


@dataclass(frozen=True)
class Form:
    slots: tuple[Slot, ...]
    who: str
    usage: str

    @property
    def seat_slots(self) -> int:
        return sum(1 for s in self.slots if s.kind in ("seat", "target"))


@dataclass(frozen=True)
class VerbSpec:
    key: str
    aliases: tuple[str, ...]
    who: str
    where: tuple[str, ...]
    rulesets: tuple[str, ...]
    skills: Mapping[str, str]
    usage: str  # every form's usage line, one per line
    forms: tuple[Form, ...] = ()
    choices: Mapping[str, str] = field(default_factory=dict)
    none: str | None = None  # the verb that means this skill on nobody (scenario `none`)
    targets_none: bool = False  # the Act names nobody: targets=(None,)

    @property
    def takes_args(self) -> bool:
        return any(f.slots for f in self.forms)

    def usage_for(self, who: str) -> str:
        """The usage lines a `who` (player or judge) may use."""
        lines = [f.usage for f in self.forms if who == "anyone" or f.who in (who, "anyone")]
        return "\n".join(lines or [f.usage for f in self.forms])


class VocabularyError(ValueError):
    """vocabulary.yaml is inconsistent (caught at import, so by every test)."""


def _slots(args: str, key: str) -> tuple[Slot, ...]:
    out = []
    for word in args.split():
        kind = word.rstrip("?*")
        if kind not in SLOTS:
            raise VocabularyError(f"{key}: unknown argument slot {word!r}")
        out.append(Slot(kind, optional=word.endswith("?"), repeat=word.endswith("*")))
    if any(s.kind in REST_SLOTS for s in out[:-1]):
        raise VocabularyError(f"{key}: {args!r}: a text slot must come last")
    return tuple(out)


def _spec(key: str, raw: dict[str, Any]) -> VerbSpec:
    who = raw.get("who", "player")
    if who not in WHO:
        raise VocabularyError(f"{key}: who {who!r}")
    forms = tuple(Form(_slots(str(f.get("args", "")), key), f.get("who", who), str(f["usage"]))
                  for f in raw["forms"])
    where = tuple(raw.get("where", ["dm"]))
    if set(where) - WHERE or any(f.who not in WHO for f in forms):
        raise VocabularyError(f"{key}: where {where!r} / form who")
    skills = {str(k): str(v) for k, v in (raw.get("skills") or {}).items()}
    choices = {str(k): str(v) for k, v in (raw.get("choices") or {}).items()}
    if any(s.kind == "choice" for f in forms for s in f.slots) and not choices:
        raise VocabularyError(f"{key}: a choice slot needs choices")
    return VerbSpec(
        key=key, aliases=tuple(str(a) for a in raw["aliases"]), who=who, where=where,
        rulesets=tuple(skills), skills=MappingProxyType(skills),
        usage="\n".join(f.usage for f in forms), forms=forms,
        choices=MappingProxyType(choices), none=raw.get("none"),
        targets_none=raw.get("targets") == "none")


def load(path: Path) -> tuple[Mapping[str, VerbSpec], Mapping[str, Any], Mapping[str, str]]:
    doc = read_yaml(path.read_text(encoding="utf-8"))
    verbs = {key: _spec(key, raw) for key, raw in doc["verbs"].items()}
    seen: dict[str, str] = {}
    for spec in verbs.values():
        if spec.none is not None and spec.none not in verbs:
            raise VocabularyError(f"{spec.key}: none -> unknown verb {spec.none!r}")
        for alias in spec.aliases:
            folded = alias.lower()
            if folded in seen:
                raise VocabularyError(f"alias {alias!r} of {spec.key} and {seen[folded]}")
            seen[folded] = spec.key
    return (MappingProxyType(verbs), MappingProxyType(dict(doc["messages"])),
            MappingProxyType(dict(doc["ruleset_names"])))


VERBS, MESSAGES, RULESET_NAMES = load(Path(__file__).with_name("vocabulary.yaml"))


@dataclass(frozen=True)
class ForumWords:
    """How a forum vote post is read (vocabulary.yaml `forum`): word -> meaning (vote,
    abstain, change, correct), longest first; the chat verbs' aliases and the forum's own."""

    words: tuple[tuple[str, str], ...]
    bare_seat: bool
    reason_required: bool


def _forum(path: Path) -> ForumWords:
    raw = read_yaml(path.read_text(encoding="utf-8"))["forum"]
    meanings = {"vote", "abstain", "change", "correct"}
    words: dict[str, str] = {}
    for verb, meaning in raw["verbs"].items():
        if verb not in VERBS or meaning not in meanings:
            raise VocabularyError(f"forum: verb {verb!r} -> {meaning!r}")
        for alias in VERBS[verb].aliases:
            if not alias.isascii():  # forum posts are Chinese; `vote 5` is no forum vote
                words[alias] = meaning
    for alias, meaning in (raw.get("aliases") or {}).items():
        if meaning not in meanings:
            raise VocabularyError(f"forum: alias {alias!r} -> {meaning!r}")
        words[str(alias)] = meaning
    ordered = tuple(sorted(words.items(), key=lambda kv: -len(kv[0])))
    return ForumWords(ordered, bool(raw.get("bare_seat", True)),
                      bool(raw.get("reason_required", False)))


FORUM = _forum(Path(__file__).with_name("vocabulary.yaml"))


def verbs_for(ruleset: str | None, who: str) -> list[VerbSpec]:
    """The verbs `who` (player or judge) may use in a game of `ruleset` (None: outside a game,
    every ruleset's), in vocabulary order: the material of 帮助 texts."""
    out = []
    for spec in VERBS.values():
        if who != "anyone" and spec.who != "anyone" and spec.who != who:
            continue
        if spec.skills and ruleset is not None and ruleset not in spec.skills:
            continue
        out.append(spec)
    return out


def by_alias(word: str) -> VerbSpec | None:
    """The verb an alias names (ASCII case-insensitively), e.g. a scenario verb."""
    return _ALIASES.get(word.lower())


_ALIASES = {a.lower(): spec for spec in VERBS.values() for a in spec.aliases}
