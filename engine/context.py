"""The context toolkit: the working copy of one command's processing (`Ctx`) and the shared
mechanisms rule code uses on it: events and audiences, randomness, seats, deadlines and
reminders, night slots, cards, going out, the sheriff, the CHECK (RULES.md §1.5), ties.

`RulesetHooks` is what the engine asks of a ruleset (engine.ruleset.Ruleset is the base class
with the shared defaults); it lives here so that this module imports no ruleset code.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, time, timedelta
from typing import Any, Literal, NoReturn, Protocol, overload

from engine import rng
from engine.clone import view
from engine.commands import Act
from engine.events import EVENT_VERSIONS, Audience, Event
from engine.model import (
    ENGINE_DEADLINE_KINDS,
    Anchor,
    Deadline,
    DeadlineKind,
    GameState,
    Night,
    Seat,
    Slot,
    Submission,
    deadline_kinds,
)
from engine.options import TYPED_CACHE, CommonOptions, typed_options
from engine.votes import Tally

_new = object.__new__
_set = object.__setattr__
_VERSIONS = EVENT_VERSIONS
_EVENT_FIELDS = frozenset(Event.model_fields)
_EVERYONE = Audience.everyone()  # shared frozen instances
_JUDGE = Audience.judge()


def _audience_to(seats: list[int] | tuple[int, ...]) -> Audience:
    """`Audience.to(*seats)`, inlined (one call per private message)."""
    audience = _new(Audience)
    _set(audience, "__dict__", {"public": False, "seats": tuple(sorted(set(seats))),
                                "group": None})
    _set(audience, "__pydantic_fields_set__", {"seats"})
    _set(audience, "__pydantic_extra__", None)
    _set(audience, "__pydantic_private__", None)
    return audience

# Cards whose reason everybody may know (the vote thread and the badge are public).
PUBLIC_CARD_REASONS = {"vote", "void_vote", "judge", "handover", "lastwords"}

# How far ahead a judge may move a time (P-TIME-2, JudgeExtend): a slow game runs for weeks,
# not years, and a time beyond what the clock can schedule must never enter the state.
TIME_HORIZON = timedelta(days=31)

# Deadline kinds whose owers get a DM reminder before they pass.
# (The engine's kinds: a ruleset's own kinds say so in Ruleset.deadline_kinds; Ctx.kinds has both.)
REMINDED = {kind for kind, k in ENGINE_DEADLINE_KINDS.items() if k.reminded}

# Duties that outlive going out: a seat that is out is still told what concerns them (their
# prompts, the answers, reminders, missed deadlines and cards), and nothing else (G-RES-4).
OUT_DUTIES = {kind for kind, k in ENGINE_DEADLINE_KINDS.items() if k.outlives_out}
# The judge's review of the dawn (engine.flow, docs/rules-judge.md P-REVIEW): night.data[REVIEW]
# holds the night's deadlines that wait for 天亮, deadline id -> its due time (ISO).
REVIEW = "review"
# ... and, while the review lasts, when the night would have resolved and the open it would
# have had (ISO): the publication gives the night's duties the time they had lost (P-REVIEW-2).
REVIEW_SINCE = "review_since"
# The deadline kind that tells the table, at the open the review moved, when the day opens.
OPEN_NOTICE = "open_notice"


def held_due(night: Night | None, deadline_id: str) -> datetime | None:
    """When a deadline held for the judge's review was due; None when it is not held."""
    held = night.data.get(REVIEW) if night is not None else None
    due = held.get(deadline_id) if held else None
    return datetime.fromisoformat(due) if due is not None else None


class Reject(Exception):
    def __init__(self, code: str, **data: Any) -> None:
        super().__init__(code)
        self.code = code
        self.data = data


class GameOver(Exception):
    """Raised when a winner is declared: it stops all resolution at once (G-END-4)."""


