"""More than one WeChat account (issue 21, docs/architecture.md "One bot per account, one database
for all"): one gateway and one bot per account, one PostgreSQL for all. A game belongs to the
account that hosts it (WOLFJUDGE_HOST): each bot schedules, answers and sends only for its own
games. Over the real protocol on loopback: two mock gateways, two `wolfjudge run` processes,
the same contacts on both (a player may play on both accounts at once)."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from gatewayhelp import Gateway, need_gateway
from runhelp import BotProcess, GatewayTable
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool
from test_run_e2e import start_table

from bot.store import migrate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
from pgserver import throwaway_server  # noqa: E402


@pytest.fixture
def pg_url() -> Iterator[str]:
    with throwaway_server() as server:
        server.admin("CREATE DATABASE wolfjudge")
        url = server.url("wolfjudge")
        migrate(url)
        yield url


@pytest.fixture
def gateways(tmp_path: Path) -> Iterator[tuple[Gateway, Gateway]]:
    node = need_gateway()
    for name in ("gw-a", "gw-b"):
        (tmp_path / name).mkdir()
    pair = (Gateway(node, tmp_path / "gw-a"), Gateway(node, tmp_path / "gw-b"))
    for gw in pair:
        gw.start()
    yield pair
    for gw in pair:
        gw.stop()


def game_row(url: str, code: str) -> tuple[str, int]:
    """The game's host and how many log rows it has."""
    engine = create_engine(url, poolclass=NullPool)
    with engine.connect() as conn:
        host = conn.scalar(text("select host from games where id = :c"), {"c": code})
        rows = conn.scalar(text("select count(*) from events where game_id = :c"), {"c": code})
    engine.dispose()
    return str(host), int(rows or 0)


def test_two_accounts_on_one_database_each_run_their_own_game_and_survive_a_kill(
        gateways: tuple[Gateway, Gateway], pg_url: str, tmp_path: Path) -> None:
    gw_a, gw_b = gateways
    bot_a = BotProcess(gw_a, pg_url, tmp_path / "gw-a", host="a")
    bot_b = BotProcess(gw_b, pg_url, tmp_path / "gw-b", host="b")
    table_a: GatewayTable = start_table(bot_a, gw_a, "classic", 7)
    table_b: GatewayTable = start_table(bot_b, gw_b, "classic", 8)
    try:
        table_a.deal()
        table_b.deal()  # the same contacts join the second account's game too
        assert table_a.code != table_b.code
        assert game_row(pg_url, table_a.code)[0] == "a"
        assert game_row(pg_url, table_b.code)[0] == "b"
        table_a.play_until(table_a.night)
        table_b.play_until(table_b.night)
        # A player of both games acts on each account: each bot applies it to its own game.
        seer_a = table_a.by_role("预言家")[0]
        view = table_a.say(table_a.judge, "状态", expect=f"【{table_a.code}】")
        assert all(table_b.code not in m.text for m in view), view
    finally:
        bot_a.kill()  # SIGKILL: account a's bot is gone mid-night
    before_a = game_row(pg_url, table_a.code)[1]
    # While it is down, a player of account a sends the night's check: the gateway keeps it.
    target = next(s for s in table_a.alive if s != seer_a.seat)
    kept = gw_a.dm(seer_a.name, f"验 {target}")
    table_a.todo = [a for a in table_a.todo if a[0] != seer_a.name]
    try:
        # Account b's game goes on to its end, untouched by a's absence ...
        table_b.play()
        told = table_b.told_the_end()
        assert set(told) >= set(table_b.players), sorted(told)
        # ... and a's game did not move: no deadline of it fired, nothing was sent for it.
        assert game_row(pg_url, table_a.code)[1] == before_a
        assert all(table_a.code not in s["text"] for s in gw_b.sent())
    finally:
        assert bot_b.close() == 0
    assert bot_b.tracebacks() == 0, bot_b.log()
    # Account a comes back: the kept check is applied once and answered, and its game plays on
    # to its end on its own account.
    bot_a = BotProcess(gw_a, pg_url, tmp_path / "gw-a", host="a")
    table_a.bot = table_a.c = bot_a  # type: ignore[assignment]
    try:
        bot_a.ready()
        got = table_a.settle(kept, lambda got: any(
            m.to == seer_a.name and "查验结果" in m.text for m in got))
        table_a.read(got)
        assert game_row(pg_url, table_a.code)[1] > before_a
        table_a.play()
        told = table_a.told_the_end()
        assert set(told) >= set(table_a.players), sorted(told)
    finally:
        assert bot_a.close() == 0
    assert bot_a.tracebacks() == 0, bot_a.log()
    # Nothing of one account's game was ever sent through the other account.
    code = re.compile(re.escape(table_b.code))
    assert not any(code.search(s["text"]) for s in gw_a.sent())
