"""A judge starts without chat, players join by link (issue 30, items 2, 3 and 7; README
"Playing without WeChat"): `wolfjudge judge-link` and its `--reset`, the home's 新游戏 form,
the join link (its checks, its QR codes, its end at the start, its reset), the player's key,
the lobby on the judge's page, and bad input to every new form (empty, 200 KB, another game's
token, a started game's join link): a clear Chinese refusal, and nothing changed."""

from __future__ import annotations

import contextlib
import io
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from webonly import BASE, JUDGE, WebOnlyGame, answers, links_on, path, web_only

from bot.cli import main
from bot.store.models import Lobby, LobbyPlayer, WebContact
from bot.web.app import RateLimits

BIG = "狼" * (200 * 1024 // 3)  # 200 KB of text


@pytest.fixture
def game(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WebOnlyGame]:
    g = web_only(tmp_path, monkeypatch)
    yield g
    g.service.close()


def _rows(game: WebOnlyGame) -> dict[str, int]:
    """How many lobbies, joins and contacts made by link there are (what a refusal leaves)."""
    with game.service.db.read() as s:
        return {name: s.query(model).count() for name, model in (
            ("lobbies", Lobby), ("joins", LobbyPlayer), ("contacts", WebContact))}


def _link(which: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["judge-link", JUDGE, *which.split()]) == 0
    return path(out.getvalue().strip())


def _browser(game: WebOnlyGame, **kwargs: Any) -> TestClient:
    return TestClient(game.app, base_url=BASE, follow_redirects=False, **kwargs)


# judge-link ----------------------------------------------------------------------------------
def test_judge_link_reset_makes_the_old_link_403(game: WebOnlyGame) -> None:
    """README: `wolfjudge judge-link NAME --reset` prints a new link; the old one is 403."""
    game.open()
    first = game.home
    judge = game.phone(JUDGE)
    assert judge.get(first).status_code == 200
    second = _link(f"--db {game.db_url} --reset")
    assert second != first
    old = judge.get(first)
    assert old.status_code == 403 and "无法打开" in old.text and game.code not in old.text
    assert judge.post(first, data={"cmd": "状态", "nonce": "x"}).status_code == 403
    page = judge.get(second)
    assert page.status_code == 200 and game.code in page.text  # the same judge, new key
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["judge-link", JUDGE, "--db", game.db_url, "--revoke"]) == 0
    assert judge.get(second).status_code == 403
    assert not game.console.bot.chats.creates_games(JUDGE)


