"""A random driver for whole classic games, shared by the property and hygiene tests, and the
random player of every ruleset (`random_game`: classic's here, another's in
tests/randomplay_NAME.py) for the tests that play each registered ruleset.

`play(rnd, ...)` plays one game from `new_game` to its end on a simulated clock. At every step
it sends one command, either a plausible legal one for the current phase (votes, correction
requests and the judge's rulings on them, night actions, Cupid's link, handover, last words, the
odd surrender) or a deliberately wrong one (dead or out-of-range seats and targets, unknown
skills, wrong phase, stale ticks, judge proxies, rulings with nothing pending, cards, waivers and
time changes), or it moves the clock: a few minutes, exactly to the
next deadline, past one or more deadlines, or a day or two. Every deadline passed fires as a
`Tick`, in order, like `bot.scenario.Game.advance`; just before a deadline most (not all)
players who owe something act.

Every `handle` call goes through `Driver.send`, which checks the engine's basic contract (it
never raises, and never changes the state it was given, least of all when it refuses a
command) and records every accepted (time, command) pair for a replay. `on_step` hooks extra
checks on every call.

`rnd` may be a `random.Random` or Hypothesis' `st.randoms(use_true_random=False)`. Hypothesis
draws small numbers far more often than large ones, so each decision takes one integer draw
(`Driver.p`, split further by `pick` and `within`), 0 means the ordinary choice (a legal
command, a short wait), and progress does not depend on the draws: after `PATIENCE` commands
in a row the clock moves to the next deadline. From day `LAZY_DAY` on nobody acts any more and
only the deadlines pass: the missed votes give yellow cards, the cards send players off, and
the game must end within a few days (the property tests check it).

The driver reads roles from the state only to make interesting games likely: Cupid often links
two wolves or a wolf and a villager, and some games vote wolves out (black lovers get 寡妇刀).
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from bot.commands.vocabulary import VERBS
from engine import handle, new_game
from engine.commands import (
    Act,
    Handover,
    JudgeCard,
    JudgeCorrection,
    JudgeExtend,
    JudgeProxy,
    JudgeSetTime,
    JudgeWaiver,
    LastWords,
    Surrender,
    Tick,
    Vote,
)
from engine.events import Event, Rejection
from engine.model import Deadline, GameState
from rulesets.common.shot import SHOT_DUE

START = date(2026, 3, 1)
LAZY_DAY = 8  # from this day on, nobody acts: only the deadlines pass
MAX_DAY = 30  # the game must be over by then
MAX_CALLS = 5000  # handle() calls per game, a safety net against a driver loop
PATIENCE = 30  # commands in a row without the clock moving; then it moves to the next deadline

NEUTRAL_WORDS = ["过。", "我是好人，请大家相信我。", "3号发言有问题。", "", "再见 👋",
                 "{target} 号", "遗言：无"]
# Every engine skill of the chat vocabulary (another ruleset's are unknown skills here), and
# words that are no skill at all: classic's and anomaly's, the list the pinned digests were
# taken with (tests/test_anomaly_resolution_digests.py, bench/engine.py); a driver of another
# ruleset sets its own (`Driver.skills`).


def skills_of(rulesets: tuple[str, ...]) -> list[str]:
    return list(dict.fromkeys(skill for spec in VERBS.values()
                              for ruleset, skill in spec.skills.items() if ruleset in rulesets)
                ) + ["", "KILL", "vote"]


SKILLS = skills_of(("classic", "anomaly"))
# Seats no game has; a negative or three-digit seat does not even parse (engine.commands).
ODD_SEATS = [0, 13, 99]

# Engine bugs these tests found, fixed since, that the driver still probes: a killer's `pass`
# then `lock` (IndexError); a wolf camp surrendering at night kept tonight's kill (and got cards
# for missing it); no CHECK after Cupid's link moved characters between camps.

# Option combinations drawn from RULES.md §5 (classic keys and the shared keys).
OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"night.resolve_early": False, "night.allow_resubmit": False},
    {"classic.same_guard_same_save_kills": True, "classic.witch_self_save": "first_night_only",
     "classic.witch_self_poison": False, "classic.antidote_any_target": "kill_target_only",
     "classic.kill_post_on_no": True},
    {"classic.exile_tie": "sheriff_vote", "classic.sheriff_tiebreak": "first_to_reach_ever",
     "votes.abstain_as_candidate": True, "votes.self_vote": False},
    {"classic.exile_tie": "revote", "deadlines.revote": "45min"},
    {"classic.exile_tie": "random", "classic.sheriff_tiebreak": "random",
     "classic.sheriff_night_handover_deadline": "close_plus_30",
     "classic.red_card_sheriff_successor": "none"},
    {"public.reveal_roles_on_out": True, "lastwords.eligible": "all",
     "lastwords.yellow_on_missing": True},
    {"cards.yellow_to_red": 3, "cards.red_lover_partner_dies": False,
     "votes.void_vote_yellow": True, "classic.exile_tie": "no_exile",
     "cards.night_yellow_counts_to_red": False},
    {"classic.double_wolf_lovers_know_partner": True, "classic.cupid_self_pick": False,
     "classic.cupid_told_camp": False, "classic.cupid_missing": "no_lovers"},
    {"classic.village_gods_rule": "any_out", "classic.guard_yellow": True,
     "classic.guard_deadline": "2h", "classic.seer_feedback": "wolf_partition",
     "classic.seer_self_check": True},
    {"surrender.requires": "any_member", "check.bundle_lovers": False,
     "check.lose_first": False, "resolve.locked_actions": False},
    {"surrender.requires": "majority", "public.reveal_roles_on_out": "at_game_end",
     "classic.seer_feedback": "literal_labels", "votes.notice_waives_yellow": True},
    {"deadlines.night_action": "45min", "deadlines.witch": "2h", "deadlines.after_exile": "10min",
     "deadlines.proxy_cutoff": "1h", "deadlines.change_freeze": "2h", "reminders.before": 0},
    {"deadlines.witch": "06:30", "reminders.before": "1h", "classic.guard_deadline": "30min"},
    {"classic.kill_participants": "whole_camp",
     "classic.double_wolf_lovers_in_wolf_group": False},
]
# A fast game (a live evening session): days and nights of a few minutes each.
FAST_GAME: dict[str, Any] = {"first_open": datetime(2026, 3, 1, 19, 0), "day_minutes": 40,
                             "night_minutes": 20}
FAST_OPTIONS: dict[str, Any] = {"deadlines.night_action": "8min", "deadlines.witch": "15min",
                                "deadlines.after_exile": "5min", "deadlines.proxy_cutoff": "5min",
                                "deadlines.change_freeze": "10min", "reminders.before": "2min",
                                "classic.guard_deadline": "8min"}

# The kinds of wrong command `Driver.illegal` draws from (a peaceful game gives no cards).
ILLEGAL_KINDS = ["act"] * 6 + ["vote"] * 4 + [
    "handover", "handover", "lastwords", "lastwords", "surrender", "tick", "tick", "proxy",
    "proxy", "proxy", "waiver", "waiver", "time", "time", "extend", "extend", "ruling"]
ILLEGAL_KINDS_CARD = [*ILLEGAL_KINDS, "card"]


class EngineContractError(AssertionError):
    """handle() raised, or changed the state it was given."""


@dataclass
class Step:
    """One handle() call: what was sent, when, on which state, and what came back."""

    now: datetime
    command: Any
    before: GameState
    result: tuple[GameState, list[Event]] | Rejection


@dataclass
class Trace:
    """Everything needed to replay a game: new_game's arguments and the accepted commands."""

    game_args: dict[str, Any]
    initial_state: GameState
    initial_events: list[Event]
    accepted: list[tuple[datetime, Any, list[Event]]] = field(default_factory=list)
    rejections: list[tuple[datetime, Any, Rejection]] = field(default_factory=list)
    final: GameState | None = None

    @property
    def events(self) -> list[Event]:
        out = list(self.initial_events)
        for _, _, evs in self.accepted:
            out.extend(evs)
        return out


