"""The option validation of commit a824fdf (engine/options.py and the rulesets' specs, verbatim),
before the typed option models: tests/test_options_typed.py checks that the models accept and
refuse exactly what it did, with the same defaults and the same messages."""

# ruff: noqa: E501
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


CLASSIC_OPTIONS: OptionSpec = {
    **COMMON_OPTIONS,
    "classic.seer_feedback": (Literal["village_partition", "wolf_partition", "literal_labels"],
                              "village_partition"),
    "classic.seer_self_check": (bool, False),
    "classic.guard_deadline": (Duration, "90min"),
    "classic.guard_yellow": (bool, False),
    "classic.same_guard_same_save_kills": (bool, False),
    "classic.antidote_any_target": (Literal[True, "kill_target_only"], True),
    "classic.witch_self_save": (Literal[True, False, "first_night_only"], True),
    "classic.witch_self_poison": (bool, True),
    "classic.kill_post_on_no": (bool, False),
    "classic.double_wolf_lovers_in_wolf_group": (bool, True),
    "classic.double_wolf_lovers_know_partner": (bool, False),
    "classic.cupid_self_pick": (bool, True),
    "classic.cupid_missing": (Literal["random_pair_plus_yellow", "no_lovers"],
                              "random_pair_plus_yellow"),
    "classic.cupid_told_camp": (bool, True),
    "classic.village_gods_rule": (Literal["all_out", "any_out"], "all_out"),
    "classic.kill_participants": (Literal["kill_skill_holders", "whole_camp"],
                                  "kill_skill_holders"),
    "classic.sheriff_tiebreak": (Literal["first_to_reach_held", "first_to_reach_ever", "random"],
                                 "first_to_reach_held"),
    "classic.exile_tie": (Literal["first_to_reach", "no_exile", "sheriff_vote", "random",
                                  "revote"], "first_to_reach"),
    "classic.sheriff_night_handover_deadline": (Literal["before_next_open", "close_plus_30"],
                                                "before_next_open"),
    "classic.red_card_sheriff_successor": (Literal["random", "none"], "random"),
}


ANOMALY_OPTIONS: OptionSpec = {
    **COMMON_OPTIONS,
    "anomaly.apply_001_procedures": (bool, True),
    "anomaly.villagers": (Literal[6, 7, 8], 6),
    "anomaly.head_class": (Literal["IDENTITY", "VILLAGER", "none"], "IDENTITY"),
    "anomaly.derivative_class": (Literal["original", "villager"], "original"),
    "anomaly.derivative_keeps_role_skills": (bool, False),
    "anomaly.derivative_notified": (Literal[True, "on_overload_only", "never"], True),
    "anomaly.derivatives_know_head": (bool, False),
    "anomaly.carry_condition": (Literal["bloodsight_only"], "bloodsight_only"),
    "anomaly.overload_usable": (Literal["next_night", "same_night"], "next_night"),
    "anomaly.overload_spent_on_no_effect": (bool, True),
    "anomaly.bloodsight_invalid_target": (
        Literal["fizzle_no_evolve", "fizzle_evolve", "reject_and_reprompt"], "fizzle_no_evolve"),
    "anomaly.bloodsight_regrant": (bool, False),
    "anomaly.firewall_blocks_out": (bool, False),
    "anomaly.infect_self": (Literal[False], False),
    "anomaly.infect_anomaly_members": (Literal["literal", "no_effect", "reject"], "literal"),
    "anomaly.witch_tongling_stages": (list[Literal["growth", "mature", "complete"]], ["mature"]),
    "anomaly.cure_targets": (Literal["derivatives_only", "any"], "derivatives_only"),
    "anomaly.cure_restores_role_skills": (bool, True),
    "anomaly.purify_growth_reusable": (bool, True),
    "anomaly.lost_skill_regained_on_evolve": (bool, False),
    "anomaly.resonance_max_per_night": (Literal[1, "unbounded"], 1),
    "anomaly.resonance_counts_head": (bool, False),
    "anomaly.stage_change_timing": (Literal["end_of_night", "immediate"], "end_of_night"),
    "anomaly.key_shield_scope": (Literal["all_skills", "active_skills_only"], "all_skills"),
    "anomaly.key_shield_cancels_pending": (bool, False),
    "anomaly.kongshou_def": (
        Literal["guarded_not_infected", "guarded_any", "firewall_had_no_effect"],
        "guarded_not_infected"),
    "anomaly.seer_identity_feedback": (Literal["dealt_role", "current_role", "class"],
                                       "dealt_role"),
    "anomaly.seer_snapshot": (Literal["night_open", "after_resolution"], "night_open"),
    "anomaly.zeroing_window": (Literal["previous_cycle", "day_only"], "previous_cycle"),
    "anomaly.zeroing_applies_new_complete": (bool, True),
    # "close_plus_30" (deadlines.after_exile) or a duration after close.
    "anomaly.hunter_deadline_day": (str, "close_plus_30"),
    # "before_next_open" or a duration after the night's resolution.
    "anomaly.hunter_deadline_night": (str, "before_next_open"),
    "anomaly.hunter_yellow": (bool, False),
    "anomaly.tie_fallback": (Literal["first_to_reach", "no_exile", "random"], "first_to_reach"),
    "anomaly.day1_exile": (bool, False),
    "anomaly.lose2_eval": (Literal["continuous", "night_end_only"], "continuous"),
    "anomaly.normal_lose1_includes_hunter": (bool, False),
    "anomaly.purify_blocks_patricide": (bool, True),
    "anomaly.night_end_atomic": (bool, False),
}


def anomaly_validate(options: dict) -> None:
    """Anomaly's Ruleset.validate of a824fdf."""
    for key, fixed in (("anomaly.hunter_deadline_day", "close_plus_30"),
                       ("anomaly.hunter_deadline_night", "before_next_open")):
        if options[key] != fixed:
            try:
                duration_minutes(options[key])
            except ValueError:
                raise OptionError(f"bad value {options[key]!r} for option {key!r}: "
                                  f"{fixed} or a duration like 45min") from None
