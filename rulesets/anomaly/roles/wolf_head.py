"""狼头 (A-HEAD, A-INFECT) and the 过载 he grants (A-DER): the head's one night record (感染
target and mode, 血睿 target), its lock, and each derivative's 过载 slot; their steps of the
night resolution: 感染 (R2), the 过载s (R4), 血睿 (R7)."""

from __future__ import annotations

from typing import Any, cast

from engine.commands import Act
from engine.context import Ctx
from engine.model import Seat, Slot
from rulesets.anomaly.base import (
    ANOMALY,
    IDENTITY,
    bloodsight_valid,
    class_of,
    is_derivative,
    overload_usable,
    stage,
)
from rulesets.anomaly.options import opts
from rulesets.anomaly.resolution import AnomalyResolution
from rulesets.anomaly.statuses import DERIVATIVE, OVERLOAD_NIGHT, SAVED_CAMP, SAVED_SKILLS
from rulesets.common.roles import Resolution, Role, missed_if_unanswered
from rulesets.common.skills import lock
from rulesets.common.witch import WitchNight


def _open(ctx: Ctx) -> None:
    """The head's slot, then the 过载 slots; who was able at the opening (A-LOSE-A2)."""
    state = ctx.state
    n = ctx.night.day
    able = []
    head = state.holder("wolf-head", camp=ANOMALY, skill="infect")
    if head is not None:
        able.append(head.seat)
        ctx.add_slot("head", [head.seat], *ctx.night_deadline(),
                     yellow=ctx.rs.procedures_apply(ctx))
        ctx.tell(head.seat, "NightPrompt", skill="head", complete=stage(head) == "complete")
    for st in state.holders(camp=ANOMALY):
        if overload_usable(ctx, st, n):
            able.append(st.seat)
            ctx.add_slot(f"overload:{st.seat}", [st.seat], *ctx.night_deadline(), yellow=False)
            ctx.tell(st.seat, "NightPrompt", skill="overload")
    state.data["able_at_open"][str(n)] = able


def _expired(ctx: Ctx, slot: Slot) -> None:
    if slot.key == "head":
        slot.final = True
        cast(WitchNight, ctx.rs).deliver_tongling(ctx)
    missed_if_unanswered(ctx, slot)


def _merge(ctx: Ctx, slot: Slot, cmd: Act, **update: Any) -> None:
    """The wolf head's night submission is one record: 感染 target/mode and 血睿 target."""
    old = dict(slot.sub.options) if slot.sub else {}
    ctx.submit(slot, cmd, [])
    assert slot.sub is not None
    slot.sub.options = {**old, **update}


