"""The game state; the engine never mutates a state it was given.

`GameState` (and its `Schedule`) is a pydantic model: the edge where a state is validated from
and dumped to JSON. The records inside it that rule code reads and writes all through a command
(a seat and its statuses, a deadline, the night's slots and submissions, a vote post, a
correction request) are plain slotted dataclasses: pydantic validates and dumps them as fields
of the state all the same (the same JSON), but reading their attributes is a plain slot read
(a pydantic model's `__getattr__` keeps CPython 3.11 from specializing attribute reads: three
to four times slower) and building one validates nothing (rule code passes the field types;
mypy checks them). Construct them with keywords.

`handle` works on `engine.clone.working_copy(state)`, which shares what cannot change: the frozen
models below (a deadline, a vote post, a correction request, a seat's status is replaced, never
changed in place, its lists included) and the options (fixed when the game is created), and
copies every other field when the command first reads it, each seat when it is first handed out.
So states share the fields and seats a command never read: nothing may change a state outside
`handle`. Code that only looks uses `peek`, `peek_seats`, `peek_members`, `living_numbers` (no
copy).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING, Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, Field, TypeAdapter

from engine.clone import SHARED, lazy_field, view
from engine.exact import EXACT_IN, EXACT_OUT

# The causes the engine itself puts characters out by; a ruleset adds its own
# (Ruleset.out_causes: a kill, a poison, a shot …).
OUT_CAUSES = ("vote", "lovers", "red-card")


SkillState = Literal["held", "used", "lost"]

# What a status may hold: a flag, a number (a night, a seat), a word, marks (nights, seats), or
# saved skills. Immutable values only (a tuple, not a list; a dict is never changed in place but
# replaced), so that a state copy shares every Status.
StatusValue = bool | int | str | tuple[int, ...] | dict[str, SkillState] | None
V = TypeVar("V", bound=StatusValue)


@dataclass(frozen=True, slots=True, kw_only=True)
class Status:
    """One ruleset status of a seat (a stage, a shield, a due duty …): its value and where it
    came from. The name is its key in `Seat.statuses`; the names belong to the rulesets.

    Frozen: set again (`Seat.set_status`), never changed in place, so state copies share it.
    `source`, `since` and `until` are None when the rule does not record them, which is also
    what a status stored before statuses were typed reads as (the old snapshots cannot say)."""

    value: StatusValue = True
    source: int | str | None = None  # the seat or rule that gave it
    since: str | None = None  # the phase it was given in ("SETUP", "D2", "N3" …)
    until: str | None = None  # the last phase it holds in; None: until the ruleset clears it


_STATUS_FIELDS = frozenset(f.name for f in fields(Status))


# Status values are validated as the field was when Status was a pydantic model: a list
# becomes a tuple and a dict is copied (a Status shares nothing mutable with the caller: state
# copies share the Status), and a value outside StatusValue is refused (a ValidationError).
_STATUS_VALUE: TypeAdapter[StatusValue] = TypeAdapter(StatusValue)


def _upcast_statuses(value: Any) -> Any:
    """Snapshots stored before statuses were typed hold the plain values
    (`{"shot_due": True}`): each becomes a Status with that value and no source or phases.
    A stored Status is a dict with a "value" key and only Status fields; no old value was
    such a dict (the only dict-valued status, saved skills, is keyed by skill names)."""
    if not isinstance(value, dict):
        return value
    return {name: st if isinstance(st, Status) or (
        isinstance(st, dict) and "value" in st and st.keys() <= _STATUS_FIELDS)
        else {"value": st} for name, st in value.items()}


@dataclass(frozen=True)
class StatusKey(Generic[V]):
    """A ruleset's status name with the type of its value: `STAGE = StatusKey[str]("stage")`.
    Rule code names statuses by these constants, so a misspelt name or a wrong value is a type
    error, and `seat.status(STAGE)` is typed `str | None`."""

    name: str


@dataclass(slots=True, kw_only=True)
class Seat:
    seat: int
    role: str  # the dealt role
    camp: str
    alive: bool = True
    out_cause: str | None = None
    out_phase: str | None = None
    skills: dict[str, SkillState] = field(default_factory=dict)
    lover_of: int | None = None
    # ruleset-owned, by name
    statuses: Annotated[dict[str, Status], BeforeValidator(_upcast_statuses)] = field(
        default_factory=dict)
    yellow: int = 0  # every yellow card received
    uncounted_yellow: int = 0  # of those, kept out of cards.yellow_to_red (night duty cards)
    red: bool = False
    notice: bool = False  # prior notice of absence: waives the next missed-deadline card
    contact: bool = False  # contacted the judge: waives the card of the pending deadline
    surrendered: bool = False

    def holds(self, skill: str) -> bool:
        return self.skills.get(skill) == "held"

    def status(self, key: StatusKey[V]) -> V | None:
        """The value of status `key`, None when the seat does not have it."""
        st = self.statuses.get(key.name)
        # The key's type is the value's: set_status takes only that (no cast(): a hot path).
        return None if st is None else st.value  # type: ignore[return-value]

    def status_info(self, key: StatusKey[Any]) -> Status | None:
        """Status `key` with its source and phases, None when the seat does not have it."""
        return self.statuses.get(key.name)

    def set_status(self, key: StatusKey[V], value: V, *, source: int | str | None = None,
                   since: str | None = None, until: str | None = None) -> None:
        # The Status gets its own copy of a dict and a tuple for a list, so it shares nothing
        # mutable with the seat (state copies share it).
        self.statuses[key.name] = Status(value=_STATUS_VALUE.validate_python(value),
                                         source=source, since=since, until=until)

    def clear_status(self, key: StatusKey[V]) -> V | None:
        """Remove status `key`; its value, None when the seat did not have it."""
        st = self.statuses.pop(key.name, None)
        return None if st is None else st.value  # type: ignore[return-value]


class Schedule(BaseModel):
    """Day d opens at `open` and closes at `close` on calendar day d (day 1 = `start`).

    A fast game (a live evening session) runs in cycles instead: day 1 opens at `first_open`,
    each day lasts `day_minutes` and each night `night_minutes`. The judge's overrides (P-TIME-2)
    win over both. Times are wall-clock times in the game's time zone, which the bot keeps.
    """

    start: date
    open: time = time(9, 0)
    close: time = time(21, 0)
    first_open: datetime | None = None
    day_minutes: int | None = None
    night_minutes: int | None = None
    opens: dict[int, datetime] = Field(default_factory=dict)  # judge overrides (P-TIME-2)
    closes: dict[int, datetime] = Field(default_factory=dict)

    @property
    def cyclic(self) -> bool:
        return self.first_open is not None

    def open_at(self, day: int) -> datetime:
        if day in self.opens:
            return self.opens[day]
        if self.first_open is not None:
            cycle = (self.day_minutes or 0) + (self.night_minutes or 0)
            return self.first_open + timedelta(minutes=cycle * (day - 1))
        return datetime.combine(self.start + timedelta(days=day - 1), self.open)

    def close_at(self, day: int) -> datetime:
        if day in self.closes:
            return self.closes[day]
        if self.first_open is not None:
            return self.open_at(day) + timedelta(minutes=self.day_minutes or 0)
        return datetime.combine(self.start + timedelta(days=day - 1), self.close)


# Where a deadline hangs: a day's open or close, the midnight after a day's close, or a moment.
Anchor = Literal["open", "close", "morning", "at"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Deadline:
    """A moment the engine must act on. `anchor` lets a judge's time change move it.
    Frozen: replaced (`dataclasses.replace`), never changed in place."""

    id: str
    kind: str
    day: int
    seats: list[int] = field(default_factory=list)
    anchor: Anchor
    offset_min: int = 0  # "morning": minutes after midnight of the day after day `day` closes
    due: datetime
    parent: str | None = None  # a reminder's deadline: due `offset_min` minutes before it


@dataclass(frozen=True)
class DeadlineKind:
    """How the engine treats a kind of deadline."""

    order: int  # same-time deadlines fire in this order (then by id); unknown kinds last (9)
    reminded: bool = False  # the owers get a DM reminder before it (reminders.before)
    outlives_out: bool = False  # a duty that outlives going out (G-RES-4): told when out too
    extendable: bool = False  # JudgeExtend moves it for the seat it names


# The engine's own kinds: night actions, duties, then the phase change. A ruleset declares its
# own (Ruleset.deadline_kinds), registered with register_deadline_kinds.
ENGINE_DEADLINE_KINDS: dict[str, DeadlineKind] = {
    "remind": DeadlineKind(-1),
    "setup": DeadlineKind(0, reminded=True, extendable=True),
    "night": DeadlineKind(1, reminded=True, extendable=True),
    "handover": DeadlineKind(4, reminded=True, outlives_out=True, extendable=True),
    "lastwords": DeadlineKind(5, outlives_out=True),
    "day_close": DeadlineKind(6, reminded=True),
    "day_open": DeadlineKind(6),
    "open_notice": DeadlineKind(6),  # the open the judge's review moved, told (P-REVIEW-4)
}
DEADLINE_ORDER = {kind: k.order for kind, k in ENGINE_DEADLINE_KINDS.items()}

_RULESET_KINDS: dict[str, dict[str, DeadlineKind]] = {}  # ruleset -> engine's and its own
_ORDERS: dict[str, dict[str, int]] = {}
_loader: list[Callable[[str], object]] = []


def register_deadline_kinds(ruleset: str, kinds: Mapping[str, DeadlineKind]) -> None:
    clash = set(kinds) & set(ENGINE_DEADLINE_KINDS)
    if clash:
        raise ValueError(f"ruleset {ruleset} redefines deadline kinds {sorted(clash)}")
    _RULESET_KINDS[ruleset] = {**ENGINE_DEADLINE_KINDS, **kinds}
    _ORDERS[ruleset] = {kind: k.order for kind, k in _RULESET_KINDS[ruleset].items()}


def set_ruleset_loader(load: Callable[[str], object]) -> None:
    """How to load a ruleset by name (engine.ruleset.get_ruleset), so that a state whose
    ruleset is not imported yet still orders that ruleset's deadline kinds."""
    _loader[:] = [load]


