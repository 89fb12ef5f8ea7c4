"""handle(state, command, now) -> (state, events) | Rejection. Pure: no clock, no I/O.

The state given is never changed: the engine works on a copy (`engine.clone.clone`, a deep copy
that shares only what never changes in place) and throws it away when a command is refused, so
a refused command changes nothing and an accepted one is all-or-nothing.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any, Literal, NoReturn, overload

from engine import rng
from engine.clone import clone
from engine.commands import (
    Act,
    Command,
    Handover,
    JudgeCard,
    JudgeCorrection,
    JudgeEnd,
    JudgeExtend,
    JudgePause,
    JudgeProxy,
    JudgeResume,
    JudgeSetSchedule,
    JudgeSetTime,
    JudgeWaiver,
    LastWords,
    Surrender,
    Tick,
    Vote,
    parse_command,
)
from engine.events import Audience, Event, Rejection, event_version
from engine.model import (
    Anchor,
    CorrectionRequest,
    Deadline,
    GameState,
    Night,
    Schedule,
    Seat,
    Slot,
    Submission,
    VotePost,
)
from engine.options import validate_options, witch_deadline
from engine.ruleset import Ruleset, get_ruleset
from engine.votes import ABSTAIN, REVOTE, Tally, tally

# Cards whose reason everybody may know (the vote thread and the badge are public).
PUBLIC_CARD_REASONS = {"vote", "void_vote", "judge", "handover", "lastwords"}

# How far ahead a judge may move a time (P-TIME-2, JudgeExtend): a slow game runs for weeks,
# not years, and a time beyond what the clock can schedule must never enter the state.
TIME_HORIZON = timedelta(days=31)

# Deadline kinds whose owers get a DM reminder before they pass.
REMINDED = {"setup", "night", "handover", "hunter", "day_close"}

# Duties that outlive going out: a seat that is out is still told what concerns them (their
# prompts, the answers, reminders, missed deadlines and cards), and nothing else (G-RES-4).
OUT_DUTIES = {"handover", "lastwords", "hunter"}


class Reject(Exception):
    def __init__(self, code: str, **data: Any) -> None:
        super().__init__(code)
        self.code = code
        self.data = data


class GameOver(Exception):
    """Raised when a winner is declared: it stops all resolution at once (G-END-4)."""


class Ctx:
    """The working copy of one command's processing, with the shared mechanisms."""

    def __init__(self, state: GameState, now: datetime, ruleset: Ruleset) -> None:
        self.state = state
        self.now = now
        self.rs = ruleset
        self.events: list[Event] = []
        self.checks_on = True  # a ruleset may merge several outs into one check

    # basics ------------------------------------------------------------
    def opt(self, key: str) -> Any:
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
        self.events.append(Event(type=type_, class_version=event_version(type_), at=self.now,
                                 phase=self.state.phase, audience=audience, data=data))

    def tell(self, seats: list[int] | tuple[int, ...] | int, type_: str, **data: Any) -> None:
        """Private message(s); dead seats get it in the log only (G-RES-4)."""
        if isinstance(seats, int):
            seats = [seats]
        living = [s for s in seats if self.state.seat(s).alive]
        self.emit(type_, Audience.to(*living), **data)

    def tell_duty(self, seats: list[int] | tuple[int, ...] | int, type_: str,
                  **data: Any) -> None:
        """Private message(s) about a duty that outlives going out (OUT_DUTIES, the witch's
        kill post): told to the seat whether it is in or out."""
        self.emit(type_, Audience.to(*([seats] if isinstance(seats, int) else seats)), **data)

    def tell_about(self, concern: str, seats: list[int] | tuple[int, ...] | int, type_: str,
                   /, **data: Any) -> None:
        """`tell`, or `tell_duty` when the duty it concerns outlives going out (OUT_DUTIES)."""
        (self.tell_duty if concern in OUT_DUTIES else self.tell)(seats, type_, **data)

    def tell_group(self, name: str, type_: str, **data: Any) -> None:
        """A post in group `name` for its living members; with none alive, the log only: a
        post in a room of the dead is feedback to dead members (G-RES-4)."""
        members = [s for s in self.state.groups.get(name, []) if self.state.seat(s).alive]
        self.emit(type_, Audience(seats=tuple(members), group=name) if members
                  else Audience.judge(), **data)

    def announce(self, type_: str, **data: Any) -> None:
        self.emit(type_, Audience.everyone(), **data)

    def note(self, type_: str, **data: Any) -> None:
        """For the judge and the log only."""
        self.emit(type_, Audience.judge(), **data)

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
        if not 1 <= n <= len(self.state.seats):
            self.reject("no_such_seat", seat=n)
        return self.state.seat(n)

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
        if not self.seat(n).alive:
            self.reject("target_out", target=n)
        return n

    # deadlines ---------------------------------------------------------
    def due(self, anchor: Anchor, day: int, offset_min: int,
            at: datetime | None = None) -> datetime:
        sch = self.state.schedule
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
            dl = dl.model_copy(update={"offset_min": 0})
        self.remove_deadline(ident)
        self.state.deadlines.append(dl)
        self._add_reminder(dl)
        return dl

    def _add_reminder(self, dl: Deadline) -> None:
        """A DM reminder before every deadline that someone owes an action for."""
        before = self.opt("reminders.before")
        if not before or dl.kind not in REMINDED or (dl.kind != "day_close" and not dl.seats):
            return
        due = dl.due - timedelta(minutes=before)
        if due <= self.now:
            return
        self.state.deadlines.append(Deadline(
            id=f"remind:{dl.id}", kind="remind", day=dl.day, seats=list(dl.seats),
            anchor="at", offset_min=before, due=due, parent=dl.id))

    def remove_deadline(self, ident: str) -> None:
        self.drop_deadlines(lambda d: d.id == ident)

    def drop_deadlines(self, which: Any) -> None:
        """Remove the deadlines `which(d)` selects, with their reminders."""
        gone = {d.id for d in self.state.deadlines if which(d)}
        self.state.deadlines = [d for d in self.state.deadlines
                                if d.id not in gone and d.parent not in gone]

    def retime_deadlines(self) -> None:
        for i, dl in enumerate(self.state.deadlines):
            if dl.anchor != "at":
                self.state.deadlines[i] = dl.model_copy(
                    update={"due": self.due(dl.anchor, dl.day, dl.offset_min)})
        dues = {d.id: d.due for d in self.state.deadlines}
        for i, dl in enumerate(self.state.deadlines):
            if dl.parent in dues:
                self.state.deadlines[i] = dl.model_copy(
                    update={"due": dues[dl.parent] - timedelta(minutes=dl.offset_min)})

    # deadline offsets (options) -------------------------------------------------
    def night_deadline(self) -> tuple[Anchor, int]:
        return "close", self.opt("deadlines.night_action")

    def witch_deadline(self) -> tuple[Anchor, int]:
        return witch_deadline(str(self.opt("deadlines.witch")))

    # night slots ---------------------------------------------------------
    def add_slot(self, key: str, seats: list[int], anchor: Anchor, offset_min: int,
                 yellow: bool) -> Slot:
        night = self.state.night
        assert night is not None
        dl = self.add_deadline("night", night.day, anchor, offset_min, seats,
                               key=f"{night.day}:{key}")
        slot = Slot(key=key, seats=seats, deadline_id=dl.id, yellow=yellow)
        night.slots[key] = slot
        return slot

    def require_night(self) -> Night:
        """The night still collecting actions, or a refusal."""
        night = self.state.night
        if not self.state.phase.startswith("N") or night is None or night.resolved:
            self.reject("not_night")
        assert night is not None
        return night

    def slot_for(self, cmd: Act, key: str) -> Slot:
        """The open night slot `key` that the sender of `cmd` may answer, or a refusal."""
        slot = self.require_night().slots.get(key)
        if slot is None or cmd.seat not in slot.seats:
            self.reject("not_your_skill", skill=cmd.skill)
        assert slot is not None
        if slot.expired:
            self.reject("deadline_passed")
        return slot

    def open_slots(self, seat: int) -> list[Slot]:
        """The night slots `seat` may still answer (for a `pass`); refuses if there are none."""
        night = self.state.night
        slots = [s for s in (night.slots.values() if night else [])
                 if seat in s.seats and not s.final and not s.expired]
        if not slots:
            self.reject("nothing_to_pass")
        return slots

    def submit(self, slot: Slot, cmd: Act, targets: list[int | None]) -> None:
        if slot.final:
            self.reject("action_final")
        if slot.sub is not None and not self.opt("night.allow_resubmit"):
            self.reject("no_resubmit")
        slot.sub = Submission(skill=cmd.skill, targets=targets, options=dict(cmd.options),
                              by=cmd.seat, at=self.now)
        if slot.prompted:
            slot.answered_after_prompt = True

    # cards -------------------------------------------------------------
    def yellow(self, n: int, reason: str) -> None:
        st = self.state.seat(n)
        st.yellow += 1
        self.tell_about(reason, n, "YellowCard", seat=n, reason=reason, count=st.yellow)
        # A card for a missed night or setup duty would tell everyone that the seat had one
        # (a wolf, a god, Cupid …): only the player and the judge learn of it.
        night_duty = reason not in PUBLIC_CARD_REASONS
        secret = night_duty and not self.opt("public.announce_night_cards")
        if night_duty and not self.opt("cards.night_yellow_counts_to_red"):
            st.uncounted_yellow += 1  # a red card it caused would tell of the night duty
        if secret:
            self.note("YellowCardSecret", seat=n, reason=reason, count=st.yellow)
        else:
            self.announce("YellowCardPublic", seat=n, count=st.yellow)
            self.news("cards", {"seat": n, "color": "yellow"})
        limit = self.opt("cards.yellow_to_red")
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
                cause != "red-card" or self.opt("cards.red_lover_partner_dies")):
            if not self.opt("check.bundle_lovers"):
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
            state.sheriff = None
            if st.out_cause == "red-card":
                self.red_card_successor()
            else:
                state.handover_due = st.seat
                if state.phase.startswith("D"):
                    self.add_deadline("handover", day, "close", self.opt("deadlines.after_exile"),
                                      [st.seat], key=str(day))
                elif self.rs.night_handover(self) == "close_plus_30":
                    self.add_deadline("handover", day, "at", 30, [st.seat], key=str(day))
                else:
                    self.add_deadline("handover", day + 1, "open", 0, [st.seat], key=str(day))
                self.tell_duty(st.seat, "HandoverDue")
        if self._lastwords_right(st):
            state.lastwords_due.append(st.seat)
            dl = state.deadline(f"lastwords:{day}")
            seats = sorted({*(dl.seats if dl else []), st.seat})
            self.add_deadline("lastwords", day + 1, "open", 0, seats, key=str(day))
            self.tell_duty(st.seat, "LastWordsDue")

    def _lastwords_right(self, st: Seat) -> bool:
        rule = self.opt("lastwords.eligible")
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
        living = [s.seat for s in self.state.living()]
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
        if not self.checks_on or level not in self._LEVELS[self.opt("check.granularity")]:
            return
        state = self.state
        if state.winner:
            raise GameOver
        lost_before = list(state.camps_lost)
        unlost = [c for c in state.camps_on_field if c not in state.camps_lost]
        if not self.opt("check.lose_first"):
            for camp in unlost:
                if self.rs.camp_wins(self, camp):
                    self.declare(camp)
        newly = [c for c in unlost
                 if c in state.camps_surrendered or self.rs.camp_lost(self, c)]
        for camp in newly:
            state.camps_lost.append(camp)
            self.note("CampLost", camp=camp)
        for camp in newly:
            self.rs.on_camp_lost(self, camp)
        unlost = [c for c in state.camps_on_field if c not in state.camps_lost]
        if len(unlost) == 1:
            self.declare(unlost[0])
        if not unlost:
            policy = self.opt("check.no_unlost_camp")
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


