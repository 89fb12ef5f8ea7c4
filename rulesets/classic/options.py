"""The classic option model: the classic keys of RULES.md §5, over the common ones."""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import StrictBool

from engine.context import Ctx
from engine.options import Minutes, OptionSpec, opt, spec_of
from rulesets.common.options import SharedOptions

ExileTie = Literal["first_to_reach", "no_exile", "sheriff_vote", "random", "revote"]


class ClassicOptions(SharedOptions):
    """The classic keys of RULES.md §5, over the common ones."""

    classic_seer_feedback: Literal["village_partition", "wolf_partition", "literal_labels"] = opt(
        "classic.seer_feedback", "village_partition")
    classic_seer_self_check: StrictBool = opt("classic.seer_self_check", False)
    classic_guard_deadline: Minutes = opt("classic.guard_deadline", "90min")
    classic_guard_yellow: StrictBool = opt("classic.guard_yellow", False)
    classic_same_guard_same_save_kills: StrictBool = opt(
        "classic.same_guard_same_save_kills", False)
    classic_antidote_any_target: Literal[True, "kill_target_only"] = opt(
        "classic.antidote_any_target", True)
    classic_witch_self_save: Literal[True, False, "first_night_only"] = opt(
        "classic.witch_self_save", True)
    classic_witch_self_poison: StrictBool = opt("classic.witch_self_poison", True)
    classic_kill_post_on_no: StrictBool = opt("classic.kill_post_on_no", False)
    classic_double_wolf_lovers_in_wolf_group: StrictBool = opt(
        "classic.double_wolf_lovers_in_wolf_group", True)
    classic_double_wolf_lovers_know_partner: StrictBool = opt(
        "classic.double_wolf_lovers_know_partner", False)
    classic_cupid_self_pick: StrictBool = opt("classic.cupid_self_pick", True)
    classic_cupid_missing: Literal["random_pair_plus_yellow", "no_lovers"] = opt(
        "classic.cupid_missing", "random_pair_plus_yellow")
    classic_cupid_told_camp: StrictBool = opt("classic.cupid_told_camp", True)
    classic_village_gods_rule: Literal["all_out", "any_out"] = opt(
        "classic.village_gods_rule", "all_out")
    classic_kill_participants: Literal["kill_skill_holders", "whole_camp"] = opt(
        "classic.kill_participants", "kill_skill_holders")
    classic_sheriff_tiebreak: Literal["first_to_reach_held", "first_to_reach_ever", "random"] = opt(
        "classic.sheriff_tiebreak", "first_to_reach_held")
    classic_exile_tie: ExileTie = opt("classic.exile_tie", "first_to_reach")
    classic_sheriff_night_handover_deadline: Literal["before_next_open", "close_plus_30"] = opt(
        "classic.sheriff_night_handover_deadline", "before_next_open")
    classic_red_card_sheriff_successor: Literal["random", "none"] = opt(
        "classic.red_card_sheriff_successor", "random")
    # The optional hunter (docs/rules-hunter.md): dealt instead of a villager (C-HUNTER-7);
    # whether a lover's death (殉情) lets him shoot (C-HUNTER-2).
    classic_hunter: StrictBool = opt("classic.hunter", False)
    classic_hunter_shoots_on_lover_death: StrictBool = opt(
        "classic.hunter_shoots_on_lover_death", True)

    # (a824fdf's option models had neither: engine/options.py Options.added_keys)
    added_keys: ClassVar[frozenset[str]] = SharedOptions.added_keys | {
        "classic.hunter", "classic.hunter_shoots_on_lover_death"}

    def night_deadlines(self) -> dict[str, int | None]:
        return {**super().night_deadlines(), "classic.guard_deadline": self.classic_guard_deadline}


CLASSIC_OPTIONS: OptionSpec = spec_of(ClassicOptions)


if TYPE_CHECKING:
    def opts(ctx: Ctx) -> ClassicOptions:
        """The game's options, typed (ctx.o is this ruleset's ClassicOptions)."""
else:
    opts = attrgetter("o")  # the same, without a Python call per lookup
