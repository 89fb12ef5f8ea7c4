"""The phase flow: deadlines firing, the night resolving, days opening and closing (the vote,
the PK revote), nights starting; reminders and who owes what."""

from __future__ import annotations

from datetime import datetime, timedelta

from engine.context import OPEN_NOTICE, REVIEW, REVIEW_SINCE, Ctx
from engine.duties import handover_missed
from engine.model import Deadline, GameState, Night
from engine.votes import ABSTAIN, REVOTE, Tally, tally
from engine.voting import lapse_corrections, may_vote


def fire(ctx: Ctx, ident: str, fired_at: datetime | None = None) -> None:
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
        last = not any(d.kind == "night" for d in state.deadlines)
        if last and ctx.o.resolve_judge_review:
            _start_review(ctx, {ident: dl.due})  # the deadline fires when the dawn is published
            return
        slot = next((s for s in night.slots.values() if s.deadline_id == ident), None)
        if slot is not None:
            slot.expired = True
            ctx.rs.slot_expired(ctx, slot)
        if last:
            _resolve(ctx)
    elif dl.kind == "handover":
        handover_missed(ctx)
    elif dl.kind == "lastwords":
        for n in dl.seats:
            if n in state.lastwords_due:
                state.lastwords_due.remove(n)
                ctx.tell_duty(n, "LastWordsWaived")
                if ctx.o.lastwords_yellow_on_missing:
                    ctx.missed(n, "lastwords", True)
    elif dl.kind == "day_close":
        _close_day(ctx, dl.day)
    elif dl.kind == "day_open":
        _open_day(ctx, dl.day)
    elif dl.kind == "remind":
        _remind(ctx, dl, max(ctx.now, fired_at or ctx.now))
    elif dl.kind == OPEN_NOTICE:
        _tell_moved_open(ctx, dl.day)
    else:
        ctx.rs.deadline(ctx, dl)


def owing_seats(ctx: Ctx, dl: Deadline) -> list[int]:
    """Who still owes an action for deadline `dl` (for reminders)."""
    # (read only: votes, night and seats are views, so that a reminder copies none of them)
    state = ctx.state
    if dl.kind == "day_close":
        votes = ctx.view("votes")
        return [n for n in state.living_numbers() if not votes.get(n) and may_vote(ctx, n)]
    if dl.kind == "handover":
        return [state.handover_due] if state.handover_due in dl.seats else []
    night = ctx.view("night")
    if dl.kind == "night" and night is not None:
        slot = next((s for s in night.slots.values() if s.deadline_id == dl.id), None)
        if slot is None or slot.final or slot.expired:
            return []
        if slot.sub is not None and not (slot.prompted and not slot.answered_after_prompt):
            return []
        return [n for n in slot.seats if state.peek(n).alive]
    if dl.kind == "setup":
        return [n for n in dl.seats if state.peek(n).alive]
    return list(dl.seats)


def _remind(ctx: Ctx, dl: Deadline, sent: datetime) -> None:
    """DM the owers of `dl`'s deadline, unless it is due by the time the reminder goes out
    (`sent`: later than now after downtime), when the reminder would tell of a past deadline."""
    parent = ctx.state.deadline(dl.parent or "")
    if parent is None or parent.due <= sent:
        return
    owing = owing_seats(ctx, parent)
    due = parent.due.strftime("%m-%d %H:%M")
    night = ctx.view("night")
    slot = next((s for s in night.slots.values() if s.deadline_id == parent.id),
                None) if night is not None and parent.kind == "night" else None
    # an answer given before the slot's prompt is owed again, but stands if not changed
    standing = {"standing": True} if slot is not None and slot.sub is not None else {}
    for n in owing:
        ctx.tell_about(parent.kind, n, "Reminder", duty=parent.kind, due=due, **standing)
    if owing:
        ctx.note("LateSummary", duty=parent.kind, seats=owing, due=due)


def maybe_resolve(ctx: Ctx) -> None:
    # (the phase first: by day there is nothing to look at; the night read only, so that a
    # command that changes nothing at night copies no night)
    if not ctx.state.phase.startswith("N"):
        return
    night = ctx.view("night")
    if night and not night.resolved and REVIEW not in night.data and (
            ctx.o.night_resolve_early and ctx.rs.ready(ctx)):
        _resolve(ctx)


