"""Random whole games for the store tests, played in memory into a replayable command stream.

The store tests keep their own small random player (rather than tests/randomplay.py, which the
engine's property tests own and change): it sends plausible commands for the phase, some wrong
ones, and moves the clock through the deadlines (each deadline passed fires as a Tick); from
day LAZY_DAY on everyone votes together and nobody acts at night, so games end. A command the
engine raises on (an engine bug) is left out of the stream: the store only stores what the
engine decided.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from engine import handle, new_game
from engine.commands import (
    Act,
    Handover,
    JudgeCard,
    JudgeProxy,
    JudgeWaiver,
    LastWords,
    Tick,
    Vote,
)
from engine.events import Rejection
from engine.model import GameState

START = date(2026, 3, 1)
LAZY_DAY = 5
MAX_STEPS = 3000
NIGHT_SKILLS = {"wolf": ["kill", "lock", "pass"], "seer": ["see"], "guard": ["guard", "pass"],
                "witch": ["save", "poison", "pass"]}


@dataclass
class Step:
    now: datetime
    command: Any
    status: str  # accepted | rejected | noop


@dataclass
class RandomGame:
    args: dict[str, Any]
    steps: list[Step] = field(default_factory=list)
    final: GameState | None = None
    engine_errors: int = 0

    @property
    def over(self) -> bool:
        return self.final is not None and (self.final.winner is not None or self.final.halted)


def play(rnd: random.Random, game_id: str, *, options: dict[str, Any] | None = None,
         seed: str | None = None) -> RandomGame:
    args: dict[str, Any] = {"ruleset": "classic", "game_id": game_id,
                            "seed": seed or f"{rnd.getrandbits(64):016x}", "start": START,
                            "players": 12, "options": dict(options or {})}
    state, _ = new_game(**args)
    game = RandomGame(args)
    now = datetime.combine(START, datetime.min.time())

    def send(cmd: Any) -> None:
        nonlocal state
        try:
            out = handle(state, cmd, now)
        except Exception:  # an engine bug: not the store's business, leave it out
            game.engine_errors += 1
            return
        if isinstance(out, Rejection):
            game.steps.append(Step(now, cmd, "rejected"))
            return
        status = "noop" if out[0].version == state.version else "accepted"
        state = out[0]
        game.steps.append(Step(now, cmd, status))

    def advance(target: datetime) -> None:
        nonlocal now
        while not done():
            dl = state.next_deadline()
            if dl is None or dl.due > target:
                break
            now = max(now, dl.due)
            send(Tick(deadline_id=dl.id))
        now = max(now, target)

    def done() -> bool:
        return state.winner is not None or state.halted or len(game.steps) >= MAX_STEPS

    def living() -> list[int]:
        return [s.seat for s in state.living()] or [1]

    while not done():
        dl = state.next_deadline()
        if dl is None:
            break
        if state.day >= LAZY_DAY:
            if state.phase.startswith("D"):
                target = rnd.choice(living())
                for n in living():
                    if not state.votes.get(n) and not done():
                        send(Vote(seat=n, target=target))
            advance(dl.due)
            continue
        r = rnd.random()
        if r < 0.18:
            advance(now + timedelta(minutes=rnd.choice([5, 15, 45, 120, 300])))
        elif r < 0.85:
            cmd = legal(rnd, state, living())
            if cmd is not None:
                send(cmd)
        else:
            send(wrong(rnd, state))
    game.final = state
    return game


def legal(rnd: random.Random, state: GameState, living: list[int]) -> Any:
    if state.lastwords_due and rnd.random() < 0.2:
        return LastWords(seat=rnd.choice(state.lastwords_due), text="我是好人，过。")
    if state.handover_due is not None and rnd.random() < 0.4:
        return Handover(seat=state.handover_due, target=rnd.choice(living))
    if state.phase == "SETUP":
        cupid = next((s for s in state.seats if s.role == "cupid"), None)
        if cupid is None:
            return None
        a, b = rnd.sample(living, 2) if len(living) > 1 else (living[0], living[0])
        return Act(seat=cupid.seat, skill="link", targets=(a, b))
    if state.phase.startswith("D"):
        waiting = [n for n in living if not state.votes.get(n)]
        seat = rnd.choice(waiting if waiting and rnd.random() < 0.9 else living)
        target = rnd.choice([*living, None])
        mode = rnd.choices(["vote", "change", "correct", "void"], [8, 2, 1, 0.3])[0]
        if rnd.random() < 0.05:
            return JudgeProxy(seat=seat, target=target)
        return Vote(seat=seat, mode=mode, target=target)
    if state.phase.startswith("N"):
        actors = [s for s in state.living() if s.role in NIGHT_SKILLS]
        night = state.night
        owing = [s for s in actors if night and any(
            s.seat in slot.seats and slot.sub is None for slot in night.slots.values())]
        if owing and rnd.random() < 0.8:
            actors = owing
        if not actors:
            return None
        st = rnd.choice(actors)
        skill = rnd.choice(NIGHT_SKILLS[st.role])
        targets = () if skill in ("pass", "lock") else (rnd.choice(living),)
        return Act(seat=st.seat, skill=skill, targets=targets)
    return None


def wrong(rnd: random.Random, state: GameState) -> Any:
    seat = rnd.choice([0, 1, 5, 12, 13, 99])
    r = rnd.random()
    if r < 0.3:
        return Act(seat=seat, skill=rnd.choice(["see", "kill", "fly", ""]),
                   targets=(rnd.choice([1, 7, 40]),))
    if r < 0.5:
        return Vote(seat=seat, target=rnd.choice([None, 3, 77]))
    if r < 0.6:
        return Tick(deadline_id=rnd.choice(["nope", "day_close:99", *[d.id for d in
                                                                      state.deadlines]]))
    if r < 0.75:
        return JudgeWaiver(seat=seat, waiver=rnd.choice(["notice", "contact"]))
    if r < 0.85:
        return JudgeCard(seat=seat, color="yellow")
    return LastWords(seat=seat, text="……")


def finished_games(rnd: random.Random, count: int, prefix: str,
                   options: list[dict[str, Any]] | None = None) -> list[RandomGame]:
    """`count` games that ended (a game cut off at MAX_STEPS is skipped)."""
    out: list[RandomGame] = []
    tries = 0
    while len(out) < count:
        tries += 1
        assert tries < count * 5, "random games do not end"
        opts = options[len(out) % len(options)] if options else None
        game = play(rnd, f"{prefix}{len(out)}", options=opts)
        if game.over:
            out.append(game)
    return out
