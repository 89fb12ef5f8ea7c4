"""Information hygiene: nobody is told more than they may know.

Over many random classic games (tests/randomplay.py), every event's audience is checked
against what its recipients may know, given the state just before and just after the command
that produced it:

- RoleDealt goes only to its own seat; SeerResult only to the seer; Tongling, PoisonFeedback
  and KillPostDue only to the witch; the kill messages (KillRecorded, KillLocked, KillFeedback,
  KillForfeited and the kill prompt) only to the current killers: wolf-camp wolves holding 杀人,
  or black lovers after 寡妇刀 (the whole camp under `classic.kill_participants=whole_camp`);
- LoverNotice only to a lover, naming the partner except for double-wolf lovers under the
  default `classic.double_wolf_lovers_know_partner=false`;
- GroupFormed exactly to that group's living members; a message addressed to a group only to
  its members;
- YellowCard (private, with its reason) only to its seat, and the other one-seat messages
  (YouAreOut, YouAreSheriff, CupidLinked, YourCamp, WidowKnife, CampLostNotice, ActionRecorded,
  DeadlineExtended, Reminder)
  only to the seats they are about; a correction request's messages (AMB-P-09) only to the
  voter, and its judge-side notices (every `…Judge` event) to no player at all;
- before GameOver no public event carries a role or a camp (`role`/`roles` empty unless
  `public.reveal_roles_on_out` is true, `camp` only in CampSurrendered), and no rendered public
  message contains a Chinese role name (狼人, 预言家, 女巫, 守卫, 丘比特);
- no refusal carries a role or a camp;
- a seat that is out is told only what concerns its remaining duties (issue 13; G-RES-4 puts
  everything else in the log): the out notice, the handover and last-words prompts and the
  replies to them, the hunter's shot, the witch's poison feedback and kill post (C-WITCH-5),
  and the reminders, missed deadlines, extensions and cards of those duties. A seat counts as
  out from its SeatOut note on, so what it was told earlier in the same command is not a leak.

A test checks that this last check catches a leak to an out seat. A last test checks that the
refusal a seer gets for checking a dead player reads the same whatever the dead player's role
was.
"""

from __future__ import annotations

import os
import random
from datetime import datetime, time, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from randomplay import FAST_GAME, FAST_OPTIONS, OPTION_SETS, START, Step, play

from bot.render import render_event, render_rejection
from bot.scenario import Scenario
from engine import handle, new_game
from engine.commands import Act, JudgeCard, Tick, Vote
from engine.core import PUBLIC_CARD_REASONS, Ctx
from engine.events import Audience, Event, Rejection
from engine.model import GameState
from engine.ruleset import get_ruleset
from rulesets.data import load

DATA = load("classic", "data")
ROLE_IDS = set(DATA["roles"])
CAMP_IDS = set(DATA["camps"])
ROLE_NAMES_ZH = ("狼人", "预言家", "女巫", "守卫", "丘比特")
CAMP_NAMES_ZH = tuple(DATA["camp_names"].values())
KILL_MESSAGES = {"KillRecorded", "KillLocked", "KillFeedback", "KillForfeited"}
WITCH_MESSAGES = {"Tongling", "PoisonFeedback", "KillPostDue"}
CORRECTION_MESSAGES = {"CorrectionRequested", "CorrectionConfirmed", "CorrectionRejected",
                       "CorrectionDropped", "CorrectionLapsed"}
# Duties that outlive going out, and what an out seat may be told about them (issue 13).
OUT_DUTIES = {"handover", "lastwords", "hunter"}
OUT_SEAT_MESSAGES = {"YouAreOut", "HandoverDue", "HandoverHeld", "LastWordsDue",
                     "LastWordsWaived", "HunterDue", "ShotForfeited", "PoisonFeedback",
                     "KillPostDue"}


def out_seat_may_read(ev: Event, before: GameState, seat: int) -> bool:
    """Whether `ev` concerns a duty that seat `seat`, which is out, still has."""
    if ev.type in OUT_SEAT_MESSAGES:
        return True
    if ev.type in ("Reminder", "DeadlineMissed"):
        return ev.data["duty"] in OUT_DUTIES
    if ev.type == "YellowCard":
        return ev.data["reason"] in OUT_DUTIES
    if ev.type == "DeadlineExtended":
        return any(d.kind in OUT_DUTIES and seat in d.seats for d in before.deadlines)
    return False