# ---------------------------------------------------------------------------
# game creation


def new_game(*, ruleset: str, game_id: str, seed: str, start: date,
             roles: list[str] | None = None, players: int | None = None,
             options: dict[str, Any] | None = None, open_time: time = time(9, 0),
             close_time: time = time(21, 0), now: datetime | None = None,
             first_open: datetime | None = None, day_minutes: int | None = None,
             night_minutes: int | None = None, signing_pubkey: str | None = None
             ) -> tuple[GameState, list[Event]]:
    """Create and start a game: deal (or take) roles, run setup, schedule day 1.
    `signing_pubkey`: the hex public key that will sign the game's export (the bot makes the
    key pair); it goes into the commitment and the GameCreated event."""
    rs = get_ruleset(ruleset)
    opts = validate_options(rs.option_spec, options, rs.camps)
    rs.validate(opts)
    counter = 0
    if roles is None:
        if players is None:
            raise ValueError("give the roles or the number of players")
        preset = rs.preset(players, opts)
        roles = rng.shuffled(seed, 0, preset)
        counter = len(preset) - 1
    unknown = [r for r in roles if r not in rs.roles]
    if unknown:
        raise ValueError(f"unknown role(s) for {ruleset}: {', '.join(unknown)}; "
                         f"known: {', '.join(rs.roles)}")
    if first_open is None and open_time >= close_time:
        raise ValueError("the day must open before it closes")
    if first_open is not None:
        if not day_minutes or not night_minutes or day_minutes <= 0 or night_minutes <= 0:
            raise ValueError("a fast game needs positive day and night lengths in minutes")
        if witch_deadline(str(opts["deadlines.witch"]))[0] == "morning":
            raise ValueError("in a fast game deadlines.witch must be a duration after close, "
                             "e.g. 2min")
    state = GameState(
        game_id=game_id, ruleset=ruleset, options=opts, seed=seed, rng_counter=counter,
        seats=[Seat(seat=i + 1, role=r, camp="") for i, r in enumerate(roles)],
        schedule=Schedule(start=start, open=open_time, close=close_time, first_open=first_open,
                          day_minutes=day_minutes, night_minutes=night_minutes))
    ctx = Ctx(state, now or datetime.combine(start, time(0, 0)), rs)
    created: dict[str, Any] = {"players": len(roles), "ruleset": ruleset,
                               "commitment": rng.commitment(seed, roles, signing_pubkey)}
    if signing_pubkey is not None:  # only then: events of keyless games stay as they were
        created["signing_pubkey"] = signing_pubkey
    ctx.announce("GameCreated", **created)
    if opts["cards.yellow_to_red"] and not opts["public.announce_night_cards"]:
        # The judge learns up front what a send-off after secret night cards tells the table.
        ctx.note("CardPolicyNote", counted=opts["cards.night_yellow_counts_to_red"],
                 limit=opts["cards.yellow_to_red"])
    for st in state.seats:
        ctx.tell(st.seat, "RoleDealt", seat=st.seat, role=st.role)
    rs.setup(ctx)
    ctx.add_deadline("day_open", 1, "open")
    return state, ctx.events


