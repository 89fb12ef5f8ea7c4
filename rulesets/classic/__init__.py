"""The `classic` ruleset (RULES.md §2): wolves, seer, witch, guard, Cupid, lovers, sheriff."""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, Literal

from pydantic import StrictBool

from engine.commands import Act
from engine.context import Ctx
from engine.model import Anchor, Deadline, GameState, Seat, Slot
from engine.options import Minutes, OptionError, OptionSpec, opt, spec_of
from engine.ruleset import Ruleset, register
from engine.votes import REVOTE, Tally
from rulesets.common.options import SharedOptions
from rulesets.common.witch import WitchNight
from rulesets.common.witch import deadline as witch_deadline
from rulesets.data import load

DATA = load("classic", "data")

WOLVES, VILLAGE, BL = "wolves", "village", "black-lovers"
GODS = ("seer", "witch", "guard")

ExileTie = Literal["first_to_reach", "no_exile", "sheriff_vote", "random", "revote"]


class ClassicOptions(SharedOptions):
    """The classic keys of RULES.md §5, over the common ones."""

    classic_seer_feedback: Literal["village_partition", "wolf_partition", "literal_labels"] = opt(
        "classic.seer_feedback", "village_partition")
    classic_seer_self_check: StrictBool = opt("classic.seer_self_check", False)
    classic_guard_deadline: Minutes = opt("classic.guard_deadline", "90min")
    classic_guard_yellow: StrictBool = opt("classic.guard_yellow", False)
    classic_same_guard_same_save_kills: StrictBool = opt(
        "classic.same_guard_same_save_kills", False)
    classic_antidote_any_target: Literal[True, "kill_target_only"] = opt(
        "classic.antidote_any_target", True)
    classic_witch_self_save: Literal[True, False, "first_night_only"] = opt(
        "classic.witch_self_save", True)
    classic_witch_self_poison: StrictBool = opt("classic.witch_self_poison", True)
    classic_kill_post_on_no: StrictBool = opt("classic.kill_post_on_no", False)
    classic_double_wolf_lovers_in_wolf_group: StrictBool = opt(
        "classic.double_wolf_lovers_in_wolf_group", True)
    classic_double_wolf_lovers_know_partner: StrictBool = opt(
        "classic.double_wolf_lovers_know_partner", False)
    classic_cupid_self_pick: StrictBool = opt("classic.cupid_self_pick", True)
    classic_cupid_missing: Literal["random_pair_plus_yellow", "no_lovers"] = opt(
        "classic.cupid_missing", "random_pair_plus_yellow")
    classic_cupid_told_camp: StrictBool = opt("classic.cupid_told_camp", True)
    classic_village_gods_rule: Literal["all_out", "any_out"] = opt(
        "classic.village_gods_rule", "all_out")
    classic_kill_participants: Literal["kill_skill_holders", "whole_camp"] = opt(
        "classic.kill_participants", "kill_skill_holders")
    classic_sheriff_tiebreak: Literal["first_to_reach_held", "first_to_reach_ever", "random"] = opt(
        "classic.sheriff_tiebreak", "first_to_reach_held")
    classic_exile_tie: ExileTie = opt("classic.exile_tie", "first_to_reach")
    classic_sheriff_night_handover_deadline: Literal["before_next_open", "close_plus_30"] = opt(
        "classic.sheriff_night_handover_deadline", "before_next_open")
    classic_red_card_sheriff_successor: Literal["random", "none"] = opt(
        "classic.red_card_sheriff_successor", "random")


CLASSIC_OPTIONS: OptionSpec = spec_of(ClassicOptions)


if TYPE_CHECKING:
    def _o(ctx: Ctx) -> ClassicOptions:
        """The game's options, typed (ctx.o is this ruleset's ClassicOptions)."""
else:
    _o = attrgetter("o")  # the same, without a Python call per lookup

NIGHT_SKILLS = {"kill": "kill", "lock": "kill", "see": "see", "guard": "guard",
                "save": "witch", "poison": "witch"}


