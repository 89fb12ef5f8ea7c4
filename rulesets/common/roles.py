"""Roles as declarations, and the role book that runs them.

A role module declares one `Role`: the skill words it handles, the night slot they fill, how
that slot opens and expires, its steps of the night resolution, its hooks on going out and on
its own deadlines. A ruleset's `RoleBook` loads the role modules its data.yaml lists (`roles:`)
and dispatches the engine's night hooks to them: slots open in `night_order`, the night resolves
through `night_resolution` (a list of `role.step` names, or names of the ruleset's own steps
given to the book), both lists in data.yaml.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.commands import Act
from engine.context import Ctx
from engine.model import Deadline, DeadlineKind, Seat, Slot, Submission

# A night skill: (ctx, the actor, the slot it fills, the command, its first target).
NightSkill = Callable[[Ctx, Seat, Slot, Act, "int | None"], None]
# A skill outside the night slots (Cupid's link, the hunter's shot): (ctx, the actor, the command).
DirectSkill = Callable[[Ctx, Seat, Act], None]
Step = Callable[[Ctx, "Resolution"], None]


@dataclass(frozen=True)
class Role:
    """One role of a ruleset. Every hook is optional; a role without any (the villager) is just
    its name."""

    name: str
    # Night skill words -> handlers; they fill the slot `slot` ("{seat}" is the actor's seat).
    night_skills: Mapping[str, NightSkill] = field(default_factory=dict)
    slot: str | None = None
    # A skill filling another slot than `slot` (anomaly's 过载, "overload:{seat}").
    skill_slots: Mapping[str, str] = field(default_factory=dict)
    # Skill words used by a living character outside the night slots (Cupid's link, the
    # standard wolf's 自爆).
    skills: Mapping[str, DirectSkill] = field(default_factory=dict)
    # A command this role takes before anything else is checked (a duty that outlives going
    # out: the hunter's shot); returns its handler or None. `claimed`: the skill words it
    # may take (besides `pass`).
    claims: Callable[[Ctx, Seat, Act], DirectSkill | None] | None = None
    claimed: tuple[str, ...] = ()
    setup: Callable[[Ctx], None] | None = None
    setup_deadline: Callable[[Ctx, Deadline], None] | None = None  # its setup duty (key = name)
    open_night: Callable[[Ctx], None] | None = None  # add its slot, send its prompt
    # Its slot reached the deadline; without it: a missed duty if the slot was not answered.
    expired: Callable[[Ctx, Slot], None] | None = None
    # The feedback of 过 on its slot; without it: the ruleset's default.
    passed: Callable[[Ctx, Seat, Act], None] | None = None
    # Its steps of the night resolution, named "role.step" in data.yaml night_resolution.
    steps: Mapping[str, Step] = field(default_factory=dict)
    on_out: Callable[[Ctx, Seat], None] | None = None  # the same atomic change as going out
    after_out: Callable[[Ctx, Seat], None] | None = None  # after the CHECK of going out
    may_handover: Callable[[Ctx, Seat], bool] | None = None  # may the badge pass now?
    deadline_kinds: Mapping[str, DeadlineKind] = field(default_factory=dict)
    deadline: Callable[[Ctx, Deadline], None] | None = None  # one of its deadline kinds fired
    out_causes: tuple[str, ...] = ()  # the causes its skills put characters out by

    @property
    def skill_words(self) -> tuple[str, ...]:
        """Every skill word the role takes, by night or by day (the checklist of "How to add
        a role", docs/architecture.md, is tested over these: tests/test_role_checklist.py)."""
        return tuple(dict.fromkeys((*self.night_skills, *self.skill_slots, *self.skills,
                                    *self.claimed)))


@dataclass
class Resolution:
    """One night's resolution: the submissions that count, judged once when it began (with
    resolve.locked_actions=false those of actors already out are dropped, AMB-G-06 (b); one who
    goes out during the resolution keeps his), and the marks steps leave for later steps (the
    guard's shield, the antidote)."""

    ctx: Ctx
    subs: dict[str, Submission] = field(default_factory=dict)
    marks: dict[str, int | None] = field(default_factory=dict)

    @classmethod
    def start(cls, ctx: Ctx) -> Resolution:
        res = cls(ctx)
        state = ctx.state
        for key, slot in ctx.night.slots.items():
            sub = slot.sub
            if sub is None:
                continue
            if not ctx.o.resolve_locked_actions:
                actor = state.seat(sub.by)
                if not actor.alive:
                    continue
            res.subs[key] = sub
        return res

    def sub(self, key: str) -> Submission | None:
        return self.subs.get(key)

    def target(self, key: str, skill: str | None = None) -> int | None:
        """The first target submitted in slot `key` (with skill `skill`), if it counts."""
        sub = self.subs.get(key)
        if sub is None or not sub.targets or (skill and sub.skill != skill):
            return None
        return sub.targets[0]

    def seat_of(self, key: str) -> int | None:
        """The (first) seat of tonight's slot `key`, answered or not."""
        slot = self.ctx.night.slots.get(key)
        return slot.seats[0] if slot else None


class RoleBook:
    """A ruleset's roles, loaded from its role modules, and the dispatch of the night hooks."""

    def __init__(self, package: str, data: Mapping[str, Any],
                 passed: Callable[[Ctx, Seat, Act], None],
                 steps: Mapping[str, Step] | None = None,
                 skills: Mapping[str, DirectSkill] | None = None) -> None:
        """`passed`: the ruleset's feedback of 过 on a slot whose role has none of its own.
        `steps`: the ruleset's own resolution steps, by their full name in night_resolution
        (anomaly's `anomaly.evolve`: a step that belongs to no role). `skills`: the ruleset's
        own skill words, which belong to no role (the standard board's 上警, 退水, 撕警徽):
        taken before anything else, from anyone (each handler says who may)."""
        self.default_passed = passed
        self.own_skills: Mapping[str, DirectSkill] = dict(skills or {})
        own = steps or {}
        self.roles: dict[str, Role] = {}
        for name in data["roles"]:
            module = importlib.import_module(f"{package}.roles.{name.replace('-', '_')}")
            role: Role = module.ROLE
            assert role.name == name, f"{module.__name__} declares {role.name!r}, not {name!r}"
            self.roles[name] = role
        self.night_order: list[Role] = [self.roles[n] for n in data.get("night_order", [])]
        self.steps: list[Step] = []
        for name in data.get("night_resolution", []):
            role_name, _, step = name.partition(".")
            self.steps.append(own[name] if name in own else self.roles[role_name].steps[step])
        self.night_skills: dict[str, tuple[Role, NightSkill]] = {}
        self.direct: dict[str, DirectSkill] = {}
        self.slot_owner: dict[str, Role] = {}
        kinds: dict[str, DeadlineKind] = {}
        self.kind_owner: dict[str, Role] = {}
        for role in self.roles.values():
            for word, handler in role.night_skills.items():
                self.night_skills[word] = (role, handler)
            self.direct.update(role.skills)
            for slot in (role.slot, *role.skill_slots.values()):
                if slot:
                    self.slot_owner[slot.split(":")[0]] = role
            for kind, spec in role.deadline_kinds.items():
                kinds[kind] = spec
                self.kind_owner[kind] = role
        self.deadline_kinds: Mapping[str, DeadlineKind] = kinds
        self.out_causes = tuple(c for r in self.roles.values() for c in r.out_causes)
        self.claimants = [r for r in self.roles.values() if r.claims]
        self.out_hooks = [r for r in self.roles.values() if r.after_out]
        self.on_out_hooks = [r for r in self.roles.values() if r.on_out]
        self.handover_hooks = [r for r in self.roles.values() if r.may_handover]

    # setup --------------------------------------------------------------------
    def setup(self, ctx: Ctx) -> None:
        for role in self.roles.values():
            if role.setup:
                role.setup(ctx)

    def setup_deadline(self, ctx: Ctx, deadline: Deadline) -> None:
        role = self.roles.get(deadline.id.split(":")[-1])
        if role and role.setup_deadline:
            role.setup_deadline(ctx, deadline)

    # actions ------------------------------------------------------------------
    def act(self, ctx: Ctx, cmd: Act) -> None:
        st = ctx.seat(cmd.seat)
        own = self.own_skills.get(cmd.skill)
        if own is not None:
            return own(ctx, st, cmd)
        for role in self.claimants:
            assert role.claims is not None
            handler = role.claims(ctx, st, cmd)
            if handler is not None:
                return handler(ctx, st, cmd)
        if not st.alive:
            ctx.reject("you_are_out")
        direct = self.direct.get(cmd.skill)
        if direct is not None:
            return direct(ctx, st, cmd)
        ctx.night_open()  # (a check: the slot is copied when one is answered)
        if cmd.skill == "pass":
            return self.pass_all(ctx, st, cmd)
        entry = self.night_skills.get(cmd.skill)
        if entry is None:
            ctx.reject("unknown_skill", skill=cmd.skill)
        role, skill = entry
        key = role.skill_slots.get(cmd.skill, role.slot)
        assert key is not None
        slot = ctx.slot_for(cmd, key.format(seat=cmd.seat))
        skill(ctx, st, slot, cmd, cmd.targets[0] if cmd.targets else None)

    def pass_all(self, ctx: Ctx, st: Seat, cmd: Act) -> None:
        """过: the answer to every slot of the seat still open tonight."""
        for slot in ctx.open_slots(st.seat):
            ctx.submit(slot, cmd, [])
            role = self.slot_owner.get(slot.key.split(":")[0])
            (role.passed if role is not None and role.passed else self.default_passed)(
                ctx, st, cmd)

    # night --------------------------------------------------------------------
    def open_night(self, ctx: Ctx) -> None:
        for role in self.night_order:
            if role.open_night:
                role.open_night(ctx)

    def slot_expired(self, ctx: Ctx, slot: Slot) -> None:
        role = self.slot_owner.get(slot.key.split(":")[0])
        if role is not None and role.expired is not None:
            role.expired(ctx, slot)
        else:
            missed_if_unanswered(ctx, slot)

    def resolve_night(self, ctx: Ctx, res: Resolution | None = None) -> None:
        """The steps over one resolution: `res` if the ruleset starts its own (a subclass that
        carries more of the night's choices), else `Resolution.start`."""
        res = res or Resolution.start(ctx)
        for step in self.steps:
            step(ctx, res)

    # going out and deadlines ------------------------------------------------------
    def on_out(self, ctx: Ctx, seats: list[int]) -> None:
        for n in seats:
            st = ctx.state.seat(n)
            for role in self.on_out_hooks:
                assert role.on_out is not None
                role.on_out(ctx, st)

    def after_out(self, ctx: Ctx, seats: list[int]) -> None:
        for n in seats:
            st = ctx.state.seat(n)
            for role in self.out_hooks:
                assert role.after_out is not None
                role.after_out(ctx, st)

    def may_handover(self, ctx: Ctx, seat: int) -> bool:
        st = ctx.state.seat(seat)
        return all(r.may_handover(ctx, st) for r in self.handover_hooks
                   if r.may_handover is not None)

    def deadline(self, ctx: Ctx, deadline: Deadline) -> None:
        role = self.kind_owner.get(deadline.kind)
        if role is not None and role.deadline is not None:
            role.deadline(ctx, deadline)


class RoleHooks:
    """A ruleset mixin (before Ruleset in the bases): the engine's role hooks handed to the
    ruleset's role book `book`, written once for every ruleset, so a hook a role declares is
    never dropped by a ruleset that forgot to forward it. A ruleset overrides one only to add
    its own part around the book's."""

    book: RoleBook

    def setup_deadline(self, ctx: Ctx, deadline: Deadline) -> None:
        self.book.setup_deadline(ctx, deadline)

    def act(self, ctx: Ctx, cmd: Act) -> None:
        self.book.act(ctx, cmd)

    def open_night(self, ctx: Ctx) -> None:
        self.book.open_night(ctx)

    def slot_expired(self, ctx: Ctx, slot: Slot) -> None:
        self.book.slot_expired(ctx, slot)

    def resolve_night(self, ctx: Ctx) -> None:
        self.book.resolve_night(ctx)

    def on_out(self, ctx: Ctx, seats: list[int]) -> None:
        self.book.on_out(ctx, seats)

    def after_out(self, ctx: Ctx, seats: list[int]) -> None:
        self.book.after_out(ctx, seats)

    def may_handover(self, ctx: Ctx, seat: int) -> bool:
        return self.book.may_handover(ctx, seat)

    def deadline(self, ctx: Ctx, deadline: Deadline) -> None:
        self.book.deadline(ctx, deadline)


def missed_if_unanswered(ctx: Ctx, slot: Slot) -> None:
    """A slot past its deadline with no answer: its seats missed the duty (the slot's key)."""
    if slot.sub is None:
        for n in slot.seats:
            ctx.missed(n, slot.key.split(":")[0], slot.yellow)