def deadline_kinds(ruleset: str) -> dict[str, DeadlineKind]:
    """The deadline kinds of games of `ruleset`: the engine's and the ruleset's own."""
    kinds = _RULESET_KINDS.get(ruleset)
    if kinds is None:
        for load in _loader:
            with contextlib.suppress(KeyError):
                load(ruleset)
        kinds = _RULESET_KINDS.get(ruleset, ENGINE_DEADLINE_KINDS)
    return kinds


def _deadline_order(ruleset: str) -> dict[str, int]:
    order = _ORDERS.get(ruleset)
    if order is None:
        deadline_kinds(ruleset)
        order = _ORDERS.get(ruleset, DEADLINE_ORDER)
    return order


@dataclass(slots=True, kw_only=True)
class Submission:
    skill: str
    targets: list[int | None] = field(default_factory=list)
    options: Annotated[dict[str, Any], EXACT_OUT, EXACT_IN] = field(default_factory=dict)
    by: int
    at: datetime


@dataclass(slots=True, kw_only=True)
class Slot:
    """One night duty: who owes it, what they sent, whether it is final."""

    key: str
    seats: list[int]
    deadline_id: str
    yellow: bool = False
    sub: Submission | None = None
    final: bool = False
    expired: bool = False
    prompted: bool = False  # the ruleset prompted the owers mid-night (told them a choice)
    answered_after_prompt: bool = False


