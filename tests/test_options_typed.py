"""The typed option models (engine/options.py, the rulesets' ClassicOptions / AnomalyOptions)
accept and refuse exactly what the hand-written option specs of commit a824fdf did
(tests/legacy_options.py, kept verbatim): the same keys, the same defaults, the same values
stored, the same OptionError messages (bot/chat/lobby.py logs them, naming the bad key), but
for the bounds issue 19 added on purpose (a count of yellow cards, a duration's length)."""

from __future__ import annotations

import random
import re
import typing
from typing import Any

import legacy_options as legacy
import pytest

from engine.options import (
    MAX_YELLOWS,
    CommonOptions,
    OptionError,
    Options,
    duration_minutes,
    typed_options,
    validate_options,
)
from engine.ruleset import get_ruleset

RULESETS = {"classic": legacy.CLASSIC_OPTIONS, "anomaly": legacy.ANOMALY_OPTIONS}
NIGHT_DEADLINES = ("deadlines.night_action", "deadlines.witch", "classic.guard_deadline")
DAY_DEADLINES = ("deadlines.after_exile", "deadlines.revote", "anomaly.hunter_deadline_day",
                 "anomaly.hunter_deadline_night")
HUNTER_WORDS = ("close_plus_30", "before_next_open")  # the hunter deadlines' fixed values
LEGACY_YELLOWS = "cards.yellow_to_red must be 0 (never) or a positive number"
BOUNDED_YELLOWS = f"cards.yellow_to_red must be 0 (never) or 1 to {MAX_YELLOWS}"
POOL: list[Any] = [True, False, 0, 1, 2, 3, -1, 6, 9, 45, 1.5, None, "", "two", "true", "yes",
                   "90min", "1.5h", "1h30min", "2h", "-5min", "08:00", "06:30", "25:00", "8:0",
                   "village", "wolves", "anomaly", "normal", "nobody", "judge_ruling",
                   "close_plus_30", "before_next_open", "45min", "later",
                   ["mature"], ["adult"], ["mature", "complete"], [], ["growth", 3], "x" * 80]


def literal_values(spec: dict[str, tuple[Any, Any]]) -> list[Any]:
    values: list[Any] = []
    for typ, _ in spec.values():
        for arg in typing.get_args(typ):
            values.extend(typing.get_args(arg) or [arg])
    return [v for v in values if isinstance(v, str | int | bool)]


def old(ruleset: str, given: Any) -> tuple[str, Any]:
    """The legacy validation, knowing the keys added since (SharedOptions.added_keys: an
    optional role's switches), which a game stores only when set away from their default."""
    rs = get_ruleset(ruleset)
    added = getattr(rs.options_model, "added_keys", frozenset())
    spec = {**RULESETS[ruleset], **{k: rs.option_spec[k] for k in added}}
    try:
        opts = legacy.validate_options(spec, given, rs.camps)
        if ruleset == "anomaly":
            legacy.anomaly_validate(opts)
    except legacy.OptionError as exc:
        if str(exc) == LEGACY_YELLOWS:
            return "OptionError", BOUNDED_YELLOWS
        return "OptionError", str(exc)
    # Changed on purpose since (issue 19, F7): a count of yellow cards is 0 to MAX_YELLOWS,
    # a duration at most MAX_MINUTES (no value of POOL is that long).
    if not 0 <= opts.get("cards.yellow_to_red", 0) <= MAX_YELLOWS:
        return "OptionError", BOUNDED_YELLOWS
    # ... and (issue 33) a night action's deadline is at least a minute after the close.
    for key in NIGHT_DEADLINES:
        value = opts.get(key)
        if value == 0 or (isinstance(value, str) and not re.fullmatch(r"\d+:\d+", value)
                          and duration_minutes(value) == 0):
            return "OptionError", (f"{key} must be at least 1min after the close: a night "
                                   "deadline of no length leaves no time to act")
    # ... and (issue 33's follow-up) so is the handover, the shot and the PK revote after it,
    # and anomaly's hunter's shot as a duration.
    for key in DAY_DEADLINES:
        value = opts.get(key)
        if value == 0 or (isinstance(value, str) and value not in HUNTER_WORDS
                          and duration_minutes(value) == 0):
            return "OptionError", (f"{key} must be at least 1min: a deadline of no length "
                                   "leaves no time to act")
    return "ok", {k: v for k, v in opts.items() if k not in added or v != spec[k][1]}


def new(ruleset: str, given: Any) -> tuple[str, Any]:
    rs = get_ruleset(ruleset)
    try:
        opts = validate_options(rs.options_model, given, rs.camps)
    except OptionError as exc:
        return "OptionError", str(exc)
    return "ok", opts


@pytest.mark.parametrize("ruleset", RULESETS)
def test_same_keys_and_defaults(ruleset: str) -> None:
    rs = get_ruleset(ruleset)
    added = getattr(rs.options_model, "added_keys", frozenset())  # stored only when set
    keys = [k for k in rs.options_model.keys() if k not in added]  # noqa: SIM118 (a classmethod)
    assert keys == list(RULESETS[ruleset])  # in the same order
    assert list(new(ruleset, {})[1]) == list(old(ruleset, {})[1])
    assert set(rs.option_spec) - added == set(RULESETS[ruleset])
    assert new(ruleset, {}) == old(ruleset, {})
    assert new(ruleset, None) == old(ruleset, None)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_every_key_with_every_value_as_before(ruleset: str) -> None:
    spec = RULESETS[ruleset]
    values = POOL + literal_values(spec)
    keys = [*spec, "classic.nonsense", "anomaly.villagers", "nonsense", "x" * 70]
    for key in keys:
        for value in values:
            assert new(ruleset, {key: value}) == old(ruleset, {key: value}), (key, value)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_random_combinations_as_before(ruleset: str) -> None:
    spec = RULESETS[ruleset]
    keys = [*spec, "nonsense"]
    values = POOL + literal_values(spec)
    rnd = random.Random(ruleset)
    for _ in range(600):
        given = {rnd.choice(keys): rnd.choice(values) for _ in range(rnd.randint(1, 5))}
        assert new(ruleset, given) == old(ruleset, given), given


def test_not_a_map_or_too_big() -> None:
    for given in (["a"], "x", {f"k{i}": 1 for i in range(201)}, {"a": float("nan")}, {1: 2},
                  {"a": {"b": 1}}):
        assert new("classic", given) == old("classic", given), given


def test_the_models_name_fields_after_their_keys() -> None:
    for model in (CommonOptions, get_ruleset("classic").options_model,
                  get_ruleset("anomaly").options_model):
        for name, field in model.model_fields.items():
            assert field.alias is not None and name == field.alias.replace(".", "_"), name


def test_typed_options_of_a_stored_dict() -> None:
    model = get_ruleset("classic").options_model
    stored = validate_options(model, {"classic.guard_deadline": "2h"})
    typed = typed_options(model, stored)
    assert isinstance(typed, Options) and typed.dump() == stored
    assert typed_options(model, stored) is typed  # made once per dict
    assert typed.classic_guard_deadline == 120
    old_game = {k: v for k, v in stored.items() if k != "votes.self_vote"}
    old_game["removed.key"] = 1  # a key of an older engine is left out, a new one defaults
    assert typed_options(model, old_game).votes_self_vote is True
