"""丘比特 (C-SETUP-3..8): links two lovers before day 1; missed, a random pair (P-DL-6)."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Deadline, Seat
from rulesets.classic.base import BL, VILLAGE, WOLVES, form_groups, refresh_field
from rulesets.classic.options import opts
from rulesets.common.roles import Role


def _setup(ctx: Ctx) -> None:
    cupids = [s.seat for s in ctx.state.seats if s.holds("arrow")]
    if cupids:
        ctx.add_deadline("setup", 1, "open", 0, cupids[:1], key="cupid")
        ctx.tell(cupids[0], "CupidPrompt")
    else:
        form_groups(ctx)  # no link to wait for


def _missed(ctx: Ctx, deadline: Deadline) -> None:
    cupid = ctx.state.seat(deadline.seats[0])
    if not cupid.holds("arrow"):
        return
    ctx.missed(cupid.seat, "cupid", True)
    if opts(ctx).classic_cupid_missing == "no_lovers":
        cupid.skills["arrow"] = "lost"
        form_groups(ctx)
        return
    pool = [n for n in ctx.state.living_numbers()
            if opts(ctx).classic_cupid_self_pick or n != cupid.seat]
    first = ctx.rand_choice(pool, "cupid_pair")
    second = ctx.rand_choice([n for n in pool if n != first], "cupid_pair")
    _link(ctx, cupid, min(first, second), max(first, second), random=True)


def _act_link(ctx: Ctx, st: Seat, cmd: Act) -> None:
    if ctx.state.phase != "SETUP" or not st.holds("arrow"):
        ctx.reject("not_your_skill", skill="link")
    if len(cmd.targets) != 2 or None in cmd.targets or cmd.targets[0] == cmd.targets[1]:
        ctx.reject("link_needs_two")
    a, b = (ctx.living_target(t) for t in cmd.targets)
    if st.seat in (a, b) and not opts(ctx).classic_cupid_self_pick:
        ctx.reject("no_self_pick")
    _link(ctx, st, a, b, random=False)
    ctx.remove_deadline("setup:cupid")


def _link(ctx: Ctx, cupid: Seat, a: int, b: int, *, random: bool) -> None:
    """C-SETUP-3..8: lovers, 私奔, Cupid's camp, groups and what each one is told."""
    state = ctx.state
    la, lb = state.seat(a), state.seat(b)
    la.lover_of, lb.lover_of = b, a
    cupid.skills["arrow"] = "used"
    wolf_a, wolf_b = la.role == "wolf", lb.role == "wolf"
    ctx.tell(cupid.seat, "CupidLinked", lovers=[a, b], random=random)
    if wolf_a and wolf_b:
        camp = WOLVES
        if not opts(ctx).classic_double_wolf_lovers_in_wolf_group:
            state.groups[WOLVES] = [n for n in state.groups[WOLVES] if n not in (a, b)]
    elif not wolf_a and not wolf_b:
        camp = VILLAGE
    else:
        camp = BL
        wolf = la if wolf_a else lb
        wolf.skills["kill"] = "lost"  # C-SETUP-6
        state.groups[WOLVES] = [n for n in state.groups[WOLVES] if n != wolf.seat]
        for lover in (la, lb):
            lover.camp = BL
    cupid.camp = camp  # C-SETUP-5
    know = not (wolf_a and wolf_b) or opts(ctx).classic_double_wolf_lovers_know_partner
    for lover, partner in ((la, b), (lb, a)):
        ctx.tell(lover.seat, "LoverNotice", partner=partner if know else None)
        if camp == BL:
            ctx.tell(lover.seat, "YourCamp", camp=BL)
    if not (wolf_a and wolf_b):
        state.groups["lovers"] = sorted((a, b))
    # A Cupid who is a lover learns his camp as a lover; a single one per AMB-C-11.
    if opts(ctx).classic_cupid_told_camp and cupid.seat not in (a, b):
        ctx.tell(cupid.seat, "YourCamp", camp=camp)
    refresh_field(state)
    form_groups(ctx)
    ctx.check("atomic")  # the link moved characters between camps


ROLE = Role(name="cupid", skills={"link": _act_link}, setup=_setup, setup_deadline=_missed)