def start_game(seed: str, options: dict[str, Any] | None = None,
               roles: list[str] | None = None, schedule: dict[str, Any] | None = None,
               ruleset: str = "classic", players: int = 12,
               ) -> tuple[dict[str, Any], GameState, list[Event]]:
    args: dict[str, Any] = {"ruleset": ruleset, "game_id": f"prop-{seed}", "seed": seed,
                            "start": START, "options": dict(options or {}), **(schedule or {})}
    if roles is None:
        args["players"] = players
    else:
        args["roles"] = list(roles)
    state, events = new_game(**args)
    return args, state, events


def pick(items: list[Any], r: float) -> tuple[Any, float]:
    """Split a uniform r in [0, 1) into an item of `items` and a fresh uniform remainder."""
    i = min(int(r * len(items)), len(items) - 1)
    return items[i], r * len(items) - i


def within(r: float, lo: float, hi: float) -> float:
    """Rescale r, known to lie in [lo, hi), to [0, 1)."""
    return min(max((r - lo) / (hi - lo), 0.0), 0.999999)


class Driver:
    """One game on a simulated clock; see the module docstring."""

    skills = SKILLS  # the skill words `illegal` draws from

    # Whether `send` proves that handle() left its input state alone (a deep copy and a
    # comparison per command). The tests always do; bench/engine.py turns it off to time the
    # engine rather than the check.
    verify_input = True

    def __init__(self, rnd: random.Random, *, seed: str, options: dict[str, Any] | None = None,
                 roles: list[str] | None = None,
                 on_step: Callable[[Step], None] | None = None,
                 on_start: Callable[[GameState, list[Event]], None] | None = None,
                 schedule: dict[str, Any] | None = None, ruleset: str = "classic",
                 players: int = 12) -> None:
        self.rnd = rnd
        # One draw per decision (`p`): for a plain random.Random, randrange(n) is exactly
        # _randbelow(n) (CPython's random.py), without its argument checks; Hypothesis' randoms
        # keep their own randrange.
        self._below: Callable[[int], int] = (
            rnd._randbelow if type(rnd) is random.Random else rnd.randrange)  # type: ignore[attr-defined]
        # What the driver derives from a state, computed once per state (a state never
        # changes: every accepted command gives a new one, and a refused one keeps it): the
        # living seats, the next deadline, who may vote, the night's actors …
        self._memo_of: GameState | None = None  # the state `_memo` was computed for
        self._memo: dict[str, Any] = {}
        args, self.state, events = start_game(seed, options, roles, schedule, ruleset, players)
        # the longest "little" wait: a quarter of a day
        self.wait = max(4, (schedule or {}).get("day_minutes", 720) // 4)
        if on_start is not None:
            on_start(self.state, events)
        self.now = datetime.combine(START, datetime.min.time())
        self.trace = Trace(game_args=args, initial_state=self.state, initial_events=events)
        self.on_step = on_step
        self.calls = 0
        r = self.p()
        self.hunt = r < 0.3  # this game votes wolves out
        self.peace = r >= 0.8  # nobody is voted out, killed or poisoned: this game runs long
        # how many of those who owe something act just before their deadline
        self.diligence = 1.0 if r < 0.5 or self.peace else 0.9 if r < 0.7 else 0.75
        self.spent = 0  # commands since the clock last moved

    def p(self) -> float:
        """A uniform number in [0, 1), one draw. (Hypothesis' floats cluster at 0.0; its integers
        do not, much.) Decisions split one draw into parts with `pick` and `within`."""
        return self._below(1000000) / 1000000

    # the one door to the engine ---------------------------------------------------
    def send(self, cmd: Any) -> Rejection | None:
        self.calls += 1
        if self.calls > MAX_CALLS:
            raise AssertionError(f"no end after {MAX_CALLS} commands (day {self.state.day})\n"
                                 f"{self.describe()}")
        before = self.state
        copy = before.model_copy(deep=True) if self.verify_input else None
        try:
            result = handle(before, cmd, self.now)
        except Exception as exc:
            raise EngineContractError(
                f"handle raised {type(exc).__name__}: {exc}\n  command: {cmd!r}\n  at: "
                f"{self.now}\n  phase: {before.phase}\n{self.describe()}") from exc
        if copy is not None and before != copy:
            raise EngineContractError(
                f"handle changed the state it was given "
                f"({'refused' if isinstance(result, Rejection) else 'accepted'}): {cmd!r}")
        if self.on_step is not None:
            self.on_step(Step(self.now, cmd, before, result))
        if isinstance(result, Rejection):
            self.trace.rejections.append((self.now, cmd, result))
            return result
        self.state, events = result
        self.trace.accepted.append((self.now, cmd, events))
        return None

    def describe(self) -> str:
        lines = [f"  game: {self.trace.game_args}"]
        lines += [f"  {t:%m-%d %H:%M} {c!r}" for t, c, _ in self.trace.accepted[-25:]]
        return "\n".join(lines)

    @property
    def over(self) -> bool:
        return self.state.winner is not None or self.state.halted

    # the clock ------------------------------------------------------------------------
    def advance(self, target: datetime, *, catch_up: bool = False) -> None:
        """Fire every deadline due by `target`, in order, then set the clock to `target`."""
        while not self.over:
            dl = self.next_deadline()
            if dl is None or dl.due > target:
                break
            if catch_up and self.now < dl.due and self.state.day < LAZY_DAY:
                self.catch_up(dl)
                if self.over:
                    return
                nxt = self.next_deadline()
                if nxt is not dl and nxt != dl:  # (identity first: pydantic's == is slow)
                    continue
            self.now = max(self.now, dl.due)
            self.send(Tick(deadline_id=dl.id))
        self.now = max(self.now, target)

    def catch_up_shot(self, dl: Deadline) -> bool:
        """A hunter's deadline: most hunters shoot just before it; whether it was one."""
        if dl.kind == "hunter" and self.p() < self.diligence:
            self.now = max(self.now, dl.due - timedelta(minutes=2))
            for seat in dl.seats:
                if self.state.seat(seat).status(SHOT_DUE) and not self.over:
                    self.send(Act(seat=seat, skill="shoot", targets=(self.any_living(self.p()),)))
            return True
        return False

    def catch_up(self, dl: Deadline) -> None:
        """Most players who owe something act shortly before their deadline (not all do)."""
        if self.catch_up_shot(dl):
            return
        state = self.state
        r = self.p()
        self.now = max(self.now, dl.due - timedelta(minutes=1 + int(r * 20)))
        if r >= self.diligence:
            return  # they all forget this one
        r = within(r, 0, self.diligence)
        cmds: list[Any] = []
        if dl.kind == "day_close":
            # The late voters split between two candidates.
            late = [n for n in self.living() if not state.votes.get(n)]
            if late:
                first, second = self.vote_target(self.p()), self.vote_target(r)
                cmds = [Vote(seat=n, target=first if n % 2 else second) for n in late]
        elif dl.kind == "night" and state.night is not None:
            slot = next((s for s in state.night.slots.values() if s.deadline_id == dl.id), None)
            if slot is not None and slot.sub is None:
                living = [n for n in slot.seats if state.seat(n).alive]
                if living:
                    seat, r = pick(living, r)
                    cmds = [self.night_command(seat, r, slot.key)]
        elif dl.kind == "setup":
            cmds = [self.legal_setup(r)]
        elif dl.kind == "handover":
            cmds = [Handover(seat=state.handover_due or 1, target=self.any_living(r) or 1)]
        for cmd in cmds:
            if cmd is not None and not self.over:
                self.send(cmd)

    def move_clock(self) -> None:
        dl = self.next_deadline()
        if dl is None:
            raise AssertionError(f"the game is stuck: no winner and no deadline "
                                 f"(phase {self.state.phase})\n{self.describe()}")
        if self.spent >= PATIENCE:  # whatever the draws, the game moves on
            self.spent = 0
            self.advance(dl.due, catch_up=True)
            return
        self.spent = 0
        r = self.p()
        if r < 0.80:  # a little later
            self.advance(self.now + timedelta(minutes=1 + int(within(r, 0, 0.8) * self.wait)),
                         catch_up=True)
        elif r < 0.90:  # exactly the next deadline
            self.advance(dl.due, catch_up=True)
        elif r < 0.99:  # past the next deadline, maybe past several
            self.advance(dl.due + timedelta(minutes=1 + int(within(r, 0.9, 0.99) * 3 * self.wait)),
                         catch_up=True)
        else:  # a day or two later, and nobody catches up
            self.advance(self.now + timedelta(minutes=8 * self.wait * (1 + (r >= 0.995))))

    # the game ---------------------------------------------------------------------------
    def play(self) -> Trace:
        while not self.over:
            if self.state.day >= LAZY_DAY:
                self.lazy_step()
                continue
            r = self.p()
            self.spent += 1
            if r >= 0.86 or self.spent > PATIENCE:
                self.move_clock()
            elif r < 0.62:
                cmd = self.legal(within(r, 0, 0.62))
                if cmd is None:  # nothing useful to do now
                    self.move_clock()
                else:
                    self.send(cmd)
            else:
                self.send(self.illegal(within(r, 0.62, 0.86)))
        self.trace.final = self.state
        return self.trace

    def lazy_step(self) -> None:
        dl = self.next_deadline()
        if dl is None:
            raise AssertionError(f"the game is stuck (phase {self.state.phase})")
        self.advance(dl.due)

    # legal commands ----------------------------------------------------------------------
    def memo(self) -> dict[str, Any]:
        """What has been derived from the current state so far (see `__init__`). Callers
        never change what they find in it."""
        if self._memo_of is not self.state:
            self._memo_of = self.state
            self._memo = {}
        return self._memo

    def living(self) -> list[int]:
        """The living seats (once per state). Callers never change the list."""
        m = self.memo()
        living: list[int] | None = m.get("living")
        if living is None:
            living = m["living"] = self.state.living_numbers()
        return living

    def voters(self) -> tuple[list[int], list[int]]:
        """The living seats who have not voted yet, and those who have (once per state)."""
        m = self.memo()
        split: tuple[list[int], list[int]] | None = m.get("voters")
        if split is None:
            living, votes = self.living(), self.state.votes
            split = m["voters"] = ([n for n in living if not votes.get(n)],
                                   [n for n in living if votes.get(n)])
        return split

    def next_deadline(self) -> Deadline | None:
        """`state.next_deadline()`, once per state."""
        m = self.memo()
        if "next" not in m:
            m["next"] = self.state.next_deadline()
        dl: Deadline | None = m["next"]
        return dl

    def any_living(self, r: float, *, none: bool = False) -> int | None:
        """A living seat, or (when `none`) sometimes nobody."""
        key = "living+none" if none else "living*"
        m = self.memo()
        living: list[int | None] | None = m.get(key)
        if living is None:
            living = m[key] = [*self.living(), None] if none else list(self.living())
        return pick(living, r)[0] if living else None

    def hunted(self) -> list[int]:
        """Whom a hunting game votes out: the living wolves."""
        return [s.seat for s in self.state.living() if s.role == "wolf"]

    def vote_target(self, r: float) -> int | None:
        """A living seat or an abstention; in a wolf hunt, mostly one of `hunted`."""
        if self.peace:
            return None
        m = self.memo()
        pool: list[int | None] | None = m.get("pool")
        if pool is None:
            pool = [*self.living(), None]
            if self.hunt:
                pool = self.hunted() * 3 + pool
            m["pool"] = pool
        return pick(pool, r)[0]

    def hunters(self) -> list[int]:
        """The hunters who owe their shot (once per state): every ruleset's 猎人."""
        m = self.memo()
        hunters: list[int] | None = m.get("hunters")
        if hunters is None:
            hunters = m["hunters"] = [s.seat for s in self.state.peek_seats()
                                      if s.status(SHOT_DUE)]
        return hunters

    def legal_shot(self, r: float) -> Any:
        """A hunter who owes his shot mostly shoots, now and then gives it up (or None)."""
        hunters = self.hunters()
        if hunters and r < 0.3:
            seat, r = pick(hunters, within(r, 0, 0.3))
            if r < 0.8:
                return Act(seat=seat, skill="shoot", targets=(self.any_living(r),))
            return Act(seat=seat, skill="pass")
        return None

    def legal(self, r: float) -> Any:
        shot = self.legal_shot(r)
        return shot if shot is not None else self.legal_turn(r)

    def legal_turn(self, r: float) -> Any:
        """A legal command of the phase (last words, handover, surrender, setup, day, night)."""
        state = self.state
        if state.lastwords_due and r >= 0.9:
            seat, r = pick(state.lastwords_due, within(r, 0.9, 1))
            return LastWords(seat=seat, text=pick(NEUTRAL_WORDS, r)[0])
        if state.handover_due is not None and 0.8 <= r < 0.9:
            return Handover(seat=state.handover_due,
                            target=self.any_living(within(r, 0.8, 0.9)) or 1)
        if 0.5 <= r < 0.503 and self.living():
            return Surrender(seat=pick(self.living(), within(r, 0.5, 0.503))[0])
        if 0.503 <= r < 0.53:  # once one has surrendered, the teammates tend to follow
            camps = {s.camp for s in state.living() if s.surrendered} - set(state.camps_lost)
            mates = [s.seat for s in state.living() if s.camp in camps and not s.surrendered]
            if mates:
                return Surrender(seat=pick(mates, within(r, 0.503, 0.53))[0])
        if state.phase == "SETUP":
            return self.legal_setup(r) if r < 0.5 else None
        if state.phase.startswith("D"):
            return self.legal_day(r)
        if state.phase.startswith("N"):
            return self.legal_night(r)
        return None

    def legal_setup(self, r: float) -> Any:
        state = self.state
        cupid = next((s for s in state.seats if s.holds("arrow")), None)
        if cupid is None:
            return None
        living = self.living()
        wolves = [s.seat for s in state.living() if s.role == "wolf"]
        others = [n for n in living if n not in wolves]
        kind, r = pick(["two wolves", "wolf and other", "self and wolf", "any", "any"], r)
        if kind == "two wolves" and len(wolves) >= 2:
            first, r = pick(wolves, r)
            pair = [first, pick([w for w in wolves if w != first], r)[0]]
        elif kind == "wolf and other" and wolves and others:
            first, r = pick(wolves, r)
            pair = [first, pick(others, r)[0]]
        elif kind == "self and wolf" and wolves:
            pair = [cupid.seat, pick(wolves, r)[0]]
        else:
            first, r = pick(living, r)
            pair = [first, pick(living, r)[0]]  # sometimes the same seat twice: refused
        return Act(seat=cupid.seat, skill="link", targets=tuple(pair))

    def legal_day(self, r: float) -> Any:
        state = self.state
        living = self.living()
        waiting, voted = self.voters()
        if waiting and r < 0.8:
            seat, r = pick(waiting, within(r, 0, 0.8))
            return Vote(seat=seat, mode="vote", target=self.vote_target(r))
        if state.correction_requests and r >= 0.9:  # the judge rules on a pending 更正
            seat, r = pick(sorted(state.correction_requests), within(r, 0.9, 1))
            return JudgeCorrection(seat=seat, accept=r < 0.5)
        r = self.p()
        if r >= 0.95:
            seat, r = pick(living, within(r, 0.95, 1))
            return JudgeProxy(seat=seat, target=self.vote_target(r))
        if r >= 0.92:
            return Vote(seat=pick(living, within(r, 0.92, 0.95))[0], mode="void")
        if r >= 0.89 and voted:
            seat, r = pick(voted, within(r, 0.89, 0.92))
            return Vote(seat=seat, mode="correct", target=self.vote_target(r))
        if r >= 0.86 and voted:  # a player's 更正, for the judge to rule on (AMB-P-09)
            seat, r = pick(voted, within(r, 0.86, 0.89))
            return Vote(seat=seat, mode="request_correct", target=self.vote_target(r))
        if r < 0.5 and (may_change := [n for n in voted  # only when it can be used
                                       if not any(p.change for p in state.votes[n])]):
            seat, r = pick(may_change, within(r, 0, 0.5))
            return Vote(seat=seat, mode="change", target=self.vote_target(r))
        return None

    def legal_night(self, r: float) -> Any:
        m = self.memo()
        actors: list[int] | None = m.get("actors")
        if actors is None:
            actors = m["actors"] = self.night_actors()
        if not actors:
            return None
        seat, r = pick(actors, r)
        return self.night_command(seat, r)

    def night_actors(self) -> list[int]:
        """Living seats that may still act tonight. Every wolf and lover tries to kill while
        the kill is open (so that a kill accepted from a seat without 杀人 would be noticed)."""
        state = self.state
        night = state.night
        if night is None or night.resolved:
            return []
        seats: set[int] = set()
        for key, slot in night.slots.items():
            if not slot.expired and (key == "kill" or not slot.final):
                seats.update(slot.seats)
        kill = night.slots.get("kill")
        if kill is not None and not kill.expired:
            seats.update(s.seat for s in state.living() if s.role == "wolf" or s.lover_of)
        return sorted(n for n in seats if state.seat(n).alive)

    def night_command(self, seat: int, r: float, slot_key: str | None = None) -> Any:
        """A plausible night command of `seat` (for `slot_key`, when given)."""
        state = self.state
        night = state.night
        if night is None:
            return None
        st = state.seat(seat)
        kill = night.slots.get("kill")
        killer = (kill is not None and seat in kill.seats) or st.role == "wolf" or st.lover_of
        god = st.role in ("seer", "guard", "witch")
        if slot_key == "kill" or (slot_key is None and killer and (not god or r < 0.5)):
            r = within(r, 0, 0.5) if god and slot_key is None else r
            passed = kill is not None and kill.sub is not None and not kill.sub.targets
            if passed and r < 0.5 and not slot_key:
                return Act(seat=seat, skill="lock")  # "we pass tonight", made final
            if r < 0.75 or slot_key:
                target = self.any_living(within(r, 0, 0.75), none=True)
                return Act(seat=seat, skill="kill", targets=(None if self.peace else target,))
            if r < 0.9:
                return Act(seat=seat, skill="lock")
            return Act(seat=seat, skill="pass")
        r = within(r, 0.5, 1) if killer and slot_key is None else r
        if st.role == "seer":
            return Act(seat=seat, skill="see", targets=(self.any_living(r),))
        if st.role == "guard":
            if r < 0.85:
                return Act(seat=seat, skill="guard",
                           targets=(self.any_living(within(r, 0, 0.85), none=True),))
            return Act(seat=seat, skill="pass")
        if st.role == "witch" and self.peace:
            return Act(seat=seat, skill="pass")
        if st.role == "witch":
            if r < 0.4:
                reported = kill.sub.targets[0] if kill and kill.sub and kill.sub.targets else None
                target = reported if reported is not None and r < 0.3 else \
                    self.any_living(within(r, 0, 0.4))
                return Act(seat=seat, skill="save", targets=(target,))
            if r < 0.7:
                return Act(seat=seat, skill="poison",
                           targets=(self.any_living(within(r, 0.4, 0.7)),))
            return Act(seat=seat, skill="pass")
        return Act(seat=seat, skill="see", targets=(self.any_living(r),))

    # wrong commands ----------------------------------------------------------------------
    def illegal(self, r: float) -> Any:
        """A command that is probably refused: odd seats, dead seats, wrong phase or skill."""
        state = self.state
        m = self.memo()
        odd: tuple[list[int], list[int | None]] | None = m.get("odd")
        if odd is None:
            dead = [s.seat for s in state.peek_seats() if not s.alive]
            seats = [*range(1, len(state.seats) + 1), *dead, *dead, *ODD_SEATS]
            odd = m["odd"] = (seats, [*seats, None])
        seats, targets = odd
        kind, r = pick(ILLEGAL_KINDS if self.peace else ILLEGAL_KINDS_CARD, r)
        seat, r = pick(seats, r)
        target, r = pick(targets, r)
        if kind == "act":
            skill, r = pick(self.skills, r)
            many, r = pick([(target,), (), (target, target), (target, seat, None)], r)
            return Act(seat=seat, skill=skill, targets=many)
        if kind == "vote":
            mode, r = pick(["vote", "change", "correct", "void", "request_correct"], r)
            return Vote(seat=seat, mode=mode, target=target)
        if kind == "ruling":  # often for a seat with nothing pending
            return JudgeCorrection(seat=seat, accept=r < 0.5)
        if kind == "handover":
            return Handover(seat=seat, target=target or 0)
        if kind == "lastwords":
            return LastWords(seat=seat, text=pick(NEUTRAL_WORDS, r)[0])
        if kind == "surrender":
            return Surrender(seat=seat)
        if kind == "tick":
            ids = [d.id for d in state.deadlines] + ["day_close:99", "night:1:kill", "nope", ""]
            return Tick(deadline_id=pick(ids, r)[0])
        if kind == "proxy":
            return JudgeProxy(seat=seat, target=target)
        if kind == "card":
            return JudgeCard(seat=seat, color="red" if r >= 0.85 else "yellow")
        if kind == "extend":  # sometimes for a seat that owes something, sometimes later
            owing = [n for d in state.deadlines for n in d.seats] or [seat]
            minutes = -60 + int(r * 6 * self.wait)
            return JudgeExtend(seat=pick(owing, r)[0] if r < 0.6 else seat,
                               at=self.now + timedelta(minutes=minutes))
        if kind == "waiver":
            return JudgeWaiver(seat=seat, waiver="notice" if r < 0.5 else "contact")
        which = "close" if r < 0.5 else "open"
        minutes = -self.wait // 2 + int(within(r, 0, 0.5) * 8 * self.wait) if r < 0.5 else \
            -self.wait // 2 + int(within(r, 0.5, 1) * 8 * self.wait)
        return JudgeSetTime(which=which, at=self.now + timedelta(minutes=minutes))


def play(rnd: random.Random, *, seed: str | None = None, options: dict[str, Any] | None = None,
         roles: list[str] | None = None, on_step: Callable[[Step], None] | None = None,
         on_start: Callable[[GameState, list[Event]], None] | None = None,
         schedule: dict[str, Any] | None = None) -> Trace:
    """Play one whole game; raise AssertionError when the engine breaks its contract.
    `schedule` holds new_game's fast-game arguments (first_open, day_minutes, night_minutes)."""
    seed = seed if seed is not None else f"{rnd.getrandbits(64):016x}"
    driver = Driver(rnd, seed=seed, options=options, roles=roles, on_step=on_step,
                    on_start=on_start, schedule=schedule)
    return driver.play()


# The games the tests that play every ruleset play of classic, in turn: the Driver's keyword
# arguments; together they deal every role (the hunter only with his option).
GAMES: list[dict[str, Any]] = [{}, {"options": {"classic.hunter": True}}]


def random_player(ruleset: str) -> tuple[type[Driver], list[dict[str, Any]]]:
    """The random player of `ruleset` and its games (as `GAMES` above): this module's `Driver`
    for classic, `DRIVER` and `GAMES` of tests/randomplay_NAME.py for another. A ruleset
    without one fails every test that plays each registered ruleset until it has one."""
    if ruleset == "classic":
        return Driver, GAMES
    try:
        module = importlib.import_module(f"randomplay_{ruleset.replace('-', '_')}")
    except ModuleNotFoundError:
        raise AssertionError(f"no random player for the ruleset {ruleset!r}: write "
                             f"tests/randomplay_{ruleset}.py with DRIVER and GAMES") from None
    return module.DRIVER, module.GAMES


def random_game(ruleset: str, rnd: random.Random, index: int = 0, **kwargs: Any) -> Trace:
    """One whole random game of `ruleset`: the `index`th of its games (in turn), with
    `kwargs` (on_step, options …) for the Driver on top."""
    driver, games = random_player(ruleset)
    args = {**games[index % len(games)], **kwargs}
    seed = args.pop("seed", None) or f"{rnd.getrandbits(64):016x}"
    return driver(rnd, seed=seed, ruleset=ruleset, **args).play()


def replay(trace: Trace) -> tuple[GameState, list[Event]]:
    """Feed the accepted commands to a fresh game; every one must be accepted again."""
    state, events = new_game(**trace.game_args)
    assert state.model_dump() == trace.initial_state.model_dump()
    events = list(events)
    for now, cmd, _ in trace.accepted:
        out = handle(state, cmd, now)
        assert not isinstance(out, Rejection), f"replay refused {cmd!r} at {now}: {out}"
        state, evs = out
        events.extend(evs)
    return state, events