class Classic(WitchNight, Ruleset):
    name = "classic"
    roles = tuple(DATA["roles"])
    camps = tuple(DATA["camps"])
    options_model = ClassicOptions
    reported_slot = "kill"

    def reported_target(self, ctx: Ctx) -> int | None:
        kill = ctx.night.slots.get("kill")
        return kill.sub.targets[0] if kill and kill.sub and kill.sub.targets else None

    def preset(self, players: int, options: dict) -> list[str]:
        presets = DATA["presets"]
        if players not in presets:
            raise OptionError(f"classic is played by {', '.join(map(str, presets))} players")
        return list(presets[players])

    # setup (C-SETUP-1..10) --------------------------------------------------
    def setup(self, ctx: Ctx) -> None:
        state = ctx.state
        for st in state.seats:
            st.camp = WOLVES if st.role == "wolf" else VILLAGE
            st.skills = {k: "held" for k in DATA["skills"][st.role]}
        state.data["guarded"] = []
        state.groups[WOLVES] = [s.seat for s in state.seats if s.role == "wolf"]
        _refresh_field(state)
        cupids = [s.seat for s in state.seats if s.holds("arrow")]
        if cupids:
            ctx.add_deadline("setup", 1, "open", 0, cupids[:1], key="cupid")
            ctx.tell(cupids[0], "CupidPrompt")
        else:
            _form_groups(ctx)

    def setup_deadline(self, ctx: Ctx, deadline: Deadline) -> None:
        cupid = ctx.state.seat(deadline.seats[0])
        if not cupid.holds("arrow"):
            return
        ctx.missed(cupid.seat, "cupid", True)
        if _o(ctx).classic_cupid_missing == "no_lovers":
            cupid.skills["arrow"] = "lost"
            _form_groups(ctx)
            return
        pool = [s.seat for s in ctx.state.living()
                if _o(ctx).classic_cupid_self_pick or s.seat != cupid.seat]
        first = ctx.rand_choice(pool, "cupid_pair")
        second = ctx.rand_choice([n for n in pool if n != first], "cupid_pair")
        _link(ctx, cupid, min(first, second), max(first, second), random=True)

    # actions ----------------------------------------------------------------
    def act(self, ctx: Ctx, cmd: Act) -> None:
        st = ctx.seat(cmd.seat)
        if not st.alive:
            ctx.reject("you_are_out")
        if cmd.skill == "link":
            return _act_link(ctx, st, cmd)
        ctx.require_night()
        if cmd.skill == "pass":
            return _act_pass(ctx, st, cmd)
        key = NIGHT_SKILLS.get(cmd.skill)
        if key is None:
            ctx.reject("unknown_skill", skill=cmd.skill)
        slot = ctx.slot_for(cmd, key)
        target = cmd.targets[0] if cmd.targets else None
        {"kill": _act_kill, "lock": _act_lock, "see": _act_see, "guard": _act_guard,
         "save": _act_save, "poison": _act_poison}[cmd.skill](ctx, st, slot, cmd, target)

    # night --------------------------------------------------------------------
    def open_night(self, ctx: Ctx) -> None:
        state = ctx.state
        night = state.night
        assert night is not None
        killers = _killers(ctx)
        night.data["kill_group"] = _kill_group(state, killers)
        witch = next((s for s in state.living()
                      if s.role == "witch" and (s.holds("antidote") or s.holds("poison"))), None)
        night.data["tongling"] = witch.seat if witch and witch.holds("tongling") else None
        if killers:
            ctx.add_slot("kill", killers, *ctx.night_deadline(), yellow=True)
            _tell_killers(ctx, "NightPrompt", skill="kill")
        duties: list[tuple[Seat | None, str, tuple[Anchor, int], bool]] = [
            (_living_holder(state, "seer", "see"), "see", ctx.night_deadline(), True),
            (_living_holder(state, "guard", "guard"), "guard",
             ("close", _o(ctx).classic_guard_deadline), _o(ctx).classic_guard_yellow),
            (witch, "witch", witch_deadline(ctx), True)]
        for actor, key, (anchor, offset), yellow in duties:
            if actor is not None:
                ctx.add_slot(key, [actor.seat], anchor, offset, yellow=yellow)
                ctx.tell(actor.seat, "NightPrompt", skill=key)
        if not killers:
            self.deliver_tongling(ctx)

    def slot_expired(self, ctx: Ctx, slot: Slot) -> None:
        if slot.key == "kill":
            slot.final = True
            if slot.sub is None:
                _tell_killers(ctx, "KillForfeited")
                for n in slot.seats:
                    if ctx.state.seat(n).alive:
                        ctx.missed(n, "kill", True)
            self.deliver_tongling(ctx)
        elif slot.sub is None:
            for n in slot.seats:
                ctx.missed(n, slot.key, slot.yellow)

    def resolve_night(self, ctx: Ctx) -> None:
        """C-NIGHT-4 kill resolution, C-NIGHT-5 poison resolution (RULES.md §2.3)."""
        state = ctx.state
        night = state.night
        assert night is not None
        slots = night.slots

        def chosen(key: str, skill: str | None = None) -> int | None:
            slot = slots.get(key)
            if slot is None or slot.sub is None or not slot.sub.targets:
                return None
            if skill and slot.sub.skill != skill:
                return None
            if not ctx.o.resolve_locked_actions and not state.seat(slot.sub.by).alive:
                return None  # AMB-G-06 (b): drop actions of actors who are gone
            return slot.sub.targets[0]

        kill_t = chosen("kill")
        guard_t = chosen("guard", "guard")
        save_t = chosen("witch", "save")
        poison_t = chosen("witch", "poison")
        witch = slots["witch"].seats[0] if "witch" in slots else None
        if guard_t is not None:
            state.data["guarded"].append(guard_t)
        if witch is not None and save_t is not None:
            ws = state.seat(witch)
            ws.skills["antidote"] = "used"
            if ws.holds("tongling"):
                ws.skills["tongling"] = "lost"
        if witch is not None and poison_t is not None:
            state.seat(witch).skills["poison"] = "used"
        if kill_t is not None:
            shielded, saved = kill_t == guard_t, kill_t == save_t
            if _o(ctx).classic_same_guard_same_save_kills and shielded and saved:
                dies = True
            else:
                dies = not shielded and not saved
            went_out = False
            if dies and state.seat(kill_t).alive:
                ctx.put_out(kill_t, "kill")
                went_out = True
            ctx.check("step")
            _tell_killers(ctx, "KillFeedback", target=kill_t, out=went_out)
        if poison_t is not None and witch is not None:
            went_out = False
            if state.seat(poison_t).alive:
                ctx.put_out(poison_t, "poison")
                went_out = True
            ctx.check("step")
            # C-WITCH-5: the feedback and the kill-post duty stand even for a dead witch.
            ctx.tell_duty(witch, "PoisonFeedback", target=poison_t, out=went_out)
            if went_out or _o(ctx).classic_kill_post_on_no:
                ctx.tell_duty(witch, "KillPostDue")

    # votes and the badge ---------------------------------------------------------
    def first_to_reach_rule(self, ctx: Ctx) -> str:
        rule = _o(ctx).classic_sheriff_tiebreak
        return rule if rule != "random" else "first_to_reach_held"

    def night_handover(self, ctx: Ctx) -> str:
        return _o(ctx).classic_sheriff_night_handover_deadline

    def red_card_successor(self, ctx: Ctx) -> str:
        return _o(ctx).classic_red_card_sheriff_successor

    def pick_sheriff(self, ctx: Ctx, tally: Tally) -> int | None:
        if len(tally.tied) > 1 and _o(ctx).classic_sheriff_tiebreak == "random":
            return ctx.rand_choice(list(tally.tied), "sheriff_tie")
        return ctx.first_to_reach(tally)

    def pick_exile(self, ctx: Ctx, tally: Tally) -> int | None:
        rule = _o(ctx).classic_exile_tie
        if len(tally.tied) <= 1 or rule == "first_to_reach":
            return ctx.first_to_reach(tally)
        if rule == "no_exile":
            return None
        if rule == "random":
            return ctx.rand_choice(list(tally.tied), "exile_tie")
        if rule == "revote":
            return REVOTE
        sheriff = ctx.state.sheriff
        pick = tally.effective.get(sheriff) if sheriff else None
        return pick if pick in tally.tied else ctx.first_to_reach(tally)

    # end of game (§2.5) ---------------------------------------------------------
    def camp_lost(self, ctx: Ctx, camp: str) -> bool:
        state = ctx.state  # read only: peek_members copies no seat
        living = state.peek_members(camp)
        if camp in (WOLVES, BL):
            return not living  # C-LOSE-W1, C-LOSE-B1
        gods_all = [s for s in state.peek_members(VILLAGE, living=False) if s.role in GODS]
        if _o(ctx).classic_village_gods_rule == "any_out":
            v1 = any(not s.alive for s in gods_all) or not gods_all
        else:
            v1 = not any(s.alive for s in gods_all)  # C-LOSE-V1
        v2 = not any(s.role == "villager" for s in living)  # C-LOSE-V2
        return v1 or v2

    def camp_wins(self, ctx: Ctx, camp: str) -> bool:
        if camp != WOLVES:
            return False
        wolves = len(ctx.state.peek_members(WOLVES))
        return wolves > 0 and 2 * wolves >= len(ctx.state.living_numbers())  # C-WIN-W1

    def on_camp_lost(self, ctx: Ctx, camp: str) -> None:
        state = ctx.state
        members = [s.seat for s in state.members(camp)]
        ctx.tell(members, "CampLostNotice", camp=camp)
        if camp != WOLVES:
            return
        for st in state.seats:  # C-WOLF-3
            if st.camp == WOLVES and st.role == "wolf" and st.holds("kill"):
                st.skills["kill"] = "lost"
        night = state.night
        if night and not night.resolved and "kill" in night.slots and any(
                state.seat(n).camp == WOLVES for n in night.slots["kill"].seats):
            # Lost during collection (a surrender): tonight's kill is gone with the skill.
            ctx.remove_deadline(night.slots.pop("kill").deadline_id)
            self.deliver_tongling(ctx)
        if BL in state.camps_on_field and BL not in state.camps_lost:  # C-LOVER-5
            lovers = [s for s in state.seats if s.camp == BL and s.lover_of]
            for st in lovers:
                st.skills["kill"] = "held"
            ctx.tell([s.seat for s in state.members(BL)], "WidowKnife",
                     lovers=[s.seat for s in lovers])


