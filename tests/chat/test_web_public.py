"""The game's public page (issue 30, part 6) and the pages' stable forms (part 7): `/g/CODE`
shows the public board only (tests/chat/test_web_games.py audits it over whole games of every
ruleset); `网页` hands the judge its link; after the end it links to the replay; every link a
page shows is an absolute URL under WOLFJUDGE_WEB_URL, and every action form posts `cmd` and
`nonce`."""

from __future__ import annotations

import html
import re
from datetime import datetime
from pathlib import Path

import pytest
from test_chat_judge import JUDGE, _day1
from test_web_pages import BASE, WebTable


@pytest.fixture
def web(tmp_path: Path) -> WebTable:
    table = WebTable(tmp_path)
    table.pages_on()
    _day1(table)
    return table


def test_the_judge_gets_the_public_link(web: WebTable) -> None:
    reply = web.say(JUDGE, "网页")
    assert f"{BASE}/g/{web.code}" in reply and "观战页" in reply
    assert f"/g/{web.code}" not in web.say(web.contact[1], "网页")  # a player: its own link


def test_the_public_page_shows_the_public_board_only(web: WebTable) -> None:
    web.move(datetime(2026, 12, 1, 21, 5))  # night 1: the wolves, the seer, the witch told
    r = web.client.get(f"/g/{web.code}")
    assert r.status_code == 200
    text = html.unescape(re.sub(r"<[^>]+>", " ", r.text))
    assert "观战" in text and "存活" in text and "公开消息" in text
    for contact in web.contact.values():
        assert f" {contact} " not in text
    for word in ("预言家", "女巫", "守卫", "丘比特", "情侣", "查验", "指杀"):
        assert word not in text, word
    assert "复盘" not in text  # not over yet


def test_no_public_page_for_what_is_no_game(tmp_path: Path, web: WebTable) -> None:
    for code in ("NOSUCH", "../x", "a" * 80):
        r = web.client.get(f"/g/{code}")
        assert r.status_code == 404 and ("没有开始" in r.text or "无法打开" in r.text)
        assert "Not Found" not in r.text
    lobby = re.search(r"游戏码 ([A-Z0-9]{4,8})", web.say(JUDGE, "新游戏 经典"))
    assert lobby is not None
    assert web.client.get(f"/g/{lobby.group(1)}").status_code == 404  # not started


def test_after_the_end_the_public_page_links_to_the_replay(web: WebTable) -> None:
    web.say(JUDGE, "结束")
    web.say(JUDGE, "结束 确认")
    assert web.state.over
    page = web.client.get(f"/g/{web.code}").text
    assert f'<a href="{BASE}/replay/{web.code}">' in page
    assert web.client.get(f"/replay/{web.code}").status_code == 200


def test_every_link_is_absolute_and_every_form_posts_cmd_and_nonce(web: WebTable) -> None:
    pages = [web.get(web.link(JUDGE, "/j/"))[1], web.get(web.link(web.contact[4]))[1],
             web.client.get(f"/g/{web.code}").text]
    for page in pages:
        for href in re.findall(r'<a [^>]*href="([^"]*)"', page):
            assert href.startswith(BASE + "/"), href
        for form in re.findall(r"<form[^>]*>.*?</form>", page, re.S):
            names = set(re.findall(r'name="([^"]+)"', form))
            assert {"cmd", "nonce"} <= names, form
        # what a page loads is our own server's (no other origin)
        for src in re.findall(r'(?:src|href)="([^"]*)"', page):
            assert src.startswith("/") or src.startswith(BASE + "/"), src


def test_bad_input_to_the_pages_is_refused_in_chinese_and_changes_nothing(web: WebTable
                                                                          ) -> None:
    link = web.link(web.contact[6])
    version = web.state.version
    huge = web.client.post(link, data={"cmd": "投 3 " + "x" * 200_000, "nonce": "big"})
    assert huge.status_code == 413 and "太大" in huge.text
    empty = web.client.post(link, data={"cmd": "", "nonce": "empty"})
    assert empty.status_code == 200 and "没有输入任何指令" in empty.text
    other = web.links.make("p", "OTHER1", web.contact[6], 6, 0)  # another game's token
    assert web.client.post(f"/p/{other}", data={"cmd": "状态", "nonce": "o"}).status_code == 403
    assert web.state.version == version
    for path in ("/p/forged/manifest.webmanifest", f"/p/{other}/manifest.webmanifest"):
        r = web.client.get(path)
        assert r.status_code == 403 and "无法打开" in r.text
    manifest = web.client.get(link + "/manifest.webmanifest")
    assert manifest.headers["content-type"].startswith("application/manifest+json")
    body = manifest.json()
    assert body["start_url"] == BASE + link and body["display"] == "standalone"
    assert all(icon["src"].startswith(BASE + "/static/") for icon in body["icons"])
    sw = web.client.get("/sw.js")
    assert sw.status_code == 200 and "showNotification" in sw.text
    assert sw.headers["content-type"].startswith("text/javascript")
