"""Rooms as pages (issue 30, item 1; README "Playing without WeChat"): the wolves' room is a page
its members read and talk on; what one types there is posted to the others (as relay mode does
in chat), a command typed there is handled as in the chat room, and membership decides who may
open it, on every request: a wolf out of the room loses the page at once."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from told import history_lines
from webonly import BASE, JUDGE, WebOnlyGame, answers, links_on, path, web_only


@pytest.fixture
def day1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WebOnlyGame]:
    """A classic game web-only at day 1 (its rooms made), players voting by their pages."""
    g = web_only(tmp_path, monkeypatch)
    g.open()
    g.fill()
    g.begin()
    g.until_room("wolves")
    yield g
    g.service.close()


def _room(g: WebOnlyGame, seat: int) -> str:
    return g.seat_page(g.contact(seat)) + "/room/wolves"


def _say(g: WebOnlyGame, seat: int, text: str, url: str | None = None) -> str:
    r = g.phone(g.contact(seat)).post(url or _room(g, seat),
                                      data={"cmd": text, "nonce": uuid.uuid4().hex})
    assert r.status_code == 200, r.text[:300]
    return r.text


def test_the_wolves_room_is_a_page_for_its_members_only(day1: WebOnlyGame) -> None:
    g = day1
    groups = g.service.state(g.code).groups
    wolves = groups["wolves"]
    villager = next(n for n in range(1, 13) if not any(n in s for s in groups.values()))
    for n in wolves:
        page = g.phone(g.contact(n)).get(g.seat_page(g.contact(n))).text
        room = [u for u in links_on(page) if u.endswith("/room/wolves")]
        assert room and room[0].startswith(BASE)
    page = g.phone(g.contact(villager)).get(g.seat_page(g.contact(villager))).text
    assert "/room/" not in page
    r = g.phone(g.contact(villager)).get(_room(g, villager))
    assert r.status_code == 403 and "不在这个群" in r.text and "狼" not in r.text.split(
        "<main>")[1].split("</main>")[0].replace("狼人杀", "")
    forged = _room(g, villager).replace("/p/", "/p/x")
    assert g.phone(g.contact(villager)).get(forged).status_code == 403


def test_what_a_wolf_types_in_the_room_reaches_the_others(day1: WebOnlyGame) -> None:
    g = day1
    first, second, *_ = g.service.state(g.code).groups["wolves"]
    _say(g, first, "我觉得5号是预言家")
    line = f"【狼群】{first}号：我觉得5号是预言家"
    other = g.phone(g.contact(second)).get(_room(g, second)).text
    assert line in history_lines(other)
    assert line in history_lines(g.phone(g.contact(second)).get(
        g.seat_page(g.contact(second))).text)  # a room's post is on the seat's page too
    judge = g.phone(JUDGE).get(g.judge_page).text
    judge_room = next(u for u in links_on(judge) if u.endswith("/room/wolves"))
    assert line in history_lines(g.phone(JUDGE).get(path(judge_room)).text)
    for n in range(1, 13):
        if n not in g.service.state(g.code).groups["wolves"]:
            assert line not in g.phone(g.contact(n)).get(g.seat_page(g.contact(n))).text
    # the judge talks in the room as 法官
    g.phone(JUDGE).post(path(judge_room), data={"cmd": "请今晚按时刀人", "nonce": "jt"})
    assert "【狼群】法官：请今晚按时刀人" in history_lines(
        g.phone(g.contact(second)).get(_room(g, second)).text)


def test_a_command_in_the_room_is_handled_as_in_a_chat_room(day1: WebOnlyGame) -> None:
    g = day1
    wolves = g.service.state(g.code).groups["wolves"]
    target = next(n for n in range(1, 13) if n not in wolves)
    said = answers(_say(g, wolves[0], f"验 {target}"))
    assert "请在你自己的页面上发送" in said
    while not g.service.state(g.code).phase.startswith("N"):
        assert g.advance()
    page = _say(g, wolves[0], f"刀 {target}")
    night = g.service.state(g.code).night
    assert night is not None and night.slots["kill"].sub.targets == [target]
    mate = g.phone(g.contact(wolves[1])).get(_room(g, wolves[1])).text
    assert f"【狼群】{wolves[0]}号：刀 {target}" in history_lines(mate)
    assert any("指杀目标" in line and f"{target} 号" in line
               for line in history_lines(mate)), history_lines(mate)
    assert page  # (answered on the page it was typed on)


def test_a_wolf_out_loses_the_room_page_at_once(day1: WebOnlyGame) -> None:
    """The judge's red card puts a wolf out in public: the room lets him go with that commit,
    and his room page is refused from the next request on."""
    g = day1
    wolves = g.service.state(g.code).groups["wolves"]
    out = wolves[0]
    page = _room(g, out)
    assert g.phone(g.contact(out)).get(page).status_code == 200
    r = g.phone(JUDGE).post(g.judge_page, data={"cmd": f"红牌 {out} 测试", "nonce": "red"})
    assert r.status_code == 200 and not g.service.state(g.code).seat(out).alive
    r = g.phone(g.contact(out)).get(page)
    assert r.status_code == 403 and "不在这个群" in r.text
    r = g.phone(g.contact(out)).post(page, data={"cmd": "还在吗", "nonce": "gone"})
    assert r.status_code == 403
    mate = g.phone(g.contact(wolves[1])).get(_room(g, wolves[1])).text
    assert "还在吗" not in mate
    seat_page = g.phone(g.contact(out)).get(g.seat_page(g.contact(out))).text
    assert "/room/wolves" not in seat_page  # his page no longer links to it


def test_a_room_page_of_another_game_or_group_is_refused(day1: WebOnlyGame) -> None:
    g = day1
    wolf = g.service.state(g.code).groups["wolves"][0]
    base = g.seat_page(g.contact(wolf))
    for group in ("lovers", "public", "nosuch"):
        r = g.phone(g.contact(wolf)).get(f"{base}/room/{group}")
        if group == "lovers" and g.contact(wolf) in g.console.bot.chats.room_members(
                g.code, "lovers"):
            continue
        assert r.status_code in (403, 404), group


def test_the_public_room_is_a_page_to_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    """public.channel=room on the web: the announcements go once to the public room's page,
    which every seat reads; nobody talks there (the table talks on the forum)."""
    g = web_only(tmp_path, monkeypatch, options=("public.channel=room",))
    g.open()
    g.fill()
    g.begin()
    while g.service.state(g.code).phase == "SETUP":
        assert g.advance()
    contact = g.contact(2)
    page = g.phone(contact).get(g.seat_page(contact)).text
    public = next(u for u in links_on(page) if u.endswith("/room/public"))
    r = g.phone(contact).get(path(public))
    assert r.status_code == 200 and "第1天" in r.text and 'name="cmd"' not in r.text
    r = g.phone(contact).post(path(public), data={"cmd": "大家好", "nonce": "p"})
    assert r.status_code == 405 and "讨论请到论坛" in r.text
    assert "大家好" not in str(g.transport.sent)
    g.service.close()
