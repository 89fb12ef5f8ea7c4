"""The community page (issue 31, docs/records.md): `/c/SLUG` with the leaderboard, every
player (匿名 when hidden), each board's real win rates beside the simulator's (a table and an
inline SVG chart); a player's record by key and by 马甲; a hostile 马甲 inert; no contact id;
the simulator never run on a page load; the address a judge can replace; linked from the
replay page."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

import pytest
from chathelp import JUDGE, Table
from fastapi.testclient import TestClient

from bot.records import balance
from bot.records.balance import Background, Simulations, compute
from bot.store.records import RecordStore
from bot.web.app import create_app
from bot.web.links import Links, PageLinks

BASE = "https://pages.example"
# 马甲 that `报名` takes as they are (it trims punctuation at the ends of a name)
HOSTILE = ["<script>alert(1)</script>", "x\"><svg/onload=alert(1)>", "x'&<b>x</b>",
           "x{{7*7}}y", "javascript:alert(1)x", "a/b%2F?x=#y"]
CONTACT = "wxid_secret_"  # the contacts' ids: never on a page


class PageTable(Table):
    def __init__(self, tmp_path: Path) -> None:
        super().__init__(tmp_path)
        self.asked: list[str] = []
        links = Links("test-secret", lambda: datetime(2026, 12, 1))
        self.bot.records.ctx.web = PageLinks(BASE, links)
        self.client = TestClient(create_app(self.service, self.bot.chats, links,
                                            simulations=self.asked.append))

    def play(self, names: dict[int, str] | None = None, text: str = "新游戏 经典") -> str:
        """A game of wxid_secret_1…12 (their 马甲 `names`, else 马甲N) the village wins."""
        code = self.new_game(text)
        for i in range(1, 13):
            name = (names or {}).get(i, f"马甲{i}")
            assert "报名成功" in self.reply(f"{CONTACT}{i}", f"报名 {code} {name}")
        assert "已开始" in self.reply(JUDGE, "开始")
        for seat in self.seats_with(code, "wolf"):
            self.reply(JUDGE, f"#{code} 红牌 {seat}")
        assert self.state(code).winner == "village"
        return code

    def community(self) -> str:
        reply = self.reply(f"{CONTACT}1", "排行")
        found = re.search(rf"{BASE}(/c/\S+)", reply)
        assert found, reply
        return found.group(1)

    def get(self, path: str) -> str:
        response = self.client.get(path)
        assert response.status_code == 200, (path, response.status_code)
        assert "Content-Security-Policy" in response.headers
        assert response.headers["X-Robots-Tag"] == "noindex, nofollow"
        assert CONTACT not in response.text
        return response.text


@pytest.fixture
def table(tmp_path: Path) -> Iterator[PageTable]:
    t = PageTable(tmp_path)
    yield t
    t.close()


@pytest.mark.rules("R-REC-8", "R-REC-9")
def test_the_page_shows_the_leaderboard_players_and_boards(table: PageTable) -> None:
    for _ in range(3):
        table.play()
    page = table.get(table.community())
    assert "社区战绩" in page and "胜率榜（至少 3 局）" in page
    assert re.search(r"<td>1</td><td><a href=\"/c/[^\"]+/p/[0-9a-f]{12}\">马甲\d+</a></td>"
                     r"<td>3</td><td>3</td><td>100%</td>", page)
    # the board: real games and the simulator's (the shipped docs/balance.md runs)
    assert "经典12人" in page and "模拟（启发式，20000 局）" in page
    assert "61.9%（61.2% – 62.5%），12371/20000" in page
    assert "村民阵营</td><td>100.0%（43.9% – 100.0%），3/3" in page
    svg = re.search(r"<svg class=\"chart\".*?</svg>", page, re.S)
    assert svg and "<rect" in svg.group(0) and "<line" in svg.group(0)
    assert "style=" not in page and "<script" not in page  # the CSP allows our files only
    assert table.asked == []  # a shipped board is never simulated


@pytest.mark.rules("R-REC-8")
def test_a_players_record_by_key_and_by_马甲(table: PageTable) -> None:
    code = table.play()
    base = table.community()
    page = table.get(base + "?s=" + quote("全部对局"))
    key = re.search(r"/p/([0-9a-f]{12})\">马甲1<", page)
    assert key
    by_key = table.get(f"{base}/p/{key.group(1)}")
    assert "「马甲1」的战绩" in by_key and f"/replay/{code}" in by_key
    assert table.get(f"{base}/m/{quote('马甲1')}") == by_key


@pytest.mark.rules("R-REC-8")
def test_a_hostile_马甲_is_inert_on_every_page(table: PageTable) -> None:
    names = dict(enumerate(HOSTILE, 1))
    table.play(names)
    assert {x.name for x in RecordStore(table.service.db).lines(None)} >= set(HOSTILE)
    base = table.community()
    pages = [table.get(base)]
    for name in HOSTILE:
        pages.append(table.get(f"{base}/m/{quote(name, safe='')}"))
    for key in set(re.findall(r"/p/([0-9a-f]{12})\"", pages[0])):
        pages.append(table.get(f"{base}/p/{key}"))
    for page in pages:
        for name in HOSTILE:
            if any(c in name for c in "<>\"'&"):
                assert name not in page  # only ever escaped
        assert "<script" not in page and "<b>" not in page and "<svg/" not in page
        assert "x49y" not in page  # no template ran the 马甲
    assert html.escape(HOSTILE[0]) in pages[0]


@pytest.mark.rules("R-REC-7", "R-REC-8")
def test_hidden_players_are_anonymous_and_their_pages_are_unknown(table: PageTable) -> None:
    table.play()
    base = table.community()
    page = table.get(base)
    key = re.search(r"/p/([0-9a-f]{12})\">马甲1<", page)
    assert key
    table.reply(f"{CONTACT}1", "战绩 隐藏")
    page = table.get(base)
    assert "马甲1<" not in page and '<tr class="hidden"><td>匿名</td>' in page
    unknown = table.client.get(f"{base}/p/000000000000")
    for path in (f"{base}/p/{key.group(1)}", f"{base}/m/{quote('马甲1')}"):
        got = table.client.get(path)
        assert got.status_code == 404 and got.text == unknown.text  # same as no one


@pytest.mark.rules("R-REC-8")
def test_an_unknown_or_replaced_address_is_404(table: PageTable) -> None:
    table.play()
    old = table.community()
    assert table.client.get("/c/" + "x" * 16).status_code == 404
    assert "只有法官" in table.reply(f"{CONTACT}1", "排行 换链接")
    reply = table.reply(JUDGE, "排行 换链接")
    new = re.search(rf"{BASE}(/c/\S+)", reply)
    assert new and new.group(1) != old
    assert table.client.get(old).status_code == 404
    table.get(new.group(1))


def test_the_replay_page_links_to_its_community(table: PageTable) -> None:
    code = table.play()
    replay = table.client.get(f"/replay/{code}").text
    link = re.search(r'<nav class="community"><a href="(/c/[^"]+)">', replay)
    assert link and link.group(1) == table.community()


@pytest.mark.rules("R-REC-9")
def test_the_simulator_runs_for_a_new_board_once_never_on_a_page_load(
        table: PageTable, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("simulated on a page load")

    table.play(text="新游戏 经典 classic.exile_tie=random")
    base = table.community()
    monkeypatch.setattr(balance, "run", refuse)
    assert "模拟计算中" in table.get(base)
    table.get(base)
    assert len(table.asked) == 2 and len(set(table.asked)) == 1  # asked; Background dedups
    monkeypatch.undo()
    store = RecordStore(table.service.db)
    assert compute(store, table.asked[0], games=20)  # what the background process does
    page = table.get(base)
    assert "模拟（启发式，20 局）" in page and "模拟计算中" not in page


def test_the_background_computes_each_board_once() -> None:
    import threading

    launched: list[str] = []
    both = threading.Event()

    def launch(board: str) -> None:
        launched.append(board)
        if len(launched) == 2:
            both.set()

    bg = Background("sqlite://", launch=launch)
    for board in ("a", "b", "a"):
        bg.request(board)
    assert both.wait(10)  # the worker thread, one board after the other
    bg.request("a")
    assert launched == ["a", "b"]


@pytest.mark.rules("R-REC-9")
def test_a_board_with_the_judges_own_roles_has_no_simulation(table: PageTable) -> None:
    store = RecordStore(table.service.db)
    from bot.records.summary import board_key

    side = Simulations(store, table.asked.append).side(
        board_key("classic", 12, {}, ["wolf"] * 3 + ["villager"] * 9))
    assert side.custom and not side.runs and table.asked == []


@pytest.mark.rules("R-REC-10")
def test_a_formula_马甲_is_inert_in_the_csv(table: PageTable, tmp_path: Path) -> None:
    """The CSV is for a spreadsheet: a cell a player or a judge typed (a 马甲, a season's
    name) that a spreadsheet would run as a formula (=, +, -, @ first) is written as text,
    with the apostrophe spreadsheets take for "text" before it."""
    import csv

    from bot.cli import main

    assert "赛季" in table.reply(JUDGE, "赛季 开始 =S1")
    formulas = {1: "=1+2", 2: "+A1", 3: "=A1"}
    table.play(formulas)
    path = tmp_path / "records.csv"
    url = table.service.db.engine.url.render_as_string(hide_password=False)
    assert main(["stats", "--db", url, "--csv", str(path)]) == 0
    rows = list(csv.reader(path.open(encoding="utf-8-sig")))
    cells = [cell for row in rows[1:] for cell in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@")], rows
    for name in (*formulas.values(), "=S1"):
        assert f"'{name}" in cells, name
