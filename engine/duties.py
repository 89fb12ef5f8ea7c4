"""Player commands besides votes: night actions (to the ruleset), the sheriff's handover,
last words, surrender; and the judge's cards and waivers."""

from __future__ import annotations

from engine.commands import Act, Handover, JudgeCard, JudgeWaiver, LastWords, Surrender
from engine.context import Ctx, living_player


def act(ctx: Ctx, cmd: Act) -> None:
    ctx.seat(cmd.seat)
    ctx.rs.act(ctx, cmd)


def handover(ctx: Ctx, cmd: Handover) -> None:
    state = ctx.state
    if state.handover_due != cmd.seat:
        ctx.reject("no_handover_due")
    target = ctx.living_target(cmd.target)
    assert target is not None
    if target == cmd.seat:  # (only a sheriff who gives the badge up alive can name himself)
        ctx.reject("no_self_target")
    if not ctx.rs.may_handover(ctx, cmd.seat):
        state.data["held_handover"] = [cmd.seat, target]
        ctx.tell_duty(cmd.seat, "HandoverHeld", target=target)
        return
    ctx.drop_deadlines(lambda d: d.kind == "handover")
    ctx.set_sheriff(target, "handover")


def handover_missed(ctx: Ctx) -> None:
    state = ctx.state
    old = state.handover_due
    if old is None:
        return
    if not ctx.rs.procedures_apply(ctx):
        ctx.note("JudgeRulingNeeded", duty="handover", seat=old)
        return
    living = [n for n in state.living_numbers() if n != old]  # (he may be alive: S-IDIOT-4)
    if living:
        ctx.set_sheriff(ctx.rand_choice(living, "sheriff_handover"), "random")
    else:
        state.handover_due = None
    ctx.missed(old, "handover", True)


def lastwords(ctx: Ctx, cmd: LastWords) -> None:
    state = ctx.state
    if cmd.seat not in state.lastwords_due:
        ctx.reject("no_lastwords_due")
    state.lastwords_due.remove(cmd.seat)
    state.last_words[cmd.seat] = cmd.text
    ctx.announce("LastWords", seat=cmd.seat, text=cmd.text)


def surrender(ctx: Ctx, cmd: Surrender) -> None:
    state = ctx.state
    st = living_player(ctx, cmd.seat)
    if not ctx.rs.may_surrender(ctx):
        ctx.reject("surrender_disabled")
    camp = st.camp
    if camp in state.camps_lost:
        ctx.reject("camp_already_lost")
    if st.surrendered:
        ctx.reject("already_surrendered")
    st.surrendered = True
    ctx.tell(cmd.seat, "SurrenderRecorded")
    members = state.members(camp)
    agreed = sum(1 for s in members if s.surrendered)
    rule = ctx.o.surrender_requires
    done = (agreed >= 1 if rule == "any_member"
            else agreed * 2 > len(members) if rule == "majority"
            else agreed == len(members))
    if done:
        state.camps_surrendered.append(camp)
        ctx.announce("CampSurrendered", camp=camp)
        ctx.check("atomic")


def card(ctx: Ctx, cmd: JudgeCard) -> None:
    st = ctx.seat(cmd.seat)
    if st.red:
        ctx.reject("already_sent_off")
    if cmd.color == "yellow":
        ctx.yellow(cmd.seat, "judge")
    else:
        if not st.alive:
            ctx.reject("target_out", target=cmd.seat)
        ctx.red(cmd.seat, "judge")


def waiver(ctx: Ctx, cmd: JudgeWaiver) -> None:
    """The judge records a player's notice or contact: it waives the next missed-deadline card."""
    st = ctx.seat(cmd.seat)
    setattr(st, cmd.waiver, True)
    ctx.note("WaiverRecorded", seat=cmd.seat, waiver=cmd.waiver)