RULESET = register(Classic())


# ---------------------------------------------------------------------------
# setup helpers


def _refresh_field(state: GameState) -> None:
    for camp in DATA["camps"]:
        if camp not in state.camps_on_field and any(s.camp == camp for s in state.seats):
            state.camps_on_field.append(camp)


def _act_link(ctx: Ctx, st: Seat, cmd: Act) -> None:
    if ctx.state.phase != "SETUP" or not st.holds("arrow"):
        ctx.reject("not_your_skill", skill="link")
    if len(cmd.targets) != 2 or None in cmd.targets or cmd.targets[0] == cmd.targets[1]:
        ctx.reject("link_needs_two")
    a, b = (ctx.living_target(t) for t in cmd.targets)
    assert a is not None and b is not None
    if st.seat in (a, b) and not _o(ctx).classic_cupid_self_pick:
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
        if not _o(ctx).classic_double_wolf_lovers_in_wolf_group:
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
    know = not (wolf_a and wolf_b) or _o(ctx).classic_double_wolf_lovers_know_partner
    for lover, partner in ((la, b), (lb, a)):
        ctx.tell(lover.seat, "LoverNotice", partner=partner if know else None)
        if camp == BL:
            ctx.tell(lover.seat, "YourCamp", camp=BL)
    if not (wolf_a and wolf_b):
        state.groups["lovers"] = sorted((a, b))
    # A Cupid who is a lover learns his camp as a lover; a single one per AMB-C-11.
    if _o(ctx).classic_cupid_told_camp and cupid.seat not in (a, b):
        ctx.tell(cupid.seat, "YourCamp", camp=camp)
    _refresh_field(state)
    _form_groups(ctx)
    ctx.check("atomic")  # the link moved characters between camps


