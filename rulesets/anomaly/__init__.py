"""The `anomaly` ruleset (RULES.md §3): wolf head, infection, growth stages, 过载, Key盾, 归零."""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, Any, Literal

from pydantic import StrictBool

from engine.commands import Act
from engine.context import Ctx
from engine.model import Deadline, DeadlineKind, Seat, Slot, Submission
from engine.options import (
    OptionError,
    OptionSpec,
    duration_minutes,
    opt,
    spec_of,
)
from engine.ruleset import Ruleset, register
from engine.votes import Tally
from rulesets.common.options import SharedOptions
from rulesets.common.witch import WitchNight
from rulesets.common.witch import deadline as witch_deadline
from rulesets.data import load

DATA = load("anomaly", "data")

ANOMALY, NORMAL = "anomaly", "normal"
STAGES = ("growth", "mature", "complete")
IDENTITY, VILLAGER = "IDENTITY", "VILLAGER"
ANOMALY_CAUSES = ("infect", "overload", "patricide")  # not counted by 归零
GODS = ("seer", "witch", "guard", "elder")

BloodsightInvalid = Literal["fizzle_no_evolve", "fizzle_evolve", "reject_and_reprompt"]
KongshouDef = Literal["guarded_not_infected", "guarded_any", "firewall_had_no_effect"]


