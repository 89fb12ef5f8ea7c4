"""The replay page (issue 24, part 5): whole games of both rulesets (the demo's scripted
players) to their end, their 复盘 as one self-contained HTML file that checks itself in
Chromium: ✓ for the file as made, ✗ naming what failed for a tampered copy; `/replay/CODE`
404 before the end; players' text inert."""

from __future__ import annotations

import copy
import io
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_chat_judge import JUDGE, _day1
from test_web_browser import _browser_or_skip, _free_port, running
from test_web_pages import WebTable

from bot.chat.demo import Demo
from bot.service import Service
from bot.web.app import create_app
from bot.web.replay import replay_data, replay_page
from engine.ruleset import ruleset_names


def _finished(tmp_path: Path, ruleset: str) -> tuple[Service, str]:
    url = f"sqlite:///{tmp_path / f'{ruleset}.db'}"
    demo = Demo(ruleset, 1, io.StringIO(), url)
    assert demo.run() != "none"
    return Service(url), demo.code


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    b = _browser_or_skip()
    yield b
    b.quit()


def _verdict(browser: Any, path: Path | str) -> tuple[str, str]:
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(path if isinstance(path, str) else path.as_uri())
    box = WebDriverWait(browser, 30).until(  # (the browser's own hashing, not a deadline)
        lambda b: b.find_element("id", "verdict").get_attribute("data-verdict") and
        b.find_element("id", "verdict"))
    return box.get_attribute("data-verdict"), box.text


@pytest.mark.parametrize("ruleset", ruleset_names())
def test_the_replay_checks_itself_and_a_tampered_copy_fails(
        tmp_path: Path, browser: Any, ruleset: str) -> None:
    service, code = _finished(tmp_path, ruleset)
    data = replay_data(service, code)
    assert data is not None
    good = tmp_path / "replay.html"
    good.write_text(replay_page(data).html, encoding="utf-8")
    verdict, text = _verdict(browser, good)
    assert verdict == "ok" and "验证通过" in text, text
    body = browser.find_element("tag name", "body").text
    assert "身份" in body and "过程" in body and "马甲01" in body
    if os.environ.get("WOLFJUDGE_SCREENSHOTS") and ruleset == "classic":  # docs/web/
        browser.save_screenshot(str(Path(os.environ["WOLFJUDGE_SCREENSHOTS"]) / "replay.png"))
    # each vote as a table: one row a voter, as the log's VoteResult has it
    results = [e for e in data["export"]["log"] if e["type"] == "VoteResult"]
    tables = browser.find_elements("css selector", "#votes table")
    assert results and len(tables) == len(results)
    rows = tables[0].find_elements("css selector", "tr")[1:]
    assert len(rows) == len(results[0]["data"]["effective"])
    # step through the timeline
    first = browser.find_element("css selector", ".step h3").text
    browser.find_elements("css selector", ".nav button")[1].click()  # 下一步
    assert browser.find_element("css selector", ".step h3").text != first
    # a browser without WebCrypto (a page over plain HTTP; an old in-app browser): the
    # vendored helpers check the same
    hidden = browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": (
        "Object.defineProperty(Crypto.prototype, 'subtle', {get: function () "
        "{ return undefined; }});")})
    try:
        verdict, text = _verdict(browser, good)
        assert verdict == "ok" and "验证通过" in text, text
        assert browser.execute_script("return window.crypto.subtle") is None
        bad = copy.deepcopy(data)
        bad["export"]["players"][0]["forum_name"] = "改过的马甲"
        (tmp_path / "tampered.html").write_text(replay_page(bad).html, encoding="utf-8")
        verdict, text = _verdict(browser, tmp_path / "tampered.html")
        assert verdict == "bad" and "✗ 签名" in text, text
    finally:
        browser.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", hidden)
    # tampered: a 马甲 changed in the export (the signature no longer holds)
    bad = copy.deepcopy(data)
    bad["export"]["players"][0]["forum_name"] = "改过的马甲"
    (tmp_path / "tampered.html").write_text(replay_page(bad).html, encoding="utf-8")
    verdict, text = _verdict(browser, tmp_path / "tampered.html")
    assert verdict == "bad" and "✗ 签名" in text and "✓ 随机种子承诺" in text, text
    # tampered: the seed and the deal told otherwise (the commitment no longer holds)
    worse = copy.deepcopy(data)
    over = next(e for e in worse["export"]["log"] if e["type"] in ("GameOver", "GameEnded"))
    first_seat = sorted(over["data"]["roles"], key=int)[0]
    over["data"]["roles"][first_seat] = "villager" if over["data"]["roles"][
        first_seat] != "villager" else "wolf"
    (tmp_path / "worse.html").write_text(replay_page(worse).html, encoding="utf-8")
    verdict, text = _verdict(browser, tmp_path / "worse.html")
    assert verdict == "bad" and "✗ 随机种子承诺" in text and "✗ 发牌" in text, text
    service.close()


def test_the_replay_is_public_only_after_the_end(tmp_path: Path, browser: Any) -> None:
    table = WebTable(tmp_path, names={1: "<script>alert(1)</script>"})
    table.pages_on()
    _day1(table)
    status = table.client.get(f"/replay/{table.code}").status_code
    assert status == 404 and table.client.get("/replay/NOSUCH").status_code == 404
    table.say(JUDGE, "结束")
    table.say(JUDGE, "结束 确认")
    r = table.client.get(f"/replay/{table.code}")
    assert r.status_code == 200
    csp = r.headers["Content-Security-Policy"]
    assert re.search(r"script-src 'sha256-[^']+'", csp) and "unsafe" not in csp
    assert "<script>alert(1)" not in r.text  # the 马甲 is data, escaped
    # served, in the browser: ✓, and the 马甲 shown as text
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(
        create_app(table.service, table.bot.chats, table.links), host="127.0.0.1",
        port=_free_port(), access_log=False, log_level="warning", lifespan="off"))
    with running(server) as base:
        verdict, text = _verdict(browser, f"{base}/replay/{table.code}")
        assert verdict == "ok", text
        assert "<script>alert(1)</script>" in browser.find_element("tag name", "body").text
        # the data, the two vendored helpers and ours: nothing else
        assert len(browser.find_elements("tag name", "script")) == 4


def test_wolfjudge_replay_writes_the_file(tmp_path: Path) -> None:
    from bot.cli import main

    service, code = _finished(tmp_path, "classic")
    url = str(service.db.engine.url)
    service.close()
    out = tmp_path / "out.html"
    assert main(["replay", code, "-o", str(out), "--db", url]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!doctype html>") and "Content-Security-Policy" in text
    # nothing from anywhere: no attribute names another address
    assert not re.search(r"(src|href|action)=\"?[a-z]*:?//", text)
    assert "<script src" not in text and "<link" not in text