def reviewing(state: GameState) -> bool:
    night = state.night
    return night is not None and not night.resolved and REVIEW in night.data


def _start_review(ctx: Ctx, held: dict[str, datetime]) -> None:
    """The night would resolve now: with `resolve.judge_review` it waits for the judge. The
    night's deadlines still pending are held (they fire at the publication; until their due
    time an action still counts: `代行`, or a player's own before a deadline not yet due);
    the day opens no sooner than `resolve.review_minutes` after the night's last deadline.
    A moved open is told at the open it replaces (a time everyone knew), not now: now is when
    the night's last answer came, which the table must not learn."""
    state = ctx.state
    night = state.night
    assert night is not None
    held = {**held, **{d.id: d.due for d in state.deadlines if d.kind == "night"}}
    ctx.drop_deadlines(lambda d: d.kind == "night")
    night.data[REVIEW] = {k: v.isoformat() for k, v in held.items()}
    day = night.day + 1
    opens = state.schedule.open_at(day)
    # when the night would have resolved, and the open it would have had (P-REVIEW-2)
    night.data[REVIEW_SINCE] = {"at": ctx.now.isoformat(), "open": opens.isoformat()}
    last = max([ctx.now, *held.values()])
    until = (last + timedelta(minutes=ctx.o.resolve_review_minutes)).replace(
        second=0, microsecond=0)
    # (never up to the day's close: a fast game's short day keeps its open, and the judge
    # publishes with 天亮 before it)
    if opens < until < state.schedule.close_at(day):
        state.schedule.opens[day] = until
        ctx.retime_deadlines()
        ctx.add_deadline(OPEN_NOTICE, day, "at", at=opens)
    ctx.note("DawnReview", day=night.day,
             until=state.schedule.open_at(day).strftime("%m-%d %H:%M"))


def _tell_moved_open(ctx: Ctx, day: int) -> None:
    """The open the review moved, told at the time the day would have opened (P-REVIEW-4),
    as the rules' doing."""
    at = ctx.state.schedule.open_at(day)
    if ctx.state.day < day and at > ctx.now:
        ctx.announce("TimeChanged", which="review", day=day, at=at.strftime("%m-%d %H:%M"))


def publish_dawn(ctx: Ctx, *, by_judge: bool) -> None:
    """`天亮`, or the day's open: the held deadlines fire (a slot still unanswered is missed,
    as at its deadline) and the night resolves. The duties it brings (last words, a
    handover, a shot) get the time they would have had from the resolution to the open,
    counted from now (P-REVIEW-2)."""
    state = ctx.state
    night = state.night
    if not reviewing(state):
        ctx.reject("no_review")
    assert night is not None
    held = night.data.pop(REVIEW)
    since = night.data.pop(REVIEW_SINCE, None)
    ctx.note("DawnPublished", day=night.day, by_judge=by_judge)
    for ident in held:
        slot = next((s for s in night.slots.values() if s.deadline_id == ident), None)
        if slot is not None and not slot.expired:
            slot.expired = True
            ctx.rs.slot_expired(ctx, slot)
    before = {d.id: d for d in state.deadlines}
    _resolve(ctx, publish=True)  # (a GameOver raised here leaves no deadline to move)
    if since is not None:
        _keep_duty_windows(ctx, night.day + 1, before, since)