class AnomalyOptions(SharedOptions):
    """The anomaly keys of RULES.md §5, over the common ones."""

    anomaly_apply_001_procedures: StrictBool = opt("anomaly.apply_001_procedures", True)
    anomaly_villagers: Literal[6, 7, 8] = opt("anomaly.villagers", 6)
    anomaly_head_class: Literal["IDENTITY", "VILLAGER", "none"] = opt(
        "anomaly.head_class", "IDENTITY")
    anomaly_derivative_class: Literal["original", "villager"] = opt(
        "anomaly.derivative_class", "original")
    anomaly_derivative_keeps_role_skills: StrictBool = opt(
        "anomaly.derivative_keeps_role_skills", False)
    anomaly_derivative_notified: Literal[True, "on_overload_only", "never"] = opt(
        "anomaly.derivative_notified", True)
    anomaly_derivatives_know_head: StrictBool = opt("anomaly.derivatives_know_head", False)
    anomaly_carry_condition: Literal["bloodsight_only"] = opt(
        "anomaly.carry_condition", "bloodsight_only")
    anomaly_overload_usable: Literal["next_night", "same_night"] = opt(
        "anomaly.overload_usable", "next_night")
    anomaly_overload_spent_on_no_effect: StrictBool = opt(
        "anomaly.overload_spent_on_no_effect", True)
    anomaly_bloodsight_invalid_target: BloodsightInvalid = opt(
        "anomaly.bloodsight_invalid_target", "fizzle_no_evolve")
    anomaly_bloodsight_regrant: StrictBool = opt("anomaly.bloodsight_regrant", False)
    anomaly_firewall_blocks_out: StrictBool = opt("anomaly.firewall_blocks_out", False)
    anomaly_infect_self: Literal[False] = opt("anomaly.infect_self", False)
    anomaly_infect_anomaly_members: Literal["literal", "no_effect", "reject"] = opt(
        "anomaly.infect_anomaly_members", "literal")
    anomaly_witch_tongling_stages: list[Literal["growth", "mature", "complete"]] = opt(
        "anomaly.witch_tongling_stages", ["mature"])
    anomaly_cure_targets: Literal["derivatives_only", "any"] = opt(
        "anomaly.cure_targets", "derivatives_only")
    anomaly_cure_restores_role_skills: StrictBool = opt("anomaly.cure_restores_role_skills", True)
    anomaly_purify_growth_reusable: StrictBool = opt("anomaly.purify_growth_reusable", True)
    anomaly_lost_skill_regained_on_evolve: StrictBool = opt(
        "anomaly.lost_skill_regained_on_evolve", False)
    anomaly_resonance_max_per_night: Literal[1, "unbounded"] = opt(
        "anomaly.resonance_max_per_night", 1)
    anomaly_resonance_counts_head: StrictBool = opt("anomaly.resonance_counts_head", False)
    anomaly_stage_change_timing: Literal["end_of_night", "immediate"] = opt(
        "anomaly.stage_change_timing", "end_of_night")
    anomaly_key_shield_scope: Literal["all_skills", "active_skills_only"] = opt(
        "anomaly.key_shield_scope", "all_skills")
    anomaly_key_shield_cancels_pending: StrictBool = opt(
        "anomaly.key_shield_cancels_pending", False)
    anomaly_kongshou_def: KongshouDef = opt("anomaly.kongshou_def", "guarded_not_infected")
    anomaly_seer_identity_feedback: Literal["dealt_role", "current_role", "class"] = opt(
        "anomaly.seer_identity_feedback", "dealt_role")
    anomaly_seer_snapshot: Literal["night_open", "after_resolution"] = opt(
        "anomaly.seer_snapshot", "night_open")
    anomaly_zeroing_window: Literal["previous_cycle", "day_only"] = opt(
        "anomaly.zeroing_window", "previous_cycle")
    anomaly_zeroing_applies_new_complete: StrictBool = opt(
        "anomaly.zeroing_applies_new_complete", True)
    # "close_plus_30" (deadlines.after_exile) or a duration after close.
    anomaly_hunter_deadline_day: str = opt("anomaly.hunter_deadline_day", "close_plus_30")
    # "before_next_open" or a duration after the night's resolution.
    anomaly_hunter_deadline_night: str = opt("anomaly.hunter_deadline_night", "before_next_open")
    anomaly_hunter_yellow: StrictBool = opt("anomaly.hunter_yellow", False)
    anomaly_tie_fallback: Literal["first_to_reach", "no_exile", "random"] = opt(
        "anomaly.tie_fallback", "first_to_reach")
    anomaly_day1_exile: StrictBool = opt("anomaly.day1_exile", False)
    anomaly_lose2_eval: Literal["continuous", "night_end_only"] = opt(
        "anomaly.lose2_eval", "continuous")
    anomaly_normal_lose1_includes_hunter: StrictBool = opt(
        "anomaly.normal_lose1_includes_hunter", False)
    anomaly_purify_blocks_patricide: StrictBool = opt("anomaly.purify_blocks_patricide", True)
    anomaly_night_end_atomic: StrictBool = opt("anomaly.night_end_atomic", False)

    def check(self, camps: tuple[str, ...]) -> None:
        super().check(camps)
        for key, value, fixed in (
                ("anomaly.hunter_deadline_day", self.anomaly_hunter_deadline_day,
                 "close_plus_30"),
                ("anomaly.hunter_deadline_night", self.anomaly_hunter_deadline_night,
                 "before_next_open")):
            if value != fixed:
                try:
                    duration_minutes(value)
                except ValueError:
                    raise OptionError(f"bad value {value!r} for option {key!r}: "
                                      f"{fixed} or a duration like 45min") from None


ANOMALY_OPTIONS: OptionSpec = spec_of(AnomalyOptions)


if TYPE_CHECKING:
    def _o(ctx: Ctx) -> AnomalyOptions:
        """The game's options, typed (ctx.o is this ruleset's AnomalyOptions)."""
else:
    _o = attrgetter("o")  # the same, without a Python call per lookup

# Skills lost to Key盾 under key_shield_scope=active_skills_only keep these.
PASSIVE_SKILLS = ("evolve", "resonance", "zeroing")


def _stage(st: Seat) -> str | None:
    return st.statuses.get("stage")


def _is_derivative(st: Seat) -> bool:
    return bool(st.statuses.get("derivative"))


