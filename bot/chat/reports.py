"""What `状态`, `帮助`, `票型` and `公示` say, built from the state and the log.

A player's view says only what the seat was told (its own role, its own submissions, its own
deadlines and cards); the judge's view says everything.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from bot.feed import describe_deadline, submission
from bot.render import render_event
from bot.service import event_of
from bot.store.models import LogEntry
from bot.texts import (
    camp_name,
    contact_text,
    phase_text,
    role_name,
    ruleset_name,
    seats_text,
    t,
    texts,
)
from engine.context import Ctx
from engine.events import Event
from engine.model import GameState
from engine.ruleset import get_ruleset
from engine.votes import tally
from rulesets.data import load


def _num(n: float) -> float | int:
    """A weighted count as written: 3, 2.5."""
    return int(n) if float(n).is_integer() else n


def _hm(at: datetime) -> str:
    return at.strftime("%m-%d %H:%M")


def duty_name(key: str) -> str:
    """A night slot's or a deadline's duty, in words (`指杀`), never its key."""
    duties = load("common", "templates")["words"]["duties"]
    return str(duties.get(key.split(":")[0], duties["default"]))


def cause_name(cause: str | None) -> str:
    causes = load("common", "templates")["words"]["causes"]
    return str(causes.get(cause or "", causes["default"]))


def told_camp(state: GameState, seat: int, log: list[LogEntry]) -> str:
    """The seat's camp as far as it was told: the last `YourCamp` it got, else its dealt one."""
    camp = None
    for row in log:
        if row.kind == "event" and row.type == "YourCamp" and seat in (
                row.audience or {}).get("seats", []):
            camp = event_of(row.body).data.get("camp")
    if camp is None:
        dealt = {"wolf": "wolves", "wolf-head": "anomaly"}.get(state.seat(seat).role)
        camp = dealt or ("normal" if state.ruleset == "anomaly" else "village")
    return camp_name(state.ruleset, camp)


def player_status(state: GameState, seat: int, code: str, forum_name: str,
                  log: list[LogEntry]) -> str:
    st = state.seat(seat)
    lines = [t("status_player", code=code, phase=phase_text(state.phase), seat=seat,
               name=forum_name or "-", role=role_name(state.ruleset, st.role),
               camp=told_camp(state, seat, log),
               alive=t("status_alive") if st.alive else t("status_out"), yellow=st.yellow,
               red=t("status_red") if st.red else "")]
    if state.paused_at is not None:
        lines.append(t("status_paused"))
    night = state.night
    for slot in (night.slots.values() if night and not night.resolved else []):
        if seat not in slot.seats:
            continue
        dl = state.deadline(slot.deadline_id)
        if slot.sub is not None:
            lines.append(t("status_sub", what=submission(slot.sub.skill,
                                                           slot.sub.targets),
                           final=t("status_final") if slot.final or dl is None else t(
                               "status_changeable", due=_hm(dl.due))))
        elif dl is not None and not slot.expired:
            lines.append(t("status_owes", what=duty_help(state.ruleset, slot.key),
                           due=_hm(dl.due)))
    for dl in state.deadlines:
        if seat in dl.seats and dl.kind in ("handover", "lastwords", "hunter", "setup"):
            what = {"handover": t("help_handover"), "lastwords": t("help_lastwords"),
                    "hunter": duty_help(state.ruleset, "hunter"),
                    "setup": duty_help(state.ruleset, "setup")}[dl.kind]
            lines.append(t("status_owes", what=what, due=_hm(dl.due)))
    election = _election(state)
    if election is not None:
        mine = t("status_candidate") if seat in election["candidates"] else t(
            "status_withdrawn") if seat in election["withdrawn"] else ""
        lines.append(t("status_election", candidates=seats_text(election["candidates"]) or t(
            "words.none"), mine=mine))
    posts = state.votes.get(seat)
    if posts and state.phase.startswith("D"):
        last = posts[-1]
        what = t("words.void") if last.void else (
            t("words.abstain") if last.target is None else t("words.seat", n=last.target))
        lines.append(t("status_vote", what=what))
    return "\n".join(lines)


