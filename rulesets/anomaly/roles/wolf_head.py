"""狼头 (A-HEAD, A-INFECT) and the 过载 he grants (A-DER): the head's one night record (感染
target and mode, 血睿 target), its lock, and each derivative's 过载 slot."""

from __future__ import annotations

from typing import Any, cast

from engine.commands import Act
from engine.context import Ctx
from engine.model import Seat, Slot
from rulesets.anomaly.base import ANOMALY, bloodsight_valid, overload_usable, stage
from rulesets.anomaly.options import opts
from rulesets.common.roles import Role, missed_if_unanswered
from rulesets.common.skills import lock
from rulesets.common.witch import WitchNight


def _open(ctx: Ctx) -> None:
    """The head's slot, then the 过载 slots; who was able at the opening (A-LOSE-A2)."""
    state = ctx.state
    n = ctx.night.day
    able = []
    head = next((s for s in state.living() if s.role == "wolf-head" and s.camp == ANOMALY
                 and s.holds("infect")), None)
    if head is not None:
        able.append(head.seat)
        ctx.add_slot("head", [head.seat], *ctx.night_deadline(),
                     yellow=ctx.rs.procedures_apply(ctx))
        ctx.tell(head.seat, "NightPrompt", skill="head", complete=stage(head) == "complete")
    for st in state.living():
        if st.camp == ANOMALY and overload_usable(ctx, st, n):
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


ROLE = Role(
    name="wolf-head",
    night_skills={"infect": _act_infect, "bloodsight": _act_bloodsight, "lock": _act_lock,
                  "overload": _act_overload},
    slot="head",
    skill_slots={"overload": "overload:{seat}"},
    open_night=_open,
    expired=_expired,
    out_causes=("infect", "overload", "patricide"),
)