class Anomaly(WitchNight, Ruleset):
    name = "anomaly"
    roles = tuple(DATA["roles"])
    camps = tuple(DATA["camps"])
    options_model = AnomalyOptions
    reported_slot = "head"
    # The hunter's shot (P-DL-6): reminded, owed when out, extendable; it fires before a
    # same-time sheriff handover (A-HUNTER-3).
    deadline_kinds = {"hunter": DeadlineKind(3, reminded=True, outlives_out=True, extendable=True)}

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
        head_class = _o(ctx).anomaly_head_class
        for st in state.seats:
            st.camp = ANOMALY if st.role == "wolf-head" else NORMAL
            st.skills = {k: "held" for k in DATA["skills"][st.role]}
            if st.role == "wolf-head":
                st.statuses["class"] = None if head_class == "none" else head_class
            else:
                st.statuses["class"] = IDENTITY if st.role in DATA["identity_roles"] else VILLAGER
            if st.role in DATA["staged"]:
                st.statuses["stage"] = "growth"
                ctx.tell(st.seat, "StageNotice", stage="growth")
        state.data.update({"K": None, "able_at_open": {}, "night_outs": {}})
        state.camps_on_field = [c for c in (ANOMALY, NORMAL) if state.members(c)]

    # day ---------------------------------------------------------------------
    def exiles_on(self, ctx: Ctx, day: int) -> bool:
        return day >= 2 or _o(ctx).anomaly_day1_exile

    def pick_exile(self, ctx: Ctx, tally: Tally) -> int | None:
        """A-SHERIFF-2: on a tie the sheriff's candidate goes out; else the fallback."""
        if len(tally.tied) <= 1:
            return ctx.first_to_reach(tally)
        sheriff = ctx.state.sheriff
        pick = tally.effective.get(sheriff) if sheriff else None
        if pick in tally.tied:
            return pick
        fallback = _o(ctx).anomaly_tie_fallback
        if fallback == "no_exile":
            return None
        if fallback == "random":
            return ctx.rand_choice(list(tally.tied), "exile_tie")
        return ctx.first_to_reach(tally)

    def may_surrender(self, ctx: Ctx) -> bool:
        return _o(ctx).surrender_enabled_anomaly

    # going out ---------------------------------------------------------------
    def on_out(self, ctx: Ctx, seats: list[int]) -> None:
        state = ctx.state
        for n in seats:
            st = state.seat(n)
            phase = st.out_phase or ""
            # 归零 windows: D_N belongs to night N's window, what happens from C_N on to N+1.
            day = int(phase[1:]) if phase[1:].isdigit() else 0
            st.statuses["window"] = day if phase.startswith("D") else day + 1
            st.statuses["window_part"] = "day" if phase.startswith("D") else "night"
            if (st.role == "elder" and st.holds("keyshield") and not _is_derivative(st)
                    and st.out_cause in ("vote", "format")):
                _key_shield(ctx, st)

    def after_out(self, ctx: Ctx, seats: list[int]) -> None:
        for n in seats:
            st = ctx.state.seat(n)
            if st.role == "hunter" and st.holds("shredder") and st.out_cause != "red-card":
                _hunter_due(ctx, st)

    def may_handover(self, ctx: Ctx, seat: int) -> bool:
        return not ctx.state.seat(seat).statuses.get("shot_due")

    def deadline(self, ctx: Ctx, deadline: Deadline) -> None:
        if deadline.kind == "hunter":
            for n in deadline.seats:
                st = ctx.state.seat(n)
                if st.statuses.pop("shot_due", None):
                    st.skills["shredder"] = "lost"
                    ctx.tell_duty(n, "ShotForfeited")
                    ctx.missed(n, "hunter", _o(ctx).anomaly_hunter_yellow)
                    ctx.release_handover(n)

    def procedures_apply(self, ctx: Ctx) -> bool:
        return _o(ctx).anomaly_apply_001_procedures

    # actions -----------------------------------------------------------------
    def act(self, ctx: Ctx, cmd: Act) -> None:
        st = ctx.seat(cmd.seat)
        if cmd.skill == "shoot" or (cmd.skill == "pass" and st.statuses.get("shot_due")):
            return _act_shoot(ctx, st, cmd)
        if not st.alive:
            ctx.reject("you_are_out")
        ctx.require_night()
        if cmd.skill == "pass":
            return _act_pass(ctx, st, cmd)
        handler = _HANDLERS.get(cmd.skill)
        if handler is None:
            ctx.reject("unknown_skill", skill=cmd.skill)
        slot = ctx.slot_for(cmd, _slot_key(cmd.skill, cmd.seat))
        target = cmd.targets[0] if cmd.targets else None
        handler(ctx, st, slot, cmd, target)

    # night ---------------------------------------------------------------------
    def open_night(self, ctx: Ctx) -> None:
        state = ctx.state
        night = state.night
        assert night is not None
        n = night.day
        # String keys: the state must survive a JSON round trip unchanged.
        night.data["stages"] = {str(s.seat): _stage(s) for s in state.seats if _stage(s)}
        night.data["snapshot"] = {str(s.seat): {"camp": s.camp, "role": s.role,
                                           "derivative": _is_derivative(s),
                                           "class": s.statuses.get("class")}
                                  for s in state.seats}
        able = []
        head = next((s for s in state.living() if s.role == "wolf-head" and s.camp == ANOMALY
                     and s.holds("infect")), None)
        if head is not None:
            able.append(head.seat)
            ctx.add_slot("head", [head.seat], *ctx.night_deadline(),
                         yellow=self.procedures_apply(ctx))
            ctx.tell(head.seat, "NightPrompt", skill="head",
                     complete=_stage(head) == "complete")
        for st in state.living():
            if st.camp == ANOMALY and _overload_usable(ctx, st, n):
                able.append(st.seat)
                ctx.add_slot(f"overload:{st.seat}", [st.seat], *ctx.night_deadline(),
                             yellow=False)
                ctx.tell(st.seat, "NightPrompt", skill="overload")
        state.data["able_at_open"][str(n)] = able
        witch = next((s for s in state.living() if s.role == "witch" and s.camp == NORMAL), None)
        acts = witch is not None and (_can_purify(ctx, witch) or _can_format(witch))
        night.data["tongling"] = witch.seat if witch is not None and acts and witch.holds(
            "tongling") and _stage(witch) in _o(ctx).anomaly_witch_tongling_stages else None
        for role, skill, key, (anchor, offset), yellow in (
                ("seer", "see", "see", ctx.night_deadline(), True),
                ("guard", "firewall", "guard", ctx.night_deadline(), False),
                ("witch", None, "witch", witch_deadline(ctx), True)):
            actor = next((s for s in state.living() if s.role == role and s.camp == NORMAL), None)
            if actor is None:
                continue
            usable = (_can_purify(ctx, actor) or _can_format(actor)) if role == "witch" \
                else skill is not None and actor.holds(skill)
            if usable:
                ctx.add_slot(key, [actor.seat], anchor, offset,
                             yellow=yellow and self.procedures_apply(ctx))
                ctx.tell(actor.seat, "NightPrompt", skill=key)
        if head is None:
            self.deliver_tongling(ctx)

    def slot_expired(self, ctx: Ctx, slot: Slot) -> None:
        if slot.key == "head":
            slot.final = True
            self.deliver_tongling(ctx)
        if slot.sub is None:
            for n in slot.seats:
                ctx.missed(n, slot.key.split(":")[0], slot.yellow)

    def resolve_night(self, ctx: Ctx) -> None:
        _Pipeline(ctx).run()

    # end of game (§3.6) ---------------------------------------------------------
    def camp_lost(self, ctx: Ctx, camp: str) -> bool:
        state = ctx.state
        if camp == ANOMALY:
            living = state.members(ANOMALY)
            if not living:
                return True  # A-LOSE-A1
            if _o(ctx).anomaly_lose2_eval == "night_end_only" and not state.data.get(
                    "at_night_end"):
                return False
            return not _anomaly_able(ctx)  # A-LOSE-A2
        gods = GODS + (("hunter",) if _o(ctx).anomaly_normal_lose1_includes_hunter else ())
        gone = [s for s in state.peek_seats() if s.role in gods]  # read only
        n1 = bool(gone) and all(not s.alive or s.camp == ANOMALY for s in gone)
        villagers = [s for s in state.peek_seats() if s.role == "villager"]
        n2 = all(not s.alive or s.camp == ANOMALY for s in villagers)
        return n1 or n2

    def camp_wins(self, ctx: Ctx, camp: str) -> bool:
        if camp != ANOMALY:
            return False
        members = len(ctx.state.peek_members(ANOMALY))  # read only
        return members > 0 and 2 * members >= len(ctx.state.living_numbers())  # A-WIN-1

    def on_camp_lost(self, ctx: Ctx, camp: str) -> None:
        ctx.tell([s.seat for s in ctx.state.members(camp)], "CampLostNotice", camp=camp)


