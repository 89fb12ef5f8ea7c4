"""The day-1 sheriff election with candidates (S-SHERIFF-1..6, S-SHERIFF-9): 上警 until the
sign-up deadline, 退水 until the withdrawal deadline (the skill words `run` and `withdraw`,
the role book's own: they belong to no role), the votes of the non-candidates, the result,
and the badge lost for the game.

Its state is `state.data["election"]`: {"phase", "candidates", "withdrawn"}; the phase runs
signup (上警 and 退水; no votes yet) → withdraw (退水; votes) → vote (votes only, under
sheriff_only until the close) → done. The engine counts the vote (flow's day close, or
flow.hold_election under sheriff_then_exile) through the ruleset's ballot and pick_sheriff."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Any

from engine.commands import Act
from engine.context import Ctx
from engine.flow import hold_election
from engine.model import DeadlineKind, Seat
from engine.votes import Tally
from rulesets.standard.options import opts

KEY = "election"
SIGNUP, WITHDRAW = "signup", "withdraw"  # the deadline kinds
# Before the night's deadlines (1) would not matter (day 1 has none); before the day's close
# (6): a sign-up or withdrawal closing at the close closes first.
DEADLINE_KINDS = {SIGNUP: DeadlineKind(2), WITHDRAW: DeadlineKind(2)}


def state_of(ctx: Ctx) -> dict[str, Any] | None:
    """The election's record, read only (None: no election in this game yet)."""
    election: dict[str, Any] | None = ctx.view("data").get(KEY)
    return election


def running(ctx: Ctx) -> bool:
    election = state_of(ctx)
    return election is not None and election["phase"] != "done"


