"""What one seat may know: a per-seat view built only from the events that reached that seat.

The agents decide from a `SeatView`, never from the `GameState`. A view is fed every engine
event whose audience reaches its seat (`Audience.reaches`: public posts, its private messages,
its rooms), plus the public claims other agents make (`Claim`, the forum talk the engine does
not model). It keeps only what the policies use: its role and camp (the role DM), its rooms'
members (wolves, lovers), the seats publicly known to be in, its own seer results, the witch's
通灵, its stage, its spent skills, and the claims.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.events import Event
from rulesets.data import load

# Seer labels that mean "not good" in any ruleset (<非村>, <属性异常>, a role of the anomaly
# camp such as 狼头 at the mature stage, the standard board's 狼人 / 查杀 / 狼人阵营); anything
# else is read as good.
BAD_MARKS = ("非", "异常", "狼", "查杀")


KILLER_ROLES = ("wolf", "wolf-head")


@dataclass(frozen=True)
class Claim:
    """A public statement by `seat`: "I am the seer; `target` is good/bad" (a forum post)."""

    seat: int
    target: int
    bad: bool
    day: int


@dataclass
class SeatView:
    seat: int
    players: int
    ruleset: str | None = None
    role: str | None = None
    camp: str | None = None  # as told (YourCamp, a conversion); else the role's camp
    out: bool = False
    derivative: bool = False
    day: int = 0
    night: int = 0
    stage: str | None = None
    groups: dict[str, set[int]] = field(default_factory=dict)
    public_in: set[int] = field(default_factory=set)
    checks: dict[int, bool] = field(default_factory=dict)  # own seer results: seat -> bad
    claims: list[Claim] = field(default_factory=list)
    tongling: dict[int, int | None] = field(default_factory=dict)  # night -> reported target
    used: set[str] = field(default_factory=set)  # skills this seat has had accepted
    last_target: dict[str, int | None] = field(default_factory=dict)  # skill -> last target
    vote_results: int = 0  # VoteResult posts seen (a revote is a new vote)
    overload: bool = False
    infected: list[int] = field(default_factory=list)  # the wolf head's own 感染 targets
    votes: dict[tuple[int, int], int | None] = field(default_factory=dict)  # (day, voter) ->
    # the target of the voter's standing public vote that day (abstention: None)
    # The standard board's day-1 election, as announced: whether it runs, its candidates.
    election: bool = False
    candidates: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.public_in = set(range(1, self.players + 1))

    # feeding ----------------------------------------------------------------------------
    def observe(self, e: Event) -> None:
        """One event; the caller has checked that its audience reaches this seat."""
        if not e.audience.reaches(self.seat):
            raise ValueError(f"event {e.type} does not reach seat {self.seat}")
        d = e.data
        t = e.type
        if t == "GameCreated":
            self.ruleset = d.get("ruleset")
        elif t == "RoleDealt" and d.get("seat") == self.seat:
            self.role = d.get("role")
            if self.camp is None and self.ruleset is not None:
                # The role DM names the camp: the killers' roles are in the ruleset's first
                # camp (data.yaml `camps`), every other role in the second.
                camps = load(self.ruleset, "data").get("camps", [])
                if len(camps) >= 2:
                    self.camp = camps[0] if self.role in KILLER_ROLES else camps[1]
        elif t == "YourCamp":
            self.camp = d.get("camp")
        elif t == "GroupFormed":
            self.groups[str(d.get("group"))] = set(d.get("members", []))
        elif t == "DayOpened":
            self.day = int(d.get("day", self.day))
            if isinstance(d.get("alive"), list):
                self.public_in = set(d["alive"])
        elif t == "NightStarted":
            self.night = int(d.get("day", self.night))
        elif t in ("Exiled", "RedCard", "SelfDestruct") and d.get("seat"):
            self.public_in.discard(d["seat"])
            if t == "SelfDestruct":
                self.election = False
        elif t == "HunterShot" and d.get("target"):
            self.public_in.discard(d["target"])
        elif t == "ElectionOpened":
            self.election = True
        elif t == "SheriffCandidate":
            self.candidates.append(int(d["seat"]))
        elif t == "SheriffWithdrew":
            self.candidates = [n for n in self.candidates if n != d.get("seat")]
        elif t == "BadgeLost" or (t == "VoteResult" and d.get("kind") == "sheriff"):
            self.election = False
        elif t == "YouAreOut" and d.get("seat") == self.seat:
            self.out = True
            self.public_in.discard(self.seat)
        elif t == "SeerResult" and d.get("target") is not None:
            label = str(d.get("label", ""))
            self.checks[int(d["target"])] = any(m in label for m in BAD_MARKS)
        elif t == "Tongling":
            self.tongling[self.night] = d.get("target")
        elif t == "StageNotice":
            self.stage = d.get("stage")
        elif t == "ActionRecorded" and d.get("skill") not in (None, "pass"):
            self.used.add(str(d["skill"]))
            self.last_target[str(d["skill"])] = d.get("target")
        elif t == "HeadRecorded" and d.get("kind") == "infect" and d.get("target"):
            self.infected.append(int(d["target"]))
        elif t == "BecameDerivative":
            self.derivative = True
            self.camp = "anomaly"
        elif t == "Cured":
            self.derivative = False
            self.camp = "normal"
        elif t == "OverloadGranted":
            self.overload = True
        elif t == "VotePosted" and d.get("voter") and d.get("mode") in (
                "vote", "change", "correct"):
            self.votes[(self.day, int(d["voter"]))] = d.get("target")
        if t == "VoteResult":
            self.vote_results += 1

    def hear(self, claim: Claim) -> None:
        self.claims.append(claim)

    # reading -------------------------------------------------------------------------------
    @property
    def mates(self) -> set[int]:
        """Seats this seat knows to be on its side: the members of its wolves' room."""
        return set(self.groups.get("wolves", set())) - {self.seat}

    @property
    def others(self) -> list[int]:
        """The other seats publicly known to be in."""
        return sorted(self.public_in - {self.seat})

    def claimed_seers(self) -> list[int]:
        """Seats that claimed the seer publicly and are still in, first claim first."""
        out: list[int] = []
        for c in self.claims:
            if c.seat not in out and c.seat in self.public_in:
                out.append(c.seat)
        return out

    def claimed_bad(self) -> list[int]:
        """Seats a claimed seer called bad, still in, most recent first."""
        bad = [c.target for c in reversed(self.claims) if c.bad and c.target in self.public_in]
        return list(dict.fromkeys(bad))

    def claimed_good(self) -> set[int]:
        return {c.target for c in self.claims if not c.bad}

    def against_cleared(self) -> dict[int, int]:
        """Seats still in -> how many times they publicly voted a claimed seer or a seat a
        claimed seer called good (a wolf's tell, since the village does not)."""
        cleared = self.claimed_good() | {c.seat for c in self.claims}
        out: dict[int, int] = {}
        for (_, voter), target in self.votes.items():
            if target in cleared and voter in self.public_in and voter != target:
                out[voter] = out.get(voter, 0) + 1
        return out
