"""The anomaly option model: the anomaly keys of RULES.md §5, over the common ones."""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, Literal

from pydantic import StrictBool

from engine.context import Ctx
from engine.options import OptionError, OptionSpec, duration_minutes, opt, spec_of
from rulesets.common.options import SharedOptions

BloodsightInvalid = Literal["fizzle_no_evolve", "fizzle_evolve", "reject_and_reprompt"]
KongshouDef = Literal["guarded_not_infected", "guarded_any", "firewall_had_no_effect"]


class AnomalyOptions(SharedOptions):
    """The anomaly keys of RULES.md §5, over the common ones."""

    anomaly_apply_001_procedures: StrictBool = opt("anomaly.apply_001_procedures", True)
    anomaly_villagers: Literal[6, 7, 8] = opt("anomaly.villagers", 6)
    anomaly_head_class: Literal["IDENTITY", "VILLAGER", "none"] = opt(
        "anomaly.head_class", "IDENTITY")
    anomaly_derivative_class: Literal["original", "villager"] = opt(
        "anomaly.derivative_class", "original")
    anomaly_derivative_keeps_role_skills: StrictBool = opt(
        "anomaly.derivative_keeps_role_skills", False)
    anomaly_derivative_notified: Literal[True, "on_overload_only", "never"] = opt(
        "anomaly.derivative_notified", True)
    anomaly_derivatives_know_head: StrictBool = opt("anomaly.derivatives_know_head", False)
    anomaly_carry_condition: Literal["bloodsight_only"] = opt(
        "anomaly.carry_condition", "bloodsight_only")
    anomaly_overload_usable: Literal["next_night", "same_night"] = opt(
        "anomaly.overload_usable", "next_night")
    anomaly_overload_spent_on_no_effect: StrictBool = opt(
        "anomaly.overload_spent_on_no_effect", True)
    anomaly_bloodsight_invalid_target: BloodsightInvalid = opt(
        "anomaly.bloodsight_invalid_target", "fizzle_no_evolve")
    anomaly_bloodsight_regrant: StrictBool = opt("anomaly.bloodsight_regrant", False)
    anomaly_firewall_blocks_out: StrictBool = opt("anomaly.firewall_blocks_out", False)
    anomaly_infect_self: Literal[False] = opt("anomaly.infect_self", False)
    anomaly_infect_anomaly_members: Literal["literal", "no_effect", "reject"] = opt(
        "anomaly.infect_anomaly_members", "literal")
    anomaly_witch_tongling_stages: list[Literal["growth", "mature", "complete"]] = opt(
        "anomaly.witch_tongling_stages", ["mature"])
    anomaly_cure_targets: Literal["derivatives_only", "any"] = opt(
        "anomaly.cure_targets", "derivatives_only")
    anomaly_cure_restores_role_skills: StrictBool = opt("anomaly.cure_restores_role_skills", True)
    anomaly_purify_growth_reusable: StrictBool = opt("anomaly.purify_growth_reusable", True)
    anomaly_lost_skill_regained_on_evolve: StrictBool = opt(
        "anomaly.lost_skill_regained_on_evolve", False)
    anomaly_resonance_max_per_night: Literal[1, "unbounded"] = opt(
        "anomaly.resonance_max_per_night", 1)
    anomaly_resonance_counts_head: StrictBool = opt("anomaly.resonance_counts_head", False)
    anomaly_stage_change_timing: Literal["end_of_night", "immediate"] = opt(
        "anomaly.stage_change_timing", "end_of_night")
    anomaly_key_shield_scope: Literal["all_skills", "active_skills_only"] = opt(
        "anomaly.key_shield_scope", "all_skills")
    anomaly_key_shield_cancels_pending: StrictBool = opt(
        "anomaly.key_shield_cancels_pending", False)
    anomaly_kongshou_def: KongshouDef = opt("anomaly.kongshou_def", "guarded_not_infected")
    anomaly_seer_identity_feedback: Literal["dealt_role", "current_role", "class"] = opt(
        "anomaly.seer_identity_feedback", "dealt_role")
    anomaly_seer_snapshot: Literal["night_open", "after_resolution"] = opt(
        "anomaly.seer_snapshot", "night_open")
    anomaly_zeroing_window: Literal["previous_cycle", "day_only"] = opt(
        "anomaly.zeroing_window", "previous_cycle")
    anomaly_zeroing_applies_new_complete: StrictBool = opt(
        "anomaly.zeroing_applies_new_complete", True)
    # "close_plus_30" (deadlines.after_exile) or a duration after close.
    anomaly_hunter_deadline_day: str = opt("anomaly.hunter_deadline_day", "close_plus_30")
    # "before_next_open" or a duration after the night's resolution.
    anomaly_hunter_deadline_night: str = opt("anomaly.hunter_deadline_night", "before_next_open")
    anomaly_hunter_yellow: StrictBool = opt("anomaly.hunter_yellow", False)
    anomaly_tie_fallback: Literal["first_to_reach", "no_exile", "random"] = opt(
        "anomaly.tie_fallback", "first_to_reach")
    anomaly_day1_exile: StrictBool = opt("anomaly.day1_exile", False)
    anomaly_lose2_eval: Literal["continuous", "night_end_only"] = opt(
        "anomaly.lose2_eval", "continuous")
    anomaly_normal_lose1_includes_hunter: StrictBool = opt(
        "anomaly.normal_lose1_includes_hunter", False)
    anomaly_purify_blocks_patricide: StrictBool = opt("anomaly.purify_blocks_patricide", True)
    anomaly_night_end_atomic: StrictBool = opt("anomaly.night_end_atomic", False)

    def check(self, camps: tuple[str, ...]) -> None:
        super().check(camps)
        for key, value, fixed in self._hunter_deadlines():
            if value != fixed:
                try:
                    duration_minutes(value)
                except ValueError:
                    raise OptionError(f"bad value {value!r} for option {key!r}: "
                                      f"{fixed} or a duration like 45min") from None

    def day_deadlines(self) -> dict[str, int | None]:
        # the hunter's shot as a duration: 0 would end the window as it opens (a lost shot)
        return {**super().day_deadlines(), **{
            key: None if value == fixed else duration_minutes(value)
            for key, value, fixed in self._hunter_deadlines()}}

    def _hunter_deadlines(self) -> tuple[tuple[str, str, str], ...]:
        return (("anomaly.hunter_deadline_day", self.anomaly_hunter_deadline_day,
                 "close_plus_30"),
                ("anomaly.hunter_deadline_night", self.anomaly_hunter_deadline_night,
                 "before_next_open"))


ANOMALY_OPTIONS: OptionSpec = spec_of(AnomalyOptions)


if TYPE_CHECKING:
    def opts(ctx: Ctx) -> AnomalyOptions:
        """The game's options, typed (ctx.o is this ruleset's AnomalyOptions)."""
else:
    opts = attrgetter("o")  # the same, without a Python call per lookup