RULESET = register(Anomaly())


# ---------------------------------------------------------------------------
# helpers


def _overload_usable(ctx: Ctx, st: Seat, night: int) -> bool:
    granted = st.statuses.get("overload_night")
    if not st.holds("overload") or granted is None:
        return False
    return _o(ctx).anomaly_overload_usable == "same_night" or granted < night


def _can_purify(ctx: Ctx, witch: Seat) -> bool:
    return witch.holds("purify")


def _can_format(witch: Seat) -> bool:
    return witch.holds("format") and _stage(witch) == "complete"


def _anomaly_able(ctx: Ctx) -> bool:
    """A-LOSE-A2 (continuous): is some living anomaly member able (clause i or ii)?"""
    state = ctx.state
    k = state.data.get("K")
    if k is None:
        return True  # no night has ended yet
    able_k = set(state.data["able_at_open"].get(str(k), []))
    for st in state.members(ANOMALY):
        if st.seat in able_k:
            return True  # (i) able at the opening of night K
        if st.role == "wolf-head" and st.holds("infect"):
            return True  # (ii) 感染 is usable every night
        if st.holds("overload"):
            return True  # (ii) an unused 过载 for a coming night
    return False


def _class_of(ctx: Ctx, st: Seat) -> str | None:
    if _is_derivative(st) and _o(ctx).anomaly_derivative_class == "villager":
        return VILLAGER
    return st.statuses.get("class")


