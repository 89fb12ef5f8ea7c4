"""The records over the demo games of the three rulesets played into one database (issue 31,
"Done when"): `战绩`, `排行`, `wolfjudge stats` and the community page show the same figures,
all computed from the games' verified exports."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from bot.chat.bot import ChatBot
from bot.chat.demo import Demo
from bot.cli import main
from bot.records.report import pct
from bot.service import Service
from bot.store.records import RecordStore
from bot.transport import Incoming
from bot.transport.memory import MemoryTransport
from bot.web.app import create_app
from bot.web.links import Links, PageLinks

DEMOS = (("classic", 1), ("anomaly", 3), ("standard", 5))
BASE = "https://pages.example"


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    tmp = tmp_path_factory.mktemp("records")
    url = f"sqlite:///{tmp / 'demo.db'}"
    for ruleset, seed in DEMOS:
        assert Demo(ruleset, seed, io.StringIO(), url).run() != "none"
    yield url, tmp


class Chat:
    def __init__(self, url: str) -> None:
        self.service = Service(url)
        self.transport = MemoryTransport()
        self.bot = ChatBot(self.service, self.transport, judges=["法官"])
        self.links = Links("s", lambda: datetime(2026, 12, 10))
        self.bot.records.ctx.web = PageLinks(BASE, self.links)
        self.n = 0

    def ask(self, sender: str, text: str) -> str:
        self.n += 1
        before = len(self.transport.sent)
        self.bot.handle(Incoming(msg_id=f"q{self.n}", sender=sender, text=text,
                                 at=datetime(2026, 12, 10, 1, tzinfo=UTC)))
        replies = [s.text for s in self.transport.sent[before:] if s.target == sender]
        assert len(replies) == 1, replies
        return replies[0]


@pytest.fixture(scope="module")
def stats(played: tuple[str, Path]) -> dict[str, Any]:
    url, tmp = played
    out = tmp / "stats.json"
    assert main(["stats", "--db", url, "--json", str(out), "--csv", str(tmp / "s.csv")]) == 0
    doc: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return doc


def test_every_game_is_recorded_from_its_verified_export(played: tuple[str, Path],
                                                         stats: dict[str, Any]) -> None:
    service = Service(played[0])
    try:
        recorded = RecordStore(service.db).recorded(None)
    finally:
        service.close()
    assert sorted(g for g, o, _ in recorded if o == "won") == ["DEMO01", "DEMO03", "DEMO05"]
    assert stats["counted"] == 3 and stats["refused"] == []
    assert {b["key"]["ruleset"] for b in stats["boards"]} == {"classic", "anomaly", "standard"}
    assert len(stats["players"]) == 12 and all(p["games"] == 3 for p in stats["players"])


def test_战绩_排行_stats_and_the_page_show_the_same_figures(played: tuple[str, Path],
                                                       stats: dict[str, Any]) -> None:
    chat = Chat(played[0])
    try:
        names = {}
        for i in range(1, 13):
            mine = chat.ask(f"玩家{i}", "战绩")
            head = re.match(r"你的战绩（全部对局）：(\d+)局(\d+)胜，胜率 (\S+)。", mine)
            assert head, mine
            found = [p for p in stats["players"] if p["name"] == f"马甲{i:02d}"]
            assert len(found) == 1
            p = found[0]
            assert (int(head[1]), int(head[2]), head[3]) == (p["games"], p["wins"],
                                                             pct(p["rate"]))
            for line in p["lines"]:
                assert f"{line['game']} " in mine and f"{line['seat']}号「{p['name']}」" in mine
            names[p["player"]] = p["name"]
        ranking = chat.ask("玩家1", "排行 全部")
        want = [f"{i}. {r['name']} {r['games']}局{r['wins']}胜 {pct(r['rate'])}"
                for i, r in enumerate(stats["leaderboard"]["by_rate"][:5], 1)]
        assert want == [x for x in ranking.splitlines() if re.match(r"\d\. .*胜 ", x)]
        link = re.search(rf"{BASE}(/c/\S+)", ranking)
        assert link
        client = TestClient(create_app(chat.service, chat.bot.chats, chat.links,
                                       simulations=lambda board: None))
        page = client.get(link.group(1) + "?s=" + quote("全部对局")).text
        for p in stats["players"]:
            assert (f">{p['name']}</a></td><td>{p['games']}</td><td>{p['wins']}</td>"
                    f"<td>{pct(p['rate'])}</td><td>{p['other']}</td>") in page
        for b in stats["boards"]:
            assert f"<h3>{b['board']}</h3>" in page
            for c in b["camps"]:
                cell = (f"{pct(c['rate'], 1)}（{pct(c['ci95'][0], 1)} – "
                        f"{pct(c['ci95'][1], 1)}），{c['wins']}/{c['games']}")
                assert f"<td>{c['name']}</td><td>{cell}</td>" in page
            assert b["simulated"] and all(run["shipped"] for run in b["simulated"])
    finally:
        chat.service.close()


def test_the_csv_has_a_row_for_each_players_game(played: tuple[str, Path],
                                                stats: dict[str, Any]) -> None:
    rows = (played[1] / "s.csv").read_text(encoding="utf-8-sig").splitlines()
    assert rows[0].startswith("日期,游戏码,规则,板子")
    assert len(rows) == 1 + 36
    assert not any("玩家" in row for row in rows[1:])  # a key, never a contact id


def test_stats_verifies_every_recorded_game_again(played: tuple[str, Path],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """R-REC-2: `wolfjudge stats --verify` exports and verifies each recorded game again."""
    assert main(["stats", "--db", played[0], "--verify"]) == 0
    out = capsys.readouterr().out
    assert "已重新校验 3 局：与签名日志一致。" in out
    assert main(["stats", "--db", played[0], "--season", "没有这个赛季"]) == 2


@pytest.mark.rules("R-REC-6")
def test_stats_takes_the_rank_minimum_from_its_option_else_the_setting(
        played: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`wolfjudge stats --min-games`, else WOLFJUDGE_RANK_MIN_GAMES (the setting `wolfjudge
    run` reads), else 3; a bad setting is named, not taken for 3."""
    out = tmp_path / "s.json"

    def minimum(*extra: str) -> int:
        assert main(["stats", "--db", played[0], "--json", str(out), *extra]) == 0
        return int(json.loads(out.read_text(encoding="utf-8"))["min_games"])

    monkeypatch.delenv("WOLFJUDGE_RANK_MIN_GAMES", raising=False)
    assert minimum() == 3
    monkeypatch.setenv("WOLFJUDGE_RANK_MIN_GAMES", "4")
    assert minimum() == 4 and minimum("--min-games", "2") == 2
    monkeypatch.setenv("WOLFJUDGE_RANK_MIN_GAMES", "zero")
    with pytest.raises(SystemExit) as exc:
        main(["stats", "--db", played[0]])
    assert "WOLFJUDGE_RANK_MIN_GAMES" in str(exc.value)