# ---------------------------------------------------------------------------
# handle


def working_copy(state: GameState) -> GameState:
    """The copy a command works on (bench/engine.py swaps it to compare mechanisms)."""
    return clone(state)


def handle(state: GameState, command: Command | dict, now: datetime
           ) -> tuple[GameState, list[Event]] | Rejection:
    if isinstance(command, dict):
        command = parse_command(command)
    rs = get_ruleset(state.ruleset)
    if isinstance(command, Tick):
        dl = state.deadline(command.deadline_id)
        if dl is None or dl.due > now or state.over or state.paused_at is not None:
            return state, []  # stale tick, or the clock is stopped (JudgePause)
    elif state.over:
        return Rejection(code="game_over")
    work = working_copy(state)
    ctx = Ctx(work, now, rs)
    try:
        _dispatch(ctx, command)
        _maybe_resolve(ctx)
    except Reject as r:
        return Rejection(code=r.code, data=r.data)
    except GameOver:
        pass
    work.version += 1
    return work, ctx.events


def _dispatch(ctx: Ctx, cmd: Command) -> None:
    if isinstance(cmd, Tick):
        _fire(ctx, cmd.deadline_id, cmd.fired_at)
    elif isinstance(cmd, Act):
        _act(ctx, cmd)
    elif isinstance(cmd, Vote):
        _vote(ctx, cmd.seat, cmd.mode, cmd.target, by_judge=False)
    elif isinstance(cmd, JudgeProxy):
        _proxy(ctx, cmd)
    elif isinstance(cmd, JudgeCorrection):
        _judge_correction(ctx, cmd)
    elif isinstance(cmd, Handover):
        _handover(ctx, cmd)
    elif isinstance(cmd, LastWords):
        _lastwords(ctx, cmd)
    elif isinstance(cmd, Surrender):
        _surrender(ctx, cmd)
    elif isinstance(cmd, JudgeCard):
        _card(ctx, cmd)
    elif isinstance(cmd, JudgeWaiver):
        st = ctx.seat(cmd.seat)
        setattr(st, cmd.waiver, True)
        ctx.note("WaiverRecorded", seat=cmd.seat, waiver=cmd.waiver)
    elif isinstance(cmd, JudgeSetTime):
        _set_time(ctx, cmd)
    elif isinstance(cmd, JudgeExtend):
        _extend(ctx, cmd)
    elif isinstance(cmd, JudgeSetSchedule):
        _set_schedule(ctx, cmd)
    elif isinstance(cmd, JudgePause):
        _pause(ctx)
    elif isinstance(cmd, JudgeResume):
        _resume(ctx)
    elif isinstance(cmd, JudgeEnd):
        _end(ctx, cmd)


