"""The ruleset interface and registry. A ruleset is pure code plus data, found through the
`wolfjudge.rulesets` entry points (the engine names none)."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Mapping
from datetime import time
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, TypeVar

from engine.model import DeadlineKind, register_deadline_kinds, set_ruleset_loader
from engine.options import CommonOptions, ModelSpec, spec_of

if TYPE_CHECKING:
    from engine.commands import Act
    from engine.context import Ctx
    from engine.model import Deadline, Seat, Slot
    from engine.votes import Tally


class RoleSetError(ValueError):
    """A judge's own role set that makes no game (docs/rules-judge.md P-LOBBY-2). `reason`:
    `twice` (`role`, which the ruleset deals once, is in it more than once), `missing` (no
    role of `camp`, which a preset game starts with), `lost` or `won` (`camp` has lost, or
    won, at the deal, by the ruleset's own win conditions)."""

    def __init__(self, reason: str, *, role: str | None = None, camp: str | None = None
                 ) -> None:
        super().__init__(f"{reason}: {role or camp}")
        self.reason = reason
        self.role = role
        self.camp = camp


class Ruleset:
    """Hooks the engine calls. Defaults cover what every ruleset shares."""

    name: str = ""
    roles: tuple[str, ...] = ()
    # The roles a role set may hold more than once (the wolves, the villagers: data.yaml
    # `many`); any other role (a god, a special role) at most once.
    many_roles: tuple[str, ...] = ()
    camps: tuple[str, ...] = ()
    out_causes: tuple[str, ...] = ()  # the causes its rules put out by, beyond OUT_CAUSES
    options_model: type[CommonOptions] = CommonOptions  # the ruleset's option model
    option_spec: ModelSpec = spec_of(CommonOptions)  # the same as key -> (type, default)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.option_spec = spec_of(cls.options_model)

    def validate(self, options: dict) -> None:
        """Checks across option values that a type alone cannot say (raise OptionError); they
        are best written in the option model's `check`."""

    def preset(self, players: int, options: dict) -> list[str]:
        raise NotImplementedError

    # setup -------------------------------------------------------------
    def setup(self, ctx: Ctx) -> None:
        """Give camps and skills for the dealt roles, make groups, add setup deadlines."""
        raise NotImplementedError

    # The ruleset's own deadline kinds (fired through `deadline`), with how the engine treats
    # them: order among same-time deadlines, reminders, duties that outlive going out,
    # JudgeExtend. The engine's own kinds are engine.model.ENGINE_DEADLINE_KINDS.
    deadline_kinds: Mapping[str, DeadlineKind] = {}

    def check_roles(self, ctx: Ctx, preset_camps: list[str]) -> None:
        """Whether the role set dealt in `ctx.state` (a judge's own, 角色) makes a game as the
        presets do: each role outside `many_roles` at most once, every camp a preset game
        starts with (`preset_camps`) on the field, and no camp lost or won at the deal by
        the ruleset's own `camp_lost` / `camp_wins`; raise RoleSetError. A ruleset with more to
        ask of a set adds it here."""
        state = ctx.state
        seen: set[str] = set()
        for st in state.seats:
            if st.role in seen and st.role not in self.many_roles:
                raise RoleSetError("twice", role=st.role)
            seen.add(st.role)
        for camp in preset_camps:
            if camp not in state.camps_on_field:
                raise RoleSetError("missing", camp=camp)
        for camp in state.camps_on_field:
            if self.camp_lost(ctx, camp):
                raise RoleSetError("lost", camp=camp)
            if self.camp_wins(ctx, camp):
                raise RoleSetError("won", camp=camp)

    def check_game(self, options: CommonOptions, *, fast: bool,
                   hours: tuple[time, time] | None = None) -> None:
        """The game's options against its schedule (`fast`: a fast game, in cycles of
        minutes; `hours`: a daily game's open and close); raise ValueError."""

    def setup_deadline(self, ctx: Ctx, deadline: Deadline) -> None:
        """A setup-phase deadline fired (a setup duty's)."""

    # day ---------------------------------------------------------------
    def open_day(self, ctx: Ctx, day: int) -> None:
        """Day `day` has opened (after its post and its close deadline): a ruleset's own
        business of the day (an election's sign-up)."""

    def exiles_on(self, ctx: Ctx, day: int) -> bool:
        """Whether day `day`'s vote exiles (day 1 elects the sheriff only)."""
        return day >= 2

    def ballot(self, ctx: Ctx, day: int, kind: str) -> tuple[set[int], set[int]]:
        """Who votes in day `day`'s `kind` vote ("sheriff" or "exile"), and whom the votes may
        count for: by default every living character, both. (A seat left out of the voters
        gets no card for not voting.)"""
        living = set(ctx.state.living_numbers())
        return living, living

    def check_vote(self, ctx: Ctx, voter: int, target: int | None) -> None:
        """Refuse (ctx.reject) a day vote the ruleset does not allow: a candidate's vote in an
        election, a vote for a non-candidate, a voter who lost the vote."""

    def sheriff_weight(self, ctx: Ctx) -> float:
        """The weight of the sheriff's vote (C-SHERIFF-3, P-VOTE-11: 2)."""
        return 2

    def spares_exile(self, ctx: Ctx, seat: int) -> bool:
        """Whether the exile of `seat` is averted (the ruleset announces why); otherwise the
        engine announces it and puts the seat out."""
        return False

    def last_words_right(self, ctx: Ctx, st: Seat) -> bool | None:
        """Whether `st`, just out, has last words; None: lastwords.eligible decides."""
        return None

    def first_to_reach_rule(self, ctx: Ctx) -> str:
        """Which "first to reach" ties use: first_to_reach_held (AMB-C-14) or _ever."""
        return "first_to_reach_held"

    def night_handover(self, ctx: Ctx) -> str:
        """A sheriff out at night hands over before_next_open, or close_plus_30 (AMB-C-17)."""
        return "before_next_open"

    def red_card_successor(self, ctx: Ctx) -> str:
        """After a red-carded sheriff: a random successor, or none (AMB-C-18, 000:L47)."""
        return "random"

    def pick_sheriff(self, ctx: Ctx, tally: Tally) -> int | None:
        return ctx.first_to_reach(tally)

    def pick_exile(self, ctx: Ctx, tally: Tally) -> int | None:
        return ctx.first_to_reach(tally)

    # night -------------------------------------------------------------
    def open_night(self, ctx: Ctx) -> None:
        """Create the night's slots (ctx.add_slot) and send opening prompts."""

    def act(self, ctx: Ctx, cmd: Act) -> None:
        """Validate and record a player's action; raise ctx.reject(...) to refuse it."""
        ctx.reject("unknown_skill", skill=cmd.skill)

    def slot_expired(self, ctx: Ctx, slot: Slot) -> None:
        """A night slot reached its deadline."""

    def ready(self, ctx: Ctx) -> bool:
        """Whether the night may resolve before its last deadline (G-RES-6 (c)): every slot
        of a living seat answered or final. A ruleset whose slots wait on one another (a
        prompt mid-night) says so here."""
        night = ctx.view("night")  # read only: a check copies nothing
        for slot in night.slots.values():
            # (done or expired first: the alive scan only for a slot still waiting)
            if slot.expired or slot.sub is not None or slot.final:
                continue
            if any(ctx.state.peek(n).alive for n in slot.seats):
                return False
        return True

    def resolve_night(self, ctx: Ctx) -> None:
        raise NotImplementedError

    def deadline(self, ctx: Ctx, deadline: Deadline) -> None:
        """A ruleset-owned deadline kind fired."""

    def on_out(self, ctx: Ctx, seats: list[int]) -> None:
        """Effects that belong to the same atomic change as going out, before the CHECK."""

    def may_handover(self, ctx: Ctx, seat: int) -> bool:
        """Whether a successor named now takes the badge at once; if not, the choice is held
        until the ruleset calls ctx.release_handover (a duty of the sheriff's comes first)."""
        return True

    def procedures_apply(self, ctx: Ctx) -> bool:
        """Whether 001's procedures run automatically: missed-deadline and vote cards, random
        handovers. Without them the engine records the miss and waits for the judge."""
        return True

    def after_out(self, ctx: Ctx, seats: list[int]) -> None:
        """Duties after characters went out (a shot …), after the CHECK."""

    # end of game -------------------------------------------------------
    def camp_lost(self, ctx: Ctx, camp: str) -> bool:
        raise NotImplementedError

    def camp_wins(self, ctx: Ctx, camp: str) -> bool:
        return False

    def on_camp_lost(self, ctx: Ctx, camp: str) -> None:
        """On-loss events (skill changes, notifications)."""

    def may_surrender(self, ctx: Ctx) -> bool:
        return True


_REGISTRY: dict[str, Ruleset] = {}


RulesetT = TypeVar("RulesetT", bound=Ruleset)


def register(ruleset: RulesetT) -> RulesetT:
    _REGISTRY[ruleset.name] = ruleset
    register_deadline_kinds(ruleset.name, ruleset.deadline_kinds)
    return ruleset


# Installed rulesets declare themselves as entry points of this group (pyproject.toml); each
# points at a registered Ruleset object, so loading it imports and registers the ruleset.
ENTRY_POINT_GROUP = "wolfjudge.rulesets"


def ruleset_names() -> list[str]:
    """The names of the installed rulesets."""
    return sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)} | set(_REGISTRY))


def get_ruleset(name: str) -> Ruleset:
    if name not in _REGISTRY:
        for ep in entry_points(group=ENTRY_POINT_GROUP, name=name):
            loaded = ep.load()
            if isinstance(loaded, Ruleset) and loaded.name not in _REGISTRY:
                register(loaded)
    if name not in _REGISTRY:
        # Fallback for a checkout that is not installed (no entry points): the package of the
        # same name in the rulesets/ folder, which registers itself on import.
        with contextlib.suppress(ModuleNotFoundError):
            importlib.import_module(f"rulesets.{name}")
    if name not in _REGISTRY:
        raise KeyError(f"unknown ruleset {name!r}")
    return _REGISTRY[name]


set_ruleset_loader(get_ruleset)  # GameState.next_deadline orders a ruleset's deadline kinds