def _act_infect(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    target = ctx.living_target(target)
    if target == st.seat:
        ctx.reject("no_self_infect")
    mode = cmd.options.get("mode")
    stage = ctx.night.data["stages"].get(str(st.seat))
    if stage == "complete" and mode not in (1, 2):
        ctx.reject("infect_mode_required")
    if stage != "complete" and mode is not None:
        ctx.reject("no_mode_now")
    if (opts(ctx).anomaly_infect_anomaly_members == "reject"
            and ctx.state.seat(target).camp == ANOMALY):
        ctx.reject("infect_anomaly_member")
    _merge(ctx, slot, cmd, infect=target, mode=mode)
    ctx.tell(st.seat, "HeadRecorded", kind="infect", target=target, mode=mode)


def _act_bloodsight(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    target = ctx.living_target(target)
    assert target is not None
    if opts(ctx).anomaly_bloodsight_invalid_target == "reject_and_reprompt" and not \
            bloodsight_valid(ctx, target):
        ctx.reject("bloodsight_invalid")
    _merge(ctx, slot, cmd, bloodsight=target)
    ctx.tell(st.seat, "HeadRecorded", kind="bloodsight", target=target, mode=None)


def _act_lock(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    lock(ctx, slot)
    ctx.tell(st.seat, "HeadLocked")
    cast(WitchNight, ctx.rs).deliver_tongling(ctx)


def _act_overload(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    target = ctx.living_target(target)
    if target == st.seat:
        ctx.reject("no_self_target")
    ctx.submit(slot, cmd, [target])
    ctx.tell(st.seat, "ActionRecorded", skill="overload", target=target)


# The resolution ------------------------------------------------------------------------------
def _infect(ctx: Ctx, res: Resolution) -> None:
    """R2: 感染 converts or puts out its target; a conversion the firewall blocked is noted for
    the guard's 空守 mark (R3)."""
    r = AnomalyResolution.of(res)
    if r.infect is not None and r.head is not None:
        r.converted_blocked_by_firewall = _infect_target(ctx, r, r.head, r.infect)


def _infect_target(ctx: Ctx, r: AnomalyResolution, head: int, target: int) -> bool:
    """感染 on `target`; was it a conversion the firewall blocked?"""
    ts = ctx.state.seat(target)
    if not ts.alive or (ts.role == "elder" and not is_derivative(ts)):
        return False  # A-ELDER-2
    if ts.camp == ANOMALY and opts(ctx).anomaly_infect_anomaly_members == "no_effect":
        return False
    head_stage = r.stages.get(head, "growth")
    effect = {"growth": 1, "mature": 2}.get(head_stage, r.mode or 1)
    identity = class_of(ctx, ts) == IDENTITY
    convert = identity if effect == 1 else not identity
    if convert:
        if is_derivative(ts):
            return False  # AMB-A-08 literal: converting a derivative changes nothing
        if target == r.firewall:
            return True
        if target == r.protect:
            return False
        _convert(ctx, ts)
    else:
        if target == r.protect or (target == r.firewall
                                   and opts(ctx).anomaly_firewall_blocks_out):
            return target == r.firewall
        ctx.put_out(target, "infect")
    return False


def _convert(ctx: Ctx, st: Seat) -> None:
    st.set_status(DERIVATIVE, True)
    st.set_status(SAVED_SKILLS, dict(st.skills))
    st.set_status(SAVED_CAMP, st.camp)
    st.camp = ANOMALY
    if not opts(ctx).anomaly_derivative_keeps_role_skills:
        st.skills = {k: "lost" for k in st.skills}
    if opts(ctx).anomaly_derivative_notified is True:
        ctx.tell(st.seat, "BecameDerivative")
    ctx.note("Converted", seat=st.seat)
    ctx.check("atomic")


def _overloads(ctx: Ctx, res: Resolution) -> None:
    """R4: the 过载s in submission order, read now (with resolve.locked_actions=false, not
    those of users out by now)."""
    r = AnomalyResolution.of(res)
    uses = sorted((use for k in ctx.night.slots if k.startswith("overload:")
                   if (use := r.sub(k)) is not None and use.targets),
                  key=lambda use: (use.at, use.by))
    for use in uses:
        target = use.targets[0]
        assert target is not None  # an overload names a living target (_act_overload)
        _overload(ctx, use.by, target, r.protect)


def _overload(ctx: Ctx, user: int, target: int, protect: int | None) -> None:
    us = ctx.state.seat(user)
    ts = ctx.state.seat(target)
    effect = False
    if ts.alive and not (target == protect and (
            ts.role != "wolf-head" or opts(ctx).anomaly_purify_blocks_patricide)):
        if ts.role == "wolf-head" and ts.camp == ANOMALY:
            ctx.put_out(target, "patricide")  # A-HEAD-2
            effect = True
        elif class_of(ctx, ts) != class_of(ctx, us):
            ctx.put_out(target, "overload")
            effect = True
    ctx.check("atomic")
    if effect or opts(ctx).anomaly_overload_spent_on_no_effect:
        us.skills["overload"] = "used"
        ctx.check("atomic")  # the spending is its own skill-loss event (AMB-A-22)


def _bloodsight(ctx: Ctx, res: Resolution) -> None:
    """R7: 血睿 grants 过载 to a valid target; whether the head evolves for it (R8)."""
    r = AnomalyResolution.of(res)
    if r.blood is not None and r.head is not None:
        if bloodsight_valid(ctx, r.blood):
            _grant(ctx, r.blood, r.n)
            r.blood_evolves = True
        elif opts(ctx).anomaly_bloodsight_invalid_target == "fizzle_evolve":
            r.blood_evolves = True


def _grant(ctx: Ctx, target: int, night: int) -> None:
    ts = ctx.state.seat(target)
    ts.skills["overload"] = "held"
    ts.set_status(OVERLOAD_NIGHT, night)
    if opts(ctx).anomaly_derivative_notified in (True, "on_overload_only"):
        ctx.tell(target, "OverloadGranted")


ROLE = Role(
    name="wolf-head",
    night_skills={"infect": _act_infect, "bloodsight": _act_bloodsight, "lock": _act_lock,
                  "overload": _act_overload},
    slot="head",
    skill_slots={"overload": "overload:{seat}"},
    open_night=_open,
    expired=_expired,
    steps={"infect": _infect, "overload": _overloads, "bloodsight": _bloodsight},
    out_causes=("infect", "overload", "patricide"),
)