def _election(state: GameState) -> dict[str, Any] | None:
    """The standard board's day-1 election while it runs (rulesets/standard/election.py)."""
    election = state.data.get("election") if state.ruleset == "standard" else None
    return election if isinstance(election, dict) and election["phase"] != "done" else None


def _voters(state: GameState) -> set[int]:
    """Who votes in today's vote, by the ruleset's ballot (every living seat, but in the
    standard board's election its non-candidates, and never a revealed idiot)."""
    rs = get_ruleset(state.ruleset)
    day = state.day
    ctx = Ctx(state, state.schedule.open_at(max(day, 1)), rs)  # read only
    election = _election(state)
    if election is not None and election["phase"] == "signup":
        return set()  # (the election's vote opens when the sign-up closes)
    kind = "sheriff" if election is not None or not rs.exiles_on(ctx, day) else "exile"
    return rs.ballot(ctx, day, kind)[0]


def _day_help(state: GameState, seat: int) -> list[str]:
    """The standard board's day verbs the seat may send now: 上警, 退水, 自爆."""
    if state.ruleset != "standard" or not state.phase.startswith("D"):
        return []
    st = state.seat(seat)
    lines: list[str] = []
    election = _election(state)
    if election is not None and st.alive:
        signup, withdraw = state.deadline("signup:1"), state.deadline("withdraw:1")
        if election["phase"] == "signup" and signup is not None and seat not in (
                election["candidates"] + election["withdrawn"]):
            lines.append(t("help_run", due=_hm(signup.due)))
        if seat in election["candidates"] and withdraw is not None:
            lines.append(t("help_withdraw", due=_hm(withdraw.due)))
    if st.alive and st.role == "wolf" and state.data.get("vote_void") != state.day:
        lines.append(t("help_destruct"))
    return lines


def duty_help(ruleset: str, key: str) -> str:
    duties = texts()["duty"]
    table = duties.get(ruleset, {})
    base = key.split(":")[0]
    return table.get(base) or duties["default"]


def player_help(state: GameState, seat: int, dm_votes: bool) -> str:
    """What the seat can send now, each with its deadline."""
    lines: list[str] = []
    st = state.seat(seat)
    night = state.night
    for slot in (night.slots.values() if night and not night.resolved else []):
        if seat in slot.seats and not slot.final and not slot.expired:
            dl = state.deadline(slot.deadline_id)
            due = t("help_until", due=_hm(dl.due)) if dl else t("help_now")
            lines.append(f"{duty_help(state.ruleset, slot.key)}（{due}）")
    for dl in state.deadlines:
        if seat in dl.seats and dl.kind in ("handover", "lastwords", "hunter", "setup"):
            handover = t("help_handover_or_tear" if state.ruleset == "standard"
                         else "help_handover")
            what = {"handover": handover, "lastwords": t("help_lastwords"),
                    "hunter": duty_help(state.ruleset, "hunter"),
                    "setup": duty_help(state.ruleset, "setup")}[dl.kind]
            lines.append(f"{what}（{t('help_until', due=_hm(dl.due))}）")
    lines.extend(_day_help(state, seat))
    if st.alive and state.phase.startswith("D") and seat in _voters(state):
        day = int(state.phase[1:])
        lines.append(t("help_day_vote" if dm_votes else "help_forum_vote",
                       close=_hm(state.schedule.close_at(day))))
    lines.append(t("help_always"))
    when = phase_text(state.phase)
    return "\n".join([t("help_head", when=when), *lines])


