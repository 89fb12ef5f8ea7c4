"""A game with no chat account in a real browser (issue 30, item 8): Chromium at 375 px, as a
player on their phone, against the web channel's pages served by uvicorn on loopback (the
helpers of tests/chat/test_web_browser.py): the join link opened, a 马甲 typed, the key shown
(link and QR code) and opened, the seat's page once the judge starts, an action typed there and
answered, and what the judge does then arriving on the open pages without a reload (their
event streams): the start takes the key's page to the seat's page, a card appears on it. The
judge and the eleven other players act through the same pages over HTTP."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_web_browser import _browser_or_skip
from webonly import JUDGE, WebOnlyGame, answers, served


@pytest.fixture
def game(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WebOnlyGame]:
    with served(tmp_path, monkeypatch) as g:
        yield g


def test_join_by_link_and_act_in_chromium_at_375px(game: WebOnlyGame, tmp_path: Path
                                                    ) -> None:
    game.open()
    game.fill(11)
    browser = _browser_or_skip()
    try:
        from selenium.webdriver.support.ui import WebDriverWait

        browser.get(game.base + game.join)
        body = browser.find_element("tag name", "body").text
        assert "报名" in body and "11/12" in body
        browser.find_element("css selector", "input[name=name]").send_keys("手机玩家")
        browser.find_element("css selector", "form.send button").click()
        key = WebDriverWait(browser, 30).until(
            lambda b: b.find_elements("css selector", "#key-link"))[0]
        assert "唯一凭证" in browser.find_element("tag name", "body").text
        assert browser.find_elements("css selector", "svg.qr")  # the key's QR code
        assert browser.execute_script("return window.innerWidth") == 375
        assert browser.execute_script("return document.documentElement.scrollWidth") <= 375
        browser.save_screenshot(str(tmp_path / "joined.png"))
        key_url = key.get_attribute("href")
        assert key_url.startswith(game.base + "/k/")
        contact = next(m.contact_id for m in game.console.bot.chats.members(game.code)
                       if m.forum_name == "手机玩家")
        game.keys[contact] = key_url[len(game.base):]
        browser.get(key_url)  # the key before the start: the lobby, live
        WebDriverWait(browser, 30).until(
            lambda b: b.find_element("tag name", "body").get_attribute("data-live") == "on")
        game.begin()  # the judge presses 开始 on their page: no reload here
        WebDriverWait(browser, 30).until(lambda b: "身份牌" in b.find_element(
            "tag name", "body").text)  # the key's page went to the seat's page by itself
        while game.service.state(game.code).phase == "SETUP":
            assert game.advance()  # day 1: the sheriff's vote, by the players' pages
        browser.get(key_url)  # the key opens the seat's page
        seat = next(n for n, c in game.console.bot.chats.contacts(game.code).items()
                    if c == contact)
        WebDriverWait(browser, 30).until(lambda b: "身份牌" in b.find_element(
            "tag name", "body").text)
        assert f"{seat}号" in browser.title
        assert browser.execute_script("return document.documentElement.scrollWidth") <= 375
        target = 1 if seat != 1 else 2
        box = browser.find_element("css selector", "form.send input[name=cmd]")
        box.send_keys(f"投 {target}")
        browser.find_element("css selector", "form.send button").click()
        answer = WebDriverWait(browser, 30).until(
            lambda b: b.find_elements("css selector", ".answers"))[0].text
        assert f"已记录你的投票：{target}号" in answer, answer
        browser.save_screenshot(str(tmp_path / "seat.png"))
        votes = [r for r in game.service.log(game.code)
                 if r.kind == "command" and r.type == "vote" and r.body["seat"] == seat]
        assert len(votes) == 1
        # the judge sees it on their page
        page = game.phone(JUDGE).post(game.judge_page, data={"cmd": "票型",
                                                             "nonce": uuid.uuid4().hex})
        assert f"{seat}号" in answers(page.text)
        # what the judge does next reaches the open page without a reload
        WebDriverWait(browser, 30).until(
            lambda b: b.find_element("tag name", "body").get_attribute("data-live") == "on")
        game.phone(JUDGE).post(game.judge_page, data={"cmd": f"黄牌 {seat} 迟到",
                                                      "nonce": uuid.uuid4().hex})
        WebDriverWait(browser, 30).until(
            lambda b: "法官给了你一张黄牌" in b.find_element("css selector", "#history").text)
    finally:
        browser.quit()