def _key_shield(ctx: Ctx, elder: Seat) -> None:
    """A-ELDER-1: the witch, seer, hunter and guard lose their skills."""
    elder.skills["keyshield"] = "used"
    scope = _o(ctx).anomaly_key_shield_scope
    hit = []
    for st in ctx.state.seats:
        if st.role in ("witch", "seer", "hunter", "guard") and not _is_derivative(st):
            for skill, status in st.skills.items():
                if status == "held" and (scope == "all_skills" or skill not in PASSIVE_SKILLS):
                    st.skills[skill] = "lost"
            if _o(ctx).anomaly_key_shield_cancels_pending and st.statuses.pop("shot_due",
                                                                                 None):
                ctx.remove_deadline(f"hunter:{st.seat}")
            hit.append(st.seat)
    ctx.tell(hit, "KeyShield")
    ctx.note("KeyShieldFired", seats=hit)


def _hunter_due(ctx: Ctx, st: Seat) -> None:
    state = ctx.state
    day = max(state.day, 1)
    st.statuses["shot_due"] = True
    if state.phase.startswith("D"):
        rule = _o(ctx).anomaly_hunter_deadline_day
        offset = ctx.o.deadlines_after_exile if rule == "close_plus_30" else \
            duration_minutes(rule)
        ctx.add_deadline("hunter", day, "close", offset, [st.seat], key=str(st.seat))
    elif _o(ctx).anomaly_hunter_deadline_night == "before_next_open":
        ctx.add_deadline("hunter", day + 1, "open", 0, [st.seat], key=str(st.seat))
    else:
        ctx.add_deadline("hunter", day + 1, "at",
                         duration_minutes(_o(ctx).anomaly_hunter_deadline_night),
                         [st.seat], key=str(st.seat), at=ctx.now)
    ctx.tell_duty(st.seat, "HunterDue")