class RulesetHooks(Protocol):
    """What the engine asks of a ruleset while a command runs (engine.ruleset.Ruleset documents
    each hook and gives the shared defaults)."""

    name: str
    options_model: type[CommonOptions]

    def setup_deadline(self, ctx: Ctx, deadline: Deadline) -> None: ...
    def open_day(self, ctx: Ctx, day: int) -> None: ...
    def exiles_on(self, ctx: Ctx, day: int) -> bool: ...
    def ballot(self, ctx: Ctx, day: int, kind: str) -> tuple[set[int], set[int]]: ...
    def check_vote(self, ctx: Ctx, voter: int, target: int | None) -> None: ...
    def sheriff_weight(self, ctx: Ctx) -> float: ...
    def spares_exile(self, ctx: Ctx, seat: int) -> bool: ...
    def last_words_right(self, ctx: Ctx, st: Seat) -> bool | None: ...
    def first_to_reach_rule(self, ctx: Ctx) -> str: ...
    def night_handover(self, ctx: Ctx) -> str: ...
    def red_card_successor(self, ctx: Ctx) -> str: ...
    def pick_sheriff(self, ctx: Ctx, tally: Tally) -> int | None: ...
    def pick_exile(self, ctx: Ctx, tally: Tally) -> int | None: ...
    def open_night(self, ctx: Ctx) -> None: ...
    def act(self, ctx: Ctx, cmd: Act) -> None: ...
    def slot_expired(self, ctx: Ctx, slot: Slot) -> None: ...
    def ready(self, ctx: Ctx) -> bool: ...
    def resolve_night(self, ctx: Ctx) -> None: ...
    def deadline(self, ctx: Ctx, deadline: Deadline) -> None: ...
    def on_out(self, ctx: Ctx, seats: list[int]) -> None: ...
    def may_handover(self, ctx: Ctx, seat: int) -> bool: ...
    def procedures_apply(self, ctx: Ctx) -> bool: ...
    def after_out(self, ctx: Ctx, seats: list[int]) -> None: ...
    def camp_lost(self, ctx: Ctx, camp: str) -> bool: ...
    def camp_wins(self, ctx: Ctx, camp: str) -> bool: ...
    def on_camp_lost(self, ctx: Ctx, camp: str) -> None: ...
    def may_surrender(self, ctx: Ctx) -> bool: ...