# Long games: no shrinking unless WOLFJUDGE_SHRINK is set (see test_properties.py).
GAMES = settings(max_examples=20, deadline=None,
                 phases=tuple(Phase) if os.environ.get("WOLFJUDGE_SHRINK") else (
                     Phase.explicit, Phase.reuse, Phase.generate),
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                        HealthCheck.large_base_example])


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _strings(k) + _strings(v)]
    if isinstance(value, list | tuple | set):
        return [s for v in value for s in _strings(v)]
    return []


def _role_seats(state: GameState, role: str) -> set[int]:
    return {s.seat for s in state.seats if s.role == role}


def _killers(state: GameState) -> set[int]:
    """Who may read the kill messages: wolf-camp wolves holding 杀人, or black lovers after
    寡妇刀; under kill_participants=whole_camp, every member of the killing camp."""
    holders = {s.seat for s in state.seats if s.holds("kill") and (
        (s.camp == "wolves" and s.role == "wolf")
        or (s.camp == "black-lovers" and s.lover_of is not None))}
    if state.options["classic.kill_participants"] == "whole_camp":
        camps = {state.seat(n).camp for n in holders}
        holders |= {s.seat for s in state.seats if s.camp in camps}
    return holders


class Hygiene:
    """Checks every event of one game as it is produced."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.reveal = options.get("public.reveal_roles_on_out") is True
        self.over = False
        self.checked = 0

    def on_step(self, step: Step) -> None:
        if isinstance(step.result, Rejection):
            self.check_rejection(step.before, step.command, step.result)
            return
        after, events = step.result
        for event in events:
            self.check(step.before, after, event, step.command)
        self.check_cards(events)
        self.check_out_seats(step.before, events)

    def check_out_seats(self, before: GameState, events: list[Event]) -> None:
        """A seat that is out reads only what concerns its remaining duties (public posts
        aside): from its SeatOut note on, every private or group message to it is checked."""
        out = {s.seat for s in before.seats if not s.alive}
        for ev in events:
            if ev.type == "SeatOut":
                out.add(ev.data["seat"])
            if ev.audience.public:
                continue
            for seat in out & set(ev.audience.seats):
                assert out_seat_may_read(ev, before, seat), (
                    f"{ev.type} {ev.data} reached seat {seat}, which is out ({ev.audience})")

    def check_cards(self, events: list[Event]) -> None:
        """A card for a missed night or setup duty reveals that the seat had one: it is never
        announced publicly, nor is the red card it causes (that shows in the next day post)."""
        reasons = {e.data["seat"]: e.data["reason"] for e in events if e.type == "YellowCard"}
        for e in events:
            if e.audience.public and e.type == "YellowCardPublic":
                assert reasons[e.data["seat"]] in PUBLIC_CARD_REASONS, (e, reasons)
            if e.audience.public and e.type == "RedCard" and e.data["reason"] == "yellow_limit":
                assert reasons[e.data["seat"]] in PUBLIC_CARD_REASONS, (e, reasons)

    def check_start(self, state: GameState, events: list[Event]) -> None:
        for event in events:
            self.check(state, state, event, None)

    # ---------------------------------------------------------------------------------
    def check(self, before: GameState, after: GameState, ev: Event, cmd: Any) -> None:
        self.checked += 1
        aud = ev.audience
        seats = set(aud.seats)
        where = f"{ev.type} {ev.data} to {aud} after {cmd!r}"
        n = len(after.seats)
        assert all(1 <= s <= n for s in seats), f"bad seat in the audience: {where}"
        if ev.type in ("GameOver", "GameEnded"):  # GameEnded: the judge ended it early
            self.over = True
            return
        assert not self.over, f"an event after the end: {where}"
        if ev.type.endswith("Judge"):  # the judge's side of a private exchange
            assert not aud.public and not seats and aud.group is None, f"judge only: {where}"
        if aud.public:
            self.check_public(after, ev, where)
            return
        if aud.group is not None:
            members = set(before.groups.get(aud.group, [])) | set(after.groups.get(aud.group, []))
            assert seats <= members, f"sent to group {aud.group} but not to its members: {where}"
        self.check_private(before, after, ev, cmd, seats, where)

    def check_private(self, before: GameState, after: GameState, ev: Event, cmd: Any,
                      seats: set[int], where: str) -> None:
        t, d = ev.type, ev.data
        if t == "RoleDealt":
            assert seats == {d["seat"]}, where
            assert after.seat(d["seat"]).role == d["role"], where
        elif t == "SeerResult":
            assert seats <= _role_seats(before, "seer") & {cmd.seat}, where
        elif t in WITCH_MESSAGES:
            assert seats <= _role_seats(before, "witch"), where
        elif t in KILL_MESSAGES or (t == "NightPrompt" and d.get("skill") == "kill"):
            allowed = _killers(before) | _killers(after)
            assert seats <= allowed, f"kill message beyond the killers {sorted(allowed)}: {where}"
            group = {after.seat(s).camp for s in seats}
            name = "wolves" if group == {"wolves"} else "lovers" if group == {
                "black-lovers"} else None
            if name and seats <= set(before.groups.get(name, [])):
                assert ev.audience.group == name, where
            elif seats:  # killers outside the group (non-default options) get private messages
                assert ev.audience.group is None, where
        elif t == "LoverNotice":
            assert len(seats) <= 1, where
            for s in seats:
                lover = after.seat(s)
                assert lover.lover_of is not None, f"not a lover: {where}"
                partner = after.seat(lover.lover_of)
                double_wolf = lover.role == "wolf" and partner.role == "wolf"
                if double_wolf and not after.options["classic.double_wolf_lovers_know_partner"]:
                    assert d["partner"] is None, f"double-wolf lover told the partner: {where}"
                else:
                    assert d["partner"] == partner.seat, where
        elif t == "GroupFormed":
            members = after.groups[d["group"]]
            assert ev.audience.group == d["group"], where
            assert d["members"] == members, where
            assert seats == {m for m in members if after.seat(m).alive}, where
        elif t in ("YellowCard", "YouAreOut", "YouAreSheriff"):
            assert seats <= {d["seat"]}, where
        elif t in ("CupidLinked", "CupidPrompt"):
            assert seats <= _role_seats(before, "cupid"), where
        elif t == "YourCamp":
            assert all(after.seat(s).camp == d["camp"] for s in seats), where
        elif t == "WidowKnife":
            assert all(after.seat(s).camp == "black-lovers" for s in seats), where
        elif t == "CampLostNotice":
            assert all(after.seat(s).camp == d["camp"] for s in seats), where
        elif t == "ActionRecorded":
            assert seats <= {cmd.seat}, where
        elif t == "DeadlineExtended":
            assert seats <= {d["seat"]}, where
        elif t in CORRECTION_MESSAGES:
            assert seats <= {d["voter"]}, where
        elif t == "Reminder":
            remind = before.deadline(cmd.deadline_id)
            parent = before.deadline(remind.parent or "") if remind is not None else None
            assert parent is not None, where
            owing = {s.seat for s in before.living()} if parent.kind == "day_close" else set(
                parent.seats)
            assert seats <= owing, f"reminder to a seat that owes nothing: {where}"

    def check_public(self, after: GameState, ev: Event, where: str) -> None:
        d = ev.data
        assert not d.get("role"), f"a role in public: {where}"
        if self.reveal and ev.type == "DayOpened":
            assert set(d["roles"]) <= set(d["outs"]), where
            assert all(after.seat(s).role == r for s, r in d["roles"].items()), where
        else:
            assert not d.get("roles"), f"roles in public: {where}"
        if ev.type == "CampSurrendered":
            assert d["camp"] in CAMP_IDS
        else:
            assert "camp" not in d, f"a camp in public: {where}"
            leaked = [s for s in _strings({k: v for k, v in d.items() if k != "roles"})
                      if s in ROLE_IDS or s in CAMP_IDS]
            assert not leaked, f"{leaked} in public: {where}"
        text = render_event(ev, "classic")
        if ev.type == "CampSurrendered":
            for name in CAMP_NAMES_ZH:
                text = text.replace(name, "")
        if self.reveal and ev.type == "DayOpened" and d.get("roles"):
            return
        named = [r for r in ROLE_NAMES_ZH if r in text]
        assert not named, f"public message names {named}: {text!r} ({where})"

    def check_rejection(self, before: GameState, cmd: Any, rej: Rejection) -> None:
        """A refusal goes to its sender only; it may name the sender's own role, no other."""
        assert not {"role", "roles", "camp"} & set(rej.data), rej
        leaked = [s for s in _strings({k: v for k, v in rej.data.items() if k != "skill"})
                  if s in ROLE_IDS or s in CAMP_IDS]
        assert not leaked, rej
        text = render_rejection(rej, "classic")
        sender = getattr(cmd, "seat", None)
        own = DATA["role_names"].get(before.seat(sender).role) if sender in range(
            1, len(before.seats) + 1) else None
        named = [r for r in ROLE_NAMES_ZH if r in text and r != own]
        assert not named, f"refusal of {cmd!r} names {named}: {text}"


