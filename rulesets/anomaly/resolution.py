"""Anomaly's night resolution (RULES.md §3.4, R1–R11): what its steps share, and the steps that
belong to no role.

The steps are the `night_resolution:` list of data.yaml, each in its role's module (the head's
感染, 过载 and 血睿, the guard's 防火墙, the witch's spend, cure, 格式化 and 共鸣, the seer's
deferred result); the stage changes (R8), the night end (R9) and 归零 (R10) belong to no role:
they are this module's `STEPS`, the ruleset's own step names (`anomaly.evolve`), which the role
book takes beside the roles' steps.

`AnomalyResolution.start` reads what the night chose when the resolution begins (the head's
record, the check, the firewall, the witch's purify or 格式化 and the stages of the opening),
R1's protections among them: the firewall F and the growth/mature 净化 P (`protect`).
A submission read later is read at that moment (`sub`): the 过载 submissions in R4 and the check
the seer evolves by in R8 — with resolve.locked_actions=false an actor out by then no longer
counts (AMB-G-06 (b)), exactly as the former single pipeline read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.context import Ctx
from engine.model import Submission
from rulesets.anomaly.base import ANOMALY_CAUSES, advance_stage, stage
from rulesets.anomaly.options import opts
from rulesets.anomaly.statuses import WINDOW, WINDOW_PART
from rulesets.common.roles import Resolution, Step


@dataclass
class AnomalyResolution(Resolution):
    """One anomaly night's resolution: the choices read at its start, and what steps leave for
    later ones (the firewall's block of a conversion, 血睿's evolution, who evolved)."""

    n: int = 0  # the night
    stages: dict[int, str] = field(default_factory=dict)  # the stages at the night's opening
    head: int | None = None  # the head who submitted tonight's record
    infect: int | None = None
    mode: int | None = None  # 感染's mode at complete (1 or 2)
    blood: int | None = None  # 血睿's target
    see: Submission | None = None  # the check, as it stood at the start
    seer_used: bool = False
    firewall: int | None = None
    guard: int | None = None  # the seat of tonight's guard slot
    witch: int | None = None  # the seat of tonight's witch slot
    witch_stage: str | None = None
    purify: int | None = None
    fmt: int | None = None  # 格式化's target
    protect: int | None = None  # 净化 at growth/mature: the target is protected tonight
    cure: int | None = None  # 净化 at complete: the target is cured (R5)
    converted_blocked_by_firewall: bool = False  # R2 -> the 空守 mark (R3)
    blood_evolves: bool = False  # R7 -> the head's evolution (R8)
    evolved: list[int] = field(default_factory=list)  # R8 (or R1 when immediate) -> 共鸣

    @classmethod
    def start(cls, ctx: Ctx) -> AnomalyResolution:
        night = ctx.night
        res = cls(ctx, n=night.day,
                  stages={int(k): v for k, v in night.data["stages"].items()})
        head_sub = res.sub("head")
        if head_sub is not None:
            res.head = head_sub.by
            res.infect = head_sub.options.get("infect")
            res.mode = head_sub.options.get("mode")
            res.blood = head_sub.options.get("bloodsight")
        res.see = res.sub("see")
        res.seer_used = res.see is not None and res.see.skill == "see"
        res.firewall = res.target("guard", "firewall")
        res.witch = res.seat_of("witch")
        res.witch_stage = res.stages.get(res.witch) if res.witch else None
        res.purify = res.target("witch", "purify")
        res.fmt = res.target("witch", "format")
        if res.purify is not None:
            if res.witch_stage in ("growth", "mature"):
                res.protect = res.purify
            elif res.witch_stage == "complete":
                res.cure = res.purify
        res.guard = res.seat_of("guard")
        return res

    @staticmethod
    def of(res: Resolution) -> AnomalyResolution:
        """A step's resolution, typed (anomaly's resolve_night always starts this class)."""
        assert isinstance(res, AnomalyResolution)
        return res

    def sub(self, key: str) -> Submission | None:
        """Slot `key`'s submission as it counts now: with resolve.locked_actions=false, not once
        its actor is out."""
        slot = self.ctx.night.slots.get(key)
        if slot is None or slot.sub is None:
            return None
        if not self.ctx.o.resolve_locked_actions and not self.ctx.state.seat(slot.sub.by).alive:
            return None
        return slot.sub

    def target(self, key: str, skill: str | None = None) -> int | None:
        """The first target in slot `key` (with skill `skill`), as it counts now."""
        sub = self.sub(key)
        if sub is None or not sub.targets or (skill is not None and sub.skill != skill):
            return None
        return sub.targets[0]


# The stage changes (R8) -------------------------------------------------------------------
def _evolve(ctx: Ctx, res: AnomalyResolution, head: int | None, *, immediate: bool) -> None:
    """Each of tonight's evolvers steps up a stage: the seer who checked (his check read now),
    the guard who set a firewall, the head (with 血睿; at end of night only if it took effect,
    or fizzled under bloodsight_invalid_target=fizzle_evolve)."""
    candidates = []
    see = res.sub("see")
    if res.seer_used and see is not None:
        candidates.append(see.by)
    if res.firewall is not None and res.guard is not None:
        candidates.append(res.guard)
    if head is not None and (immediate is False or res.blood is not None):
        candidates.append(head)
    res.evolved = [n for n in candidates if advance_stage(ctx, n)]


def _evolve_early(ctx: Ctx, res: Resolution) -> None:
    """anomaly.stage_change_timing=immediate: the stages change before anything resolves."""
    r = AnomalyResolution.of(res)
    if opts(ctx).anomaly_stage_change_timing == "immediate":
        _evolve(ctx, r, r.head, immediate=True)


def _evolve_late(ctx: Ctx, res: Resolution) -> None:
    """R8 at end_of_night, after 血睿 has said whether the head evolves."""
    r = AnomalyResolution.of(res)
    if opts(ctx).anomaly_stage_change_timing == "end_of_night":
        _evolve(ctx, r, r.head if r.blood_evolves else None, immediate=False)


# The night end (R9) and 归零 (R10) ------------------------------------------------------------
def _night_end(ctx: Ctx, res: Resolution) -> None:
    """K is tonight; with anomaly.night_end_atomic 归零 belongs to the night end's one CHECK,
    else the night end is checked first and 归零 is checked on its own."""
    r = AnomalyResolution.of(res)
    ctx.state.data["K"] = r.n
    if opts(ctx).anomaly_night_end_atomic:
        _zeroing(ctx, r, check=False)
        _night_end_check(ctx)
    else:
        _night_end_check(ctx)
        _zeroing(ctx, r, check=True)


def _night_end_check(ctx: Ctx) -> None:
    state = ctx.state
    state.data["at_night_end"] = True
    try:
        ctx.check("atomic")
    finally:
        state.data["at_night_end"] = False


def _zeroing(ctx: Ctx, res: AnomalyResolution, *, check: bool) -> None:
    state = ctx.state
    window_only_day = opts(ctx).anomaly_zeroing_window == "day_only"
    counted = [s for s in state.seats if not s.alive
               and s.out_cause not in ANOMALY_CAUSES and s.out_cause != "zeroing"
               and s.status(WINDOW) == res.n
               and (not window_only_day or s.status(WINDOW_PART) == "day")]
    if len(counted) < 2:
        return
    new_ok = opts(ctx).anomaly_zeroing_applies_new_complete
    victims = [s.seat for s in state.holders(skill="zeroing") if stage(s) == "complete"
               and (new_ok or res.stages.get(s.seat) == "complete")]
    ctx.note("Zeroing", counted=[s.seat for s in counted], victims=victims)
    ctx.checks_on = check  # AMB-A-25: with night_end_atomic the night-end check judges all
    try:
        for n in victims:
            ctx.put_out(n, "zeroing")
    finally:
        ctx.checks_on = True


# The ruleset's own steps, by their names in data.yaml night_resolution.
STEPS: dict[str, Step] = {
    "anomaly.evolve_early": _evolve_early,
    "anomaly.evolve": _evolve_late,
    "anomaly.night_end": _night_end,
}
