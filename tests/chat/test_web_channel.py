"""A game with no chat account at all (issue 30, items 1-3 and 7; README "Playing without
WeChat"): `wolfjudge run --channel web`, the judge from `wolfjudge judge-link`, players who join
by link, rooms that are pages. Whole games of every registered ruleset are played over HTTP
(tests/chat/webonly.py) with every page audited after every step."""

from __future__ import annotations

from pathlib import Path

import pytest
from webonly import WebOnlyGame

from engine.ruleset import ruleset_names


@pytest.mark.parametrize("ruleset, options", [
    *(pytest.param(r, (), id=r) for r in ruleset_names()),
    # the announcements on the public room's page; no rooms, the killers' lines relayed
    pytest.param("classic", ("public.channel=room",), id="classic-public-room"),
    pytest.param("classic", ("groups.mode=relay",), id="classic-relay"),
])
def test_a_whole_game_web_only(tmp_path: Path, ruleset: str, options: tuple[str, ...],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    """README "Playing without WeChat": a judge from `judge-link` to the end, twelve players
    joined by the join link, every action through their pages, the wolves talking on their
    room's page; every seat's page and room page audited after every step."""
    monkeypatch.setenv("WOLFJUDGE_WEB_URL", "https://wolf.example.org")
    monkeypatch.delenv("WOLFJUDGE_WEB_SECRET", raising=False)
    game = WebOnlyGame(ruleset, 2, f"sqlite:///{tmp_path / 'g.db'}", options=options)
    assert game.run() != "none"
    assert game.audits > 10
    if ruleset != "anomaly" and "groups.mode=relay" not in options:
        assert game.talked  # (anomaly has no rooms; relay mode neither)
    if game.talked:
        seat, line = game.talked[0]
        mates = [c for n, c in game.console.bot.chats.contacts(game.code).items() if n != seat]
        heard = [c for c in mates if f"【狼群】{seat}号：{line}" in str(game.transport.sent)]
        assert heard
