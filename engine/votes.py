"""Vote counting (RULES.md §4.3): weights, first-to-reach ties, abstentions, void posts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from engine.model import VotePost

ABSTAIN = 0  # pseudo-candidate used only with votes.abstain_as_candidate
REVOTE = -1  # what a ruleset's exile pick returns to ask for a PK revote


@dataclass(frozen=True)
class Tally:
    # candidate -> weighted count (ABSTAIN key only when it is a candidate); a float where a
    # weight is one (a sheriff's 1.5)
    counts: dict[int, float]
    top: float  # M
    tied: tuple[int, ...]  # S, sorted
    reached: dict[int, datetime]  # candidate in S -> T(c) (first-to-reach time)
    effective: dict[int, int | None]  # voter -> effective target (None: abstain or void)


def _segments(posts: list[VotePost], valid: set[int], abstain_key: bool
              ) -> list[tuple[datetime, int | None]]:
    """(time, candidate) per post; a void post or a vote for someone out counts for nobody."""
    out: list[tuple[datetime, int | None]] = []
    for post in posts:
        if post.void:
            cand: int | None = None
        elif post.target is None:
            cand = ABSTAIN if abstain_key else None
        else:
            cand = post.target if post.target in valid else None
        out.append((post.at, cand))
    return out


def tally(votes: dict[int, list[VotePost]], voters: set[int], weights: Mapping[int, float],
          candidates: set[int], *, abstain_as_candidate: bool = False,
          tiebreak: str = "first_to_reach_held") -> Tally:
    """Count the day's votes of living `voters` for living `candidates`."""
    valid = set(candidates)
    timeline: list[tuple[datetime, int, int | None]] = []  # (time, voter, candidate)
    effective: dict[int, int | None] = {}
    for voter, posts in votes.items():
        if voter not in voters or not posts:
            continue
        segs = _segments(posts, valid, abstain_as_candidate)
        effective[voter] = segs[-1][1]
        timeline.extend((at, voter, cand) for at, cand in segs)
    counts: dict[int, float] = {}
    for voter, cand in effective.items():
        if cand is not None:
            counts[cand] = counts.get(cand, 0) + weights.get(voter, 1)
    top = max(counts.values(), default=0)
    if top == 0:
        return Tally(counts, 0, (), {}, effective)
    tied = tuple(sorted(c for c, n in counts.items() if n == top))
    reached = _first_to_reach(timeline, weights, tied, top, ever=tiebreak == "first_to_reach_ever")
    return Tally(counts, top, tied, reached, effective)


def _first_to_reach(timeline: list[tuple[datetime, int, int | None]],
                    weights: Mapping[int, float], tied: tuple[int, ...], top: float, *,
                    ever: bool) -> dict[int, datetime]:
    """T(c): start of the last unbroken period with count >= M up to close (or the first moment)."""
    timeline = sorted(timeline, key=lambda e: e[0])
    current: dict[int, int | None] = {}
    reached: dict[int, datetime] = {}
    first: dict[int, datetime] = {}
    i = 0
    while i < len(timeline):
        at = timeline[i][0]
        while i < len(timeline) and timeline[i][0] == at:  # posts at one moment count together
            _, voter, cand = timeline[i]
            current[voter] = cand
            i += 1
        counts: dict[int, float] = {}
        for voter, cand in current.items():
            if cand is not None:
                counts[cand] = counts.get(cand, 0) + weights.get(voter, 1)
        for cand in tied:
            if counts.get(cand, 0) >= top:
                reached.setdefault(cand, at)
                first.setdefault(cand, at)
            else:
                reached.pop(cand, None)
    return first if ever else reached
