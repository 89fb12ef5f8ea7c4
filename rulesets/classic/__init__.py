"""The `classic` ruleset (RULES.md §2): wolves, seer, witch, guard, Cupid, lovers, sheriff.

This module is the glue: presets, camps, votes and the badge, the end of the game. Each role is
a module of rulesets/classic/roles/ (data.yaml lists them, and the night order and resolution)."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Seat
from engine.options import OptionError
from engine.ruleset import Ruleset, register
from engine.votes import REVOTE, Tally
from rulesets.classic import payloads as payloads  # its events' payloads, registered
from rulesets.classic.base import BL, DATA, VILLAGE, WOLVES, ack, refresh_field
from rulesets.classic.options import CLASSIC_OPTIONS, ClassicOptions, opts
from rulesets.common.kill import reported_target
from rulesets.common.roles import RoleBook, RoleHooks
from rulesets.common.witch import WitchNight

__all__ = ["CLASSIC_OPTIONS", "RULESET", "Classic", "ClassicOptions"]

GODS = tuple(DATA["gods"])


def _passed(ctx: Ctx, st: Seat, cmd: Act) -> None:
    ack(ctx, st, cmd.skill, None)


BOOK = RoleBook(__name__, DATA, passed=_passed)


class Classic(RoleHooks, WitchNight, Ruleset):
    name = "classic"
    roles = tuple(DATA["roles"])
    many_roles = tuple(DATA["many"])
    camps = tuple(DATA["camps"])
    options_model = ClassicOptions
    reported_slot = "kill"
    book = BOOK
    deadline_kinds = BOOK.deadline_kinds
    out_causes = BOOK.out_causes

    def reported_target(self, ctx: Ctx) -> int | None:
        return reported_target(ctx)

    def preset(self, players: int, options: dict) -> list[str]:
        presets = DATA["presets"]
        if players not in presets:
            raise OptionError(f"classic is played by {', '.join(map(str, presets))} players")
        roles = list(presets[players])
        # A variant switched on by its option puts its role in place of another (data.yaml).
        for key, (replaced, role) in DATA.get("preset_variants", {}).items():
            if options.get(key) and replaced in roles:
                roles[roles.index(replaced)] = role
        return roles

    # setup (C-SETUP-1..10) --------------------------------------------------
    def setup(self, ctx: Ctx) -> None:
        state = ctx.state
        for key, (_, role) in DATA.get("preset_variants", {}).items():
            if not ctx.state.options.get(key) and any(s.role == role for s in state.seats):
                # A variant's role exists in a game only with its option (SCENARIOS.md).
                raise ValueError(f"unknown role(s) for classic: {role} (it needs {key}=true)")
        for st in state.seats:
            st.camp = WOLVES if st.role == "wolf" else VILLAGE
            st.skills = {k: "held" for k in DATA["skills"][st.role]}
        state.groups[WOLVES] = [s.seat for s in state.seats if s.role == "wolf"]
        refresh_field(state)
        BOOK.setup(ctx)

    # actions and the night: the roles ----------------------------------------------
    def open_night(self, ctx: Ctx) -> None:
        BOOK.open_night(ctx)
        if self.reported_slot not in ctx.night.slots:
            self.deliver_tongling(ctx)  # no kill tonight: 通灵 says so at once

    # votes and the badge ---------------------------------------------------------
    def first_to_reach_rule(self, ctx: Ctx) -> str:
        rule = opts(ctx).classic_sheriff_tiebreak
        return rule if rule != "random" else "first_to_reach_held"

    def night_handover(self, ctx: Ctx) -> str:
        return opts(ctx).classic_sheriff_night_handover_deadline

    def red_card_successor(self, ctx: Ctx) -> str:
        return opts(ctx).classic_red_card_sheriff_successor

    def pick_sheriff(self, ctx: Ctx, tally: Tally) -> int | None:
        if len(tally.tied) > 1 and opts(ctx).classic_sheriff_tiebreak == "random":
            return ctx.rand_choice(list(tally.tied), "sheriff_tie")
        return ctx.first_to_reach(tally)

    def pick_exile(self, ctx: Ctx, tally: Tally) -> int | None:
        rule = opts(ctx).classic_exile_tie
        if len(tally.tied) <= 1 or rule == "first_to_reach":
            return ctx.first_to_reach(tally)
        if rule == "no_exile":
            return None
        if rule == "random":
            return ctx.rand_choice(list(tally.tied), "exile_tie")
        if rule == "revote":
            return REVOTE
        sheriff = ctx.state.sheriff
        pick = tally.effective.get(sheriff) if sheriff else None
        return pick if pick in tally.tied else ctx.first_to_reach(tally)

    # end of game (§2.5) ---------------------------------------------------------
    def camp_lost(self, ctx: Ctx, camp: str) -> bool:
        state = ctx.state  # read only: holders copies no seat
        living = state.holders(camp=camp)
        if camp in (WOLVES, BL):
            return not living  # C-LOSE-W1, C-LOSE-B1
        gods_all = [s for s in state.holders(camp=VILLAGE, living=False) if s.role in GODS]
        if opts(ctx).classic_village_gods_rule == "any_out":
            v1 = any(not s.alive for s in gods_all) or not gods_all
        else:
            v1 = not any(s.alive for s in gods_all)  # C-LOSE-V1
        v2 = not any(s.role == "villager" for s in living)  # C-LOSE-V2
        return v1 or v2

    def camp_wins(self, ctx: Ctx, camp: str) -> bool:
        if camp != WOLVES:
            return False
        wolves = ctx.state.count(WOLVES)
        return wolves > 0 and 2 * wolves >= len(ctx.state.living_numbers())  # C-WIN-W1

    def on_camp_lost(self, ctx: Ctx, camp: str) -> None:
        state = ctx.state
        members = [s.seat for s in state.holders(camp=camp)]
        ctx.tell(members, "CampLostNotice", camp=camp)
        if camp != WOLVES:
            return
        for st in state.seats:  # C-WOLF-3
            if st.camp == WOLVES and st.role == "wolf" and st.holds("kill"):
                st.skills["kill"] = "lost"
        night = state.night
        if night and not night.resolved and "kill" in night.slots and any(
                state.seat(n).camp == WOLVES for n in night.slots["kill"].seats):
            # Lost during collection (a surrender): tonight's kill is gone with the skill.
            ctx.remove_deadline(night.slots.pop("kill").deadline_id)
            self.deliver_tongling(ctx)
        if BL in state.camps_on_field and BL not in state.camps_lost:  # C-LOVER-5
            lovers = [s for s in state.seats if s.camp == BL and s.lover_of]
            for st in lovers:
                st.skills["kill"] = "held"
            ctx.tell([s.seat for s in state.holders(camp=BL)], "WidowKnife",
                     lovers=[s.seat for s in lovers])


RULESET = register(Classic())