# deadlines and phases --------------------------------------------------------


def _fire(ctx: Ctx, ident: str, fired_at: datetime | None = None) -> None:
    state = ctx.state
    dl = state.deadline(ident)
    assert dl is not None
    ctx.remove_deadline(ident)
    if dl.kind == "setup":
        ctx.rs.setup_deadline(ctx, dl)
    elif dl.kind == "night":
        night = state.night
        if night is None or night.resolved:
            return
        slot = next((s for s in night.slots.values() if s.deadline_id == ident), None)
        if slot is not None:
            slot.expired = True
            ctx.rs.slot_expired(ctx, slot)
        if not any(d.kind == "night" for d in state.deadlines):
            _resolve(ctx)
    elif dl.kind == "handover":
        _handover_missed(ctx)
    elif dl.kind == "lastwords":
        for n in dl.seats:
            if n in state.lastwords_due:
                state.lastwords_due.remove(n)
                ctx.tell_duty(n, "LastWordsWaived")
                if ctx.opt("lastwords.yellow_on_missing"):
                    ctx.missed(n, "lastwords", True)
    elif dl.kind == "day_close":
        _close_day(ctx, dl.day)
    elif dl.kind == "day_open":
        _open_day(ctx, dl.day)
    elif dl.kind == "remind":
        _remind(ctx, dl, max(ctx.now, fired_at or ctx.now))
    else:
        ctx.rs.deadline(ctx, dl)


def _owing(ctx: Ctx, dl: Deadline) -> list[int]:
    """Who still owes an action for deadline `dl` (for reminders)."""
    state = ctx.state
    if dl.kind == "day_close":
        return [s.seat for s in state.living() if not state.votes.get(s.seat)]
    if dl.kind == "handover":
        return [state.handover_due] if state.handover_due in dl.seats else []
    if dl.kind == "night" and state.night is not None:
        slot = next((s for s in state.night.slots.values() if s.deadline_id == dl.id), None)
        if slot is None or slot.final or slot.expired:
            return []
        if slot.sub is not None and not (slot.prompted and not slot.answered_after_prompt):
            return []
        return [n for n in slot.seats if state.seat(n).alive]
    if dl.kind == "setup":
        return [n for n in dl.seats if state.seat(n).alive]
    return list(dl.seats)


def _remind(ctx: Ctx, dl: Deadline, sent: datetime) -> None:
    """DM the owers of `dl`'s deadline, unless it is due by the time the reminder goes out
    (`sent`: later than now after downtime), when the reminder would tell of a past deadline."""
    parent = ctx.state.deadline(dl.parent or "")
    if parent is None or parent.due <= sent:
        return
    owing = _owing(ctx, parent)
    due = parent.due.strftime("%m-%d %H:%M")
    for n in owing:
        ctx.tell_about(parent.kind, n, "Reminder", duty=parent.kind, due=due)
    if owing:
        ctx.note("LateSummary", duty=parent.kind, seats=owing, due=due)


def _future_time(ctx: Ctx, at: datetime) -> None:
    """A judge's new time: after now, and within TIME_HORIZON of it."""
    if at <= ctx.now:
        ctx.reject("time_in_past")
    if at > ctx.now + TIME_HORIZON:
        ctx.reject("time_too_far", days=TIME_HORIZON.days)


def _extend(ctx: Ctx, cmd: JudgeExtend) -> None:
    """The judge gives one player more time on every deadline that player owes."""
    ctx.seat(cmd.seat)
    _not_paused(ctx)
    _future_time(ctx, cmd.at)
    hits = [d for d in ctx.state.deadlines
            if cmd.seat in d.seats and d.kind in ("setup", "night", "handover", "hunter")]
    if not hits:
        ctx.reject("nothing_to_extend", seat=cmd.seat)
    for dl in hits:
        if cmd.at <= dl.due:
            ctx.reject("not_later", seat=cmd.seat)
    ids = {d.id for d in hits}
    ctx.state.deadlines = [d.model_copy(update={"anchor": "at", "offset_min": 0, "due": cmd.at})
                           if d.id in ids else d for d in ctx.state.deadlines]
    ctx.retime_deadlines()
    at = cmd.at.strftime("%m-%d %H:%M")
    told = ctx.tell_duty if any(d.kind in OUT_DUTIES for d in hits) else ctx.tell
    told(cmd.seat, "DeadlineExtended", seat=cmd.seat, due=at)
    ctx.note("DeadlineExtendedJudge", seat=cmd.seat, due=at, deadlines=sorted(ids))


