"""One whole game with automatic players: the judge's side of a simulation.

The driver plays the judge: it keeps the clock (it fires every deadline as a `Tick`, in
order, like the bot's scheduler) and tells each seat what it owes now (a night slot it is in,
the day's vote, Cupid's link, a handover, last words, a duty deadline). For that it reads the
state, as the bot does. What a seat *chooses* comes from its agent, which sees only its
`SeatView`: the events whose audience reaches that seat, and the claims made in public.

The game is played on the default daily schedule (day 1 on START, days 09:00–21:00): everyone
owing something acts at the moment it becomes owed, so nights resolve early and a game takes a
handful of `handle` calls per seat and day. Everything random comes from one `random.Random`
seeded by (seed, game index) only, and the engine's own seed is derived the same way: a game's
result does not depend on which process plays it or in which order.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from bot.simulate.agents import AGENTS, Agent, Duty
from bot.simulate.stats import count_rules
from bot.simulate.view import SeatView
from engine import handle, new_game
from engine.commands import Act, Tick
from engine.context import Ctx
from engine.events import Event, Rejection
from engine.model import GameState
from engine.ruleset import get_ruleset

START = date(2026, 3, 1)
MAX_DAY = 40  # a game still running on this day is ended by the judge (counted "none")
MAX_TICKS = 4000  # a safety net against a driver loop
LOCKED_AFTER = ("kill", "infect", "bloodsight")  # a choice the agent then locks, if it asks
TRIES = 4  # commands tried per duty and moment before giving up until the clock moves


def game_seed(seed: int | str, index: int) -> str:
    """The engine seed of game `index` of a run: a function of (seed, index) only."""
    return hashlib.sha256(f"wolfjudge-simulate:{seed}:{index}".encode()).hexdigest()[:32]


@dataclass
class GameResult:
    index: int
    winner: str  # a camp, or "none" (halted for a ruling, or still running on MAX_DAY)
    days: int
    outs: dict[str, int] = field(default_factory=dict)  # out cause -> seats
    rules: dict[str, int] = field(default_factory=dict)  # rule key -> times it fired
    commands: int = 0
    rejected: int = 0


class GameDriver:
    def __init__(self, ruleset: str, players: int, options: dict[str, Any], agent: str,
                 seed: int | str, index: int) -> None:
        self.index = index
        engine_seed = game_seed(seed, index)
        self.rng = random.Random(int(engine_seed, 16))
        self.state: GameState
        self.state, events = new_game(ruleset=ruleset, game_id=f"sim-{index}", seed=engine_seed,
                                      start=START, options=dict(options), players=players)
        self.now = datetime.combine(START, datetime.min.time())
        n = len(self.state.seats)
        self.views = {s: SeatView(s, n) for s in range(1, n + 1)}
        make = AGENTS[agent]
        self.agents: dict[int, Agent] = {s: make() for s in self.views}
        self.log: list[Event] = []  # the judge's log: every event
        self.done: set[tuple[Any, ...]] = set()
        self.commands = 0
        self.rejected = 0
        self.deliver(events)

    # events to views ----------------------------------------------------------------------
    def deliver(self, events: list[Event]) -> None:
        for e in events:
            self.log.append(e)
            reached: list[SeatView]
            if e.audience.public:
                reached = list(self.views.values())
            else:
                reached = [self.views[s] for s in e.audience.seats if s in self.views]
            for view in reached:
                view.observe(e)
            if e.type == "DayOpened":
                self.morning_talk()

    def morning_talk(self) -> None:
        """Each seat in says its piece on the forum: the claims reach every view."""
        for seat in sorted(self.views):
            view = self.views[seat]
            if view.out:
                continue
            for claim in self.agents[seat].speak(view, self.rng):
                for other in self.views.values():
                    other.hear(claim)

    def send(self, cmd: Any) -> bool:
        self.commands += 1
        result = handle(self.state, cmd, self.now)
        if isinstance(result, Rejection):
            self.rejected += 1
            return False
        self.state, events = result
        self.deliver(events)
        return True

    # duties --------------------------------------------------------------------------------
    def duties(self) -> list[tuple[int, Duty, tuple[Any, ...]]]:
        """(seat, duty, done-key) for what each seat owes now, killers before the witch (who
        is told the kill once it is locked)."""
        state = self.state
        out: list[tuple[int, Duty, tuple[Any, ...]]] = []
        night = state.night
        if night is not None and not night.resolved and state.phase.startswith("N"):
            for key, slot in sorted(night.slots.items(),
                                    key=lambda kv: (_slot_order(kv[0]), kv[0])):
                if slot.final or slot.expired:
                    continue
                living = [n for n in slot.seats if state.seat(n).alive]
                if not living:
                    continue
                # One killer speaks for the room (the lowest seat, as in the demo).
                seats = living[:1] if len(living) > 1 else living
                for n in seats:
                    told = len(self.views[n].tongling)
                    out.append((n, Duty("night", key), ("night", state.phase, key, n, told)))
        for dl in state.deadlines:
            for n in dl.seats:
                if dl.kind == "setup":
                    out.append((n, Duty("setup"), ("setup", n)))
                elif dl.kind == "handover" and state.handover_due == n:
                    out.append((n, Duty("handover"), ("handover", dl.id, n)))
                elif dl.kind == "lastwords" and n in state.lastwords_due:
                    out.append((n, Duty("lastwords"), ("lastwords", dl.id, n)))
                elif dl.kind not in ("night", "day_close", "day_open", "remind", "setup",
                                     "handover", "lastwords"):
                    out.append((n, Duty("deadline", dl.kind), ("deadline", dl.id, n)))
        election: dict[str, Any] = state.data.get("election") or {}
        running = bool(election) and election["phase"] != "done"
        if running and election["phase"] == "signup":  # the standard board's 上警
            for st in state.living():
                out.append((st.seat, Duty("run"), ("run", st.seat)))
        if running and election["phase"] in ("signup", "withdraw"):  # and its 退水
            for n in election["candidates"]:
                out.append((n, Duty("withdraw"), ("withdraw", n)))
        if state.phase.startswith("D") and any(d.kind == "day_close" for d in state.deadlines):
            # Who votes now: the ruleset's ballot (an election's non-candidates, and no
            # revealed idiot); nobody while the election's sign-up runs.
            rs = get_ruleset(state.ruleset)
            ctx = Ctx(state, self.now, rs)
            kind = "sheriff" if running or not rs.exiles_on(ctx, state.day) else "exile"
            voters = set() if running and election["phase"] == "signup" else \
                rs.ballot(ctx, state.day, kind)[0]
            order = [s.seat for s in state.living() if s.seat in voters]
            self.rng.shuffle(order)  # who posts first matters for first-to-reach ties
            for n in order:
                if not state.votes.get(n):
                    vote_key = ("vote", state.phase, n, self.views[n].vote_results)
                    out.append((n, Duty("vote"), vote_key))
        return out

    def act_all(self) -> None:
        """Every seat does what it owes now, once; a duty refused stays open until later."""
        for seat, duty, key in self.duties():
            if key in self.done or self.state.over:
                continue
            if not self.still_owed(seat, duty):
                continue
            view = self.views[seat]
            choices = self.agents[seat].choose(view, duty, self.rng)[:TRIES]
            accepted = False
            for cmd in choices:
                if self.send(cmd):
                    accepted = True
                    if not (isinstance(cmd, Act) and cmd.skill in LOCKED_AFTER):
                        break  # a kill is followed by its lock, if the agent asked for one
            if not accepted and duty.kind == "night":
                accepted = self.send(Act(seat=seat, skill="pass"))
            if accepted or duty.kind != "vote":
                self.done.add(key)

    def still_owed(self, seat: int, duty: Duty) -> bool:
        """Whether a duty listed before an earlier command in this pass is still open."""
        state = self.state
        if duty.kind == "night":
            night = state.night
            slot = night.slots.get(duty.key) if night is not None else None
            return slot is not None and not slot.final and not slot.expired and \
                not night.resolved and state.seat(seat).alive  # type: ignore[union-attr]
        if duty.kind == "vote":
            return state.seat(seat).alive and not state.votes.get(seat)
        return True

    # the game ---------------------------------------------------------------------------
    def play(self) -> GameResult:
        ticks = 0
        while not self.state.over and ticks < MAX_TICKS and self.state.day < MAX_DAY:
            self.act_all()
            if self.state.over:
                break
            dl = self.state.next_deadline()
            if dl is None:
                break
            self.now = max(self.now, dl.due)
            ticks += 1
            self.send(Tick(deadline_id=dl.id))
        return self.result()

    def result(self) -> GameResult:
        state = self.state
        outs = Counter(s.out_cause or "unknown" for s in state.seats if not s.alive)
        return GameResult(index=self.index, winner=state.winner or "none", days=state.day,
                          outs=dict(outs), rules=count_rules(self.log),
                          commands=self.commands, rejected=self.rejected)


def _slot_order(key: str) -> int:
    base = key.split(":")[0]
    return 0 if base in ("kill", "head") else 2 if base == "witch" else 1


def play_game(ruleset: str, players: int, options: dict[str, Any], agent: str,
              seed: int | str, index: int) -> GameResult:
    return GameDriver(ruleset, players, options, agent, seed, index).play()
