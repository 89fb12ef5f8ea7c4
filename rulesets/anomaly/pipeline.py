"""Anomaly's night resolution, the pipeline R1–R11 of RULES.md §3.4: its steps share what the
night chose (the head's infection and 血睿, the purify that protects, the evolutions that
resonate), so it stays one sequence rather than role steps."""

from __future__ import annotations

from engine.context import Ctx
from engine.model import Seat, Submission
from rulesets.anomaly.base import (
    ANOMALY,
    ANOMALY_CAUSES,
    DATA,
    IDENTITY,
    NORMAL,
    STAGES,
    bloodsight_valid,
    class_of,
    is_derivative,
    seer_label,
    stage,
)
from rulesets.anomaly.options import opts
from rulesets.anomaly.statuses import (
    DERIVATIVE,
    KONGSHOU,
    OVERLOAD_NIGHT,
    SAVED_CAMP,
    SAVED_SKILLS,
    STAGE,
    WINDOW,
    WINDOW_PART,
)


class Pipeline:
    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx
        self.state = ctx.state
        self.night = ctx.night
        self.n = self.night.day
        self.stages: dict[int, str] = {int(k): v for k, v in self.night.data["stages"].items()}

    def sub(self, key: str) -> Submission | None:
        slot = self.night.slots.get(key)
        if slot is None or slot.sub is None:
            return None
        if not self.ctx.o.resolve_locked_actions:
            actor = self.state.seat(slot.sub.by)
            if not actor.alive or actor.camp != self.state.seat(slot.sub.by).camp:
                return None
        return slot.sub

    def target(self, key: str, skill: str) -> int | None:
        sub = self.sub(key)
        if sub is None or sub.skill != skill or not sub.targets:
            return None
        return sub.targets[0]

    def run(self) -> None:
        ctx = self.ctx
        head_sub = self.sub("head")
        head = head_sub.by if head_sub else None
        infect = head_sub.options.get("infect") if head_sub else None
        mode = head_sub.options.get("mode") if head_sub else None
        blood = head_sub.options.get("bloodsight") if head_sub else None
        see = self.sub("see")
        seer_used = see is not None and see.skill == "see"
        firewall = self.target("guard", "firewall")
        witch_slot = self.night.slots.get("witch")
        witch = witch_slot.seats[0] if witch_slot else None
        witch_stage = self.stages.get(witch) if witch else None
        purify = self.target("witch", "purify")
        fmt = self.target("witch", "format")
        protect = purify if purify is not None and witch_stage in ("growth", "mature") else None
        cure = purify if purify is not None and witch_stage == "complete" else None
        guard_slot = self.night.slots.get("guard")
        guard = guard_slot.seats[0] if guard_slot else None
        evolved: list[int] = []
        if opts(ctx).anomaly_stage_change_timing == "immediate":
            evolved = self.evolve(head, blood, seer_used, firewall, guard, immediate=True)
        self.spend_witch(witch, witch_stage, purify, fmt)
        # R2 infection
        converted_blocked_by_firewall = False
        if infect is not None and head is not None:
            converted_blocked_by_firewall = self.infect(head, infect, mode, firewall, protect)
        # R3 complete firewall, then tonight's 空守 mark
        if firewall is not None and guard is not None:
            ft = self.state.seat(firewall)
            marks = ft.status(KONGSHOU) or ()
            if (self.stages.get(guard) == "complete" and any(m < self.n for m in marks)
                    and ft.alive and ft.role != "elder"):
                ctx.put_out(firewall, "firewall")
            rule = opts(ctx).anomaly_kongshou_def
            if (rule == "guarded_any" or (rule == "guarded_not_infected" and firewall != infect)
                    or (rule == "firewall_had_no_effect" and not converted_blocked_by_firewall)):
                ft.set_status(KONGSHOU, (*marks, self.n))
        # R4 overloads, in submission order
        uses = sorted((use for k in self.night.slots if k.startswith("overload:")
                       if (use := self.sub(k)) is not None and use.targets),
                      key=lambda use: (use.at, use.by))
        for use in uses:
            target = use.targets[0]
            assert target is not None  # an overload names a living target (_act_overload)
            self.overload(use.by, target, protect)
        # R5 cure
        if cure is not None:
            self.cure(cure)
        # R6 格式化
        if fmt is not None and self.state.seat(fmt).alive:
            ctx.put_out(fmt, "format")
        # R7 血睿
        blood_evolves = False
        if blood is not None and head is not None:
            if bloodsight_valid(ctx, blood):
                self.grant(blood)
                blood_evolves = True
            elif opts(ctx).anomaly_bloodsight_invalid_target == "fizzle_evolve":
                blood_evolves = True
        # R8 evolutions
        if opts(ctx).anomaly_stage_change_timing == "end_of_night":
            evolved = self.evolve(head if blood_evolves else None, blood, seer_used, firewall,
                                  guard, immediate=False)
        self.resonate(witch, evolved)
        # deferred seer result (anomaly.seer_snapshot=after_resolution)
        if see is not None and seer_used and opts(ctx).anomaly_seer_snapshot == "after_resolution":
            # The check taken at the start of the resolution: a seer who went out during it
            # still gets the result, in the log only (G-RES-4).
            seer = self.state.seat(see.by)
            checked = see.targets[0]
            assert checked is not None  # a check names a living target (_act_see)
            ctx.tell(seer.seat, "SeerResult", target=checked,
                     label=seer_label(ctx, seer, checked))
        # R9 night end, R10 归零
        self.state.data["K"] = self.n
        if opts(ctx).anomaly_night_end_atomic:
            self.zeroing(check=False)
            self.night_end_check()
        else:
            self.night_end_check()
            self.zeroing(check=True)

    def night_end_check(self) -> None:
        self.state.data["at_night_end"] = True
        try:
            self.ctx.check("atomic")
        finally:
            self.state.data["at_night_end"] = False

    # steps ---------------------------------------------------------------------
    def spend_witch(self, witch: int | None, stage: str | None, purify: int | None,
                    fmt: int | None) -> None:
        if witch is None:
            return
        ws = self.state.seat(witch)
        if purify is not None:
            if stage == "mature" or stage == "complete" or not opts(
                    self.ctx).anomaly_purify_growth_reusable:
                ws.skills["purify"] = "lost" if stage == "mature" else "used"
            if stage == "mature" and ws.skills.get("tongling") == "held":
                ws.skills["tongling"] = "lost"  # A-WITCH-3
        if fmt is not None:
            ws.skills["format"] = "used"

    def infect(self, head: int, target: int, mode: int | None, firewall: int | None,
               protect: int | None) -> bool:
        ctx = self.ctx
        ts = self.state.seat(target)
        if not ts.alive or (ts.role == "elder" and not is_derivative(ts)):
            return False  # A-ELDER-2
        if ts.camp == ANOMALY and opts(ctx).anomaly_infect_anomaly_members == "no_effect":
            return False
        stage = self.stages.get(head, "growth")
        effect = {"growth": 1, "mature": 2}.get(stage, mode or 1)
        identity = class_of(ctx, ts) == IDENTITY
        convert = identity if effect == 1 else not identity
        if convert:
            if is_derivative(ts):
                return False  # AMB-A-08 literal: converting a derivative changes nothing
            if target == firewall:
                return True
            if target == protect:
                return False
            self.convert(ts)
        else:
            if target == protect or (target == firewall
                                     and opts(ctx).anomaly_firewall_blocks_out):
                return target == firewall
            ctx.put_out(target, "infect")
        return False

    def convert(self, st: Seat) -> None:
        ctx = self.ctx
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

    def overload(self, user: int, target: int, protect: int | None) -> None:
        ctx = self.ctx
        us = self.state.seat(user)
        ts = self.state.seat(target)
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

    def cure(self, target: int) -> None:
        ctx = self.ctx
        ts = self.state.seat(target)
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

    def grant(self, target: int) -> None:
        ts = self.state.seat(target)
        ts.skills["overload"] = "held"
        ts.set_status(OVERLOAD_NIGHT, self.n)
        if opts(self.ctx).anomaly_derivative_notified in (True, "on_overload_only"):
            self.ctx.tell(target, "OverloadGranted")

    def evolve(self, head: int | None, blood: int | None, seer_used: bool,
               firewall: int | None, guard: int | None, *, immediate: bool) -> list[int]:
        evolved = []
        candidates = []
        sub = self.sub("see")
        if seer_used and sub is not None:
            candidates.append(sub.by)
        if firewall is not None and guard is not None:
            candidates.append(guard)
        if head is not None and (immediate is False or blood is not None):
            candidates.append(head)
        for n in candidates:
            if self.step(n):
                evolved.append(n)
        return evolved

    def step(self, n: int) -> bool:
        st = self.state.seat(n)
        if not st.holds("evolve") and st.role != "witch":
            return False
        current = stage(st)
        if current is None or current == "complete":
            return False
        new = STAGES[STAGES.index(current) + 1]
        st.set_status(STAGE, new)
        if opts(self.ctx).anomaly_lost_skill_regained_on_evolve:
            for skill, status in st.skills.items():
                if status == "lost" and skill in DATA["skills"][st.role] and not is_derivative(
                        st):
                    st.skills[skill] = "held"
        self.ctx.tell(n, "StageNotice", stage=new)
        return True

    def resonate(self, witch: int | None, evolved: list[int]) -> None:
        ctx = self.ctx
        ws = next((s for s in self.state.living() if s.role == "witch" and s.camp == NORMAL),
                  None)
        if ws is None or not ws.holds("resonance"):
            return
        roles = ("seer", "guard") + (
            ("wolf-head",) if opts(ctx).anomaly_resonance_counts_head else ())
        triggers = [n for n in evolved if self.state.seat(n).role in roles]
        steps = len(triggers) if opts(ctx).anomaly_resonance_max_per_night == "unbounded" \
            else min(1, len(triggers))
        for _ in range(steps):
            self.step(ws.seat)

    def zeroing(self, *, check: bool) -> None:
        ctx = self.ctx
        window_only_day = opts(ctx).anomaly_zeroing_window == "day_only"
        counted = [s for s in self.state.seats if not s.alive
                   and s.out_cause not in ANOMALY_CAUSES and s.out_cause != "zeroing"
                   and s.status(WINDOW) == self.n
                   and (not window_only_day or s.status(WINDOW_PART) == "day")]
        if len(counted) < 2:
            return
        new_ok = opts(ctx).anomaly_zeroing_applies_new_complete
        victims = [s.seat for s in self.state.living() if s.holds("zeroing")
                   and stage(s) == "complete"
                   and (new_ok or self.stages.get(s.seat) == "complete")]
        ctx.note("Zeroing", counted=[s.seat for s in counted], victims=victims)
        ctx.checks_on = check  # AMB-A-25: with night_end_atomic the night-end check judges all
        try:
            for n in victims:
                ctx.put_out(n, "zeroing")
        finally:
            ctx.checks_on = True
