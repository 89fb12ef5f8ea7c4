"""RULES.md §5: every classic/common option key exists with its default and is validated."""

from __future__ import annotations

import re
from datetime import date

import pytest

from engine import new_game
from engine.options import OptionError
from rulesets.classic import CLASSIC_OPTIONS


def create(options: dict) -> dict:
    state, _ = new_game(ruleset="classic", game_id="g", seed="s", start=date(2026, 1, 1),
                        players=12, options=options)
    return state.options


def section5_keys(text: str) -> dict[str, str]:
    part = text.split("## 5.")[1].split("## 6.")[0]
    return {m.group(1): m.group(2) for m in re.finditer(r"^\| `([a-z0-9_.]+)` \| `?([^`|]+)`? \|",
                                                        part, re.M)}


def test_every_section5_key_for_classic_exists_with_its_default(rules_text: str) -> None:
    keys = {k: v for k, v in section5_keys(rules_text).items() if not k.startswith("anomaly.")}
    defaults = create({})
    assert len(keys) >= 30
    assert set(keys) <= set(CLASSIC_OPTIONS), set(keys) - set(CLASSIC_OPTIONS)
    for key, default in keys.items():
        value = defaults[key]
        if key == "classic.guard_deadline":
            assert value == 90
        elif isinstance(value, bool):
            assert str(value).lower() == default.split()[0], key
        else:
            assert str(value) == default.split()[0], key


def test_unknown_key_is_an_error() -> None:
    with pytest.raises(OptionError, match="unknown option 'classic.nonsense'"):
        create({"classic.nonsense": True})


def test_anomaly_key_is_unknown_in_classic() -> None:
    with pytest.raises(OptionError, match="unknown option"):
        create({"anomaly.villagers": 6})


@pytest.mark.parametrize(("key", "value"), [
    ("classic.seer_feedback", "wolf"),
    ("classic.same_guard_same_save_kills", "yes"),
    ("cards.yellow_to_red", -1),
    ("cards.yellow_to_red", "two"),
    ("classic.guard_deadline", "soon"),
    ("check.no_unlost_camp", "nobody"),
    ("public.reveal_roles_on_out", "sometimes"),
    ("cards.night_yellow_counts_to_red", "no"),
    ("cards.night_yellow_counts_to_red", 0),
])
def test_bad_values_are_errors(key: str, value: object) -> None:
    with pytest.raises(OptionError, match=re.escape(key)):
        create({key: value})


@pytest.mark.parametrize(("text", "minutes"), [("90min", 90), ("1.5h", 90), ("2h", 120),
                                                ("1h30min", 90), (45, 45)])
def test_durations(text: object, minutes: int) -> None:
    assert create({"classic.guard_deadline": text})["classic.guard_deadline"] == minutes


def test_alternatives_are_accepted() -> None:
    opts = create({"classic.witch_self_save": "first_night_only",
                   "public.reveal_roles_on_out": "at_game_end",
                   "check.no_unlost_camp": "village", "cards.yellow_to_red": 0})
    assert opts["classic.witch_self_save"] == "first_night_only"
    assert opts["check.no_unlost_camp"] == "village"


def test_p_card_1_night_yellow_counts_to_red_is_true_unless_set() -> None:
    assert create({})["cards.night_yellow_counts_to_red"] is True
    assert create({"cards.night_yellow_counts_to_red": False})[
        "cards.night_yellow_counts_to_red"] is False


def test_unknown_role_and_ruleset() -> None:
    with pytest.raises(ValueError, match="unknown role"):
        new_game(ruleset="classic", game_id="g", seed="s", start=date(2026, 1, 1),
                 roles=["wolf", "hunter"])
    with pytest.raises(KeyError):
        new_game(ruleset="nope", game_id="g", seed="s", start=date(2026, 1, 1), players=12)


def create_anomaly(options: dict) -> dict:
    state, _ = new_game(ruleset="anomaly", game_id="g", seed="s", start=date(2026, 1, 1),
                        players=12, options=options)
    return state.options


def test_every_section5_key_for_anomaly_exists_with_its_default(rules_text: str) -> None:
    from rulesets.anomaly import ANOMALY_OPTIONS

    keys = section5_keys(rules_text)
    defaults = create_anomaly({})
    anomaly_keys = {k: v for k, v in keys.items() if k.startswith("anomaly.")}
    assert len(anomaly_keys) >= 35
    assert set(keys) - {k for k in keys if k.startswith("classic.")} <= set(ANOMALY_OPTIONS)
    for key, default in anomaly_keys.items():
        value = defaults[key]
        if isinstance(value, list):
            assert str(value).replace("'", "") == default.split("`")[0], key
        elif isinstance(value, bool):
            assert str(value).lower() == default.split()[0], key
        else:
            assert str(value) == default.split()[0], key


@pytest.mark.parametrize(("key", "value"), [
    ("anomaly.villagers", 9), ("anomaly.witch_tongling_stages", ["adult"]),
    ("anomaly.hunter_deadline_day", "later"), ("anomaly.infect_self", True),
    ("classic.seer_feedback", "village_partition"),
])
def test_bad_anomaly_options(key: str, value: object) -> None:
    with pytest.raises(OptionError, match=re.escape(key)):
        create_anomaly({key: value})


def test_anomaly_presets() -> None:
    for players in (12, 13, 14):
        state, _ = new_game(ruleset="anomaly", game_id="g", seed="s", start=date(2026, 1, 1),
                            players=players)
        roles = sorted(s.role for s in state.seats)
        assert roles.count("villager") == players - 6 and roles.count("wolf-head") == 1
    with pytest.raises(OptionError):
        new_game(ruleset="anomaly", game_id="g", seed="s", start=date(2026, 1, 1), players=11)
    opts = create_anomaly({"anomaly.hunter_deadline_day": "45min",
                           "anomaly.witch_tongling_stages": ["mature", "complete"]})
    assert opts["anomaly.witch_tongling_stages"] == ["mature", "complete"]
