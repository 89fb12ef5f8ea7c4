"""Game options: RULES.md §5 keys, their defaults, and validation at game creation."""

from __future__ import annotations

import math
import re
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError


class OptionError(ValueError):
    """An unknown option key or a bad value, reported when the game is created."""


def duration_minutes(value: Any) -> int:
    """'90min', '1.5h', '1h30min', '2h' or an integer number of minutes."""
    if isinstance(value, bool):
        raise ValueError("a duration, like 90min or 1.5h")
    if isinstance(value, int):
        minutes = value
    else:
        text = str(value).strip().lower().replace(" ", "")
        m = re.fullmatch(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+)(?:min|m))?", text)
        if not text or not m or (m.group(1) is None and m.group(2) is None):
            raise ValueError(f"{value!r} is not a duration, like 90min or 1.5h")
        minutes = round(float(m.group(1) or 0) * 60) + int(m.group(2) or 0)
    if minutes < 0:
        raise ValueError("a duration cannot be negative")
    return minutes


class Duration:
    """Marker type: validated to whole minutes."""


OptionSpec = dict[str, tuple[Any, Any]]  # key -> (type, default)

COMMON_OPTIONS: OptionSpec = {
    "check.granularity": (Literal["atomic_event", "per_step", "per_phase"], "atomic_event"),
    "check.bundle_lovers": (bool, True),
    "check.lose_first": (bool, True),
    "check.no_unlost_camp": (str, "judge_ruling"),
    "surrender.requires": (Literal["all_living_members", "any_member", "majority"],
                           "all_living_members"),
    "surrender.enabled_anomaly": (bool, True),
    "resolve.locked_actions": (bool, True),
    "night.allow_resubmit": (bool, True),
    "night.resolve_early": (bool, True),
    "public.reveal_roles_on_out": (Literal[False, True, "at_game_end"], False),
    # Not in RULES.md §5: publish yellow cards for missed night/setup duties (they reveal that
    # the player had such a duty, so the default keeps them between the player and the judge).
    "public.announce_night_cards": (bool, False),
    "cards.yellow_to_red": (int, 2),
    # Not in RULES.md §5: whether night/setup-duty yellows count toward cards.yellow_to_red.
    # They do by default (P-CARD-1), so a red card after fewer public yellows than the limit
    # tells everyone that the player had a night or setup duty.
    "cards.night_yellow_counts_to_red": (bool, True),
    "cards.red_lover_partner_dies": (bool, True),
    "lastwords.eligible": (Literal["all_except_sent_off", "all", "first_night_and_exiles"],
                           "all_except_sent_off"),
    "lastwords.yellow_on_missing": (bool, False),
    "votes.void_vote_yellow": (bool, False),
    "votes.abstain_as_candidate": (bool, False),
    "votes.self_vote": (bool, True),
    # Not in RULES.md §5: whether `judge notice` also waives the yellow card for not voting.
    "votes.notice_waives_yellow": (bool, False),
    # Deadline offsets (RULES.md §4.2, P-DL-6, P-VOTE-6/10); shorter ones make a fast game.
    "deadlines.night_action": (Duration, "90min"),  # killers, seer, wolf head, derivatives
    "deadlines.witch": (str, "08:00"),  # HH:MM the next morning, or a duration after close
    "deadlines.after_exile": (Duration, "30min"),  # sheriff handover, hunter shot
    "deadlines.proxy_cutoff": (Duration, "30min"),  # judge proxy votes until close minus this
    "deadlines.change_freeze": (Duration, "60min"),  # no vote change in the last …
    "deadlines.revote": (Duration, "30min"),  # a PK revote after a tied exile (exile_tie=revote)
    "reminders.before": (Duration, "30min"),  # DM reminder this long before a deadline; 0 = off
}


def witch_deadline(value: str) -> tuple[Literal["morning", "close"], int]:
    """("morning", minutes after midnight) for HH:MM, ("close", minutes) for a duration."""
    m = re.fullmatch(r"(\d{1,2}):(\d{2})", value.strip())
    if m and int(m.group(1)) < 24 and int(m.group(2)) < 60:
        return "morning", int(m.group(1)) * 60 + int(m.group(2))
    return "close", duration_minutes(value)


def validate_options(spec: OptionSpec, given: dict[str, Any] | None,
                     camps: tuple[str, ...] = ()) -> dict[str, Any]:
    """Merge `given` over the defaults of `spec`; raise OptionError on anything unknown or bad."""
    result = {key: default for key, (_, default) in spec.items()}
    _check_plain(given or {})
    for key, value in (given or {}).items():
        if key not in spec:
            raise OptionError(f"unknown option {key!r}; known options: {', '.join(sorted(spec))}")
        typ, _ = spec[key]
        try:
            if typ is Duration:
                result[key] = duration_minutes(value)
            else:
                result[key] = TypeAdapter(typ).validate_python(value, strict=typ in (bool, int))
        except (ValidationError, ValueError) as exc:
            raise OptionError(f"bad value {value!r} for option {key!r}: {_short(exc)}") from None
    for key, (typ, _) in spec.items():
        if typ is Duration and not isinstance(result[key], int):
            result[key] = duration_minutes(result[key])
    try:
        witch_deadline(str(result["deadlines.witch"]))
    except ValueError:
        raise OptionError(f"bad value {result['deadlines.witch']!r} for option 'deadlines.witch': "
                          "a time like 08:00 or a duration like 2h") from None
    if result.get("cards.yellow_to_red", 0) < 0:
        raise OptionError("cards.yellow_to_red must be 0 (never) or a positive number")
    allowed = {"judge_ruling", "last_event_reverted", *camps}
    if result["check.no_unlost_camp"] not in allowed:
        raise OptionError(
            f"bad value {result['check.no_unlost_camp']!r} for option 'check.no_unlost_camp': "
            f"one of {', '.join(sorted(allowed))}")
    return result


MAX_OPTION_TEXT = 64


def _check_plain(given: Any) -> None:
    """Options are a flat map of short scalars (or short lists of them): no NaN, no nesting,
    no megabyte strings."""
    if not isinstance(given, dict) or len(given) > 200:
        raise OptionError("options must be a map of at most 200 keys")
    for key, value in given.items():
        if not isinstance(key, str) or len(key) > MAX_OPTION_TEXT:
            raise OptionError(f"bad option key {str(key)[:MAX_OPTION_TEXT]!r}")
        items = value if isinstance(value, list) and len(value) <= 8 else [value]
        for item in items:
            if isinstance(item, float) and not math.isfinite(item):
                raise OptionError(f"bad value for option {key!r}: not a finite number")
            if not isinstance(item, str | int | float | bool) or len(str(item)) > MAX_OPTION_TEXT:
                raise OptionError(f"bad value for option {key!r}: a short word, number, "
                                  "true/false or a short list of them")


def _short(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(err["msg"] for err in exc.errors())
    return str(exc)
