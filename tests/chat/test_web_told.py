"""A seat's page shows exactly what was delivered to that seat's contact (README "Web pages":
"A seat's page: only what that seat was told"; the outbox is the truth, as the chat is), and
the links' edges (issue 33): the rate limit of the decoded claim, the link of a seat taken back
after a second `接替`, a revoked link answered with the same work as a random one, and `网页`
to a judge when the pages are off."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import event
from test_chat_judge import JUDGE, Table, _day1
from test_web_pages import WebTable
from told import history_lines, received_lines

_LINKS: dict[tuple[int, int], str] = {}


def _audit(web: WebTable, seat: int) -> list[str]:
    """The lines of the seat's page that its contact was never sent (none, ever)."""
    contact = web.contact[seat]
    if (id(web), seat) not in _LINKS:  # asked once: a game over has no links to hand out
        _LINKS[(id(web), seat)] = web.link(contact)
    status, page = web.get(_LINKS[(id(web), seat)])
    assert status == 200
    got = received_lines(web.transport.sent, contact)
    lines = history_lines(page)
    assert lines
    return [line for line in lines if line not in got]


def test_a_seats_page_holds_no_vote_it_was_not_sent(tmp_path: Path) -> None:
    """votes.channel=dm: the players learn the counts at the close, not each vote as cast."""
    web = WebTable(tmp_path, "votes.channel=dm")
    web.pages_on()
    _day1(web)
    web.move(datetime(2026, 12, 1, 12, 0))
    web.seat(3, "投 5")
    web.seat(6, "投 5")
    web.seat(6, "改票 7")
    for seat in range(1, 13):
        assert _audit(web, seat) == [], seat
    page = web.get(web.link(web.contact[9]))[1]
    assert "3号 投票" not in page and "6号 改票" not in page
    # the voter's own receipt is on its page: it was sent to it
    own = history_lines(web.get(web.link(web.contact[3]))[1])
    assert any("已记录你的投票：5号" in line for line in own), own


def test_a_wolf_out_of_the_room_reads_none_of_its_later_posts(tmp_path: Path) -> None:
    """A wolf poisoned the night it killed leaves the wolves' room at the day post: what the
    room is told after that never reaches his page."""
    web = WebTable(tmp_path)
    web.pages_on()
    _day1(web)
    for seat in range(1, 13):
        _audit(web, seat)
    web.move(datetime(2026, 12, 1, 21, 5))
    state = web.state
    wolves = [s.seat for s in state.seats if s.role == "wolf"]
    killer = state.night.slots["kill"].seats[0]
    poisoned = next(w for w in wolves if w != killer)
    witch = web.role_seat("witch")
    victim = next(s.seat for s in state.seats if s.role == "villager" and not s.lover_of)
    web.seat(killer, f"刀 {victim}")
    web.seat(killer, "锁定")
    web.seat(witch, f"毒 {poisoned}")
    web.move(datetime(2026, 12, 2, 9, 0))
    assert not web.state.seat(poisoned).alive
    web.move(datetime(2026, 12, 2, 21, 5))  # night 2: the room is told the wolves' doings
    living = [w for w in wolves if web.state.seat(w).alive]
    if living and web.state.night is not None and "kill" in web.state.night.slots:
        other = next(s.seat for s in web.state.seats if s.alive and s.seat not in wolves)
        room = web.bot.chats.room_id(web.code, "wolves")
        web.say(web.contact[living[0]], f"刀 {other}", room=room)
        web.say(web.contact[living[0]], "锁定", room=room)
    web.move(datetime(2026, 12, 3, 9, 0))
    assert _audit(web, poisoned) == []
    for seat in range(1, 13):
        assert _audit(web, seat) == [], seat


def test_page_actions_are_rate_limited_per_claim_not_per_text(tmp_path: Path) -> None:
    web = WebTable(tmp_path)
    web.pages_on()
    link = web.link(web.contact[1])
    spellings = [link, link + "~~~~", link + "==", link + "%E4%B8%AD"]
    opened = [web.get(s)[0] for s in spellings]
    codes = [web.post(spellings[i % 4], "状态", nonce=f"s{i}")[0] for i in range(21)]
    assert codes[:20] == [200] * 20 and codes[20] == 429, (opened, codes)
    for s in spellings:
        assert web.post(s, "状态", nonce=f"again-{s[-3:]}")[0] in (403, 429)
    web.now += timedelta(minutes=1)
    assert web.post(link, "状态", nonce="next-minute")[0] == 200


def test_pages_off_the_judge_is_told_what_the_operator_sets(tmp_path: Path) -> None:
    table = Table(tmp_path)
    judge = table.say(JUDGE, "网页")
    assert "网页未开启" in judge and "WOLFJUDGE_WEB_URL" in judge and "README" in judge
    player = table.seat(1, "网页")
    assert "网页未开启" in player and "WOLFJUDGE" not in player and "README" not in player


def _take(web: WebTable, seat: int, contact: str) -> None:
    reply = web.say(JUDGE, f"替补 {seat}")
    token = re.search(r"接替 (\S+)", reply)
    assert token is not None, reply
    assert "接替" in web.say(contact, f"接替 {token.group(1)}")


def test_a_seat_taken_back_does_not_revive_its_first_link(tmp_path: Path) -> None:
    """A→B→A: each hand-over is a new generation of the seat's links."""
    web = WebTable(tmp_path)
    web.pages_on()
    _day1(web)
    first_holder = web.contact[3]
    first = web.link(first_holder)
    assert web.get(first)[0] == 200
    _take(web, 3, "newcomer")
    assert web.get(first)[0] == 403
    _take(web, 3, first_holder)
    assert web.get(first)[0] == 403  # not back to life
    again = web.link(first_holder)
    assert again != first and web.get(again)[0] == 200


@contextmanager
def _statements(web: WebTable) -> Iterator[list[str]]:
    seen: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        seen.append(statement)

    engine = web.service.db.engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", count)


def test_a_revoked_link_costs_what_a_random_one_costs(tmp_path: Path) -> None:
    """The claim's generation is checked with the same reads whatever the token: a revoked
    link is not told from a random one by how long it takes."""
    web = WebTable(tmp_path)
    web.pages_on()
    _day1(web)
    revoked = web.link(web.contact[4])
    judge_revoked = web.link(JUDGE, "/j/")
    web.say(web.contact[4], "网页 重置")
    web.say(JUDGE, "网页 重置")
    counts = {}
    for name, path in [("random-p", "/p/" + "A" * len(revoked.split("/")[-1])),
                       ("revoked-p", revoked), ("random-j", "/j/forged"),
                       ("revoked-j", judge_revoked), ("garbage", "/p/%E4%B8%AD")]:
        with _statements(web) as seen:
            assert web.get(path)[0] == 403
        counts[name] = len(seen)
    assert len(set(counts.values())) == 1, counts