def _play_checked(rnd: random.Random, options: dict[str, Any],
                  schedule: dict[str, Any] | None = None) -> Hygiene:
    hygiene = Hygiene(options)
    trace = play(rnd, options=options, on_step=hygiene.on_step, on_start=hygiene.check_start,
                 schedule=schedule)
    assert trace.final is not None and (trace.final.winner or trace.final.halted)
    assert hygiene.over or trace.final.halted
    return hygiene


def test_the_out_seat_check_catches_a_leak_to_an_out_seat() -> None:
    """A message that concerns no remaining duty, sent to a seat that is out, fails the check;
    the same seat may be told its handover prompt."""
    state, _ = new_game(ruleset="classic", game_id="leak", seed="leak", start=START,
                        roles=list(BASE))
    out = state.model_copy(deep=True)
    out.seat(DEAD).alive = False
    now = _at(1, 10)

    def event(type_: str, **data: Any) -> Event:
        return Event(type=type_, at=now, phase="D1", audience=Audience.to(DEAD), data=data)

    hygiene = Hygiene({})
    hygiene.check_out_seats(out, [event("HandoverDue"), event("Reminder", duty="handover",
                                                              due="01-02 09:00")])
    for leak in (event("CampLostNotice", camp="village"), event("Reminder", duty="day_close",
                                                                due="01-01 21:00"),
                 event("YellowCard", seat=DEAD, reason="vote", count=1)):
        with pytest.raises(AssertionError, match="which is out"):
            hygiene.check_out_seats(out, [leak])
    seat_out = Event(type="SeatOut", at=now, phase="D1", audience=Audience.judge(),
                     data={"seat": DEAD, "cause": "red-card"})
    hygiene.check_out_seats(state, [event("YellowCard", seat=DEAD, reason="vote", count=2),
                                    seat_out])
    with pytest.raises(AssertionError, match="which is out"):
        hygiene.check_out_seats(state, [seat_out, event("SeerResult", target=1, label="x")])


