"""Automatic players. Each policy sees only its seat's `SeatView` and a random generator.

The driver (the judge's side) tells a seat what it owes now, as a `Duty`: a night slot (its key,
as in the NightPrompt the seat received), the day's vote, Cupid's link, a handover, last words,
or another duty deadline (the anomaly hunter's shot). The agent answers with commands in order
of preference; the driver sends them until one is accepted (a refused command changes nothing),
then, for night duties, falls back to `pass`. So an agent need not know every rule (whether the
guard may repeat a target, whether the witch may save herself): the engine says no and it tries
the next.

- `RandomAgent`: any legal action: a random skill of the slot (or pass) on a random seat it
  knows to be in, a random vote or abstention.
- `HeuristicAgent`: plausible play, documented per duty below: wolves never target a
  teammate, the seer checks unchecked seats and claims its results each morning, the witch saves
  on night one and poisons a seat called bad (or, in classic, the seat that voted most against
  the claimed seer and the seats he cleared), villagers vote the seats a claimed seer called
  bad, the wolves kill the claimed seer and vote him out only once he has called one of them
  bad.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Protocol

from bot.simulate.view import KILLER_ROLES, Claim, SeatView
from engine.commands import Act, Handover, LastWords, OptionValue, Vote

# Night slot key (before any ":") -> the skills that answer it, per ruleset-agnostic slot
# names; a slot not listed is answered with `pass` only.
SLOT_SKILLS: dict[str, tuple[str, ...]] = {
    "kill": ("kill",),
    "head": ("infect", "bloodsight"),
    "see": ("see",),
    "guard": ("guard", "firewall"),
    "witch": ("save", "poison", "purify", "format"),
    "overload": ("overload",),
}
# Duty deadline kinds answered by an Act: kind -> skill (a hunter's shot, in any ruleset).
DUTY_SKILLS: dict[str, str] = {"hunter": "shoot"}
# How often a seat stands for sheriff (the standard board's 上警): the random agent; the
# heuristic one by role (the seer always, to claim from the badge; a wolf now and then, to
# counter-claim). How often the random agent's candidate withdraws (退水); the heuristic one
# never does.
RUN_RANDOM = 0.3
WITHDRAW_RANDOM = 0.2
RUN_HEURISTIC = {"seer": 1.0, "wolf": 0.3}
RUN_OTHERS = 0.15


@dataclass(frozen=True)
class Duty:
    kind: str  # night | vote | setup | handover | lastwords | deadline | run (上警) | withdraw
    key: str = ""  # the slot key (night) or the deadline kind (deadline)


class Agent(Protocol):
    name: str

    def choose(self, view: SeatView, duty: Duty, rng: random.Random) -> list[Any]:
        """Commands for `duty`, most wanted first (possibly none: do nothing)."""
        ...

    def speak(self, view: SeatView, rng: random.Random) -> list[Claim]:
        """Public claims this morning (the forum talk)."""
        ...


def _pick(rng: random.Random, seats: list[int] | set[int]) -> int | None:
    items = sorted(seats)
    return rng.choice(items) if items else None


class RandomAgent:
    name = "random"

    def choose(self, view: SeatView, duty: Duty, rng: random.Random) -> list[Any]:
        seat = view.seat
        pool = sorted(view.public_in)  # itself included: some skills may target oneself
        if duty.kind == "run":
            return [Act(seat=seat, skill="run")] if rng.random() < RUN_RANDOM else []
        if duty.kind == "withdraw":
            return [Act(seat=seat, skill="withdraw")] if rng.random() < WITHDRAW_RANDOM else []
        if duty.kind == "vote":
            if view.election:
                return [Vote(seat=seat, target=_pick(rng, view.candidates + [0]) or None)]
            if view.role == "wolf" and view.ruleset == "standard" and rng.random() < 0.02:
                return [Act(seat=seat, skill="destruct")]
            return [Vote(seat=seat, target=_pick(rng, pool + [0]) or None)]
        if duty.kind == "setup":
            return [Act(seat=seat, skill="link", targets=tuple(rng.sample(pool, 2)))
                    for _ in range(3) if len(pool) >= 2]
        if duty.kind == "handover":
            if view.ruleset == "standard" and rng.random() < 0.2:
                return [Act(seat=seat, skill="tear")]
            return [Handover(seat=seat, target=t) for t in rng.sample(pool, min(3, len(pool)))]
        if duty.kind == "lastwords":
            return [LastWords(seat=seat, text="过")]
        if duty.kind == "deadline":
            skill = DUTY_SKILLS.get(duty.key)
            if skill is None:
                return []
            return [Act(seat=seat, skill=skill, targets=(_pick(rng, pool),)),
                    Act(seat=seat, skill="pass")]
        skills = SLOT_SKILLS.get(duty.key.split(":")[0], ())
        out: list[Any] = []
        for _ in range(3):
            skill = rng.choice([*skills, "pass"])
            if skill == "pass":
                out.append(Act(seat=seat, skill="pass"))
            else:
                complete = skill == "infect" and view.stage == "complete"
                options: dict[str, OptionValue] = {"mode": rng.choice([1, 2])} if complete \
                    else {}
                out.append(Act(seat=seat, skill=skill, targets=(_pick(rng, pool),),
                               options=options))
        if skills and skills[0] in ("kill", "infect"):
            out.append(Act(seat=seat, skill="lock"))  # a locked kill lets the night resolve
        return out

    def speak(self, view: SeatView, rng: random.Random) -> list[Claim]:
        return []


class HeuristicAgent:
    """Plausible play from the seat's own knowledge; see the module docstring."""

    name = "heuristic"

    def choose(self, view: SeatView, duty: Duty, rng: random.Random) -> list[Any]:
        seat = view.seat
        if duty.kind == "run":
            chance = RUN_HEURISTIC.get(view.role or "", RUN_OTHERS)
            return [Act(seat=seat, skill="run")] if rng.random() < chance else []
        if duty.kind == "withdraw":
            return []  # a candidate stays in the race
        if duty.kind == "vote" and view.election:
            return [Vote(seat=seat, target=self.candidate(view, rng))]
        if duty.kind == "vote":
            # A wolf the claimed seer called bad self-destructs (the standard board) now and
            # then: the day's vote is void, and the night comes at once.
            if view.ruleset == "standard" and view.role == "wolf" and seat in \
                    view.claimed_bad() and rng.random() < 0.3:
                return [Act(seat=seat, skill="destruct")]
            return [Vote(seat=seat, target=self.vote_target(view, rng))]
        if duty.kind == "setup":  # Cupid: two other seats at random (he knows nothing yet)
            others = view.others
            return [Act(seat=seat, skill="link", targets=tuple(rng.sample(others, 2)))
                    for _ in range(3) if len(others) >= 2]
        if duty.kind == "handover":  # the badge to a seat believed good
            trusted = self.trusted(view)
            pool = [n for n in view.others if n in trusted] or view.others
            return [Handover(seat=seat, target=t) for t in rng.sample(pool, min(3, len(pool)))]
        if duty.kind == "lastwords":
            return [LastWords(seat=seat, text=self.last_words(view))]
        if duty.kind == "deadline":  # a hunter's shot: the worst suspect
            skill = DUTY_SKILLS.get(duty.key)
            if skill is None:
                return []
            target = self.suspect(view, rng)
            if target is None and view.role not in KILLER_ROLES and not view.derivative:
                # Nobody called bad: the seat that voted most against the claimed seer and
                # the seats he cleared, if any did (the witch's tell too).
                tells = {n: k for n, k in view.against_cleared().items() if n != seat}
                target = max(sorted(tells), key=lambda n: tells[n]) if tells else None
            return [Act(seat=seat, skill=skill, targets=(target,))] if target else []
        return self.night(view, duty.key.split(":")[0], rng)

    # beliefs ------------------------------------------------------------------------------
    def enemies(self, view: SeatView) -> set[int]:
        """Seats to act against: for a wolf, everyone but its teammates; for the others, the
        seats its own checks or a claimed seer called bad."""
        if view.role in KILLER_ROLES or view.derivative:
            return set(view.others) - view.mates
        bad = {n for n, b in view.checks.items() if b}
        return (bad | set(view.claimed_bad())) & set(view.others)

    def trusted(self, view: SeatView) -> set[int]:
        if view.role in KILLER_ROLES:
            return view.mates
        good = {n for n, b in view.checks.items() if not b} | view.claimed_good()
        return good | set(view.claimed_seers())

    def suspect(self, view: SeatView, rng: random.Random) -> int | None:
        enemies = self.enemies(view)
        if view.role in KILLER_ROLES or view.derivative:
            # The wolves vote out a claimed seer who called one of them bad; otherwise they
            # blend in: anyone but a teammate or the seer (voting the seer would give them away).
            exposed = {c.seat for c in view.claims if c.bad and c.target in view.mates | {
                view.seat}}
            seers = [n for n in view.claimed_seers() if n in enemies and n in exposed]
            blend = enemies - set(view.claimed_seers())
            return seers[0] if seers else _pick(rng, blend or enemies)
        if enemies:
            own = [n for n, b in view.checks.items() if b and n in enemies]
            return own[0] if own else sorted(enemies, key=view.claimed_bad().index)[0]
        return None

    def candidate(self, view: SeatView, rng: random.Random) -> int | None:
        """The election's vote: a wolf backs a teammate who stands; the others a trusted
        candidate, else anyone standing (the seer's claim is not out yet on day 1)."""
        pool = [n for n in view.candidates if n != view.seat]
        if view.role in KILLER_ROLES:
            mine = [n for n in pool if n in view.mates]
            return mine[0] if mine else _pick(rng, pool)
        trusted = [n for n in pool if n in self.trusted(view)]
        return trusted[0] if trusted else _pick(rng, pool)

    def vote_target(self, view: SeatView, rng: random.Random) -> int | None:
        target = self.suspect(view, rng)
        if target is not None:
            return target
        # No lead: anyone not trusted (a wolf never votes a teammate).
        pool = [n for n in view.others if n not in self.trusted(view)] or view.others
        return _pick(rng, pool)

    def last_words(self, view: SeatView) -> str:
        if view.role == "seer" and view.checks:
            return "我是预言家：" + "，".join(
                f"{n}号{'查杀' if b else '金水'}" for n, b in sorted(view.checks.items()))
        return "过"

    def speak(self, view: SeatView, rng: random.Random) -> list[Claim]:
        """The seer (a real one, in the normal or village camp) publishes every check each
        morning; nobody else claims."""
        if view.role != "seer" or view.out or view.derivative or view.camp in (
                "wolves", "anomaly", "black-lovers"):
            return []
        told = {(c.target, c.bad) for c in view.claims if c.seat == view.seat}
        return [Claim(view.seat, n, b, view.day) for n, b in sorted(view.checks.items())
                if (n, b) not in told]

    # the night, per slot ---------------------------------------------------------------
    def night(self, view: SeatView, slot: str, rng: random.Random) -> list[Any]:
        seat = view.seat
        others = view.others
        if slot == "kill":
            # Never a teammate: the claimed seer, else a random non-wolf; then lock the kill.
            pool = [n for n in others if n not in view.mates]
            seers = [n for n in view.claimed_seers() if n in pool]
            target = seers[0] if seers else _pick(rng, pool)
            if target is None:
                return [Act(seat=seat, skill="pass")]
            return [Act(seat=seat, skill="kill", targets=(target,)), Act(seat=seat, skill="lock")]
        if slot == "head":
            # The wolf head infects a seat not yet known as his (he is told nothing).
            pool = [n for n in others if n not in view.mates]
            seers = [n for n in view.claimed_seers() if n in pool]
            target = seers[0] if seers else _pick(rng, pool)
            options: dict[str, OptionValue] = {"mode": 2 if rng.random() < 0.5 else 1} \
                if view.stage == "complete" else {}
            infect = [Act(seat=seat, skill="infect", targets=(target,), options=options),
                      Act(seat=seat, skill="lock")]
            # A seat he infected that is still in has probably turned: half the nights he
            # gives one of them 过载 through 血睿 instead (it also makes him evolve).
            turned = [n for n in dict.fromkeys(view.infected) if n in view.public_in]
            if turned and rng.random() < 0.5:
                return [Act(seat=seat, skill="bloodsight", targets=(rng.choice(turned),)),
                        Act(seat=seat, skill="lock"), *infect]
            return infect
        if slot == "see":
            fresh = [n for n in others if n not in view.checks]
            return [Act(seat=seat, skill="see", targets=(t,))
                    for t in rng.sample(fresh or others, min(2, len(fresh or others)))]
        if slot == "guard":
            skill = "firewall" if view.ruleset == "anomaly" else "guard"
            last = view.last_target.get(skill)
            seers = [n for n in view.claimed_seers() if n != last]
            pool = [n for n in others if n != last]
            targets = seers[:1] + rng.sample(pool, min(2, len(pool)))
            return [Act(seat=seat, skill=skill, targets=(t,)) for t in targets]
        if slot == "witch":
            return self.witch(view, rng)
        if slot == "overload":  # a derivative with 过载: a seat its view does not trust
            pool = [n for n in others if n not in view.claimed_good()]
            target = _pick(rng, pool or others)
            return [Act(seat=seat, skill="overload", targets=(target,))] if target else []
        return [Act(seat=seat, skill="pass")]

    def witch(self, view: SeatView, rng: random.Random) -> list[Any]:
        seat = view.seat
        out: list[Any] = []
        told = view.tongling.get(view.night)
        seers = view.claimed_seers()
        # Classic: save the reported kill target on night one, and later the claimed seer.
        if told is not None and "save" not in view.used and (view.night == 1 or told in seers):
            out.append(Act(seat=seat, skill="save", targets=(told,)))
        bad = [n for n in self.suspect_list(view) if n in view.public_in]
        if bad and "poison" not in view.used:
            out.append(Act(seat=seat, skill="poison", targets=(bad[0],)))
        elif view.ruleset != "anomaly" and view.night >= 2 and "poison" not in view.used:
            # Nobody called bad: from night two she poisons the seat that voted most against
            # the claimed seer and the seats he cleared, if any did.
            tells = {n: k for n, k in view.against_cleared().items() if n != seat}
            if tells:
                worst = max(sorted(tells), key=lambda n: tells[n])
                out.append(Act(seat=seat, skill="poison", targets=(worst,)))
        # Anomaly: format a seat called bad at complete, else purify the claimed seer or self.
        if bad and view.stage == "complete":
            out.append(Act(seat=seat, skill="format", targets=(bad[0],)))
        if view.ruleset == "anomaly" and not view.derivative:
            target = told if told is not None else (seers[0] if seers else seat)
            out.append(Act(seat=seat, skill="purify", targets=(target,)))
        return out

    def suspect_list(self, view: SeatView) -> list[int]:
        own = [n for n, b in view.checks.items() if b]
        return own + [n for n in view.claimed_bad() if n not in own]


AGENTS: dict[str, type[RandomAgent] | type[HeuristicAgent]] = {
    "random": RandomAgent, "heuristic": HeuristicAgent}
