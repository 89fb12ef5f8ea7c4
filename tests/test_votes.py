"""P-VOTE tally: weights, first-to-reach (C-SHERIFF-2, AMB-C-14), void posts, abstentions."""

from __future__ import annotations

from datetime import datetime

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