def _act_shoot(ctx: Ctx, st: Seat, cmd: Act) -> None:
    if not st.statuses.get("shot_due"):
        ctx.reject("no_shot_due")
    st.statuses.pop("shot_due")
    ctx.remove_deadline(f"hunter:{st.seat}")
    st.skills["shredder"] = "used"
    if cmd.skill == "pass":
        ctx.tell_duty(st.seat, "ShotForfeited")
        ctx.release_handover(st.seat)
        return
    target = cmd.targets[0] if cmd.targets else None
    if target == st.seat:
        ctx.reject("no_self_target")
    target = ctx.living_target(target)
    assert target is not None
    ctx.note("ShotFired", seat=st.seat, target=target)  # causes stay unpublished (G-RES-5)
    victim = ctx.state.seat(target)
    if victim.role == "elder" and not _is_derivative(victim):
        ctx.note("ShotNoEffect", target=target)  # A-ELDER-2
    else:
        ctx.put_out(target, "shredder")
        # The shot belongs to the hunter's own window (a day exile's shot counts for that day).
        victim.statuses["window"] = st.statuses.get("window")
        victim.statuses["window_part"] = st.statuses.get("window_part")
    ctx.release_handover(st.seat)


def _slot_key(skill: str, seat: int) -> str:
    return {"infect": "head", "bloodsight": "head", "lock": "head", "overload": f"overload:{seat}",
            "see": "see", "firewall": "guard", "purify": "witch", "format": "witch"}[skill]


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
    if (_o(ctx).anomaly_infect_anomaly_members == "reject"
            and ctx.state.seat(target).camp == ANOMALY):
        ctx.reject("infect_anomaly_member")
    _merge(ctx, slot, cmd, infect=target, mode=mode)
    ctx.tell(st.seat, "HeadRecorded", kind="infect", target=target, mode=mode)