@GAMES
@given(rnd=st.randoms(use_true_random=False), which=st.integers(0, len(OPTION_SETS) - 1))
def test_every_event_reaches_only_those_who_may_know(rnd: random.Random, which: int) -> None:
    options = OPTION_SETS[which] if rnd.randrange(10) < 6 else {}
    hygiene = _play_checked(rnd, options)
    assert hygiene.checked > 0


@settings(GAMES, max_examples=6)
@given(rnd=st.randoms(use_true_random=False), fast=st.booleans())
def test_double_wolf_lovers_and_revealed_roles(rnd: random.Random, fast: bool) -> None:
    """Option pairs that change what may be told: partners known, roles revealed on out;
    sometimes in a fast game (with reminders a few minutes before each deadline)."""
    options = {"classic.double_wolf_lovers_know_partner": True, "public.reveal_roles_on_out": True}
    if fast:
        _play_checked(rnd, {**options, **FAST_OPTIONS}, FAST_GAME)
    else:
        _play_checked(rnd, options)


# ---------------------------------------------------------------------------------------
# A seer checking a dead player is refused in the same words whatever the dead player was.

BASE = ["wolf", "wolf", "wolf", "seer", "witch", "guard", "cupid",
        "villager", "villager", "villager", "villager", "villager"]
DEAD = 9  # the seat that goes out; a villager in BASE


def _at(day: int, hh: int, mm: int = 0) -> datetime:
    return datetime.combine(START + timedelta(days=day - 1), time(hh, mm))


def _send(state: GameState, cmd: Any, now: datetime) -> GameState:
    out = handle(state, cmd, now)
    assert not isinstance(out, Rejection), (cmd, out)
    return out[0]


def _advance(state: GameState, target: datetime) -> GameState:
    while (dl := state.next_deadline()) is not None and dl.due <= target:
        state = _send(state, Tick(deadline_id=dl.id), dl.due)
    return state