def _maybe_resolve(ctx: Ctx) -> None:
    night = ctx.state.night
    if (night and not night.resolved and ctx.state.phase.startswith("N")
            and ctx.opt("night.resolve_early") and ctx.rs.ready(ctx)):
        _resolve(ctx)


def _resolve(ctx: Ctx) -> None:
    night = ctx.state.night
    assert night is not None
    night.resolved = True
    ctx.drop_deadlines(lambda d: d.kind == "night")
    ctx.note("NightResolving", day=night.day)
    ctx.rs.resolve_night(ctx)
    ctx.check("phase")


def _open_day(ctx: Ctx, day: int) -> None:
    state = ctx.state
    if state.night is not None and not state.night.resolved:
        _resolve(ctx)
    state.phase = f"D{day}"
    state.day = day
    state.votes = {}
    state.correction_requests = {}
    news, state.news = state.news, {}
    reveal = ctx.opt("public.reveal_roles_on_out") is True
    outs = news.get("outs", [])
    ctx.announce("DayOpened", day=day, outs=outs, cards=news.get("cards", []),
                 roles={n: state.seat(n).role for n in outs} if reveal else {},
                 alive=[s.seat for s in state.living()])
    ctx.add_deadline("day_close", day, "close")


def _close_day(ctx: Ctx, day: int) -> None:
    state = ctx.state
    _lapse_corrections(ctx)
    if state.data.get("revote"):
        _close_revote(ctx, day)
        return
    voters = {s.seat for s in state.living()}
    sheriff = state.sheriff if state.sheriff in voters else None
    weights = {sheriff: 2} if sheriff else {}
    abstain_key = ctx.opt("votes.abstain_as_candidate")
    t = tally(state.votes, voters, weights, voters, abstain_as_candidate=abstain_key,
              tiebreak=ctx.rs.first_to_reach_rule(ctx))
    non_voters = sorted(n for n in voters if not state.votes.get(n))
    void_voters = sorted(n for n in voters if state.votes.get(n) and state.votes[n][-1].void)
    exiles = ctx.rs.exiles_on(ctx, day)
    ctx.announce("VoteResult", day=day, counts={c: n for c, n in t.counts.items()},
                 effective=t.effective, kind="exile" if exiles else "sheriff")
    revote = False
    if exiles:
        target = ctx.rs.pick_exile(ctx, t)
        revote = target == REVOTE
        if target in (ABSTAIN, REVOTE):
            target = None
        if not revote:
            ctx.announce("Exiled", day=day, seat=target)
        if target is not None:
            ctx.put_out(target, "vote")
    else:
        elected = ctx.rs.pick_sheriff(ctx, t) if t.top else None
        if elected == ABSTAIN:
            elected = None
        if elected is None:
            ctx.announce("NoSheriff", day=day)
        else:
            ctx.set_sheriff(elected, "elected")
    # P-CARD-3: the cards for not voting come after the exile and its consequences.
    for n in non_voters if ctx.rs.procedures_apply(ctx) else []:
        st = state.seat(n)
        if st.red:
            continue
        if ctx.opt("votes.notice_waives_yellow") and st.notice:
            st.notice = False
            ctx.note("CardWaived", seat=n, duty="vote", waiver="notice")
            continue
        ctx.yellow(n, "vote")
    if ctx.opt("votes.void_vote_yellow"):
        for n in void_voters:
            if not state.seat(n).red:
                ctx.yellow(n, "void_vote")
    ctx.check("phase")
    if revote:
        _open_revote(ctx, day, list(t.tied))
        return
    _start_night(ctx, day)


def _open_revote(ctx: Ctx, day: int, candidates: list[int]) -> None:
    """A tied exile goes to a PK revote (classic.exile_tie=revote): the day is extended by
    deadlines.revote; everyone but the candidates votes once more, for a candidate or nobody."""
    state = ctx.state
    state.data["revote"] = {"candidates": candidates}
    state.votes = {}
    close = state.schedule.close_at(day) + timedelta(minutes=ctx.opt("deadlines.revote"))
    state.schedule.closes[day] = close
    ctx.retime_deadlines()
    ctx.add_deadline("day_close", day, "close")
    ctx.announce("RevoteOpened", day=day, candidates=candidates,
                 until=close.strftime("%H:%M"))


def _close_revote(ctx: Ctx, day: int) -> None:
    """The PK revote's result: the one top candidate goes out; a second tie exiles nobody."""
    state = ctx.state
    candidates = set(state.data.pop("revote")["candidates"])
    voters = {s.seat for s in state.living()} - candidates
    sheriff = state.sheriff if state.sheriff in voters else None
    t = tally(state.votes, voters, {sheriff: 2} if sheriff else {},
              {c for c in candidates if state.seat(c).alive})
    ctx.announce("VoteResult", day=day, counts=dict(t.counts), effective=t.effective,
                 kind="revote")
    target = t.tied[0] if len(t.tied) == 1 else None
    ctx.announce("Exiled", day=day, seat=target)
    if target is not None:
        ctx.put_out(target, "vote")
    ctx.check("phase")
    _start_night(ctx, day)


def _start_night(ctx: Ctx, day: int) -> None:
    state = ctx.state
    state.phase = f"N{day}"
    state.night = Night(day=day)
    ctx.announce("NightStarted", day=day)
    ctx.add_deadline("day_open", day + 1, "open")
    ctx.rs.open_night(ctx)
    _maybe_resolve(ctx)
    if not state.night.slots and not state.night.resolved:
        _resolve(ctx)