def _form_groups(ctx: Ctx) -> None:
    for group in (WOLVES, "lovers"):
        members = ctx.state.groups.get(group)
        if members:
            ctx.tell_group(group, "GroupFormed", group=group, members=members)


# ---------------------------------------------------------------------------
# night helpers


def _killers(ctx: Ctx) -> list[int]:
    holders = [s for s in ctx.state.living() if s.holds("kill")]
    if not holders:
        return []
    if _o(ctx).classic_kill_participants == "whole_camp":
        return [s.seat for s in ctx.state.members(holders[0].camp)]
    return [s.seat for s in holders]


def _living_holder(state: GameState, role: str, skill: str) -> Seat | None:
    """The first living `role` who holds `skill`."""
    return next((s for s in state.living() if s.role == role and s.holds(skill)), None)


def _kill_group(state: GameState, killers: list[int]) -> str | None:
    if not killers:
        return None
    return WOLVES if state.seat(killers[0]).camp == WOLVES else "lovers"


def _tell_killers(ctx: Ctx, type_: str, **data: object) -> None:
    night = ctx.state.night
    assert night is not None
    slot = night.slots.get("kill")
    seats = [n for n in (slot.seats if slot else []) if ctx.state.seat(n).alive]
    group = night.data.get("kill_group")
    if group and set(seats) <= set(ctx.state.groups.get(group, [])):
        ctx.tell_group(group, type_, **data)  # its living members are the living killers
    else:  # killers outside the group (non-default options): private messages
        ctx.tell(seats, type_, **data)