def _dead_player_rejections(role: str, how: str) -> dict[str, str]:
    """Seat DEAD holds `role` and goes out (red card on D1, or exiled on D2); then every
    night actor who is still able targets it. Returns skill -> rendered refusal."""
    roles = list(BASE)
    if role != "villager":
        other = roles.index(role)
        roles[other], roles[DEAD - 1] = roles[DEAD - 1], roles[other]
    state, _ = new_game(ruleset="classic", game_id=f"dead-{role}-{how}", seed="hygiene-dead",
                        start=START, roles=roles)
    cupid = roles.index("cupid") + 1
    state = _send(state, Act(seat=cupid, skill="link", targets=(10, 11)), _at(1, 0))
    state = _advance(state, _at(1, 10))
    if how == "red_card":
        state = _send(state, JudgeCard(seat=DEAD, color="red"), _at(1, 10))
    night = 1
    if how == "exile":
        for s in state.living():
            state = _send(state, Vote(seat=s.seat, target=12), _at(1, 11))
        state = _advance(state, _at(2, 10))  # N1: nobody acts, the witch's 08:00 passes
        assert state.phase == "D2", state.phase
        for s in state.living():
            state = _send(state, Vote(seat=s.seat, target=DEAD), _at(2, 11))
        night = 2
    else:
        for s in state.living():
            state = _send(state, Vote(seat=s.seat, target=12), _at(1, 11))
    state = _advance(state, _at(night, 21, 5))
    assert state.phase == f"N{night}" and not state.seat(DEAD).alive, state.phase
    texts: dict[str, str] = {}
    for skill, role_ in (("see", "seer"), ("kill", "wolf"), ("guard", "guard"),
                         ("poison", "witch"), ("save", "witch")):
        actor = next((s.seat for s in state.living() if s.role == role_), None)
        if actor is None:
            continue
        out = handle(state, Act(seat=actor, skill=skill, targets=(DEAD,)), _at(night, 21, 10))
        assert isinstance(out, Rejection), (skill, out)
        texts[skill] = f"{out.code} {render_rejection(out, 'classic')}"
    return texts


@pytest.mark.parametrize("how", ["red_card", "exile"])
def test_refusals_for_a_dead_target_do_not_depend_on_its_role(how: str) -> None:
    by_role = {role: _dead_player_rejections(role, how)
               for role in ("villager", "wolf", "witch", "guard", "cupid")}
    seer_texts = {role: texts["see"] for role, texts in by_role.items()}
    assert len(set(seer_texts.values())) == 1, seer_texts
    text = next(iter(seer_texts.values()))
    assert f"{DEAD}" in text and not any(r in text for r in ROLE_NAMES_ZH), text
    for skill in ("kill", "guard", "poison", "save"):
        seen = {role: texts[skill] for role, texts in by_role.items() if skill in texts}
        assert len(set(seen.values())) <= 1, (skill, seen)


# ---------------------------------------------------------------------------------------
# G-RES-4: a group message when no member of the group is alive goes to the log only.

SCENARIOS = Path(__file__).resolve().parent / "scenarios"


def test_g_res_4_kill_feedback_to_a_group_with_no_living_member_is_log_only() -> None:
    scenario = Scenario(SCENARIOS / "classic" / "G-RES-4_kill_feedback_with_no_living_killer.yaml")
    doc = scenario.load()
    game = scenario.start(doc)
    scenario.play(game, doc["steps"])
    feedback = [e for e in game.log if e.type == "KillFeedback"]
    assert [e.data for e in feedback] == [{"target": 2, "out": True}]
    assert feedback[0].audience == Audience.judge(), feedback[0].audience  # not the wolves' room


def test_g_res_4_tell_group_with_no_living_member_tells_the_judge_only() -> None:
    state, _ = new_game(ruleset="classic", game_id="room", seed="room", start=START,
                        roles=list(BASE))
    for seat in state.groups["wolves"]:
        state.seat(seat).alive = False
    ctx = Ctx(state, _at(1, 10), get_ruleset("classic"))
    ctx.tell_group("wolves", "GroupFormed", group="wolves", members=state.groups["wolves"])
    assert [e.audience for e in ctx.events] == [Audience.judge()]
    state.seat(2).alive = True
    ctx.tell_group("wolves", "GroupFormed", group="wolves", members=state.groups["wolves"])
    assert ctx.events[-1].audience == Audience(seats=(2,), group="wolves")