def judge_status(state: GameState, code: str, players: dict[int, tuple[str | None, str | None]]
                 ) -> str:
    paused = t("words.paused") if state.paused_at is not None else ""
    lines = [t("judge_status_head", code=code, ruleset=ruleset_name(state.ruleset),
               phase=phase_text(state.phase), paused=paused)]
    subs: dict[int, list[str]] = {}
    night = state.night
    for slot in (night.slots.values() if night else []):
        for n in slot.seats:
            mark = (submission(slot.sub.skill, slot.sub.targets)
                    if slot.sub else t("words.not_sent")) + (t("words.final") if slot.final else "")
            subs.setdefault(n, []).append(t("judge_status_sub", duty=duty_name(slot.key),
                                            what=mark))
    for st in state.seats:
        contact, name = players.get(st.seat, (None, None))
        lines.append(t("judge_status_seat", seat=st.seat, name=name or "-",
                       contact=contact_text(contact) if contact else t("words.unbound"),
                       role=role_name(state.ruleset, st.role),
                       alive=t("words.alive") if st.alive else t(
                           "words.out", cause=cause_name(st.out_cause)),
                       yellow=st.yellow, red=t("words.red") if st.red else "",
                       sub=(" " + "；".join(subs[st.seat])) if st.seat in subs else ""))
    items = "；".join(t("judge_status_deadline", what=describe_deadline(
        d, state.deadline(d.parent) if d.parent else None), due=_hm(d.due))
        for d in sorted(state.deadlines, key=lambda d: d.due))
    lines.append(t("judge_status_deadlines", items=items or t("words.none")))
    return "\n".join(lines)