def _act_bloodsight(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    target = ctx.living_target(target)
    assert target is not None
    if _o(ctx).anomaly_bloodsight_invalid_target == "reject_and_reprompt" and not \
            _bloodsight_valid(ctx, target):
        ctx.reject("bloodsight_invalid")
    _merge(ctx, slot, cmd, bloodsight=target)
    ctx.tell(st.seat, "HeadRecorded", kind="bloodsight", target=target, mode=None)


def _bloodsight_valid(ctx: Ctx, target: int) -> bool:
    st = ctx.state.seat(target)
    ever = st.statuses.get("overload_night") is not None
    return (st.alive and _is_derivative(st) and st.camp == ANOMALY
            and (not ever or (_o(ctx).anomaly_bloodsight_regrant and not st.holds("overload"))))


def _act_lock(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    if slot.sub is None:
        ctx.reject("nothing_to_lock")
    if slot.final:
        ctx.reject("action_final")
    slot.final = True
    ctx.tell(st.seat, "HeadLocked")
    RULESET.deliver_tongling(ctx)


def _act_overload(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    target = ctx.living_target(target)
    if target == st.seat:
        ctx.reject("no_self_target")
    ctx.submit(slot, cmd, [target])
    ctx.tell(st.seat, "ActionRecorded", skill="overload", target=target)


def _act_see(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    if slot.sub is not None:
        ctx.reject("action_final")
    target = ctx.living_target(target)
    assert target is not None
    if target == st.seat:
        ctx.reject("no_self_check")
    ctx.submit(slot, cmd, [target])
    slot.final = True
    if _o(ctx).anomaly_seer_snapshot == "night_open":
        ctx.tell(st.seat, "SeerResult", target=target, label=_seer_label(ctx, st, target))


def _seer_label(ctx: Ctx, seer: Seat, target: int) -> str:
    night = ctx.state.night
    assert night is not None
    stage = night.data["stages"].get(str(seer.seat), "growth")
    if _o(ctx).anomaly_seer_snapshot == "night_open":
        snap = night.data["snapshot"][str(target)]
    else:
        tst = ctx.state.seat(target)
        snap = {"camp": tst.camp, "role": tst.role, "derivative": _is_derivative(tst),
                "class": tst.statuses.get("class")}
    labels = DATA["seer_labels"]
    attribute = labels["attribute"]["abnormal" if snap["camp"] == ANOMALY else "normal"]
    mode = _o(ctx).anomaly_seer_identity_feedback
    if mode == "class":
        identity = labels["class"].get(snap["class"], labels["class"][IDENTITY])
    elif mode == "current_role" and snap["derivative"]:
        identity = labels["derivative"]
    else:
        identity = DATA["role_names"][snap["role"]]
    if stage == "growth":
        return attribute
    if stage == "mature":
        return identity
    return labels["both"].format(attribute=attribute, identity=identity)


def _act_firewall(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    target = ctx.living_target(target, allow_none=True)
    ctx.submit(slot, cmd, [target] if target is not None else [])
    ctx.tell(st.seat, "ActionRecorded", skill="firewall", target=target)


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


def _act_pass(ctx: Ctx, st: Seat, cmd: Act) -> None:
    for slot in ctx.open_slots(st.seat):
        ctx.submit(slot, cmd, [])
        ctx.tell(st.seat, "ActionRecorded", skill="pass", target=None)


_HANDLERS = {"infect": _act_infect, "bloodsight": _act_bloodsight, "lock": _act_lock,
             "overload": _act_overload, "see": _act_see, "firewall": _act_firewall,
             "purify": _act_purify, "format": _act_format}


# ---------------------------------------------------------------------------
# the night pipeline R1–R11 (RULES.md §3.4)


class _Pipeline:
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
        if _o(ctx).anomaly_stage_change_timing == "immediate":
            evolved = self.evolve(head, blood, seer_used, firewall, guard, immediate=True)
        self.spend_witch(witch, witch_stage, purify, fmt)
        # R2 infection
        converted_blocked_by_firewall = False
        if infect is not None and head is not None:
            converted_blocked_by_firewall = self.infect(head, infect, mode, firewall, protect)
        # R3 complete firewall, then tonight's 空守 mark
        if firewall is not None and guard is not None:
            ft = self.state.seat(firewall)
            marks = ft.statuses.get("kongshou", [])
            if (self.stages.get(guard) == "complete" and any(m < self.n for m in marks)
                    and ft.alive and ft.role != "elder"):
                ctx.put_out(firewall, "firewall")
            rule = _o(ctx).anomaly_kongshou_def
            if (rule == "guarded_any" or (rule == "guarded_not_infected" and firewall != infect)
                    or (rule == "firewall_had_no_effect" and not converted_blocked_by_firewall)):
                ft.statuses["kongshou"] = [*marks, self.n]
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
            if _bloodsight_valid(ctx, blood):
                self.grant(blood)
                blood_evolves = True
            elif _o(ctx).anomaly_bloodsight_invalid_target == "fizzle_evolve":
                blood_evolves = True
        # R8 evolutions
        if _o(ctx).anomaly_stage_change_timing == "end_of_night":
            evolved = self.evolve(head if blood_evolves else None, blood, seer_used, firewall,
                                  guard, immediate=False)
        self.resonate(witch, evolved)
        # deferred seer result (anomaly.seer_snapshot=after_resolution)
        if see is not None and seer_used and _o(ctx).anomaly_seer_snapshot == "after_resolution":
            # The check taken at the start of the resolution: a seer who went out during it
            # still gets the result, in the log only (G-RES-4).
            seer = self.state.seat(see.by)
            checked = see.targets[0]
            assert checked is not None  # a check names a living target (_act_see)
            ctx.tell(seer.seat, "SeerResult", target=checked,
                     label=_seer_label(ctx, seer, checked))
        # R9 night end, R10 归零
        self.state.data["K"] = self.n
        if _o(ctx).anomaly_night_end_atomic:
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
            if stage == "mature" or stage == "complete" or not _o(
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
        if not ts.alive or (ts.role == "elder" and not _is_derivative(ts)):
            return False  # A-ELDER-2
        if ts.camp == ANOMALY and _o(ctx).anomaly_infect_anomaly_members == "no_effect":
            return False
        stage = self.stages.get(head, "growth")
        effect = {"growth": 1, "mature": 2}.get(stage, mode or 1)
        identity = _class_of(ctx, ts) == IDENTITY
        convert = identity if effect == 1 else not identity
        if convert:
            if _is_derivative(ts):
                return False  # AMB-A-08 literal: converting a derivative changes nothing
            if target == firewall:
                return True
            if target == protect:
                return False
            self.convert(ts)
        else:
            if target == protect or (target == firewall
                                     and _o(ctx).anomaly_firewall_blocks_out):
                return target == firewall
            ctx.put_out(target, "infect")
        return False

    def convert(self, st: Seat) -> None:
        ctx = self.ctx
        st.statuses["derivative"] = True
        st.statuses["saved_skills"] = dict(st.skills)
        st.statuses["saved_camp"] = st.camp
        st.camp = ANOMALY
        if not _o(ctx).anomaly_derivative_keeps_role_skills:
            st.skills = {k: "lost" for k in st.skills}
        if _o(ctx).anomaly_derivative_notified is True:
            ctx.tell(st.seat, "BecameDerivative")
        ctx.note("Converted", seat=st.seat)
        ctx.check("atomic")

    def overload(self, user: int, target: int, protect: int | None) -> None:
        ctx = self.ctx
        us = self.state.seat(user)
        ts = self.state.seat(target)
        effect = False
        if ts.alive and not (target == protect and (
                ts.role != "wolf-head" or _o(ctx).anomaly_purify_blocks_patricide)):
            if ts.role == "wolf-head" and ts.camp == ANOMALY:
                ctx.put_out(target, "patricide")  # A-HEAD-2
                effect = True
            elif _class_of(ctx, ts) != _class_of(ctx, us):
                ctx.put_out(target, "overload")
                effect = True
        ctx.check("atomic")
        if effect or _o(ctx).anomaly_overload_spent_on_no_effect:
            us.skills["overload"] = "used"
            ctx.check("atomic")  # the spending is its own skill-loss event (AMB-A-22)

    def cure(self, target: int) -> None:
        ctx = self.ctx
        ts = self.state.seat(target)
        allowed = _is_derivative(ts) or (_o(ctx).anomaly_cure_targets == "any"
                                         and ts.role == "wolf-head")
        if not ts.alive or not allowed or ts.camp != ANOMALY:
            return
        ts.camp = NORMAL
        ts.statuses["derivative"] = False
        saved = ts.statuses.pop("saved_skills", {})
        if ts.role == "wolf-head":
            ts.skills = {k: "lost" for k in ts.skills}
        elif _o(ctx).anomaly_cure_restores_role_skills:
            ts.skills = dict(saved)
        ts.skills.pop("overload", None)
        ctx.tell(target, "Cured")
        ctx.note("Cured", seat=target)
        ctx.check("atomic")

    def grant(self, target: int) -> None:
        ts = self.state.seat(target)
        ts.skills["overload"] = "held"
        ts.statuses["overload_night"] = self.n
        if _o(self.ctx).anomaly_derivative_notified in (True, "on_overload_only"):
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
        stage = _stage(st)
        if stage is None or stage == "complete":
            return False
        new = STAGES[STAGES.index(stage) + 1]
        st.statuses["stage"] = new
        if _o(self.ctx).anomaly_lost_skill_regained_on_evolve:
            for skill, status in st.skills.items():
                if status == "lost" and skill in DATA["skills"][st.role] and not _is_derivative(
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
            ("wolf-head",) if _o(ctx).anomaly_resonance_counts_head else ())
        triggers = [n for n in evolved if self.state.seat(n).role in roles]
        steps = len(triggers) if _o(ctx).anomaly_resonance_max_per_night == "unbounded" \
            else min(1, len(triggers))
        for _ in range(steps):
            self.step(ws.seat)

    def zeroing(self, *, check: bool) -> None:
        ctx = self.ctx
        window_only_day = _o(ctx).anomaly_zeroing_window == "day_only"
        counted = [s for s in self.state.seats if not s.alive
                   and s.out_cause not in ANOMALY_CAUSES and s.out_cause != "zeroing"
                   and s.statuses.get("window") == self.n
                   and (not window_only_day or s.statuses.get("window_part") == "day")]
        if len(counted) < 2:
            return
        new_ok = _o(ctx).anomaly_zeroing_applies_new_complete
        victims = [s.seat for s in self.state.living() if s.holds("zeroing")
                   and _stage(s) == "complete"
                   and (new_ok or self.stages.get(s.seat) == "complete")]
        ctx.note("Zeroing", counted=[s.seat for s in counted], victims=victims)
        ctx.checks_on = check  # AMB-A-25: with night_end_atomic the night-end check judges all
        try:
            for n in victims:
                ctx.put_out(n, "zeroing")
        finally:
            ctx.checks_on = True