@dataclass(slots=True, kw_only=True)
class Night:
    day: int
    slots: dict[str, Slot] = field(default_factory=dict)
    resolved: bool = False
    data: Annotated[dict[str, Any], EXACT_OUT, EXACT_IN] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class VotePost:
    """Frozen: a correction replaces the post."""

    at: datetime
    target: int | None = None  # None = abstain
    void: bool = False
    change: bool = False
    by_judge: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class CorrectionRequest:
    """A player's `更正` awaiting the judge (AMB-P-09): it changes nothing until confirmed."""

    target: int | None = None  # None = abstain
    at: datetime  # when the player asked


class GameState(BaseModel):
    game_id: str
    ruleset: str
    # set by new_game, never changed after
    options: Annotated[dict[str, Any], SHARED, EXACT_OUT, EXACT_IN]
    seats: list[Seat]
    schedule: Schedule
    seed: str
    rng_counter: int = 0
    phase: str = "SETUP"  # SETUP, D1, N1, D2, … ; END: a winner, or the judge ended it
    day: int = 0
    deadlines: list[Deadline] = Field(default_factory=list)
    groups: dict[str, list[int]] = Field(default_factory=dict)
    camps_on_field: list[str] = Field(default_factory=list)
    camps_lost: list[str] = Field(default_factory=list)
    camps_surrendered: list[str] = Field(default_factory=list)
    winner: str | None = None
    halted: bool = False  # waiting for a judge ruling (AMB-G-03)
    ended: bool = False  # the judge ended the game early, without a winner (JudgeEnd)
    paused_at: datetime | None = None  # the judge stopped the clock then (JudgePause)
    sheriff: int | None = None
    night: Night | None = None
    votes: dict[int, list[VotePost]] = Field(default_factory=dict)
    # one pending correction request per seat, until the judge rules or voting closes
    correction_requests: dict[int, CorrectionRequest] = Field(default_factory=dict)
    handover_due: int | None = None  # the out sheriff who owes a successor
    lastwords_due: list[int] = Field(default_factory=list)
    last_words: dict[int, str] = Field(default_factory=dict)
    # since the last public post
    news: Annotated[dict[str, list[Any]], EXACT_OUT, EXACT_IN] = Field(default_factory=dict)
    # ruleset-owned game-wide data
    data: Annotated[dict[str, Any], EXACT_OUT, EXACT_IN] = Field(default_factory=dict)
    version: int = 0

    def seat(self, n: int) -> Seat:
        return self.seats[n - 1]

    if not TYPE_CHECKING:  # (mypy would accept any attribute name on a state)
        # Only reached for a field missing from __dict__: a command's working copy copies
        # its containers on first use (engine.clone.working_copy). (The function itself, not
        # a method calling it: one Python call less per field a command reads.)
        __getattr__ = lazy_field

    def peek(self, n: int) -> Seat:
        """Seat `n` to read, never to change: in a command's working copy it may still be the
        caller's own seat (`engine.clone.SeatsOnDemand`); `seat(n)` gives the one to change."""
        # (`view`, inlined for the settled state's common case: a hot path)
        seats: list[Seat] = self.__dict__.get("seats") or view(self, "seats")
        return list.__getitem__(seats, n - 1)

    def living(self) -> list[Seat]:
        return [s for s in self.seats if s.alive]

    def living_numbers(self) -> list[int]:
        """The numbers of the living seats, in order: `[s.seat for s in living()]`, read
        without copying a seat in a working copy (see `peek`)."""
        return [s.seat for s in self.peek_seats() if s.alive]

    def peek_seats(self) -> list[Seat]:
        """All seats to read, never to change (see `peek`): a scan that only looks (the
        CHECK's camp counts) copies no seat of a working copy."""
        seats: list[Seat] = self.__dict__.get("seats") or view(self, "seats")
        return list.copy(seats)

    def peek_living(self) -> list[Seat]:
        """`living()`, to read only (see `peek_seats`): finding a role's holder copies no
        seat."""
        seats: list[Seat] = self.__dict__.get("seats") or view(self, "seats")
        return [s for s in list.__iter__(seats) if s.alive]

    def peek_members(self, camp: str, living: bool = True) -> list[Seat]:
        """`members`, to read only (see `peek_seats`)."""
        return [s for s in self.peek_seats() if s.camp == camp and (s.alive or not living)]

    def holders(self, role: str | None = None, *, camp: str | None = None,
                skill: str | None = None, living: bool = True) -> list[Seat]:
        """The seats (the living ones, unless `living=False`) with this dealt role, in this
        camp, holding this skill, in seat order; to read only (engine/views.py): change one
        through `seat(n)`."""
        return [s for s in self.peek_seats() if (s.alive or not living)
                and (role is None or s.role == role) and (camp is None or s.camp == camp)
                and (skill is None or s.skills.get(skill) == "held")]

    def holder(self, role: str | None = None, *, camp: str | None = None,
               skill: str | None = None, living: bool = True) -> Seat | None:
        """The first of `holders(...)`, or None; to read only."""
        seats: list[Seat] = self.__dict__.get("seats") or view(self, "seats")
        for s in list.__iter__(seats):
            if (s.alive or not living) and (role is None or s.role == role) and (
                    camp is None or s.camp == camp) and (
                    skill is None or s.skills.get(skill) == "held"):
                return s
        return None

    def count(self, camp: str, living: bool = True) -> int:
        """How many seats (living ones, unless `living=False`) are in `camp`."""
        return sum(1 for s in self.peek_seats() if s.camp == camp and (s.alive or not living))

    def members(self, camp: str, living: bool = True) -> list[Seat]:
        return [s for s in self.seats if s.camp == camp and (s.alive or not living)]

    def deadline(self, deadline_id: str) -> Deadline | None:
        deadlines: list[Deadline] = view(self, "deadlines")  # read only (frozen deadlines)
        return next((d for d in deadlines if d.id == deadline_id), None)

    @property
    def over(self) -> bool:
        """No command is taken any more: a winner, a halt for a ruling, or the judge's end."""
        return bool(self.winner) or self.halted or self.ended

    def next_deadline(self) -> Deadline | None:
        """The deadline to fire next; none while the game is over or paused."""
        if not self.deadlines or self.over or self.paused_at is not None:
            return None
        deadlines: list[Deadline] = view(self, "deadlines")  # read only
        # The earliest time first (one pass, no key function), the full order only for a tie.
        due = min([d.due for d in deadlines])
        tied = [d for d in deadlines if d.due == due]
        if len(tied) == 1:
            return tied[0]
        order = _ORDERS.get(self.ruleset) or _deadline_order(self.ruleset)
        return min(tied, key=lambda d: (d.due, order.get(d.kind, 9), d.id))