def _keep_duty_windows(ctx: Ctx, day: int, before: dict[str, Deadline],
                       since: dict[str, str]) -> None:
    """The duties the publication set, due at day `day`'s open (last words, a handover, a
    shot before the next open), end no sooner than they would have without the review: the
    time from the night's resolution to the open, counted from the publication."""
    state = ctx.state
    lag = (ctx.now - datetime.fromisoformat(since["at"])) - (
        state.schedule.open_at(day) - datetime.fromisoformat(since["open"]))
    extra = -(-lag // timedelta(minutes=1))  # whole minutes, rounded up
    if extra <= 0 or state.over:
        return
    for dl in list(state.deadlines):
        if (dl.anchor == "open" and dl.day == day and dl.kind not in ("day_open", OPEN_NOTICE)
                and before.get(dl.id) != dl):
            ctx.add_deadline(dl.kind, dl.day, "open", dl.offset_min + extra, dl.seats,
                             key=dl.id.split(":", 1)[1])


def _resolve(ctx: Ctx, *, publish: bool = False) -> None:
    night = ctx.state.night
    assert night is not None
    if ctx.o.resolve_judge_review and not publish:
        if REVIEW not in night.data:
            _start_review(ctx, {})
        return
    night.resolved = True
    ctx.drop_deadlines(lambda d: d.kind == "night")
    ctx.note("NightResolving", day=night.day)
    ctx.rs.resolve_night(ctx)
    ctx.check("phase")


def _counts(t: Tally) -> dict[int, int | float]:
    """A tally's counts for its announcement: a whole number as an int (a half stays, where
    a ruleset weighs the sheriff's vote 1.5), so that its JSON reads the same to every reader
    (Python writes 3.0 where a browser's JSON.stringify writes 3: the replay checks a
    signature over it)."""
    return {c: int(n) if float(n).is_integer() else n for c, n in t.counts.items()}


def _open_day(ctx: Ctx, day: int) -> None:
    state = ctx.state
    if reviewing(state):
        publish_dawn(ctx, by_judge=False)
    elif state.night is not None and not state.night.resolved:
        _resolve(ctx, publish=True)
    state.phase = f"D{day}"
    state.day = day
    state.votes = {}
    state.correction_requests = {}
    news, state.news = state.news, {}
    reveal = ctx.o.public_reveal_roles_on_out is True
    outs = news.get("outs", [])
    ctx.announce("DayOpened", day=day, outs=outs, cards=news.get("cards", []),
                 roles={n: state.seat(n).role for n in outs} if reveal else {},
                 alive=state.living_numbers())
    ctx.add_deadline("day_close", day, "close")
    ctx.rs.open_day(ctx, day)


def _close_day(ctx: Ctx, day: int) -> None:
    state = ctx.state
    lapse_corrections(ctx)
    if state.data.get("revote"):
        _close_revote(ctx, day)
        return
    if state.data.get("vote_void") == day:  # the day's vote was voided (void_votes)
        del state.data["vote_void"]
        ctx.check("phase")
        _start_night(ctx, day)
        return
    exiles = ctx.rs.exiles_on(ctx, day)
    voters, candidates = ctx.rs.ballot(ctx, day, "exile" if exiles else "sheriff")
    sheriff = state.sheriff if state.sheriff in voters else None
    weights = {sheriff: ctx.rs.sheriff_weight(ctx)} if sheriff else {}
    abstain_key = ctx.o.votes_abstain_as_candidate
    t = tally(state.votes, voters, weights, candidates, abstain_as_candidate=abstain_key,
              tiebreak=ctx.rs.first_to_reach_rule(ctx))
    non_voters = sorted(n for n in voters if not state.votes.get(n))
    void_voters = sorted(n for n in voters if state.votes.get(n) and state.votes[n][-1].void)
    ctx.announce("VoteResult", day=day, counts=_counts(t),
                 effective=t.effective, kind="exile" if exiles else "sheriff")
    revote = False
    if exiles:
        target = ctx.rs.pick_exile(ctx, t)
        revote = target == REVOTE
        if target in (ABSTAIN, REVOTE):
            target = None
        _exile(ctx, day, None if revote else target, announce=not revote)
    else:
        _elect(ctx, day, t)
    # P-CARD-3: the cards for not voting come after the exile and its consequences.
    _vote_cards(ctx, non_voters, void_voters)
    ctx.check("phase")
    if revote:
        _open_revote(ctx, day, list(t.tied))
        return
    _start_night(ctx, day)


def _exile(ctx: Ctx, day: int, target: int | None, *, announce: bool = True) -> None:
    """The vote's exile: announced and put out, unless the ruleset spares the seat (and
    says so itself)."""
    if target is not None and ctx.rs.spares_exile(ctx, target):
        return
    if announce:
        ctx.announce("Exiled", day=day, seat=target)
    if target is not None:
        ctx.put_out(target, "vote")


def _elect(ctx: Ctx, day: int, t: Tally) -> None:
    elected = ctx.rs.pick_sheriff(ctx, t)
    if elected == ABSTAIN:
        elected = None
    if elected is None:
        ctx.announce("NoSheriff", day=day)
    else:
        ctx.set_sheriff(elected, "elected")


def _vote_cards(ctx: Ctx, non_voters: list[int], void_voters: list[int]) -> None:
    """P-VOTE-9: a card for each voter who did not vote (and, by option, a void vote)."""
    state = ctx.state
    for n in non_voters if ctx.rs.procedures_apply(ctx) else []:
        st = state.seat(n)
        if st.red:
            continue
        if ctx.o.votes_notice_waives_yellow and st.notice:
            st.notice = False
            ctx.note("CardWaived", seat=n, duty="vote", waiver="notice")
            continue
        ctx.yellow(n, "vote")
    if ctx.o.votes_void_vote_yellow:
        for n in void_voters:
            if not state.seat(n).red:
                ctx.yellow(n, "void_vote")


def hold_election(ctx: Ctx, day: int) -> None:
    """A sheriff election that closes before the day's close (a ruleset's deadline calls it):
    its vote is counted, the sheriff set, its cards given, and the day's votes start afresh
    for the exile vote until the close."""
    state = ctx.state
    lapse_corrections(ctx)
    voters, candidates = ctx.rs.ballot(ctx, day, "sheriff")
    t = tally(state.votes, voters, {}, candidates,
              abstain_as_candidate=ctx.o.votes_abstain_as_candidate,
              tiebreak=ctx.rs.first_to_reach_rule(ctx))
    non_voters = sorted(n for n in voters if not state.votes.get(n))
    void_voters = sorted(n for n in voters if state.votes.get(n) and state.votes[n][-1].void)
    ctx.announce("VoteResult", day=day, counts=_counts(t), effective=t.effective,
                 kind="sheriff")
    _elect(ctx, day, t)
    _vote_cards(ctx, non_voters, void_voters)
    state.votes = {}
    ctx.check("phase")


def void_votes(ctx: Ctx, *, close_now: bool) -> None:
    """Today's vote is void (a ruleset's rule: a self-destruct): the posts are dropped, later
    votes refused, nobody is exiled or elected and nobody is carded for not voting. With
    `close_now` the day closes at this moment and the night begins, its deadlines counted
    from now; otherwise the day keeps its close."""
    state = ctx.state
    day = state.day
    lapse_corrections(ctx)
    state.votes = {}
    state.data.pop("revote", None)
    state.data["vote_void"] = day
    if close_now:
        state.schedule.closes[day] = ctx.now
        ctx.retime_deadlines()
        ctx.remove_deadline(f"day_close:{day}")
        _close_day(ctx, day)


def _open_revote(ctx: Ctx, day: int, candidates: list[int]) -> None:
    """A tied exile goes to a PK revote (the ruleset's pick_exile said REVOTE): the day is
    extended by deadlines.revote; everyone but the candidates votes once more, for a candidate
    or nobody."""
    state = ctx.state
    state.data["revote"] = {"candidates": candidates}
    state.votes = {}
    close = state.schedule.close_at(day) + timedelta(minutes=ctx.o.deadlines_revote)
    state.schedule.closes[day] = close
    ctx.retime_deadlines()
    ctx.add_deadline("day_close", day, "close")
    ctx.announce("RevoteOpened", day=day, candidates=candidates,
                 until=close.strftime("%H:%M"))


def _close_revote(ctx: Ctx, day: int) -> None:
    """The PK revote's result: the one top candidate goes out; a second tie exiles nobody."""
    state = ctx.state
    candidates = set(state.data.pop("revote")["candidates"])
    voters = set(state.living_numbers()) - candidates
    sheriff = state.sheriff if state.sheriff in voters else None
    t = tally(state.votes, voters, {sheriff: ctx.rs.sheriff_weight(ctx)} if sheriff else {},
              {c for c in candidates if state.seat(c).alive})
    ctx.announce("VoteResult", day=day, counts=_counts(t), effective=t.effective,
                 kind="revote")
    target = t.tied[0] if len(t.tied) == 1 else None
    _exile(ctx, day, target)
    ctx.check("phase")
    _start_night(ctx, day)


def _start_night(ctx: Ctx, day: int) -> None:
    state = ctx.state
    state.phase = f"N{day}"
    state.night = Night(day=day)
    ctx.announce("NightStarted", day=day)
    ctx.add_deadline("day_open", day + 1, "open")
    ctx.rs.open_night(ctx)
    maybe_resolve(ctx)
    if not state.night.slots and not state.night.resolved:
        _resolve(ctx)
