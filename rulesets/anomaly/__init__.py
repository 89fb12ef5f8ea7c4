"""The `anomaly` ruleset (RULES.md §3): wolf head, infection, growth stages, 过载, Key盾, 归零.

This module is the glue: presets, setup, votes, the end of the game. Each role is a module of
rulesets/anomaly/roles/ (data.yaml lists them, the night order and the night resolution's
steps); what the steps share, and those that belong to no role, are in resolution.py."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Seat
from engine.options import OptionError
from engine.ruleset import Ruleset, register
from engine.votes import Tally
from rulesets.anomaly import payloads as payloads  # its events' payloads, registered
from rulesets.anomaly.base import (
    ANOMALY,
    DATA,
    GODS,
    IDENTITY,
    NORMAL,
    VILLAGER,
    anomaly_able,
    is_derivative,
    stage,
)
from rulesets.anomaly.options import ANOMALY_OPTIONS, AnomalyOptions, opts
from rulesets.anomaly.resolution import STEPS, AnomalyResolution
from rulesets.anomaly.statuses import CLASS, STAGE, WINDOW, WINDOW_PART
from rulesets.common.roles import RoleBook, RoleHooks
from rulesets.common.witch import WitchNight

__all__ = ["ANOMALY_OPTIONS", "RULESET", "Anomaly", "AnomalyOptions"]


def _passed(ctx: Ctx, st: Seat, cmd: Act) -> None:
    ctx.tell(st.seat, "ActionRecorded", skill="pass", target=None)


BOOK = RoleBook(__name__, DATA, passed=_passed, steps=STEPS)


class Anomaly(RoleHooks, WitchNight, Ruleset):
    name = "anomaly"
    roles = tuple(DATA["roles"])
    many_roles = tuple(DATA["many"])
    camps = tuple(DATA["camps"])
    options_model = AnomalyOptions
    reported_slot = "head"
    book = BOOK
    deadline_kinds = BOOK.deadline_kinds  # the hunter's shot (P-DL-6)
    out_causes = (*BOOK.out_causes, "zeroing")

    def reported_target(self, ctx: Ctx) -> int | None:
        head = ctx.night.slots.get("head")
        return head.sub.options.get("infect") if head and head.sub else None

    def preset(self, players: int, options: dict) -> list[str]:
        villagers = players - len(DATA["base"])
        if villagers not in (6, 7, 8):
            raise OptionError("anomaly is played by 12, 13 or 14 players (6–8 villagers)")
        return list(DATA["base"]) + ["villager"] * villagers

    # setup (A-SETUP-1..4) ---------------------------------------------------
    def setup(self, ctx: Ctx) -> None:
        state = ctx.state
        head_class = opts(ctx).anomaly_head_class
        for st in state.seats:
            st.camp = ANOMALY if st.role == "wolf-head" else NORMAL
            st.skills = {k: "held" for k in DATA["skills"][st.role]}
            if st.role == "wolf-head":
                st.set_status(CLASS, None if head_class == "none" else head_class)
            else:
                st.set_status(CLASS, IDENTITY if st.role in DATA["identity_roles"] else VILLAGER)
            if st.role in DATA["staged"]:
                st.set_status(STAGE, "growth")
                ctx.tell(st.seat, "StageNotice", stage="growth")
        state.data.update({"K": None, "able_at_open": {}, "night_outs": {}})
        state.camps_on_field = [c for c in (ANOMALY, NORMAL) if state.count(c)]

    # day ---------------------------------------------------------------------
    def exiles_on(self, ctx: Ctx, day: int) -> bool:
        return day >= 2 or opts(ctx).anomaly_day1_exile

    def pick_exile(self, ctx: Ctx, tally: Tally) -> int | None:
        """A-SHERIFF-2: on a tie the sheriff's candidate goes out; else the fallback."""
        if len(tally.tied) <= 1:
            return ctx.first_to_reach(tally)
        sheriff = ctx.state.sheriff
        pick = tally.effective.get(sheriff) if sheriff else None
        if pick in tally.tied:
            return pick
        fallback = opts(ctx).anomaly_tie_fallback
        if fallback == "no_exile":
            return None
        if fallback == "random":
            return ctx.rand_choice(list(tally.tied), "exile_tie")
        return ctx.first_to_reach(tally)

    def may_surrender(self, ctx: Ctx) -> bool:
        return opts(ctx).surrender_enabled_anomaly

    # going out ---------------------------------------------------------------
    def on_out(self, ctx: Ctx, seats: list[int]) -> None:
        state = ctx.state
        for n in seats:
            st = state.seat(n)
            phase = st.out_phase or ""
            # 归零 windows: D_N belongs to night N's window, what happens from C_N on to N+1.
            day = int(phase[1:]) if phase[1:].isdigit() else 0
            st.set_status(WINDOW, day if phase.startswith("D") else day + 1)
            st.set_status(WINDOW_PART, "day" if phase.startswith("D") else "night")
        BOOK.on_out(ctx, seats)  # Key盾

    def procedures_apply(self, ctx: Ctx) -> bool:
        return opts(ctx).anomaly_apply_001_procedures

    # actions and the night: the roles -------------------------------------------
    def open_night(self, ctx: Ctx) -> None:
        state = ctx.state
        night = ctx.night
        # String keys: the state must survive a JSON round trip unchanged.
        night.data["stages"] = {str(s.seat): stage(s) for s in state.seats if stage(s)}
        night.data["snapshot"] = {str(s.seat): {"camp": s.camp, "role": s.role,
                                           "derivative": is_derivative(s),
                                           "class": s.status(CLASS)}
                                  for s in state.seats}
        BOOK.open_night(ctx)
        if self.reported_slot not in night.slots:
            self.deliver_tongling(ctx)  # no head tonight: 通灵 says so at once

    def resolve_night(self, ctx: Ctx) -> None:
        BOOK.resolve_night(ctx, AnomalyResolution.start(ctx))

    # end of game (§3.6) ---------------------------------------------------------
    def camp_lost(self, ctx: Ctx, camp: str) -> bool:
        state = ctx.state
        if camp == ANOMALY:
            if not state.count(ANOMALY):
                return True  # A-LOSE-A1
            if opts(ctx).anomaly_lose2_eval == "night_end_only" and not state.data.get(
                    "at_night_end"):
                return False
            return not anomaly_able(ctx)  # A-LOSE-A2
        gods = GODS + (("hunter",) if opts(ctx).anomaly_normal_lose1_includes_hunter else ())
        gone = [s for s in state.holders(living=False) if s.role in gods]  # read only
        n1 = bool(gone) and all(not s.alive or s.camp == ANOMALY for s in gone)
        villagers = state.holders("villager", living=False)
        n2 = all(not s.alive or s.camp == ANOMALY for s in villagers)
        return n1 or n2

    def camp_wins(self, ctx: Ctx, camp: str) -> bool:
        if camp != ANOMALY:
            return False
        members = ctx.state.count(ANOMALY)
        return members > 0 and 2 * members >= len(ctx.state.living_numbers())  # A-WIN-1

    def on_camp_lost(self, ctx: Ctx, camp: str) -> None:
        ctx.tell([s.seat for s in ctx.holders(camp=camp)], "CampLostNotice", camp=camp)


RULESET = register(Anomaly())
