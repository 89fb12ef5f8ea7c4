"""The classic hunter's preset variant and options (docs/rules-hunter.md); his play is in the
scenarios tests/scenarios/classic/C-HUNTER-*."""

from __future__ import annotations

from datetime import date

from engine import new_game
from engine.options import validate_options
from engine.ruleset import get_ruleset


def test_c_hunter_7_the_variant_replaces_one_villager() -> None:
    rs = get_ruleset("classic")
    plain = rs.preset(12, validate_options(rs.options_model, {}))
    hunter = rs.preset(12, validate_options(rs.options_model, {"classic.hunter": True}))
    assert "hunter" not in plain
    assert sorted(hunter) == sorted([*[r for r in plain if r != "villager"], "hunter",
                                     *["villager"] * (plain.count("villager") - 1)])
    state, _ = new_game(ruleset="classic", game_id="g", seed="s", start=date(2026, 1, 1),
                        players=12, options={"classic.hunter": True})
    (st,) = [s for s in state.seats if s.role == "hunter"]
    assert st.camp == "village" and st.skills == {"gun": "held"}


def test_the_hunter_keys_are_stored_only_when_set() -> None:
    model = get_ruleset("classic").options_model
    assert "classic.hunter" not in validate_options(model, {})
    assert "classic.hunter_shoots_on_lover_death" not in validate_options(
        model, {"classic.hunter_shoots_on_lover_death": True})
    stored = validate_options(model, {"classic.hunter": True,
                                      "classic.hunter_shoots_on_lover_death": False})
    assert stored["classic.hunter"] is True
    assert stored["classic.hunter_shoots_on_lover_death"] is False
