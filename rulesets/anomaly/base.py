"""What anomaly's glue, its role modules and its night resolution share: the data, camps,
stages, classes, the checks several of them make, and a stage's step up."""

from __future__ import annotations

from engine.context import Ctx
from engine.model import Seat
from rulesets.anomaly.options import opts
from rulesets.anomaly.statuses import CLASS, DERIVATIVE, OVERLOAD_NIGHT, STAGE
from rulesets.data import load

DATA = load("anomaly", "data")

ANOMALY, NORMAL = "anomaly", "normal"
STAGES = ("growth", "mature", "complete")
IDENTITY, VILLAGER = "IDENTITY", "VILLAGER"
ANOMALY_CAUSES = ("infect", "overload", "patricide")  # not counted by 归零
GODS = ("seer", "witch", "guard", "elder")

# Skills lost to Key盾 under key_shield_scope=active_skills_only keep these.
PASSIVE_SKILLS = ("evolve", "resonance", "zeroing")


def stage(st: Seat) -> str | None:
    return st.status(STAGE)


def is_derivative(st: Seat) -> bool:
    return bool(st.status(DERIVATIVE))


def advance_stage(ctx: Ctx, n: int) -> bool:
    """Seat `n` evolves one stage if it can (进化, or the witch's 共鸣); did it?"""
    st = ctx.state.seat(n)
    if not st.holds("evolve") and st.role != "witch":
        return False
    current = stage(st)
    if current is None or current == "complete":
        return False
    new = STAGES[STAGES.index(current) + 1]
    st.set_status(STAGE, new)
    if opts(ctx).anomaly_lost_skill_regained_on_evolve:
        for skill, status in st.skills.items():
            if status == "lost" and skill in DATA["skills"][st.role] and not is_derivative(st):
                st.skills[skill] = "held"
    ctx.tell(n, "StageNotice", stage=new)
    return True


def overload_usable(ctx: Ctx, st: Seat, night: int) -> bool:
    granted = st.status(OVERLOAD_NIGHT)
    if not st.holds("overload") or granted is None:
        return False
    return opts(ctx).anomaly_overload_usable == "same_night" or granted < night


def can_purify(ctx: Ctx, witch: Seat) -> bool:
    return witch.holds("purify")


def can_format(witch: Seat) -> bool:
    return witch.holds("format") and stage(witch) == "complete"


def anomaly_able(ctx: Ctx) -> bool:
    """A-LOSE-A2 (continuous): is some living anomaly member able (clause i or ii)?"""
    state = ctx.state
    k = state.data.get("K")
    if k is None:
        return True  # no night has ended yet
    able_k = set(state.data["able_at_open"].get(str(k), []))
    for st in state.holders(camp=ANOMALY):
        if st.seat in able_k:
            return True  # (i) able at the opening of night K
        if st.role == "wolf-head" and st.holds("infect"):
            return True  # (ii) 感染 is usable every night
        if st.holds("overload"):
            return True  # (ii) an unused 过载 for a coming night
    return False


def class_of(ctx: Ctx, st: Seat) -> str | None:
    if is_derivative(st) and opts(ctx).anomaly_derivative_class == "villager":
        return VILLAGER
    return st.status(CLASS)


def bloodsight_valid(ctx: Ctx, target: int) -> bool:
    st = ctx.state.seat(target)
    ever = st.status(OVERLOAD_NIGHT) is not None
    return (st.alive and is_derivative(st) and st.camp == ANOMALY
            and (not ever or (opts(ctx).anomaly_bloodsight_regrant and not st.holds("overload"))))


def seer_label(ctx: Ctx, seer: Seat, target: int) -> str:
    night = ctx.state.night
    assert night is not None
    stage = night.data["stages"].get(str(seer.seat), "growth")
    if opts(ctx).anomaly_seer_snapshot == "night_open":
        snap = night.data["snapshot"][str(target)]
    else:
        tst = ctx.state.seat(target)
        snap = {"camp": tst.camp, "role": tst.role, "derivative": is_derivative(tst),
                "class": tst.status(CLASS)}
    labels = DATA["seer_labels"]
    attribute = labels["attribute"]["abnormal" if snap["camp"] == ANOMALY else "normal"]
    mode = opts(ctx).anomaly_seer_identity_feedback
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
