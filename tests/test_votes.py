"""P-VOTE tally: weights, first-to-reach (C-SHERIFF-2, AMB-C-14), void posts, abstentions;
players' correction requests (AMB-P-09)."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from bot.scenario import Game
from engine import new_game
from engine.commands import Act, JudgeCard, JudgeCorrection, Vote
from engine.events import Audience
from engine.model import VotePost
from engine.votes import ABSTAIN, tally


def at(h: int, m: int = 0) -> datetime:
    return datetime(2026, 1, 1, h, m)


def post(h: int, m: int, target: int | None, **kw: bool) -> VotePost:
    return VotePost(at=at(h, m), target=target, **kw)


def test_t_c12_correction_keeps_time_so_4_reaches_first() -> None:
    votes = {11: [post(9, 0, 7)], 12: [post(9, 5, 7)], 2: [post(9, 10, 1)], 3: [post(9, 20, 1)],
             5: [post(9, 30, 4)], 6: [post(9, 40, 4)], 9: [post(9, 50, 4)],  # corrected, 09:50
             8: [post(10, 0, 1)], 1: [post(10, 10, 12)], 4: [post(10, 20, 12)],
             10: [post(11, 0, None)]}
    t = tally(votes, set(range(1, 13)), {}, set(range(1, 13)))
    assert t.counts == {7: 2, 1: 3, 4: 3, 12: 2}
    assert t.tied == (1, 4)
    assert t.reached[4] < t.reached[1]


def test_sheriff_weight_and_void_and_change() -> None:
    votes = {4: [post(10, 0, 2)], 5: [post(10, 5, 2), post(11, 0, 3, change=True)],
             6: [post(10, 10, 3)], 9: [post(10, 30, None, void=True)]}
    t = tally(votes, {4, 5, 6, 9}, {4: 2}, {2, 3, 4})
    assert t.counts == {2: 2, 3: 2}
    assert t.effective[9] is None
    # 3 held 2 votes since 11:00, 2 since 10:00 (its count never dropped below 2).
    assert t.reached[2] == at(10, 0) and t.reached[3] == at(11, 0)


def test_last_unbroken_period_not_first_touch() -> None:
    # A (5) reaches 2 at 09:10, drops at 11:00, reaches 2 again at 13:00; B (6) holds 2 from 11:00.
    votes = {1: [post(9, 0, 5), post(11, 0, 6, change=True)], 2: [post(9, 10, 5)],
             3: [post(10, 0, 6)], 4: [post(13, 0, 5)]}
    held = tally(votes, {1, 2, 3, 4}, {}, {5, 6})
    assert held.tied == (5, 6)
    assert held.reached == {5: at(13, 0), 6: at(11, 0)}
    ever = tally(votes, {1, 2, 3, 4}, {}, {5, 6}, tiebreak="first_to_reach_ever")
    assert ever.reached == {5: at(9, 10), 6: at(11, 0)}


def test_abstentions_and_no_votes() -> None:
    assert tally({1: [post(9, 0, None)]}, {1}, {}, {1}).top == 0
    t = tally({1: [post(9, 0, None)], 2: [post(9, 5, None)], 3: [post(9, 6, 1)]}, {1, 2, 3}, {},
              {1, 2, 3}, abstain_as_candidate=True)
    assert t.tied == (ABSTAIN,)


def test_votes_of_the_dead_and_for_the_dead_do_not_count() -> None:
    t = tally({1: [post(9, 0, 2)], 3: [post(9, 0, 4)]}, {1, 2}, {}, {1, 2})
    assert t.counts == {2: 1}


# ---------------------------------------------------------------------------------------
# AMB-P-09: a player's 更正 is a request; the judge rules whether it is a correction.

ROLES = ["wolf", "wolf", "wolf", "seer", "witch", "guard", "cupid", "villager", "villager",
         "villager", "villager", "villager"]


def _day1() -> Game:
    state, _ = new_game(ruleset="classic", game_id="amb-p-09", seed="s", start=date(2026, 1, 1),
                        roles=ROLES)
    g = Game(state=state, now=datetime(2026, 1, 1), ruleset="classic")
    assert g.send(Act(seat=7, skill="link", targets=(11, 12))) is None
    g.advance(at(9, 0))
    return g


def _counts(g: Game) -> dict[int, int]:
    living = {s.seat for s in g.state.living()}
    return tally(g.state.votes, living, {}, living).counts


def _rejected(g: Game, cmd: object) -> str:
    out = g.send(cmd)
    assert out is not None, f"{cmd!r} was accepted"
    return out.code


def test_amb_p_09_requests_leave_the_tally_until_confirmed_keeping_the_post_time() -> None:
    g = _day1()
    assert g.send(Vote(seat=6, target=10)) is None
    g.advance(at(20, 30))
    assert _rejected(g, Vote(seat=6, mode="change", target=7)) == "change_last_hour"  # P-VOTE-6
    before = g.state.votes
    for minute, target in ((31, 7), (50, 8), (55, 9)):
        g.advance(at(20, minute))
        assert g.send(Vote(seat=6, mode="request_correct", target=target)) is None
        assert g.state.votes == before and _counts(g) == {10: 1}
    assert list(g.state.correction_requests) == [6]  # one per seat: the latest
    assert g.state.correction_requests[6].target == 9
    assert g.send(JudgeCorrection(seat=6, accept=True)) is None
    assert g.state.votes[6] == [VotePost(at=at(9, 0), target=9)]  # the 09:00 post, not a change
    assert g.state.correction_requests == {}
    assert _rejected(g, JudgeCorrection(seat=6, accept=True)) == "no_correction_pending"


def test_amb_p_09_rejected_request_keeps_the_vote_and_the_change() -> None:
    g = _day1()
    assert g.send(Vote(seat=6, target=10)) is None
    assert g.send(Vote(seat=6, mode="request_correct", target=9)) is None
    assert g.send(JudgeCorrection(seat=6, accept=False)) is None
    assert g.state.votes[6] == [VotePost(at=at(9, 0), target=10)]
    told = [e for e in g.log if e.type == "CorrectionRejected"]
    assert told[-1].audience.seats == (6,) and told[-1].data["can_change"] is True
    assert g.send(Vote(seat=6, mode="change", target=9)) is None
    assert _counts(g) == {9: 1}


def test_amb_p_09_a_change_supersedes_a_pending_request() -> None:
    g = _day1()
    assert g.send(Vote(seat=6, target=10)) is None
    assert g.send(Vote(seat=6, mode="request_correct", target=9)) is None
    assert g.send(Vote(seat=6, mode="change", target=8)) is None
    assert g.state.correction_requests == {}
    assert _rejected(g, JudgeCorrection(seat=6, accept=True)) == "no_correction_pending"
    assert _counts(g) == {8: 1}


def test_amb_p_09_requests_are_refused_where_a_vote_would_be() -> None:
    g = _day1()
    assert _rejected(g, Vote(seat=6, mode="request_correct", target=9)) == "no_vote_to_correct"
    assert _rejected(g, Vote(seat=99, mode="request_correct", target=9)) == "no_such_seat"
    assert g.send(Vote(seat=6, target=10)) is None
    assert g.send(JudgeCard(seat=9, color="red")) is None
    assert _rejected(g, Vote(seat=6, mode="request_correct", target=9)) == "target_out"
    assert _rejected(g, Vote(seat=9, mode="request_correct", target=1)) == "you_are_out"
    g.advance(at(21, 0))
    assert _rejected(g, Vote(seat=6, mode="request_correct", target=1)) == "no_vote_now"


def test_amb_p_09_confirming_for_a_target_gone_out_is_refused_and_the_request_stays() -> None:
    g = _day1()
    assert g.send(Vote(seat=6, target=10)) is None
    assert g.send(Vote(seat=6, mode="request_correct", target=9)) is None
    assert g.send(JudgeCard(seat=9, color="red")) is None
    assert _rejected(g, JudgeCorrection(seat=6, accept=True)) == "target_out"
    assert g.state.correction_requests[6].target == 9
    assert g.send(JudgeCorrection(seat=6, accept=False)) is None


def test_amb_p_09_pending_requests_lapse_at_close_for_the_judge_and_the_player() -> None:
    g = _day1()
    assert g.send(Vote(seat=6, target=10)) is None
    assert g.send(Vote(seat=6, mode="request_correct", target=9)) is None
    asked = [e for e in g.log if e.type == "CorrectionRequestedJudge"]
    assert asked and asked[-1].audience == Audience.judge()  # no player reads it
    g.advance(at(21, 0))
    assert g.state.phase == "N1" and g.state.correction_requests == {}
    lapsed = {e.type: e.audience for e in g.log if e.type.startswith("CorrectionLapsed")}
    assert lapsed == {"CorrectionLapsed": Audience.to(6), "CorrectionLapsedJudge": Audience.judge()}
    assert g.state.sheriff == 10


@pytest.mark.rules("AMB-C-15")
def test_AMB_C_15_the_pk_candidates_get_no_vote_reminder_in_the_revote() -> None:
    """A PK revote long enough for a reminder: the tied candidates, who do not vote in it,
    are not reminded; the others who have not voted again are."""
    state, _ = new_game(ruleset="classic", game_id="pk-remind", seed="s", start=date(2026, 1, 1),
                        roles=ROLES, options={"classic.exile_tie": "revote",
                                              "deadlines.revote": "90min"})
    g = Game(state=state, now=datetime(2026, 1, 1), ruleset="classic")
    assert g.send(Act(seat=7, skill="link", targets=(11, 12))) is None
    g.advance(at(9, 0))
    for voter in range(1, 13):
        assert g.send(Vote(seat=voter, target=None)) is None
    g.advance(at(21, 0))
    for cmd in (Act(seat=1, skill="kill", targets=(10,)), Act(seat=1, skill="lock"),
                Act(seat=4, skill="see", targets=(1,)), Act(seat=6, skill="guard", targets=(11,)),
                Act(seat=5, skill="pass")):
        assert g.send(cmd) is None, cmd
    g.advance(datetime(2026, 1, 2, 9, 0))
    assert g.state.phase == "D2" and len(g.state.living()) == 11
    for voter, target in ((1, 3), (2, 3), (4, 6), (5, 6)):
        assert g.send(Vote(seat=voter, target=target)) is None
    g.advance(datetime(2026, 1, 2, 21, 0))
    assert g.state.data.get("revote") == {"candidates": [3, 6]}
    assert g.send(Vote(seat=1, target=3)) is None
    seen = len(g.log)
    g.advance(datetime(2026, 1, 2, 22, 0))
    reminded = {n for e in g.log[seen:] if e.type == "Reminder" for n in e.audience.seats}
    assert reminded == set(range(1, 13)) - {1, 3, 6, 10}