def test_judge_link_refuses_a_name_no_contact_can_have(game: WebOnlyGame,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    for bad in ("a b", "page:x", ""):
        assert main(["judge-link", bad, "--db", game.db_url]) == 2
        assert "judge-link" in capsys.readouterr().err


def test_a_granted_judge_judges_what_they_create_and_nothing_else(game: WebOnlyGame) -> None:
    game.open()
    out = io.StringIO()  # a second judge, granted too, sees none of the first one's games
    with contextlib.redirect_stdout(out):
        assert main(["judge-link", "另一位法官", "--db", game.db_url]) == 0
    home = path(out.getvalue().strip())
    browser = _browser(game)
    page = browser.get(home).text
    assert game.code not in page  # not theirs
    r = browser.post(home, data={"cmd": f"#{game.code} 开始", "nonce": "o1"})
    assert "只有法官能用" in answers(r.text)


# the 新游戏 form -------------------------------------------------------------------------------
def test_the_new_game_form_lists_every_option_with_label_default_and_values(
        game: WebOnlyGame) -> None:
    from bot import options_text

    game.open()
    page = game.phone(JUDGE).get(game.home).text
    for ruleset in ("classic", "anomaly", "standard"):
        assert f'name="ruleset" value="{ruleset}"' in page
    for key in options_text.keys("classic"):
        assert f'name="opt.{key}"' in page, key
        assert options_text.label(key) in page
    assert "默认：私聊每位玩家" in page  # public.channel's default, in words
    assert 'value="forum-auto">贴吧投票，机器人读投票贴（forum-auto）' in page


def test_the_new_game_form_is_checked_as_new_game(game: WebOnlyGame) -> None:
    """A value 新游戏 refuses is refused with 新游戏's words; what no form of ours sends is
    refused too; nothing is made."""
    game.open()
    judge = game.phone(JUDGE)
    before = _rows(game)
    cases = {
        ("opt.votes.channel", "bogus"): "投票方式",
        ("opt.resolve.review_minutes", "9h"): "核对时间",
        ("opt.no.such", "1"): "不认识的选项",
        ("opt.votes.channel", "dm groups.mode=relay"): "不能有空格",
        ("ruleset", "poker"): "规则",
        ("players", "十二"): "人数",
        ("opt.groups.mode", "judge"): "不能手动建群",
    }
    for (name, value), words in cases.items():
        fields = {"cmd": "新游戏", "nonce": uuid.uuid4().hex, "ruleset": "classic",
                  "players": "12", name: value}
        r = judge.post(game.home, data=fields)
        assert words in answers(r.text), (name, value, answers(r.text))
    assert _rows(game) == before


def test_every_new_form_refuses_empty_and_huge_input(game: WebOnlyGame) -> None:
    """The home's send box, the join form, the key's send box, a room's: empty or 200 KB."""
    game.open()
    join = _browser(game)
    game.join_as("先来的")
    key = game.keys[next(iter(game.keys))]
    before = _rows(game)
    for url, client, field in ((game.home, game.phone(JUDGE), "cmd"), (game.join, join, "name"),
                               (key, game.phone(next(iter(game.keys))), "cmd")):
        empty = client.post(url, data={field: "  ", "nonce": uuid.uuid4().hex})
        assert "没有" in answers(empty.text) or "请填写" in answers(empty.text), url
        huge = client.post(url, data={field: BIG, "nonce": uuid.uuid4().hex})
        assert huge.status_code == 413 and "太大" in huge.text, url
    assert _rows(game) == before


# the join link ---------------------------------------------------------------------------------
def test_join_by_link_gives_a_key_that_opens_the_seat(game: WebOnlyGame) -> None:
    """README: the join page asks for a 马甲, makes a contact for the browser and gives the
    player their own private link, as link and QR code, with the line to keep it."""
    game.open()
    browser = _browser(game)
    page = browser.get(game.join)
    assert page.status_code == 200 and 'name="name"' in page.text and 'name="nonce"' in page.text
    r = browser.post(game.join, data={"name": "小明", "nonce": "j1"})
    assert r.status_code == 200 and "报名成功" in answers(r.text)
    assert "唯一凭证" in r.text and "<svg" in r.text
    key = path(next(u for u in links_on(r.text) if "/k/" in u))
    assert all(u.startswith(BASE) for u in links_on(r.text) if not u.startswith("/static"))
    contact = next(m.contact_id for m in game.console.bot.chats.members(game.code))
    assert contact.startswith("page:") and contact not in r.text
    mine = browser.get(key)
    assert mine.status_code == 200 and "小明" in mine.text and game.code in mine.text
    again = browser.get(game.join)  # the same browser: the same key, not a second join
    assert "已经报名" in again.text and path(next(
        u for u in links_on(again.text) if "/k/" in u)) == key
    assert len(game.console.bot.chats.members(game.code)) == 1


def test_the_join_form_applies_baoming_checks_and_changes_nothing(game: WebOnlyGame) -> None:
    game.open()
    game.join_as("小明")
    before = _rows(game)
    for name, words in (("法官", "混淆"), ("小 明", "不能含空格"), ("小明", "已经有人报名"),
                        ("5号", "混淆"), ("x" * 40, "1到32个字")):
        r = _browser(game).post(game.join, data={"name": name, "nonce": uuid.uuid4().hex})
        assert r.status_code == 400 and words in answers(r.text), (name, answers(r.text))
    assert _rows(game) == before


def test_join_qr_codes_as_png_and_svg(game: WebOnlyGame) -> None:
    game.open()
    page = game.phone(JUDGE).get(game.judge_page).text
    png = next(u for u in links_on(page) if u.endswith("/qr.png"))
    svg = next(u for u in links_on(page) if u.endswith("/qr.svg"))
    r = _browser(game).get(path(png))
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    assert r.content.startswith(b"\x89PNG")
    r = _browser(game).get(path(svg))
    assert r.status_code == 200 and b"<svg" in r.content


def test_a_join_link_stops_at_the_start_and_other_tokens_never_join(game: WebOnlyGame) -> None:
    """A started game's join link: a clear page saying so; a key, a judge's link or a
    forged token on the join route: no lobby; nothing changes."""
    game.open()
    game.fill()
    key = next(iter(game.keys.values()))
    before = _rows(game)
    for token in (key.rsplit("/", 1)[1], game.judge_page.rsplit("/", 1)[1],
                  game.home.rsplit("/", 1)[1], "forged"):
        r = _browser(game).post(f"/join/{token}", data={"name": "晚来的", "nonce": "z"})
        assert r.status_code == 404 and "报名链接无效" in r.text
    game.begin()
    r = _browser(game).get(game.join)
    assert r.status_code == 410 and "已经开始，报名已截止" in r.text
    r = _browser(game).post(game.join, data={"name": "晚来的", "nonce": "late"})
    assert r.status_code == 410 and "已经开始" in r.text
    assert _browser(game).get(game.join + "/qr.png").status_code == 404
    assert _rows(game) == before


def test_the_judge_resets_the_join_link(game: WebOnlyGame) -> None:
    game.open()
    old = game.join
    r = game.phone(JUDGE).post(game.judge_page, data={"cmd": "报名链接 重置", "nonce": "r"})
    new = path(next(u for u in links_on(r.text) if "/join/" in u and u.count("/") == 4))
    assert new != old and "已失效" in answers(r.text)
    assert _browser(game).get(old).status_code == 404
    assert _browser(game).get(new).status_code == 200


def test_the_judge_sees_joins_kicks_and_closes_the_lobby(game: WebOnlyGame) -> None:
    game.open()
    game.join_as("小明")
    kicked = game.join_as("小红")
    judge = game.phone(JUDGE)
    page = judge.get(game.judge_page).text
    assert "小明" in page and "小红" in page and "已报名（2/12）" in page
    assert 'value="踢出 小红"' in page
    r = judge.post(game.judge_page, data={"cmd": "踢出 小红", "nonce": "k"})
    assert "已将 小红 移出" in answers(r.text) and "已报名（1/12）" in r.text
    mine = game.phone(kicked).get(game.keys[kicked]).text  # the kicked player reads it
    assert "法官已将你移出游戏" in mine
    r = judge.post(game.judge_page, data={"cmd": "结束", "nonce": "e"})
    assert "取消" in r.text
    r = _browser(game).get(game.join)
    assert r.status_code == 410 and "取消" in r.text


def test_joins_are_rate_limited_per_address(game: WebOnlyGame) -> None:
    """README: the join form takes at most 20 tries a minute from one address; behind a TLS
    proxy the address is X-Forwarded-For's, believed only from a proxy named in
    WOLFJUDGE_WEB_TRUSTED_PROXIES."""
    game.open()
    browser = _browser(game)
    for i in range(RateLimits.ACTIONS):
        r = browser.post(game.join, data={"name": "法官", "nonce": f"n{i}"})
        assert r.status_code == 400
    r = browser.post(game.join, data={"name": "小明", "nonce": "last"})
    assert r.status_code == 429 and "太频繁" in r.text
    spoofed = browser.post(game.join, data={"name": "小明", "nonce": "s"},
                           headers={"X-Forwarded-For": "203.0.113.9"})
    assert spoofed.status_code == 429  # not believed: the test client is no trusted proxy


def test_a_trusted_proxy_gives_the_clients_address(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.web.app import create_app

    g = web_only(tmp_path, monkeypatch)
    g.app = create_app(g.service, g.console.bot.chats, g.links, now=g.utc, bot=g.console.bot,
                       base=BASE, proxies=["testclient"])
    g.phones.clear()
    g.open()
    browser = _browser(g)
    for i in range(RateLimits.ACTIONS):
        browser.post(g.join, data={"name": "法官", "nonce": f"n{i}"},
                     headers={"X-Forwarded-For": "198.51.100.1"})
    r = browser.post(g.join, data={"name": "小明", "nonce": "b"},
                     headers={"X-Forwarded-For": "198.51.100.1"})
    assert r.status_code == 429
    r = browser.post(g.join, data={"name": "小明", "nonce": "c"},
                     headers={"X-Forwarded-For": "198.51.100.2"})
    assert r.status_code == 200  # another client behind the same proxy
    g.service.close()


# the key -------------------------------------------------------------------------------------
def test_the_key_before_the_start_and_its_reset(game: WebOnlyGame) -> None:
    game.open()
    contact = game.join_as("小明")
    phone, key = game.phone(contact), game.keys[contact]
    page = phone.get(key).text
    assert "已报名" in page and "小明" in page and 'name="cmd"' in page
    r = phone.post(key, data={"cmd": "网页 重置", "nonce": "w"})
    fresh = path(re.search(r"(https://\S+/k/\S+)", answers(r.text)).group(1))
    assert phone.get(key).status_code == 403
    assert phone.get(fresh).status_code == 200
    r = phone.post(fresh, data={"cmd": "退出", "nonce": "q"})
    assert "退出" in answers(r.text)
    assert game.console.bot.chats.members(game.code) == []


def test_a_substitute_takes_a_seat_by_the_judges_link(game: WebOnlyGame) -> None:
    """README: `替补 S` where people join by link answers with a one-time link; a new browser
    opens it, takes the seat and gets its key; the old holder's pages stop working."""
    game.open()
    game.fill()
    game.begin()
    old = game.contact(5)
    old_page = game.seat_page(old)
    r = game.phone(JUDGE).post(game.judge_page, data={"cmd": "替补 5", "nonce": "sub"})
    link = path(next(u for u in re.findall(r"https://\S+", answers(r.text)) if "/take/" in u))
    browser = _browser(game)
    assert browser.get(link).status_code == 200
    r = browser.post(link, data={"nonce": "t1"})
    assert r.status_code == 200 and "你已接替" in answers(r.text), answers(r.text)
    key = path(next(u for u in links_on(r.text) if "/k/" in u))
    opened = browser.get(key)
    assert opened.status_code == 303
    seat_page = browser.get(path(opened.headers["location"])).text
    assert "5号" in seat_page
    assert game.phone(old).get(old_page).status_code == 403
    before = _rows(game)
    again = _browser(game).post(link, data={"nonce": "t2"})  # one time only
    assert again.status_code == 400 and "口令无效" in answers(again.text)
    assert _browser(game).get("/take/not-a-token!").status_code == 404
    assert _rows(game) == before


# on a chat platform (pages beside chat): nothing of this changes -------------------------------
def test_on_a_chat_platform_players_join_by_dm_as_before(tmp_path: Path) -> None:
    """README: `wolfjudge run` with a chat transport keeps working as today: 新游戏 tells the
    players to DM `报名`, `报名链接` says so too, a judge may still make rooms by hand, and
    `替补` answers with the token to DM; the judge's list names each seat's contact."""
    from chathelp import JUDGE as CHAT_JUDGE
    from chathelp import Table

    table = Table(tmp_path)
    try:
        created = table.reply(CHAT_JUDGE, "新游戏 经典 groups.mode=judge")
        assert "请玩家私聊机器人：报名" in created and "/join/" not in created
        assert "私聊机器人报名" in table.reply(CHAT_JUDGE, "报名链接")
        code = CODE.search(created).group(1)  # type: ignore[union-attr]
        table.fill(code, 12)
        started = table.reply(CHAT_JUDGE, "开始")
        assert "（P1）" in started and "网页报名" not in started
        token = table.reply(CHAT_JUDGE, "替补 3")
        assert "接替" in token and "/take/" not in token
    finally:
        table.close()


CODE = re.compile(r"游戏码 ([A-Z0-9]{4,8})")


def test_a_token_of_another_kind_or_game_opens_no_new_page(game: WebOnlyGame) -> None:
    """Every new route reads only its own kind of link: a key, a judge's page, a join link or
    a home given to another route (or another game's) is refused, and changes nothing."""
    game.open()
    contact = game.join_as("小明")
    game.console.bot.codes = lambda: "OTHER2"  # (a second lobby of the same judge)
    r = game.phone(JUDGE).post(game.home, data={"cmd": "新游戏 经典", "nonce": "second"})
    second = path(next(u for u in re.findall(r"https://\S+", answers(r.text))
                       if "/join/" in u))
    tokens = {"key": game.keys[contact].rsplit("/", 1)[1],
              "home": game.home.rsplit("/", 1)[1],
              "judge": game.judge_page.rsplit("/", 1)[1],
              "join": game.join.rsplit("/", 1)[1]}
    before = _rows(game)
    browser = _browser(game)
    for route, own in (("/h/", "home"), ("/k/", "key")):
        for kind, token in tokens.items():
            if kind == own:
                continue
            for r in (browser.get(route + token),
                      browser.post(route + token, data={"cmd": "状态", "nonce": kind})):
                assert r.status_code == 403 and "无法打开" in r.text, (route, kind)
    for kind in ("key", "home", "judge", "join"):
        r = browser.get(f"{game.judge_page.rsplit('/', 1)[0]}/{tokens[kind]}/room/wolves")
        assert r.status_code in (403, 404), kind
    # another lobby's join link joins that lobby, never this one
    r = browser.post(second, data={"name": "小红", "nonce": "x"})
    assert r.status_code == 200
    assert [m.forum_name for m in game.console.bot.chats.members(game.code)] == ["小明"]
    assert _rows(game)["joins"] == before["joins"] + 1


# another site's forms -------------------------------------------------------------------------
def test_a_form_posted_from_another_site_is_refused_and_changes_nothing(game: WebOnlyGame
                                                                       ) -> None:
    """README "Web pages": a page of another site (a sibling subdomain included, which
    SameSite=Lax lets the key's cookie reach) cannot post our forms for the browser: the
    browser says where the form came from (Sec-Fetch-Site), and only our own pages'
    forms are taken. The join form would otherwise join the lobby as the cookie's player."""
    game.open()
    contact = game.join_as("小明")
    phone = game.phone(contact)
    game.console.bot.codes = lambda: "OTHER3"  # a second lobby, whose join link is public
    r = game.phone(JUDGE).post(game.home, data={"cmd": "新游戏 经典", "nonce": "second"})
    second = path(next(u for u in re.findall(r"https://\S+", answers(r.text))
                       if "/join/" in u))
    before = _rows(game)
    for site in ("cross-site", "same-site"):
        hostile = {"Sec-Fetch-Site": site}
        for url, fields in ((second, {"name": "被冒用", "nonce": f"j-{site}"}),
                            (game.keys[contact], {"cmd": "退出", "nonce": f"k-{site}"}),
                            (game.home, {"cmd": "新游戏 经典", "nonce": f"h-{site}"})):
            client = game.phone(JUDGE) if url == game.home else phone
            r = client.post(url, data=fields, headers=hostile)
            assert r.status_code == 403 and "其他网站" in r.text, (site, url)
    assert _rows(game) == before
    assert [m.forum_name for m in game.console.bot.chats.members(game.code)] == ["小明"]
    # our own pages' forms (and a browser that does not say) are taken as before
    r = phone.post(second, data={"name": "小明二号", "nonce": "own"},
                   headers={"Sec-Fetch-Site": "same-origin"})
    assert r.status_code == 200 and "报名成功" in answers(r.text)


def test_a_revoked_key_in_the_cookie_costs_what_a_random_one_costs(game: WebOnlyGame) -> None:
    """The key a browser keeps is checked with the same reads whatever it holds: a key
    revoked by `网页 重置` is not told from a random one by how long the join page takes."""
    from test_web_told import _statements

    game.open()
    contact = game.join_as("小明")
    revoked = game.keys[contact].rsplit("/", 1)[1]
    game.phone(contact).post(game.keys[contact], data={"cmd": "网页 重置", "nonce": "w"})
    counts = {}
    for name, cookie in (("revoked", revoked), ("random", "A" * len(revoked)),
                         ("a join link", game.join.rsplit("/", 1)[1])):
        browser = _browser(game, cookies={"wolfjudge_key": cookie})
        with _statements(game) as seen:  # type: ignore[arg-type]
            assert browser.get(game.join).status_code == 200
        counts[name] = len(seen)
    assert len(set(counts.values())) == 1, counts


def test_a_kick_from_the_judges_page_wakes_the_lobbys_pages(game: WebOnlyGame) -> None:
    """README: the judge sees joins live, and whoever joined sees the lobby's count change: a
    `踢出` (or any action) on the judge's page wakes the lobby's pages as a join does."""
    from bot.web import live

    game.open()
    game.join_as("小明")
    game.join_as("小红")
    hub = game.app.state.hub
    woken: list[live.Key] = []
    wake = hub.wake
    hub.wake = lambda keys: woken.extend(keys := list(keys)) or wake(keys)
    r = game.phone(JUDGE).post(game.judge_page, data={"cmd": "踢出 小红", "nonce": "k"})
    assert "已将 小红 移出" in answers(r.text)
    assert live.lobby(game.code) in woken and live.judged(game.code) in woken


def test_a_body_that_is_no_form_is_refused_as_such(game: WebOnlyGame) -> None:
    """A broken form (a multipart body without its boundary) is refused in Chinese as a form
    that could not be read, on every page that takes one, and changes nothing: not as a body
    too large, nor as a bad link."""
    game.open()
    contact = game.join_as("小明")
    before = _rows(game)
    broken = {"Content-Type": "multipart/form-data; boundary=x"}
    for url, client in ((game.join, _browser(game)), (game.keys[contact], game.phone(contact)),
                        (game.home, game.phone(JUDGE)), (game.judge_page, game.phone(JUDGE))):
        r = client.post(url, content=b"--y\r\nnot a form", headers=broken)
        assert r.status_code == 400 and "表单无法读取" in r.text, (url, r.status_code)
        assert "太大" not in r.text and "链接无效" not in r.text, url
    assert _rows(game) == before


def test_no_forwarded_for_is_believed_but_from_the_trusted_proxies(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README "Behind a TLS proxy": X-Forwarded-For is believed only from a proxy named in
    WOLFJUDGE_WEB_TRUSTED_PROXIES. The server `wolfjudge run` starts must not believe it on
    its own (uvicorn does, by default, from its loopback): with no proxy named, twenty-one
    joins from one address, each claiming another, are one address's."""
    import http.client

    from test_web_browser import _free_port, running

    from bot.web.links import PageLinks
    from bot.web.server import WebSettings, make_server

    port = _free_port()
    g = web_only(tmp_path, monkeypatch, base=f"http://127.0.0.1:{port}")
    g.open()
    settings = WebSettings(url=g.base, host="127.0.0.1", port=port, push=False,
                           trusted_proxies="")
    server = make_server(g.service, PageLinks(g.base, g.links), settings, g.console.bot)
    codes = []
    with running(server):  # type: ignore[arg-type]
        for i in range(RateLimits.ACTIONS + 1):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("POST", g.join, body=f"name=%E6%B3%95%E5%AE%98&nonce=x{i}",
                         headers={"Content-Type": "application/x-www-form-urlencoded",
                                  "X-Forwarded-For": f"198.51.100.{i + 1}"})
            codes.append(conn.getresponse().status)
            conn.close()
    g.service.close()
    assert codes[:-1] == [400] * RateLimits.ACTIONS and codes[-1] == 429, codes


def test_the_key_lists_a_seat_whose_game_is_over_with_its_own_page(game: WebOnlyGame) -> None:
    """A key opens the seat's page while its game is under way; once it is over the key's
    page lists the seat (已结束) with the link to the same seat's page, which still opens."""
    game.open()
    game.fill()
    game.begin()
    contact = next(iter(game.keys))
    seat_page = game.seat_page(contact)  # the game under way: the key redirects there
    judge = game.phone(JUDGE)
    for cmd in ("结束", "结束 确认"):
        judge.post(game.judge_page, data={"cmd": cmd, "nonce": uuid.uuid4().hex})
    assert game.service.state(game.code).ended
    listed = game.phone(contact).get(game.keys[contact])
    assert listed.status_code == 200
    seat = next(s.seat for s in game.service.state(game.code).seats
                if game.console.bot.chats.contacts(game.code).get(s.seat) == contact)
    assert f"{game.code} {seat}号（已结束）" in listed.text, listed.text
    seats = [path(u) for u in links_on(listed.text) if "/p/" in u]
    assert seats == [seat_page]
    assert game.phone(contact).get(seat_page).status_code == 200