def _ack(ctx: Ctx, st: Seat, cmd: Act, target: int | None, final: bool = False) -> None:
    ctx.tell(st.seat, "ActionRecorded", skill=cmd.skill, target=target, final=final)


def _act_kill(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    target = ctx.living_target(target, allow_none=True)
    ctx.submit(slot, cmd, [target])
    _tell_killers(ctx, "KillRecorded", by=st.seat, target=target)


def _act_lock(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    if slot.sub is None:
        ctx.reject("nothing_to_lock")
    if slot.final:
        ctx.reject("action_final")
    slot.final = True
    _tell_killers(ctx, "KillLocked", by=st.seat,
                  target=slot.sub.targets[0] if slot.sub.targets else None)
    RULESET.deliver_tongling(ctx)


def _act_see(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    if slot.sub is not None:
        ctx.reject("action_final")
    target = ctx.living_target(target)
    assert target is not None
    if target == st.seat and not _o(ctx).classic_seer_self_check:
        ctx.reject("no_self_check")
    ctx.submit(slot, cmd, [target])
    slot.final = True
    ctx.tell(st.seat, "SeerResult", target=target, label=_seer_label(ctx, target))


def _seer_label(ctx: Ctx, target: int) -> str:
    camp = ctx.state.seat(target).camp
    mode = _o(ctx).classic_seer_feedback
    holds, other = DATA["seer_labels"][mode]
    return holds if camp == (WOLVES if mode == "wolf_partition" else VILLAGE) else other


def _act_guard(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    target = ctx.living_target(target, allow_none=True)
    if target is not None and target in ctx.state.data["guarded"]:
        ctx.reject("already_guarded", target=target)  # C-GUARD-2
    ctx.submit(slot, cmd, [target] if target is not None else [])
    _ack(ctx, st, cmd, target)


def _act_save(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    if not st.holds("antidote"):
        ctx.reject("skill_used", skill="antidote")
    if slot.sub is not None and slot.sub.skill == "poison":
        ctx.reject("one_potion_only")
    target = ctx.living_target(target)
    self_save = _o(ctx).classic_witch_self_save
    if target == st.seat and (self_save is False or (
            self_save == "first_night_only" and ctx.night.day != 1)):
        ctx.reject("no_self_save")
    if _o(ctx).classic_antidote_any_target == "kill_target_only":
        kill = ctx.night.slots.get("kill")
        reported = kill.sub.targets[0] if kill and kill.sub and kill.sub.targets else None
        if not slot.prompted or target != reported:
            ctx.reject("antidote_kill_target_only")
    ctx.submit(slot, cmd, [target])
    _ack(ctx, st, cmd, target)


def _act_poison(ctx: Ctx, st: Seat, slot: Slot, cmd: Act, target: int | None) -> None:
    if not st.holds("poison"):
        ctx.reject("skill_used", skill="poison")
    if slot.sub is not None and slot.sub.skill == "save":
        ctx.reject("one_potion_only")
    target = ctx.living_target(target)
    if target == st.seat and not _o(ctx).classic_witch_self_poison:
        ctx.reject("no_self_poison")
    ctx.submit(slot, cmd, [target])
    _ack(ctx, st, cmd, target)


def _act_pass(ctx: Ctx, st: Seat, cmd: Act) -> None:
    for slot in ctx.open_slots(st.seat):
        ctx.submit(slot, cmd, [])
        if slot.key == "kill":
            _tell_killers(ctx, "KillRecorded", by=st.seat, target=None)
        else:
            _ack(ctx, st, cmd, None)