def _at(ctx: Ctx, value: tuple[str, int]) -> datetime:
    """An election time of day 1 (S-SHERIFF-2), kept within the day's opening and close."""
    sch = ctx.view("schedule")
    opens, closes = sch.open_at(1), sch.close_at(1)
    kind, minutes = value
    at = (datetime.combine(opens.date(), time(minutes // 60, minutes % 60), opens.tzinfo)
          if kind == "time" else opens + timedelta(minutes=minutes))
    return min(max(at, opens), closes)


def open_election(ctx: Ctx) -> None:
    """Day 1 opens: sign-up starts (S-SHERIFF-2)."""
    signup, withdraw = opts(ctx).election_times()
    ctx.state.data[KEY] = {"phase": "signup", "candidates": [], "withdrawn": []}
    s_at, w_at = _at(ctx, signup), _at(ctx, withdraw)
    ctx.add_deadline(SIGNUP, 1, "at", at=s_at)
    ctx.add_deadline(WITHDRAW, 1, "at", at=max(s_at, w_at))
    ctx.announce("ElectionOpened", signup=s_at.strftime("%H:%M"),
                 withdraw=max(s_at, w_at).strftime("%H:%M"),
                 then_exile=opts(ctx).standard_day1 == "sheriff_then_exile")


def _record(ctx: Ctx) -> dict[str, Any]:
    """The election's record, to change."""
    election: dict[str, Any] = ctx.state.data[KEY]
    return election


def _refuse_if_swallowed(ctx: Ctx) -> None:
    """上警 and 退水 once a self-destruct swallowed the badge (S-SHERIFF-9) say so, not that
    their deadline passed."""
    if ctx.view("data").get("badge_lost") == "swallowed":
        ctx.reject("election_swallowed")


def run(ctx: Ctx, st: Seat, cmd: Act) -> None:
    """上警 (S-SHERIFF-2)."""
    if not st.alive:
        ctx.reject("you_are_out")
    seat = st.seat
    election = state_of(ctx)
    _refuse_if_swallowed(ctx)
    if election is None or election["phase"] != "signup":
        ctx.reject("signup_closed")
    assert election is not None
    if seat in election["candidates"]:
        ctx.reject("already_candidate")
    if seat in election["withdrawn"]:
        ctx.reject("withdrawn_no_return")
    _record(ctx)["candidates"] = sorted([*election["candidates"], seat])
    ctx.announce("SheriffCandidate", seat=seat)


def withdraw(ctx: Ctx, st: Seat, cmd: Act) -> None:
    """退水 (S-SHERIFF-3): votes cast for him count for nobody (the tally skips them)."""
    if not st.alive:
        ctx.reject("you_are_out")
    seat = st.seat
    election = state_of(ctx)
    _refuse_if_swallowed(ctx)
    if election is None or election["phase"] not in ("signup", "withdraw"):
        ctx.reject("withdraw_closed")
    assert election is not None
    if seat not in election["candidates"]:
        ctx.reject("not_a_candidate_self")
    record = _record(ctx)
    record["candidates"] = [n for n in election["candidates"] if n != seat]
    record["withdrawn"] = sorted([*election["withdrawn"], seat])
    votes = ctx.view("votes")
    voided = sorted(v for v, posts in votes.items() if posts and posts[-1].target == seat)
    ctx.announce("SheriffWithdrew", seat=seat, voided=voided)


# The election's skill words (the book's own: they belong to no role).
SKILLS = {"run": run, "withdraw": withdraw}


def living_candidates(ctx: Ctx) -> list[int]:
    election = state_of(ctx)
    return [n for n in (election or {}).get("candidates", []) if ctx.peek(n).alive]


def deadline(ctx: Ctx, kind: str) -> None:
    """The sign-up or the withdrawal closes."""
    election = state_of(ctx)
    if election is None or election["phase"] == "done":
        return
    if kind == SIGNUP:
        _record(ctx)["phase"] = "withdraw"
        ctx.announce("SignupClosed", candidates=living_candidates(ctx))
        return
    _record(ctx)["phase"] = "vote"
    ctx.announce("WithdrawClosed", candidates=living_candidates(ctx))
    if opts(ctx).standard_day1 == "sheriff_then_exile":  # S-SHERIFF-1: the election closes
        hold_election(ctx, ctx.state.day)


def check_vote(ctx: Ctx, voter: int, target: int | None) -> None:
    """The election's vote (S-SHERIFF-4): after the sign-up, by non-candidates, for a
    candidate (or an abstention)."""
    election = state_of(ctx)
    assert election is not None
    if election["phase"] == "signup":
        ctx.reject("election_not_open")
    if not living_candidates(ctx):
        ctx.reject("no_election")
    if voter in election["candidates"]:
        ctx.reject("candidate_no_vote")
    if voter in election["withdrawn"]:
        ctx.reject("withdrawn_no_vote")
    if target is not None and target not in election["candidates"]:
        ctx.reject("not_a_candidate", target=target)


def ballot(ctx: Ctx) -> tuple[set[int], set[int]]:
    """Who votes in the election and for whom (S-SHERIFF-4, S-SHERIFF-6: no voters, so no
    cards, without a contest)."""
    election = state_of(ctx)
    candidates = set(living_candidates(ctx))
    if election is None or election["phase"] == "done" or len(candidates) < 2:
        return set(), candidates
    voters = set(ctx.state.living_numbers()) - candidates - set(election["withdrawn"])
    return voters, candidates


def pick(ctx: Ctx, tally: Tally) -> int | None:
    """The result (S-SHERIFF-5); a lost badge is announced here."""
    election = state_of(ctx)
    if election is None or election["phase"] == "done":
        return None  # already lost (a self-destruct swallowed the badge: S-SHERIFF-9)
    candidates = living_candidates(ctx)
    _record(ctx)["phase"] = "done"
    if not candidates:
        lose(ctx, "nobody", [])
        return None
    if len(candidates) == 1:
        return candidates[0]
    tied = list(tally.tied) if tally.top else candidates
    if len(tied) == 1:
        return tied[0]
    if opts(ctx).standard_sheriff_tie == "random":
        chosen: int = ctx.rand_choice(tied, "sheriff_tie")
        return chosen
    lose(ctx, "tie", tied)
    return None


def lose(ctx: Ctx, reason: str, seats: list[int]) -> None:
    """No sheriff this game (S-SHERIFF-5, S-SHERIFF-9)."""
    ctx.state.data["badge_lost"] = reason
    ctx.announce("BadgeLost", reason=reason, seats=seats)


def swallow(ctx: Ctx) -> bool:
    """A wolf self-destructs while the election runs: it ends with no sheriff (S-SHERIFF-9)."""
    if not running(ctx):
        return False
    _record(ctx)["phase"] = "done"
    ctx.drop_deadlines(lambda d: d.kind in (SIGNUP, WITHDRAW))
    ctx.state.data["badge_lost"] = "swallowed"
    return True