def vote_tally(state: GameState, code: str, now: datetime) -> str:
    if not state.phase.startswith("D"):
        return t("tally_not_day")
    day = int(state.phase[1:])
    # Who votes, for whom and with which weight: the ruleset's rules of the day's vote.
    rs = get_ruleset(state.ruleset)
    ctx = Ctx(state, now, rs)  # read only: the hooks only look
    election = _election(state) is not None or not rs.exiles_on(ctx, day)
    voters, candidates = rs.ballot(ctx, day, "sheriff" if election else "exile")
    sheriff = state.sheriff if state.sheriff in voters else None
    weights = {sheriff: rs.sheriff_weight(ctx)} if sheriff else {}
    result = tally(state.votes, voters, weights, candidates)
    lines = [t("tally_head", code=code, day=day, now=_hm(now))]
    by_target: dict[int | None, list[int]] = {}
    for voter, target in sorted(result.effective.items()):
        by_target.setdefault(target, []).append(voter)
    for target, count in sorted(result.counts.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(t("tally_line", target=t("words.seat", n=target), count=_num(count),
                       voters=seats_text(by_target.get(target, []))))
    if None in by_target:
        lines.append(t("tally_line", target=t("words.abstain"), count=len(by_target[None]),
                       voters=seats_text(by_target[None])))
    if not result.counts and None not in by_target:
        lines.append(t("tally_none"))
    if sheriff:
        lines.append(t("tally_sheriff", seat=sheriff, weight=_num(weights[sheriff])))
    pending = sorted(n for n in voters if not state.votes.get(n))
    if pending:
        lines.append(t("tally_pending", seats=seats_text(pending)))
    return "\n".join(lines)


def publish(state: GameState, code: str, log: list[LogEntry], *, judge_notes: bool = True,
            living: list[int] | None = None) -> str:
    """`公示` (docs/rules-judge.md P-POST-1, P-POST-2): the forum post for now, ready to paste.
    In a day, its open post: the dawn (who went out, who lives), yesterday's 票型 by voter with
    each post's time and its outcome, the last words, the sheriff, the period's public cards,
    today's times, and what was announced since; at night, the day's result post: its 票型
    and outcome and what was announced since. The judge's own reminders (kill posts) follow
    under a line not to be pasted (`judge_notes`: False leaves them out; `living`: the living
    as the table knows them, for the public page, where a night's deaths are not yet told)."""
    rows = [(i, row, event_of(row.body)) for i, row in enumerate(log) if row.kind == "event"]
    opened = [i for i, row, _ in rows if row.type in ("DayOpened", "GameCreated")]
    start = opened[-1] if opened else 0
    in_day = state.phase.startswith("D")
    day = state.day or 1
    voted_day = day - 1 if in_day else day  # the 票型 of the day that closed last
    lines = [t("post.open_head" if in_day else "post.result_head", code=code, day=day)]
    public = [(i, row, ev) for i, row, ev in rows if (row.audience or {}).get("public")
              and row.type != "VotePosted"]
    lines += [x for i, row, ev in public if i == start and row.type == "DayOpened"
              and (x := render_event(ev, state.ruleset))]
    lines += _details(state, rows, public, voted_day, day if in_day else None)
    since = [x for i, row, ev in public if i > start
             and row.type not in (*OUTCOME_TYPES, "LastWords")
             and (x := render_event(ev, state.ruleset))]
    if since:
        lines += [t("post.since"), *since]
    if not in_day:
        lines.append(t("post.living", seats=seats_text(
            state.living_numbers() if living is None else living)))
    notes = [t("kill_post_note", seat=ev.data.get("target")) for i, row, ev in rows
             if i >= start and row.type == "PoisonFeedback" and ev.data.get("out")]
    if notes and judge_notes:
        lines += [t("publish_note"), *notes]
    return "\n".join(lines)


OUTCOME_TYPES = ("VoteResult", "Exiled", "RevoteOpened", "NoSheriff", "SheriffChanged")
Rows = list[tuple[int, LogEntry, Event]]


def open_details(state: GameState, log: list[LogEntry]) -> list[str]:
    """What the open post says beyond the dawn's own announcement (P-POST-1): what the public
    room gets with the dawn at the open (P-POST-3)."""
    rows = [(i, row, event_of(row.body)) for i, row in enumerate(log) if row.kind == "event"]
    public = [(i, row, ev) for i, row, ev in rows if (row.audience or {}).get("public")
              and row.type != "VotePosted"]
    day = state.day or 1
    return _details(state, rows, public, day - 1, day)


def _details(state: GameState, rows: Rows, public: Rows, voted_day: int,
             today: int | None) -> list[str]:
    """Day `voted_day`'s 票型 and outcome; with `today` (a day open), the period's last
    words, the sheriff and today's times."""
    lines: list[str] = []
    if voted_day >= 1:
        lines += _ballot_lines(rows, voted_day)
        outcome = [x for _, row, ev in public if row.phase == f"D{voted_day}"
                   and row.type in OUTCOME_TYPES and (x := render_event(ev, state.ruleset))]
        if outcome:
            lines += [t("post.outcome"), *outcome]
    if today is None:
        return lines
    period = (f"D{today - 1}", f"N{today - 1}", f"D{today}")
    words = [x for _, row, ev in public if row.type == "LastWords" and row.phase in period
             and (x := render_event(ev, state.ruleset))]
    if words:
        lines += [t("post.last_words"), *words]
    # (the period's cards and the living are in the dawn's own text)
    if state.sheriff:
        lines.append(t("post.sheriff", seat=state.sheriff))
    close = state.schedule.close_at(today)
    lines.append(t("post.times", open=_clock(state.schedule.open_at(today)),
                   close=_clock(close), no_change=_clock(close - timedelta(minutes=60)),
                   proxy=_clock(close - timedelta(minutes=30))))
    return lines


def _clock(at: datetime) -> str:
    return at.strftime("%H:%M")


def _ballot_lines(rows: Rows, day: int) -> list[str]:
    """Day `day`'s 票型 by voter: every post in order with its time (投, 改票, 更正, 废票,
    弃权, 代投)."""
    posts: dict[int, list[str]] = {}
    for _, row, ev in rows:
        if row.type != "VotePosted" or row.phase != f"D{day}":
            continue
        d = ev.data
        target = t("words.abstain") if d.get("target") is None else t(
            "words.seat", n=d["target"])
        mode = d.get("mode", "vote")
        if d.get("target") is None and mode in ("vote", "change"):
            mode += "_abstain"
        what = t(f"post.modes.{mode}", target=target)
        if d.get("by_judge"):
            what = t("post.by_judge", what=what)
        posts.setdefault(int(d["voter"]), []).append(t("post.at", what=what,
                                                       at=_clock(ev.at)))
    if not posts:
        return [t("post.no_ballots", day=day)]
    return [t("post.ballots", day=day), *(t("post.ballot", seat=n, posts="；".join(p))
                                          for n, p in sorted(posts.items()))]