def _set_time(ctx: Ctx, cmd: JudgeSetTime) -> None:
    state = ctx.state
    _not_paused(ctx)
    _future_time(ctx, cmd.at)
    if cmd.which == "close":
        if not state.phase.startswith("D"):
            ctx.reject("no_open_day")
        if cmd.at <= state.schedule.open_at(state.day):
            ctx.reject("close_before_open")
        state.schedule.closes[state.day] = cmd.at
        day = state.day
    else:
        day = state.day + 1
        if state.phase.startswith("D") and cmd.at <= state.schedule.close_at(state.day):
            ctx.reject("open_before_close")
        if day >= 2 and state.phase.startswith("N") and cmd.at <= state.schedule.close_at(
                state.day):
            ctx.reject("open_before_close")
        state.schedule.opens[day] = cmd.at
    _check_schedule(ctx)
    ctx.retime_deadlines()
    ctx.announce("TimeChanged", which=cmd.which, day=day, at=cmd.at.isoformat(sep=" "))


def _check_schedule(ctx: Ctx) -> None:
    """Every coming day must open before it closes and close before the next day opens."""
    sch = ctx.state.schedule
    first = max(ctx.state.day, 1)
    for day in range(first, first + 3):
        if not sch.open_at(day) < sch.close_at(day) < sch.open_at(day + 1):
            ctx.reject("bad_schedule", day=day)


def _set_schedule(ctx: Ctx, cmd: JudgeSetSchedule) -> None:
    """New daily times for every day that has not opened yet; days already running keep theirs,
    and so do the judge's one-off moves (P-TIME-2)."""
    state = ctx.state
    sch = state.schedule
    _not_paused(ctx)
    if sch.cyclic:
        ctx.reject("fast_game_schedule")
    if cmd.open >= cmd.close:
        ctx.reject("close_before_open")
    first_new = state.day + 1
    for day in range(1, first_new):  # freeze the days that have opened
        sch.opens.setdefault(day, sch.open_at(day))
        sch.closes.setdefault(day, sch.close_at(day))
    sch.open, sch.close = cmd.open, cmd.close
    if sch.open_at(first_new) <= ctx.now:
        ctx.reject("time_in_past")
    _check_schedule(ctx)
    ctx.retime_deadlines()
    ctx.announce("ScheduleChanged", open=cmd.open.strftime("%H:%M"),
                 close=cmd.close.strftime("%H:%M"), day=first_new)


# pausing and ending -------------------------------------------------------------


def _not_paused(ctx: Ctx) -> None:
    """The judge's time changes wait for the clock to run again: a time set while paused would
    otherwise move on by the pause when it resumes."""
    if ctx.state.paused_at is not None:
        ctx.reject("paused")


def _pause(ctx: Ctx) -> None:
    """Stop the clock: no deadline fires (ticks change nothing, `next_deadline` is None) until
    the judge resumes. Everything else goes on as usual: night actions, votes, last words …"""
    state = ctx.state
    if state.paused_at is not None:
        ctx.reject("already_paused")
    state.paused_at = ctx.now
    ctx.announce("GamePaused")