class Ctx:
    """The working copy of one command's processing, with the shared mechanisms."""

    # One per command, and its attributes are read all through rule code: slots make both
    # cheaper (and a misspelt attribute an error).
    __slots__ = ("state", "now", "rs", "o", "events", "checks_on", "_kinds")

    def __init__(self, state: GameState, now: datetime, ruleset: RulesetHooks) -> None:
        self.state = state
        self.now = now
        self.rs = ruleset
        # the game's options, typed (the ruleset's model: rule code casts to its own class)
        hit = TYPED_CACHE.get(id(state.options))
        self.o: CommonOptions = hit[1] if hit is not None and hit[0] is state.options and (
            isinstance(hit[1], ruleset.options_model)) else typed_options(
            ruleset.options_model, state.options)
        self.events: list[Event] = []
        self.checks_on = True  # a ruleset may merge several outs into one check
        self._kinds: dict[str, DeadlineKind] | None = None  # see `kinds`

    @property
    def kinds(self) -> dict[str, DeadlineKind]:
        """The deadline kinds of this game: the engine's and the ruleset's."""
        kinds = self._kinds
        if kinds is None:
            kinds = self._kinds = deadline_kinds(self.rs.name)
        return kinds

    # basics ------------------------------------------------------------
    def opt(self, key: str) -> Any:
        """An option by its key, untyped (the typed model is `self.o`)."""
        return self.state.options[key]

    def reject(self, code: str, **data: Any) -> NoReturn:
        raise Reject(code, **data)

    @property
    def night(self) -> Night:
        """The current night, for rule code that only runs while there is one."""
        night = self.state.night
        assert night is not None, "no night"
        return night

    def emit(self, type_: str, audience: Audience, **data: Any) -> None:
        self._push(type_, audience, data)

    def _push(self, type_: str, audience: Audience, data: dict[str, Any]) -> None:
        """`emit` with the data as a dict of the event's own (`announce`, `note` and `tell`
        hand on their fresh keyword dict: no second packing)."""
        # `Event.trusted`, inlined: this runs for every event, several per command.
        ev = _new(Event)
        _set(ev, "__dict__", {"type": type_, "class_version": _VERSIONS.get(type_, 1),
                              "at": self.now, "phase": self.state.phase,
                              "audience": audience, "data": data})
        _set(ev, "__pydantic_fields_set__", set(_EVENT_FIELDS))
        _set(ev, "__pydantic_extra__", None)
        _set(ev, "__pydantic_private__", None)
        self.events.append(ev)

    def tell(self, seats: list[int] | tuple[int, ...] | int, type_: str, **data: Any) -> None:
        """Private message(s); dead seats get it in the log only (G-RES-4)."""
        all_seats: list[Seat] = view(self.state, "seats")  # read only
        if isinstance(seats, int):
            living: list[int] = [seats] if list.__getitem__(all_seats, seats - 1).alive else []
        else:
            living = [s for s in seats
                      if list.__getitem__(all_seats, s - 1).alive]
        self._push(type_, _audience_to(living), data)

    def tell_duty(self, seats: list[int] | tuple[int, ...] | int, type_: str,
                  **data: Any) -> None:
        """Private message(s) about a duty that outlives going out (a deadline kind that
        `outlives_out`, or what a ruleset says so of): told to the seat whether it is in or
        out."""
        self._push(type_, _audience_to([seats] if isinstance(seats, int) else seats), data)

    def tell_about(self, concern: str, seats: list[int] | tuple[int, ...] | int, type_: str,
                   /, **data: Any) -> None:
        """`tell`, or `tell_duty` when the duty it concerns outlives going out."""
        (self.tell_duty if self.outlives_out(concern) else self.tell)(seats, type_, **data)

    def outlives_out(self, concern: str) -> bool:
        """Whether duty `concern` (a deadline kind) outlives going out (G-RES-4)."""
        kind = self.kinds.get(concern)
        return kind is not None and kind.outlives_out

    def tell_group(self, name: str, type_: str, **data: Any) -> None:
        """A post in group `name` for its living members; with none alive, the log only: a
        post in a room of the dead is feedback to dead members (G-RES-4)."""
        members = [s for s in self.view("groups").get(name, []) if self.state.peek(s).alive]
        self.emit(type_, Audience(seats=tuple(members), group=name) if members
                  else Audience.judge(), **data)

    def announce(self, type_: str, **data: Any) -> None:
        self._push(type_, _EVERYONE, data)

    def note(self, type_: str, **data: Any) -> None:
        """For the judge and the log only."""
        self._push(type_, _JUDGE, data)

    def news(self, key: str, item: Any) -> None:
        self.state.news.setdefault(key, []).append(item)

    # randomness ----------------------------------------------------------
    def rand_choice(self, items: list[Any], purpose: str) -> Any:
        counter = self.state.rng_counter
        self.state.rng_counter += 1
        picked = rng.choice(self.state.seed, counter, items)
        self.note("RandomChoice", purpose=purpose, counter=counter, options=list(items),
                  picked=picked)
        return picked

    # seats -------------------------------------------------------------
    def seat(self, n: int) -> Seat:
        if not 1 <= n <= len(view(self.state, "seats")):
            self.reject("no_such_seat", seat=n)
        return self.state.seats[n - 1]

    def peek(self, n: int) -> Seat:
        """`seat(n)` to read only (`GameState.peek`): no copy of the seat for a mere check."""
        seats: list[Seat] = view(self.state, "seats")
        if not 1 <= n <= len(seats):
            self.reject("no_such_seat", seat=n)
        return list.__getitem__(seats, n - 1)

    def view(self, name: str) -> Any:
        """State field `name` to read only, then and there (`engine.clone.view`)."""
        return view(self.state, name)

    def holder(self, role: str | None = None, *, camp: str | None = None,
               skill: str | None = None, living: bool = True) -> Seat | None:
        """`GameState.holder`: the first seat with this role, camp and skill; to read only
        (change it through `seat(n)`)."""
        return self.state.holder(role, camp=camp, skill=skill, living=living)

    def holders(self, role: str | None = None, *, camp: str | None = None,
                skill: str | None = None, living: bool = True) -> list[Seat]:
        """`GameState.holders`, to read only."""
        return self.state.holders(role, camp=camp, skill=skill, living=living)

    @overload
    def living_target(self, n: int | None, *, allow_none: Literal[False] = False) -> int: ...

    @overload
    def living_target(self, n: int | None, *, allow_none: bool) -> int | None: ...

    def living_target(self, n: int | None, *, allow_none: bool = False) -> int | None:
        """`n` if it is a living seat (or None, when `allow_none`); else a refusal."""
        if n is None:
            if not allow_none:
                self.reject("target_required")
            return None
        if not self.peek(n).alive:
            self.reject("target_out", target=n)
        return n

    # deadlines ---------------------------------------------------------
    def due(self, anchor: Anchor, day: int, offset_min: int,
            at: datetime | None = None) -> datetime:
        sch = self.view("schedule")  # read only
        if anchor == "open":
            base = sch.open_at(day)
        elif anchor == "close":
            base = sch.close_at(day)
        elif anchor == "morning":
            base = datetime.combine(sch.close_at(day).date() + timedelta(days=1), time(0, 0))
        else:
            assert at is not None
            base = at
        return base + timedelta(minutes=offset_min)

    def add_deadline(self, kind: str, day: int, anchor: Anchor, offset_min: int = 0,
                     seats: list[int] | None = None, key: str = "",
                     at: datetime | None = None) -> Deadline:
        ident = f"{kind}:{key or day}"
        if anchor == "at":
            at = at or self.now
        dl = Deadline(id=ident, kind=kind, day=day, seats=list(seats or []), anchor=anchor,
                      offset_min=offset_min, due=self.due(anchor, day, offset_min, at))
        if anchor == "at":
            dl = replace(dl, offset_min=0)
        self.remove_deadline(ident)
        self.state.deadlines.append(dl)
        self._add_reminder(dl)
        return dl

    def _add_reminder(self, dl: Deadline) -> None:
        """A DM reminder before every deadline that someone owes an action for."""
        before = self.o.reminders_before
        kind = self.kinds.get(dl.kind)
        if not before or kind is None or not kind.reminded or (
                dl.kind != "day_close" and not dl.seats):
            return
        due = dl.due - timedelta(minutes=before)
        if due <= self.now:
            return
        self.state.deadlines.append(Deadline(
            id=f"remind:{dl.id}", kind="remind", day=dl.day, seats=list(dl.seats),
            anchor="at", offset_min=before, due=due, parent=dl.id))

    def remove_deadline(self, ident: str) -> None:
        """Remove deadline `ident`, with its reminder (`drop_deadlines`, without a call per
        deadline, and without copying the list when there is no such deadline)."""
        # (the new list is built from a view: the deadlines are frozen, so a fresh list of
        # them is the working copy's own, and copying the old one first would be wasted)
        deadlines = view(self.state, "deadlines")
        for d in deadlines:  # (a loop: no generator frame for any())
            if d.id == ident:
                self.state.deadlines = [d for d in deadlines
                                        if d.id != ident and d.parent != ident]
                return

    def drop_deadlines(self, which: Any) -> None:
        """Remove the deadlines `which(d)` selects, with their reminders."""
        deadlines = view(self.state, "deadlines")  # (a fresh list of frozen deadlines, as above)
        gone = {d.id for d in deadlines if which(d)}
        self.state.deadlines = [d for d in deadlines if d.id not in gone and d.parent not in gone]

    def retime_deadlines(self) -> None:
        for i, dl in enumerate(self.state.deadlines):
            if dl.anchor != "at":
                self.state.deadlines[i] = replace(
                    dl, due=self.due(dl.anchor, dl.day, dl.offset_min))
        dues = {d.id: d.due for d in self.state.deadlines}
        for i, dl in enumerate(self.state.deadlines):
            if dl.parent in dues:
                self.state.deadlines[i] = replace(
                    dl, due=dues[dl.parent] - timedelta(minutes=dl.offset_min))

    # deadline offsets (options) -------------------------------------------------
    def night_deadline(self) -> tuple[Anchor, int]:
        return "close", self.o.deadlines_night_action

    # night slots ---------------------------------------------------------
    def add_slot(self, key: str, seats: list[int], anchor: Anchor, offset_min: int,
                 yellow: bool) -> Slot:
        night = self.state.night
        assert night is not None
        dl = self.add_deadline("night", night.day, anchor, offset_min, seats,
                               key=f"{night.day}:{key}")
        slot = Slot(key=key, seats=list(seats), deadline_id=dl.id, yellow=yellow)
        night.slots[key] = slot
        return slot

    def require_night(self) -> Night:
        """The night still collecting actions, or a refusal."""
        self.night_open()
        night = self.state.night
        assert night is not None
        return night

    def night_open(self) -> Night:
        """`require_night` to read only (a view: a refused command copies no night)."""
        night: Night | None = self.view("night")
        if not self.state.phase.startswith("N") or night is None or night.resolved:
            self.reject("not_night")
        assert night is not None
        return night

    def slot_for(self, cmd: Act, key: str) -> Slot:
        """The open night slot `key` that the sender of `cmd` may answer, or a refusal."""
        # The checks read the night without copying it (most refusals stop here); the slot
        # handed out is the working copy's.
        slot = self.night_open().slots.get(key)
        if slot is None or cmd.seat not in slot.seats:
            self.reject("not_your_skill", skill=cmd.skill)
        assert slot is not None
        if slot.expired or self._past_held(slot):
            self.reject("deadline_passed")
        return self.night.slots[key]

    def _past_held(self, slot: Slot) -> bool:
        """A slot whose deadline is held for the judge's review of the dawn (engine.flow
        `_start_review`) takes an action made before that deadline only."""
        night: Night | None = self.view("night")
        if night is None or REVIEW not in night.data:
            return False
        due = held_due(night, slot.deadline_id)
        return due is None or self.now > due

    def open_slots(self, seat: int) -> list[Slot]:
        """The night slots `seat` may still answer (for a `pass`); refuses if there are none."""
        night: Night | None = self.view("night")  # read only until there is one
        if night is None or not any(seat in s.seats and not s.final and not s.expired
                                    and not self._past_held(s) for s in night.slots.values()):
            self.reject("nothing_to_pass")
        night = self.night
        return [s for s in night.slots.values()
                if seat in s.seats and not s.final and not s.expired and not self._past_held(s)]

    def submit(self, slot: Slot, cmd: Act, targets: list[int | None]) -> None:
        if slot.final:
            self.reject("action_final")
        if slot.sub is not None and not self.o.night_allow_resubmit:
            self.reject("no_resubmit")
        slot.sub = Submission(skill=cmd.skill, targets=list(targets), options=dict(cmd.options),
                              by=cmd.seat, at=self.now)
        if slot.prompted:
            slot.answered_after_prompt = True

    # cards -------------------------------------------------------------
    def yellow(self, n: int, reason: str) -> None:
        st = self.state.seat(n)
        st.yellow += 1
        self.tell_about(reason, n, "YellowCard", seat=n, reason=reason, count=st.yellow)
        # A card for a missed night or setup duty would tell everyone that the seat had one
        # (a role's night or setup duty): only the player and the judge learn of it.
        night_duty = reason not in PUBLIC_CARD_REASONS
        secret = night_duty and not self.o.public_announce_night_cards
        if night_duty and not self.o.cards_night_yellow_counts_to_red:
            st.uncounted_yellow += 1  # a red card it caused would tell of the night duty
        if secret:
            self.note("YellowCardSecret", seat=n, reason=reason, count=st.yellow)
        else:
            self.announce("YellowCardPublic", seat=n, count=st.yellow)
            self.news("cards", {"seat": n, "color": "yellow"})
        limit = self.o.cards_yellow_to_red
        if limit and st.yellow - st.uncounted_yellow >= limit and not st.red:
            self.red(n, "yellow_limit", quiet=secret)

    def red(self, n: int, reason: str, *, quiet: bool = False) -> None:
        """Send off. `quiet`: caused by a secret card, so the public learns of it only in the
        next day post, not at the revealing moment."""
        st = self.state.seat(n)
        st.red = True
        self.emit("RedCard", Audience.judge() if quiet else Audience.everyone(), seat=n,
                  reason=reason)
        self.news("cards", {"seat": n, "color": "red"})
        if st.alive:
            self.put_out(n, "red-card")

    def missed(self, n: int, duty: str, card: bool) -> None:
        """A required actor missed a deadline: a yellow card unless contact or notice waives it."""
        st = self.state.seat(n)
        self.tell_about(duty, n, "DeadlineMissed", duty=duty)
        if not card or not self.rs.procedures_apply(self):
            return
        if st.contact or st.notice:
            waiver = "contact" if st.contact else "notice"
            if st.contact:
                st.contact = False
            else:
                st.notice = False
            self.note("CardWaived", seat=n, duty=duty, waiver=waiver)
            return
        self.yellow(n, duty)

    # going out ---------------------------------------------------------
    def put_out(self, n: int, cause: str) -> list[int]:
        """One atomic change: n goes out, with the lover partner (C-LOVER-3); then CHECK."""
        state = self.state
        st = state.seat(n)
        if not st.alive:
            return []
        batch = [n]
        self._mark_out(st, cause)
        partner = state.seat(st.lover_of) if st.lover_of else None
        if partner and partner.alive and (
                cause != "red-card" or self.o.cards_red_lover_partner_dies):
            if not self.o.check_bundle_lovers:
                self.check("atomic")
            self._mark_out(partner, "lovers")
            batch.append(partner.seat)
        self.rs.on_out(self, batch)  # same atomic change (e.g. Key盾)
        self.check("atomic")
        for out in batch:
            self._after_out(state.seat(out))
        self.rs.after_out(self, batch)
        return batch

    def _mark_out(self, st: Seat, cause: str) -> None:
        st.alive = False
        st.out_cause = cause
        st.out_phase = self.state.phase
        self.note("SeatOut", seat=st.seat, cause=cause)
        self.tell_duty(st.seat, "YouAreOut", seat=st.seat)  # the notice that opens the duties
        self.news("outs", st.seat)

    def _after_out(self, st: Seat) -> None:
        state = self.state
        day = max(state.day, 1)
        if state.sheriff == st.seat:
            if st.out_cause == "red-card":
                state.sheriff = None
                self.red_card_successor()
            else:
                self.owe_handover(st.seat)
        if self._lastwords_right(st):
            state.lastwords_due.append(st.seat)
            dl = state.deadline(f"lastwords:{day}")
            seats = sorted({*(dl.seats if dl else []), st.seat})
            self.add_deadline("lastwords", day + 1, "open", 0, seats, key=str(day))
            self.tell_duty(st.seat, "LastWordsDue")

    def owe_handover(self, seat: int, notice: str = "HandoverDue") -> None:
        """The sheriff at `seat` gives the badge up (he went out, or a ruleset takes it from
        him): he owes a successor by the handover deadline (C-SHERIFF-4..6, P-DL-1); `notice`
        is the event that tells him."""
        state = self.state
        day = max(state.day, 1)
        state.sheriff = None
        state.handover_due = seat
        if state.phase.startswith("D"):
            self.add_deadline("handover", day, "close", self.o.deadlines_after_exile,
                              [seat], key=str(day))
        elif self.rs.night_handover(self) == "close_plus_30":
            self.add_deadline("handover", day, "at", 30, [seat], key=str(day))
        else:
            self.add_deadline("handover", day + 1, "open", 0, [seat], key=str(day))
        self.tell_duty(seat, notice)

    def tear_badge(self, seat: int) -> None:
        """The sheriff who owes a successor destroys the badge instead (撕警徽, where a
        ruleset allows it): nobody is sheriff for the rest of the game."""
        state = self.state
        if state.handover_due != seat:
            self.reject("no_handover_due")
        state.data.pop("held_handover", None)
        self.drop_deadlines(lambda d: d.kind == "handover")
        state.handover_due = None
        self.announce("BadgeTorn", seat=seat)

    def _lastwords_right(self, st: Seat) -> bool:
        own = self.rs.last_words_right(self, st)
        if own is not None:
            return own
        rule = self.o.lastwords_eligible
        if rule == "all":
            return True
        if st.out_cause == "red-card":
            return False
        if rule == "first_night_and_exiles":
            return st.out_cause == "vote" or st.out_phase == "N1"
        return True

    def release_handover(self, seat: int) -> None:
        """Apply a successor that `seat` named while the handover was held."""
        held = self.state.data.pop("held_handover", None)
        if not held or held[0] != seat or self.state.handover_due != seat:
            return
        if self.state.seat(held[1]).alive:
            self.drop_deadlines(lambda d: d.kind == "handover")
            self.set_sheriff(held[1], "handover")

    def red_card_successor(self) -> None:
        policy = self.rs.red_card_successor(self)
        living = self.state.living_numbers()
        if policy == "random" and living:
            self.set_sheriff(self.rand_choice(living, "sheriff_successor"), "random")

    def set_sheriff(self, n: int, how: str) -> None:
        self.state.sheriff = n
        self.state.handover_due = None
        self.tell(n, "YouAreSheriff", seat=n)
        self.announce("SheriffChanged", seat=n, how=how)

    # CHECK (RULES.md §1.5) ------------------------------------------------
    _LEVELS = {"atomic_event": {"atomic", "step", "phase"}, "per_step": {"step", "phase"},
               "per_phase": {"phase"}}

    def check(self, level: str) -> None:
        if not self.checks_on or level not in self._LEVELS[self.o.check_granularity]:
            return
        state = self.state
        if state.winner:
            raise GameOver
        # (read only until a camp is lost: a CHECK that finds nothing copies nothing)
        lost_before = list(self.view("camps_lost"))
        unlost = [c for c in self.view("camps_on_field") if c not in lost_before]
        if not self.o.check_lose_first:
            for camp in unlost:
                if self.rs.camp_wins(self, camp):
                    self.declare(camp)
        newly = [c for c in unlost
                 if c in self.view("camps_surrendered") or self.rs.camp_lost(self, c)]
        for camp in newly:
            state.camps_lost.append(camp)
            self.note("CampLost", camp=camp)
        for camp in newly:
            self.rs.on_camp_lost(self, camp)
        # (views: the lists are read here, and copied only where a camp is lost, above)
        lost = self.view("camps_lost")
        unlost = [c for c in self.view("camps_on_field") if c not in lost]
        if len(unlost) == 1:
            self.declare(unlost[0])
        if not unlost:
            policy = self.o.check_no_unlost_camp
            if policy == "judge_ruling":
                state.halted = True
                state.deadlines = []
                self.note("JudgeRulingNeeded", camps=newly)
                raise GameOver
            if policy == "last_event_reverted":
                state.camps_lost = lost_before
                self.note("LossReverted", camps=newly)
                return
            self.declare(policy)
        for camp in unlost:
            if self.rs.camp_wins(self, camp):
                self.declare(camp)

    def declare(self, camp: str) -> None:
        state = self.state
        state.winner = camp
        state.phase = "END"
        state.deadlines = []
        roles = {s.seat: s.role for s in state.seats}
        self.announce("GameOver", winner=camp, roles=roles, seed=state.seed,
                      members=[s.seat for s in state.seats if s.camp == camp])
        raise GameOver

    # votes -------------------------------------------------------------
    def first_to_reach(self, t: Tally) -> int | None:
        if not t.tied:
            return None
        if len(t.tied) == 1:
            return t.tied[0]
        earliest = min(t.reached[c] for c in t.tied)
        firsts = [c for c in t.tied if t.reached[c] == earliest]
        if len(firsts) == 1:
            return firsts[0]
        return self.rand_choice(firsts, "tie")


def living_player(ctx: Ctx, n: int) -> Seat:
    st = ctx.seat(n)
    if not st.alive:
        ctx.reject("you_are_out")
    return st
