"""The `standard` ruleset (docs/rules-standard.md): 预女猎白 / 预女猎守, 12 players.

This module is the glue: the boards, camps and the wolves' room, the day-1 election (its own
module, election.py: 上警 and 退水), the badge (撕警徽), the day's votes, last words, the end
of the game. Each role is a module of rulesets/standard/roles/ (data.yaml lists them, the
night order and the night resolution), with its skills by night and by day: the wolf's 自爆,
the hunter's shot, the idiot's reveal. The day skills that belong to no role (the election's,
the badge's) are the book's own skills, given to it here."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Deadline, Seat
from engine.options import OptionError
from engine.ruleset import Ruleset, register
from engine.votes import Tally
from rulesets.common.kill import reported_target
from rulesets.common.roles import RoleBook, RoleHooks
from rulesets.common.witch import WitchNight
from rulesets.standard import election
from rulesets.standard import payloads as payloads  # its events' payloads, registered
from rulesets.standard.base import DATA, SHOT_IN, VILLAGE, WOLVES, ack, gods
from rulesets.standard.options import STANDARD_OPTIONS, StandardOptions, opts
from rulesets.standard.roles import idiot

__all__ = ["RULESET", "STANDARD_OPTIONS", "Standard", "StandardOptions"]

PLAYERS = 12


def _passed(ctx: Ctx, st: Seat, cmd: Act) -> None:
    ack(ctx, st, "pass", None)


def _tear(ctx: Ctx, st: Seat, cmd: Act) -> None:
    """撕警徽 (S-SHERIFF-8): the sheriff who owes a successor destroys the badge."""
    ctx.tear_badge(st.seat)
    ctx.state.data["badge_lost"] = "torn"


BOOK = RoleBook(__name__, DATA, passed=_passed, skills={**election.SKILLS, "tear": _tear})


class Standard(RoleHooks, WitchNight, Ruleset):
    name = "standard"
    roles = tuple(DATA["roles"])
    many_roles = tuple(DATA["many"])
    camps = tuple(DATA["camps"])
    options_model = StandardOptions
    reported_slot = "kill"
    book = BOOK
    deadline_kinds = {**BOOK.deadline_kinds, **election.DEADLINE_KINDS}
    out_causes = BOOK.out_causes

    def reported_target(self, ctx: Ctx) -> int | None:
        return reported_target(ctx)

    def preset(self, players: int, options: dict) -> list[str]:
        if players != PLAYERS:
            raise OptionError(f"standard is played by {PLAYERS} players")
        board = options.get("standard.board", "预女猎白")
        return list(DATA["presets"][board])

    # setup (S-SETUP-1..3) ---------------------------------------------------------------
    def setup(self, ctx: Ctx) -> None:
        state = ctx.state
        board = gods(state)
        for st in state.seats:
            if st.role in ("idiot", "guard") and st.role not in board:
                raise ValueError(f"unknown role(s) for standard: {st.role} (the "
                                 f"{state.options['standard.board']} board has none)")
            st.camp = WOLVES if st.role == "wolf" else VILLAGE
            st.skills = {k: "held" for k in DATA["skills"][st.role]}
        wolves = [s.seat for s in state.seats if s.role == "wolf"]
        state.groups[WOLVES] = wolves
        state.camps_on_field = [c for c in (WOLVES, VILLAGE) if state.count(c)]
        if wolves:
            ctx.tell_group(WOLVES, "GroupFormed", group=WOLVES, members=wolves)
        BOOK.setup(ctx)

    # the night ----------------------------------------------------------------------------
    def open_night(self, ctx: Ctx) -> None:
        BOOK.open_night(ctx)
        if self.reported_slot not in ctx.night.slots:
            self.deliver_tongling(ctx)  # no kill tonight: 通灵 says so at once

    # the day: election, votes, the badge -------------------------------------------------------
    def open_day(self, ctx: Ctx, day: int) -> None:
        if day == 1:
            election.open_election(ctx)

    def deadline(self, ctx: Ctx, deadline: Deadline) -> None:
        if deadline.kind in election.DEADLINE_KINDS:
            election.deadline(ctx, deadline.kind)
        else:
            self.book.deadline(ctx, deadline)

    def exiles_on(self, ctx: Ctx, day: int) -> bool:
        """S-SHERIFF-1: day 1 exiles only under sheriff_then_exile, once the election is over
        (a judge who closes day 1 before the withdrawal deadline closes the election)."""
        return day >= 2 or (opts(ctx).standard_day1 == "sheriff_then_exile"
                            and not election.running(ctx))

    def ballot(self, ctx: Ctx, day: int, kind: str) -> tuple[set[int], set[int]]:
        if kind == "sheriff":
            return election.ballot(ctx)
        living = set(ctx.state.living_numbers())
        return {n for n in living if idiot.has_vote(ctx, n)}, living  # S-IDIOT-1

    def check_vote(self, ctx: Ctx, voter: int, target: int | None) -> None:
        if ctx.state.day == 1 and election.running(ctx):
            election.check_vote(ctx, voter, target)
        elif ctx.state.day == 1 and not self.exiles_on(ctx, 1):
            ctx.reject("no_election")  # the election is over: day 1 exiles nobody
        if not idiot.has_vote(ctx, voter):
            ctx.reject("idiot_no_vote")

    def pick_sheriff(self, ctx: Ctx, tally: Tally) -> int | None:
        return election.pick(ctx, tally)

    def sheriff_weight(self, ctx: Ctx) -> float:
        return opts(ctx).standard_sheriff_weight  # S-SHERIFF-7

    def spares_exile(self, ctx: Ctx, seat: int) -> bool:
        return idiot.spares_exile(ctx, seat)

    def red_card_successor(self, ctx: Ctx) -> str:
        return "random"  # C-SHERIFF-7's default (S-SHERIFF-8)

    # last words (S-WORDS-1) ------------------------------------------------------------------
    def last_words_right(self, ctx: Ctx, st: Seat) -> bool:
        cause = st.out_cause
        if cause in ("red-card", "destruct"):
            return False
        rule = opts(ctx).standard_last_words
        if rule == "all":
            return True
        if rule == "exiled_only":
            return cause == "vote"
        phase = (st.status(SHOT_IN) if cause == "shot" else None) or st.out_phase or ""
        return phase == "N1" or phase.startswith("D")

    # end of game (S-WIN-1) -------------------------------------------------------------
    def camp_lost(self, ctx: Ctx, camp: str) -> bool:
        state = ctx.state
        living = state.holders(camp=camp)
        if camp == WOLVES or opts(ctx).standard_win == "all":
            return not living
        board = gods(state)
        return not any(s.role == "villager" for s in living) or not any(
            s.role in board for s in living)


RULESET = register(Standard())