def _resume(ctx: Ctx) -> None:
    """Start the clock again: every pending deadline, and the schedule from the next open or
    close on, moves on by the time the game was paused (in whole minutes, rounded up)."""
    state = ctx.state
    if state.paused_at is None:
        ctx.reject("not_paused")
    assert state.paused_at is not None
    minutes = max(0, -(-(ctx.now - state.paused_at) // timedelta(minutes=1)))
    state.paused_at = None
    delta = timedelta(minutes=minutes)
    targets = {d.id: d.due + delta for d in state.deadlines}
    first = _shift_schedule(ctx, delta) if delta else _next_boundary(state)
    shifted: list[Deadline] = []
    for dl in state.deadlines:
        target = targets[dl.id]
        if dl.anchor == "at":
            shifted.append(dl.model_copy(update={"due": target}))
            continue
        # Keep the anchor, so that a later change of that day's times still moves it; what the
        # schedule did not move by itself goes into the offset.
        gap = target - ctx.due(dl.anchor, dl.day, dl.offset_min)
        extra, rest = divmod(gap, timedelta(minutes=1))
        shifted.append(dl.model_copy(update=(
            {"anchor": "at", "offset_min": 0, "due": target} if rest
            else {"offset_min": dl.offset_min + extra, "due": target})))
    state.deadlines = shifted
    ctx.retime_deadlines()
    day, which = divmod(first, 2)
    at = _boundary(state.schedule, first)
    ctx.announce("GameResumed", minutes=minutes, day=day + 1,
                 which="open" if which == 0 else "close", at=at.strftime("%m-%d %H:%M"))
    for dl in state.deadlines:
        if dl.kind in ("remind", "day_open", "day_close"):
            continue
        owing = ([n for n in dl.seats if n in state.lastwords_due] if dl.kind == "lastwords"
                 else _owing(ctx, dl))
        if owing:
            ctx.tell_about(dl.kind, owing, "DeadlineShifted", duty=dl.kind,
                           due=dl.due.strftime("%m-%d %H:%M"))
    ctx.note("DeadlinesShifted", minutes=minutes,
             dues={d.id: d.due.strftime("%m-%d %H:%M") for d in state.deadlines})


# The schedule's opens and closes in order: boundary 2(d-1) is day d's open, 2(d-1)+1 its close.


def _boundary(sch: Schedule, i: int) -> datetime:
    day, which = divmod(i, 2)
    return sch.open_at(day + 1) if which == 0 else sch.close_at(day + 1)


def _set_boundary(sch: Schedule, i: int, at: datetime) -> None:
    day, which = divmod(i, 2)
    (sch.opens if which == 0 else sch.closes)[day + 1] = at


def _next_boundary(state: GameState) -> int:
    """The open or close the game waits for: day 1's open in setup, today's close by day, the
    next open by night."""
    if state.phase.startswith("D"):
        return 2 * (state.day - 1) + 1
    return 2 * state.day


def _shift_schedule(ctx: Ctx, delta: timedelta) -> int:
    """Move the next open or close, and the judge's moves after it, by `delta`; what has
    happened stays. A fast game moves its whole cycle (`first_open`). A daily game keeps its
    daily times for the days after that, unless the moved time passed them: then those days
    move by whole days, as few as keep every open before its close before the next open.
    Returns the boundary the game waits for."""
    sch = ctx.state.schedule
    first = _next_boundary(ctx.state)
    marked = [2 * (d - 1) for d in sch.opens] + [2 * (d - 1) + 1 for d in sch.closes]
    last = max([first, *marked])
    moved = {i: _boundary(sch, i) + delta for i in range(first, last + 1)}
    past = {i: _boundary(sch, i) for i in range(first)}
    if sch.first_open is not None:
        sch.first_open += delta
    else:
        days = 0
        while _daily(sch, last + 1, days) <= moved[last]:
            days += 1
        sch.start += timedelta(days=days)
    if sch.first_open is not None or any(_boundary(sch, i) != t for i, t in past.items()):
        for i, t in past.items():  # freeze what has happened
            _set_boundary(sch, i, t)
    for i, t in moved.items():
        _set_boundary(sch, i, t)
    _check_schedule(ctx)
    return first


def _daily(sch: Schedule, i: int, days: int) -> datetime:
    """Boundary `i` of a daily schedule from its daily times, `days` calendar days later."""
    day, which = divmod(i, 2)
    return datetime.combine(sch.start + timedelta(days=day + days),
                            sch.open if which == 0 else sch.close)


def _end(ctx: Ctx, cmd: JudgeEnd) -> None:
    """The judge ends the game early: no winner, no more deadlines, every later command is
    refused (`game_over`); the roles and the seed are revealed as at a game's end."""
    state = ctx.state
    state.ended = True
    state.paused_at = None
    state.phase = "END"
    state.deadlines = []
    ctx.announce("GameEnded", reason=cmd.reason, roles={s.seat: s.role for s in state.seats},
                 seed=state.seed)


# player commands ---------------------------------------------------------------


def _living_player(ctx: Ctx, n: int) -> Seat:
    st = ctx.seat(n)
    if not st.alive:
        ctx.reject("you_are_out")
    return st


def _act(ctx: Ctx, cmd: Act) -> None:
    ctx.seat(cmd.seat)
    ctx.rs.act(ctx, cmd)


def _vote(ctx: Ctx, n: int, mode: str, target: int | None, *, by_judge: bool) -> None:
    state = ctx.state
    if not state.phase.startswith("D"):
        ctx.reject("no_vote_now")
    _living_player(ctx, n)
    revote = state.data.get("revote")
    if revote:
        if n in revote["candidates"]:
            ctx.reject("revote_candidate")
        if mode != "void" and target is not None and target not in revote["candidates"]:
            ctx.reject("revote_target", candidates=revote["candidates"])
        if mode == "change":
            ctx.reject("change_used")
    posts = state.votes.setdefault(n, [])
    if mode != "void" and target is not None:
        ctx.living_target(target)
        if target == n and not ctx.opt("votes.self_vote"):
            ctx.reject("no_self_vote")
    if mode == "request_correct":
        _request_correction(ctx, n, target, posts)
        return
    if mode == "vote":
        if posts:
            ctx.reject("already_voted")
        posts.append(VotePost(at=ctx.now, target=target, by_judge=by_judge))
    elif mode == "void":
        if posts:
            ctx.reject("already_voted")
        posts.append(VotePost(at=ctx.now, void=True))
    elif mode == "change":
        if not posts:
            ctx.reject("no_vote_to_change")
        refusal = _change_refusal(ctx, posts)
        if refusal is not None:
            ctx.reject(refusal)
        posts.append(VotePost(at=ctx.now, target=target, change=True, by_judge=by_judge))
    elif mode == "correct":
        if not posts:
            ctx.reject("no_vote_to_correct")
        posts[-1] = posts[-1].model_copy(update={"target": target, "void": False})
    _drop_correction(ctx, n)  # a new post or a correction supersedes a pending request
    ctx.announce("VotePosted", voter=n, target=target, mode=mode, by_judge=by_judge)


def _request_correction(ctx: Ctx, n: int, target: int | None, posts: list[VotePost]) -> None:
    """A player's 更正 (AMB-P-09): only the judge decides whether it is a correction, so it is
    recorded as pending and changes nothing; a new request replaces the seat's earlier one."""
    if not posts:
        ctx.reject("no_vote_to_correct")
    replaced = n in ctx.state.correction_requests
    ctx.state.correction_requests[n] = CorrectionRequest(target=target, at=ctx.now)
    last = posts[-1]
    ctx.tell(n, "CorrectionRequested", voter=n, target=target, replaced=replaced)
    ctx.note("CorrectionRequestedJudge", voter=n, target=target, replaced=replaced,
             post_at=last.at.strftime("%H:%M"), post_target=last.target, post_void=last.void)


def _drop_correction(ctx: Ctx, n: int) -> None:
    req = ctx.state.correction_requests.pop(n, None)
    if req is not None:
        ctx.tell(n, "CorrectionDropped", voter=n, target=req.target)
        ctx.note("CorrectionDroppedJudge", voter=n, target=req.target)


def _lapse_corrections(ctx: Ctx) -> None:
    """Voting closes: requests the judge has not ruled on lapse; the votes stand as they are."""
    requests, ctx.state.correction_requests = ctx.state.correction_requests, {}
    for n, req in sorted(requests.items()):
        ctx.tell(n, "CorrectionLapsed", voter=n, target=req.target)
        ctx.note("CorrectionLapsedJudge", voter=n, target=req.target)


def _judge_correction(ctx: Ctx, cmd: JudgeCorrection) -> None:
    """The judge rules on a pending request: a correction (keeps the original post's time, is
    not a change), or refused (the earlier vote stands; the player keeps the one change)."""
    state = ctx.state
    ctx.seat(cmd.seat)
    req = state.correction_requests.pop(cmd.seat, None)
    if req is None:
        ctx.reject("no_correction_pending", seat=cmd.seat)
    assert req is not None
    if cmd.accept:
        if not state.seat(cmd.seat).alive:
            ctx.reject("voter_out", seat=cmd.seat)
        _vote(ctx, cmd.seat, "correct", req.target, by_judge=False)
        ctx.tell(cmd.seat, "CorrectionConfirmed", voter=cmd.seat, target=req.target)
        return
    can_change = _change_refusal(ctx, state.votes.get(cmd.seat, [])) is None
    ctx.tell(cmd.seat, "CorrectionRejected", voter=cmd.seat, target=req.target,
             can_change=can_change)


def _change_refusal(ctx: Ctx, posts: list[VotePost]) -> str | None:
    """Why the voter of `posts` may not use the one change now, or None (P-VOTE: one change,
    none in the last hour, none in a PK revote)."""
    state = ctx.state
    if state.data.get("revote") or any(p.change for p in posts):
        return "change_used"
    close = state.schedule.close_at(state.day)
    if ctx.now > close - timedelta(minutes=ctx.opt("deadlines.change_freeze")):
        return "change_last_hour"
    return None


def _proxy(ctx: Ctx, cmd: JudgeProxy) -> None:
    state = ctx.state
    if not state.phase.startswith("D"):
        ctx.reject("no_vote_now")
    if ctx.now > state.schedule.close_at(state.day) - timedelta(
            minutes=ctx.opt("deadlines.proxy_cutoff")):
        ctx.reject("proxy_too_late")
    mode = "change" if state.votes.get(cmd.seat) else "vote"
    _vote(ctx, cmd.seat, mode, cmd.target, by_judge=True)


def _handover(ctx: Ctx, cmd: Handover) -> None:
    state = ctx.state
    if state.handover_due != cmd.seat:
        ctx.reject("no_handover_due")
    target = ctx.living_target(cmd.target)
    assert target is not None
    if not ctx.rs.may_handover(ctx, cmd.seat):
        state.data["held_handover"] = [cmd.seat, target]
        ctx.tell_duty(cmd.seat, "HandoverHeld", target=target)
        return
    ctx.drop_deadlines(lambda d: d.kind == "handover")
    ctx.set_sheriff(target, "handover")


def _handover_missed(ctx: Ctx) -> None:
    state = ctx.state
    old = state.handover_due
    if old is None:
        return
    if not ctx.rs.procedures_apply(ctx):
        ctx.note("JudgeRulingNeeded", duty="handover", seat=old)
        return
    living = [s.seat for s in state.living()]
    if living:
        ctx.set_sheriff(ctx.rand_choice(living, "sheriff_handover"), "random")
    else:
        state.handover_due = None
    ctx.missed(old, "handover", True)


def _lastwords(ctx: Ctx, cmd: LastWords) -> None:
    state = ctx.state
    if cmd.seat not in state.lastwords_due:
        ctx.reject("no_lastwords_due")
    state.lastwords_due.remove(cmd.seat)
    state.last_words[cmd.seat] = cmd.text
    ctx.announce("LastWords", seat=cmd.seat, text=cmd.text)


def _surrender(ctx: Ctx, cmd: Surrender) -> None:
    state = ctx.state
    st = _living_player(ctx, cmd.seat)
    if not ctx.rs.may_surrender(ctx):
        ctx.reject("surrender_disabled")
    camp = st.camp
    if camp in state.camps_lost:
        ctx.reject("camp_already_lost")
    if st.surrendered:
        ctx.reject("already_surrendered")
    st.surrendered = True
    ctx.tell(cmd.seat, "SurrenderRecorded")
    members = state.members(camp)
    agreed = sum(1 for s in members if s.surrendered)
    rule = ctx.opt("surrender.requires")
    done = (agreed >= 1 if rule == "any_member"
            else agreed * 2 > len(members) if rule == "majority"
            else agreed == len(members))
    if done:
        state.camps_surrendered.append(camp)
        ctx.announce("CampSurrendered", camp=camp)
        ctx.check("atomic")


def _card(ctx: Ctx, cmd: JudgeCard) -> None:
    st = ctx.seat(cmd.seat)
    if st.red:
        ctx.reject("already_sent_off")
    if cmd.color == "yellow":
        ctx.yellow(cmd.seat, "judge")
    else:
        if not st.alive:
            ctx.reject("target_out", target=cmd.seat)
        ctx.red(cmd.seat, "judge")
