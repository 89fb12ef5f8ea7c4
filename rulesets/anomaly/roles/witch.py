"""女巫 (A-WITCH): 净化, at complete 格式化; 通灵 at the stages of
anomaly.witch_tongling_stages (G-RES-6); her steps of the night resolution: the skills spent,
the cure (R5), 格式化 (R6), 共鸣 after the evolutions (R8)."""

from __future__ import annotations

from engine.commands import Act
from engine.context import Ctx
from engine.model import Seat, Slot
from rulesets.anomaly.base import (
    ANOMALY,
    NORMAL,
    advance_stage,
    can_format,
    can_purify,
    is_derivative,
    stage,
)
from rulesets.anomaly.options import opts
from rulesets.anomaly.resolution import AnomalyResolution
from rulesets.anomaly.statuses import DERIVATIVE, SAVED_SKILLS
from rulesets.common.roles import Resolution, Role
from rulesets.common.skills import open_slot
from rulesets.common.witch import WITCH_SLOT
from rulesets.common.witch import deadline as witch_deadline


def _open(ctx: Ctx) -> None:
    witch = ctx.holder("witch", camp=NORMAL)
    acts = witch is not None and (can_purify(ctx, witch) or can_format(witch))
    ctx.night.data["tongling"] = witch.seat if witch is not None and acts and witch.holds(
        "tongling") and stage(witch) in opts(ctx).anomaly_witch_tongling_stages else None
    if acts:
        open_slot(ctx, WITCH_SLOT, witch, witch_deadline(ctx), ctx.rs.procedures_apply(ctx))


def _act_purify(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    _act_witch(ctx, st, slot, cmd, target, other="format")


def _act_format(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    if ctx.night.data["stages"].get(str(st.seat)) != "complete":
        ctx.reject("skill_not_at_stage")
    _act_witch(ctx, st, slot, cmd, target, other="purify")


def _act_witch(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None, *,
               other: str) -> None:
    """净化 or 格式化: a held skill, never both on one night (A-WITCH-4/5)."""
    if not st.holds(cmd.skill):
        ctx.reject("skill_lost")
    if slot.sub is not None and slot.sub.skill == other:
        ctx.reject("purify_or_format")
    target = ctx.living_target(target)
    ctx.submit(slot, cmd, [target])
    ctx.tell(st.seat, "ActionRecorded", skill=cmd.skill, target=target)


# The resolution ------------------------------------------------------------------------------
def _spend(ctx: Ctx, res: Resolution) -> None:
    """Tonight's 净化 or 格式化 is spent before anything resolves (净化 at mature is lost and
    takes 通灵 with it, A-WITCH-3; at growth it stays unless purify_growth_reusable=false)."""
    r = AnomalyResolution.of(res)
    if r.witch is None:
        return
    ws = ctx.state.seat(r.witch)
    if r.purify is not None:
        if r.witch_stage == "mature" or r.witch_stage == "complete" or not opts(
                ctx).anomaly_purify_growth_reusable:
            ws.skills["purify"] = "lost" if r.witch_stage == "mature" else "used"
        if r.witch_stage == "mature" and ws.skills.get("tongling") == "held":
            ws.skills["tongling"] = "lost"  # A-WITCH-3
    if r.fmt is not None:
        ws.skills["format"] = "used"


def _cure(ctx: Ctx, res: Resolution) -> None:
    """R5: 净化 at complete cures a derivative (or the head, cure_targets=any)."""
    target = AnomalyResolution.of(res).cure
    if target is None:
        return
    ts = ctx.state.seat(target)
    allowed = is_derivative(ts) or (opts(ctx).anomaly_cure_targets == "any"
                                     and ts.role == "wolf-head")
    if not ts.alive or not allowed or ts.camp != ANOMALY:
        return
    ts.camp = NORMAL
    ts.set_status(DERIVATIVE, False)
    saved = ts.clear_status(SAVED_SKILLS) or {}
    if ts.role == "wolf-head":
        ts.skills = {k: "lost" for k in ts.skills}
    elif opts(ctx).anomaly_cure_restores_role_skills:
        ts.skills = dict(saved)
    ts.skills.pop("overload", None)
    ctx.tell(target, "Cured")
    ctx.note("Cured", seat=target)
    ctx.check("atomic")


def _format(ctx: Ctx, res: Resolution) -> None:
    """R6: 格式化 puts out its target if still in."""
    fmt = AnomalyResolution.of(res).fmt
    if fmt is not None and ctx.state.seat(fmt).alive:
        ctx.put_out(fmt, "format")


def _resonance(ctx: Ctx, res: Resolution) -> None:
    """共鸣: the living witch steps up with tonight's evolutions of the seer and the guard (and
    the head, resonance_counts_head), once a night unless resonance_max_per_night=unbounded."""
    r = AnomalyResolution.of(res)
    state = ctx.state
    ws = state.holder("witch", camp=NORMAL)
    if ws is None or not ws.holds("resonance"):
        return
    roles = ("seer", "guard") + (
        ("wolf-head",) if opts(ctx).anomaly_resonance_counts_head else ())
    triggers = [n for n in r.evolved if state.seat(n).role in roles]
    steps = len(triggers) if opts(ctx).anomaly_resonance_max_per_night == "unbounded" \
        else min(1, len(triggers))
    for _ in range(steps):
        advance_stage(ctx, ws.seat)


ROLE = Role(name="witch", night_skills={"purify": _act_purify, "format": _act_format},
            slot=WITCH_SLOT, open_night=_open,
            steps={"spend": _spend, "cure": _cure, "format": _format, "resonance": _resonance},
            out_causes=("format",))
