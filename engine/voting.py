"""Day votes (RULES.md §4.3 P-VOTE): posts, the one change, the judge's corrections of a
player's 更正 request (AMB-P-09), the judge's proxy votes."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from engine.commands import JudgeCorrection, JudgeProxy
from engine.context import Ctx, Reject
from engine.model import CorrectionRequest, VotePost


def may_vote(ctx: Ctx, n: int) -> bool:
    """Whether seat `n` can cast today's vote now (an abstention passes every check a target
    does not decide): the reminder's audience, by the refusals of `vote` itself, so that a
    rule that takes a vote away (a PK candidate, the ruleset's `check_vote`) takes its
    reminder away too. Read only."""
    try:
        _check_voter(ctx, n)
        ctx.rs.check_vote(ctx, n, None)
    except Reject:
        return False
    return True


def _check_voter(ctx: Ctx, n: int) -> None:
    """The refusals of a voter whatever his vote, but the ruleset's (`check_vote`)."""
    state = ctx.state
    if not state.phase.startswith("D"):
        ctx.reject("no_vote_now")
    if not ctx.peek(n).alive:
        ctx.reject("you_are_out")
    data = ctx.view("data")
    if data.get("vote_void") == state.day:
        ctx.reject("votes_void")
    revote = data.get("revote")
    if revote and n in revote["candidates"]:
        ctx.reject("revote_candidate")


def vote(ctx: Ctx, n: int, mode: str, target: int | None, *, by_judge: bool) -> None:
    state = ctx.state
    _check_voter(ctx, n)
    revote = ctx.view("data").get("revote")
    if revote:
        if mode != "void" and target is not None and target not in revote["candidates"]:
            ctx.reject("revote_target", candidates=revote["candidates"])
        if mode == "change":
            ctx.reject("change_used")
    if mode != "void" and target is not None:
        ctx.living_target(target)
        if target == n and not ctx.o.votes_self_vote:
            ctx.reject("no_self_vote")
    if mode != "void":
        ctx.rs.check_vote(ctx, n, target)
    posts = state.votes.setdefault(n, [])
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
        posts[-1] = replace(posts[-1], target=target, void=False)
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
    if n not in ctx.view("correction_requests"):
        return
    req = ctx.state.correction_requests.pop(n, None)
    if req is not None:
        ctx.tell(n, "CorrectionDropped", voter=n, target=req.target)
        ctx.note("CorrectionDroppedJudge", voter=n, target=req.target)


def lapse_corrections(ctx: Ctx) -> None:
    """Voting closes: requests the judge has not ruled on lapse; the votes stand as they are."""
    requests, ctx.state.correction_requests = ctx.state.correction_requests, {}
    for n, req in sorted(requests.items()):
        ctx.tell(n, "CorrectionLapsed", voter=n, target=req.target)
        ctx.note("CorrectionLapsedJudge", voter=n, target=req.target)


def judge_correction(ctx: Ctx, cmd: JudgeCorrection) -> None:
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
        vote(ctx, cmd.seat, "correct", req.target, by_judge=False)
        ctx.tell(cmd.seat, "CorrectionConfirmed", voter=cmd.seat, target=req.target)
        return
    can_change = _change_refusal(ctx, state.votes.get(cmd.seat, [])) is None
    ctx.tell(cmd.seat, "CorrectionRejected", voter=cmd.seat, target=req.target,
             can_change=can_change)


def _change_refusal(ctx: Ctx, posts: list[VotePost]) -> str | None:
    """Why the voter of `posts` may not use the one change now, or None (P-VOTE: one change,
    none in the last hour, none in a PK revote)."""
    state = ctx.state
    if ctx.view("data").get("revote") or any(p.change for p in posts):
        return "change_used"
    close = ctx.view("schedule").close_at(state.day)
    if ctx.now > close - timedelta(minutes=ctx.o.deadlines_change_freeze):
        return "change_last_hour"
    return None


def proxy(ctx: Ctx, cmd: JudgeProxy) -> None:
    state = ctx.state
    if not state.phase.startswith("D"):
        ctx.reject("no_vote_now")
    if ctx.now > ctx.view("schedule").close_at(state.day) - timedelta(
            minutes=ctx.o.deadlines_proxy_cutoff):
        ctx.reject("proxy_too_late")
    mode = "change" if state.votes.get(cmd.seat) else "vote"
    vote(ctx, cmd.seat, mode, cmd.target, by_judge=True)
