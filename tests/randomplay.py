"""A random driver for whole classic games, shared by the property and hygiene tests.

`play(rnd, ...)` plays one game from `new_game` to its end on a simulated clock. At every step
it either moves the clock (a few minutes, exactly to the next deadline, or past one or more
deadlines; every deadline passed fires as a `Tick`, in order, like `bot.scenario.Game.advance`)
or sends one command: a plausible legal one for the current phase (votes, night actions,
Cupid's link, handover, last words, the odd surrender) or a deliberately wrong one (dead or
out-of-range seats and targets, unknown skills, wrong phase, stale ticks, judge proxies,
cards, waivers and time changes).

Every `handle` call goes through `Driver.send`, which checks the engine's basic contract
(it never raises, and it never changes the state it was given, least of all when it refuses
a command) and records every accepted (time, command) pair for a replay. Callers can hook
extra checks on every call (`on_step`).

The driver is omniscient (it reads roles from the state) only to make interesting games
likely: Cupid often links two wolves or a wolf and a villager, and some games hunt wolves.
From day `LAZY_DAY` on the players stop playing freely: everyone votes for one living player
each day and nobody acts at night, so exiles and cards end the game within a few days.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from engine import handle, new_game
from engine.commands import (
    Act,
    Handover,
    JudgeCard,
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

START = date(2026, 3, 1)
LAZY_DAY = 10  # from this day on, players only vote together and let deadlines pass
MAX_DAY = 30  # the game must be over by then
MAX_CALLS = 6000  # handle() calls per game, a safety net against a driver loop

NEUTRAL_WORDS = ["我是好人，请大家相信我。", "过。", "3号发言有问题。", "", "再见 👋",
                 "{target} 号", "遗言：无"]
SKILLS = ["kill", "see", "guard", "save", "poison", "link", "pass", "lock", "infect", "shoot",
          "", "KILL", "vote"]
SEAT_POOL = [-1, 0, 13, 99]
NIGHT_KEYS = {"kill": "kill", "see": "see", "guard": "guard"}

# Engine bugs found by these tests (see the report). `play(..., avoid=KNOWN_CRASHES)` keeps the
# driver away from them so that the other properties can still be checked meanwhile.
KNOWN_CRASHES = frozenset({"lock_after_pass"})

# Option combinations drawn from RULES.md §5 (classic keys and the shared keys).
OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"night.resolve_early": False, "night.allow_resubmit": False},
    {"classic.same_guard_same_save_kills": True, "classic.witch_self_save": "first_night_only",
     "classic.witch_self_poison": False, "classic.antidote_any_target": "kill_target_only",
     "classic.kill_post_on_no": True},
    {"classic.exile_tie": "sheriff_vote", "classic.sheriff_tiebreak": "first_to_reach_ever",
     "votes.abstain_as_candidate": True, "votes.self_vote": False},
    {"classic.exile_tie": "random", "classic.sheriff_tiebreak": "random",
     "classic.sheriff_night_handover_deadline": "close_plus_30",
     "classic.red_card_sheriff_successor": "none"},
    {"public.reveal_roles_on_out": True, "lastwords.eligible": "all",
     "lastwords.yellow_on_missing": True},
    {"cards.yellow_to_red": 3, "cards.red_lover_partner_dies": False,
     "votes.void_vote_yellow": True, "classic.exile_tie": "no_exile"},
    {"classic.double_wolf_lovers_know_partner": True, "classic.cupid_self_pick": False,
     "classic.cupid_told_camp": False, "classic.cupid_missing": "no_lovers"},
    {"classic.village_gods_rule": "any_out", "classic.guard_yellow": True,
     "classic.guard_deadline": "2h", "classic.seer_feedback": "wolf_partition",
     "classic.seer_self_check": True},
    {"surrender.requires": "any_member", "check.bundle_lovers": False,
     "check.lose_first": False, "resolve.locked_actions": False},
    {"surrender.requires": "majority", "public.reveal_roles_on_out": "at_game_end",
     "classic.seer_feedback": "literal_labels"},
]


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
               roles: list[str] | None = None) -> tuple[dict[str, Any], GameState, list[Event]]:
    args: dict[str, Any] = {"ruleset": "classic", "game_id": f"prop-{seed}", "seed": seed,
                            "start": START, "options": dict(options or {})}
    if roles is None:
        args["players"] = 12
    else:
        args["roles"] = list(roles)
    state, events = new_game(**args)
    return args, state, events


class Driver:
    def __init__(self, rnd: random.Random, *, seed: str, options: dict[str, Any] | None = None,
                 roles: list[str] | None = None,
                 on_step: Callable[[Step], None] | None = None,
                 avoid: frozenset[str] = frozenset(),
                 hunt_wolves: bool | None = None) -> None:
        self.rnd = rnd
        args, self.state, events = start_game(seed, options, roles)
        self.now = datetime.combine(START, datetime.min.time())
        self.trace = Trace(game_args=args, initial_events=events)
        self.on_step = on_step
        self.avoid = avoid
        self.calls = 0
        self.hunt = rnd.random() < 0.3 if hunt_wolves is None else hunt_wolves
        self.diligence = rnd.choice((0.85, 0.95, 0.98, 1.0, 1.0))

    # the one door to the engine ---------------------------------------------------
    def send(self, cmd: Any) -> Rejection | None:
        self.calls += 1
        if self.calls > MAX_CALLS:
            raise AssertionError(f"no end after {MAX_CALLS} commands (day {self.state.day})")
        before = self.state
        copy = before.model_copy(deep=True)
        try:
            result = handle(before, cmd, self.now)
        except Exception as exc:
            raise EngineContractError(
                f"handle raised {type(exc).__name__}: {exc}\n  command: {cmd!r}\n  at: "
                f"{self.now}\n  phase: {before.phase}\n{self.describe()}") from exc
        if before != copy:
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

    # the clock ------------------------------------------------------------------------
    def advance(self, target: datetime, *, catch_up: bool = False) -> None:
        while True:
            dl = self.state.next_deadline()
            if dl is None or dl.due > target:
                break
            if catch_up:
                self.catch_up(dl)
                if self.over:
                    return
                if self.state.next_deadline() != dl:
                    continue
            self.now = max(self.now, dl.due)
            self.send(Tick(deadline_id=dl.id))
            if self.over:
                return
        self.now = max(self.now, target)

    def catch_up(self, dl: Deadline) -> None:
        """Most players who owe something act just before their deadline (not all do)."""
        state, rnd = self.state, self.rnd
        if self.now >= dl.due:
            return
        self.now = max(self.now, dl.due - timedelta(minutes=rnd.randint(1, 20)))
        cmds: list[Any] = []
        if dl.kind == "day_close":
            cmds = [Vote(seat=n, target=self.vote_target()) for n in self.living()
                    if not state.votes.get(n) and rnd.random() < self.diligence]
        elif dl.kind == "night" and state.night is not None:
            slot = next((s for s in state.night.slots.values() if s.deadline_id == dl.id), None)
            if slot is not None and slot.sub is None and rnd.random() < self.diligence:
                cmds = [c for c in self.night_choices() if c.seat in slot.seats
                        and (c.skill == NIGHT_KEYS.get(slot.key) or slot.key == "witch"
                             and c.skill in ("save", "poison", "pass"))][:1]
        elif dl.kind == "setup" and rnd.random() < self.diligence:
            cmds = [self.legal_setup(always=True)]
        elif dl.kind == "handover" and rnd.random() < self.diligence:
            cmds = [Handover(seat=state.handover_due or 1, target=self.any_living() or 1)]
        for cmd in cmds:
            if cmd is not None and not self.over:
                self.send(cmd)

    def move_clock(self) -> None:
        dl = self.state.next_deadline()
        if dl is None:
            raise AssertionError(f"the game is stuck: no winner and no deadline "
                                 f"(phase {self.state.phase})\n{self.describe()}")
        r = self.rnd.random()
        if r < 0.80:  # a little later
            self.advance(self.now + timedelta(minutes=self.rnd.randint(1, 90)), catch_up=True)
        elif r < 0.90:  # exactly the next deadline
            self.advance(dl.due, catch_up=True)
        elif r < 0.99:  # past the next deadline, maybe past several
            self.advance(dl.due + timedelta(minutes=self.rnd.randint(1, 600)), catch_up=True)
        else:  # a day or two later
            self.advance(self.now + timedelta(days=self.rnd.randint(1, 2)))

    @property
    def over(self) -> bool:
        return self.state.winner is not None or self.state.halted

    # the game ---------------------------------------------------------------------------
    def play(self) -> Trace:
        while not self.over:
            if self.state.day >= LAZY_DAY:
                self.lazy_step()
                continue
            r = self.rnd.random()
            if r < 0.15:
                self.move_clock()
            elif r < 0.78:
                cmd = self.legal()
                if cmd is not None:
                    self.send(cmd)
            else:
                self.send(self.illegal())
        self.trace.final = self.state
        return self.trace

    def lazy_step(self) -> None:
        state = self.state
        if state.phase.startswith("D"):
            living = [s.seat for s in state.living()]
            target = self.rnd.choice(living)
            for n in living:
                if not state.votes.get(n) and not self.over:
                    self.send(Vote(seat=n, target=target))
        dl = state.next_deadline() if not self.over else None
        if not self.over:
            if dl is None:
                raise AssertionError(f"the game is stuck (phase {state.phase})")
            self.advance(dl.due)

    # commands ---------------------------------------------------------------------------
    def living(self) -> list[int]:
        return [s.seat for s in self.state.living()]

    def any_living(self, *, none: float = 0.0) -> int | None:
        living = self.living()
        if none and self.rnd.random() < none:
            return None
        return self.rnd.choice(living) if living else None

    def legal(self) -> Any:
        state, rnd = self.state, self.rnd
        if state.lastwords_due and rnd.random() < 0.15:
            return LastWords(seat=rnd.choice(state.lastwords_due),
                             text=rnd.choice(NEUTRAL_WORDS))
        if state.handover_due is not None and rnd.random() < 0.3:
            return Handover(seat=state.handover_due, target=self.any_living() or 1)
        if rnd.random() < 0.004 and self.living():
            return Surrender(seat=rnd.choice(self.living()))
        if state.phase == "SETUP":
            return self.legal_setup()
        if state.phase.startswith("D"):
            return self.legal_day()
        if state.phase.startswith("N"):
            return self.legal_night()
        return None

    def legal_setup(self, always: bool = False) -> Any:
        state, rnd = self.state, self.rnd
        cupid = next((s for s in state.seats if s.holds("arrow")), None)
        if cupid is None or (rnd.random() < 0.3 and not always):
            return None
        living = self.living()
        wolves = [s.seat for s in state.living() if s.role == "wolf"]
        others = [n for n in living if n not in wolves]
        r = rnd.random()
        if r < 0.3 and len(wolves) >= 2:
            pair = rnd.sample(wolves, 2)
        elif r < 0.6 and wolves and others:
            pair = [rnd.choice(wolves), rnd.choice(others)]
        elif r < 0.7 and wolves:
            pair = [cupid.seat, rnd.choice(wolves)]
        else:
            pair = rnd.sample(living, 2) if len(living) >= 2 else living
        rnd.shuffle(pair)
        return Act(seat=cupid.seat, skill="link", targets=tuple(pair))

    def vote_target(self) -> int | None:
        state, rnd = self.state, self.rnd
        if self.hunt and rnd.random() < 0.7:
            wolves = [s.seat for s in state.living() if s.role == "wolf"]
            if wolves:
                return rnd.choice(wolves)
        return self.any_living(none=0.15)

    def legal_day(self) -> Any:
        state, rnd = self.state, self.rnd
        living = self.living()
        if not living:
            return None
        waiting = [n for n in living if not state.votes.get(n)]
        seat = rnd.choice(waiting if waiting and rnd.random() < 0.85 else living)
        posts = state.votes.get(seat, [])
        r = rnd.random()
        if r < 0.08:
            return JudgeProxy(seat=seat, target=self.vote_target())
        if r < 0.12:
            return Vote(seat=seat, mode="void")
        if not posts:
            return Vote(seat=seat, mode="vote", target=self.vote_target())
        if r < 0.3:
            return Vote(seat=seat, mode="correct", target=self.vote_target())
        if r < 0.5:
            return Vote(seat=seat, mode="change", target=self.vote_target())
        return None

    def legal_night(self) -> Any:
        choices = self.night_choices()
        if not choices:
            return None
        cmd = self.rnd.choice(choices)
        kill = self.state.night.slots.get("kill") if self.state.night else None
        if (cmd.skill == "pass" and "lock_after_pass" in self.avoid and kill is not None
                and cmd.seat in kill.seats and not kill.final):
            return None  # a killer's pass would make a later lock crash (see KNOWN_CRASHES)
        return cmd

    def night_choices(self) -> list[Any]:
        state, rnd = self.state, self.rnd
        night = state.night
        if night is None or night.resolved:
            return []
        choices: list[Any] = []
        kill = night.slots.get("kill")
        # Anyone who may plausibly kill tries: the slot's seats, and also every living wolf or
        # lover, so that a kill from a seat that lost 杀人 would be noticed.
        killers = sorted({*(kill.seats if kill else []),
                          *(s.seat for s in state.living() if s.role == "wolf" or s.lover_of)})
        for n in killers:
            if not state.seat(n).alive:
                continue
            choices.append(Act(seat=n, skill="kill", targets=(self.any_living(none=0.1),)))
            if kill is not None and (kill.sub is None or kill.sub.targets
                                     or "lock_after_pass" not in self.avoid):
                choices.append(Act(seat=n, skill="lock"))
            if kill is not None and (kill.final or "lock_after_pass" not in self.avoid):
                choices.append(Act(seat=n, skill="pass"))
        for st in state.living():
            if st.role == "seer":
                choices.append(Act(seat=st.seat, skill="see", targets=(self.any_living(),)))
            elif st.role == "guard":
                choices.append(Act(seat=st.seat, skill="guard",
                                   targets=(self.any_living(none=0.1),)))
                choices.append(Act(seat=st.seat, skill="pass"))
            elif st.role == "witch":
                slot = night.slots.get("witch")
                reported = None
                if kill is not None and kill.sub and kill.sub.targets:
                    reported = kill.sub.targets[0]
                save_t = reported if reported is not None and rnd.random() < 0.7 \
                    else self.any_living()
                choices.append(Act(seat=st.seat, skill="save", targets=(save_t,)))
                choices.append(Act(seat=st.seat, skill="poison", targets=(self.any_living(),)))
                choices.append(Act(seat=st.seat, skill="pass"))
                if slot is not None and slot.prompted:
                    choices.append(Act(seat=st.seat, skill="pass"))
        return choices

    def illegal(self) -> Any:
        state, rnd = self.state, self.rnd
        n = len(state.seats)
        dead = [s.seat for s in state.seats if not s.alive]

        def seat() -> int:
            r = rnd.random()
            if r < 0.35 and dead:
                return rnd.choice(dead)
            if r < 0.55:
                return rnd.choice(SEAT_POOL)
            return rnd.randint(1, n)

        def target() -> int | None:
            return None if rnd.random() < 0.15 else seat()

        r = rnd.random()
        if r < 0.30:
            skill = rnd.choice(SKILLS)
            if skill == "pass" and "lock_after_pass" in self.avoid:
                skill = "see"
            targets = tuple(target() for _ in range(rnd.choice((0, 1, 1, 1, 2, 3))))
            return Act(seat=seat(), skill=skill, targets=targets)
        if r < 0.42:
            return Vote(seat=seat(), mode=rnd.choice(["vote", "change", "correct", "void"]),
                        target=target())
        if r < 0.47:
            return Handover(seat=seat(), target=seat())
        if r < 0.52:
            return LastWords(seat=seat(), text=rnd.choice(NEUTRAL_WORDS))
        if r < 0.54:
            return Surrender(seat=seat())
        if r < 0.62:
            ids = [d.id for d in state.deadlines] + ["day_close:99", "night:1:kill", "nope", ""]
            return Tick(deadline_id=rnd.choice(ids))
        if r < 0.72:
            return JudgeProxy(seat=seat(), target=target())
        if r < 0.76:
            color = "red" if rnd.random() < 0.1 else "yellow"
            return JudgeCard(seat=seat(), color=color)
        if r < 0.94:
            return JudgeWaiver(seat=seat(), waiver=rnd.choice(["notice", "contact"]))
        minutes = rnd.randint(-120, 20 * 60)
        return JudgeSetTime(which=rnd.choice(["open", "close"]),
                            at=self.now + timedelta(minutes=minutes))


def play(rnd: random.Random, *, seed: str | None = None, options: dict[str, Any] | None = None,
         roles: list[str] | None = None, on_step: Callable[[Step], None] | None = None,
         avoid: frozenset[str] = frozenset()) -> Trace:
    """Play one whole game; raise AssertionError on a broken engine contract."""
    seed = seed if seed is not None else f"{rnd.getrandbits(64):016x}"
    driver = Driver(rnd, seed=seed, options=options, roles=roles, on_step=on_step, avoid=avoid)
    return driver.play()


def replay(trace: Trace) -> tuple[GameState, list[Event]]:
    """Feed the accepted commands to a fresh game; every one must be accepted again."""
    state, events = new_game(**trace.game_args)
    events = list(events)
    for now, cmd, _ in trace.accepted:
        out = handle(state, cmd, now)
        assert not isinstance(out, Rejection), f"replay refused {cmd!r} at {now}: {out}"
        state, evs = out
        events.extend(evs)
    return state, events
