"""The community page (issue 31, docs/records.md): `/c/SLUG`, the leaderboard, every player
(匿名 when they hide their records), each board's real camp win rates with their 95 %
intervals beside the simulator's, as a table and a small inline SVG chart; `/c/SLUG/p/KEY` a
player's record (KEY: the player's opaque key, from the page's links) and `/c/SLUG/m/马甲` the
same found by a 马甲 used in a finished game, as `战绩 马甲` finds it.

SLUG is the community's own secret address (one per hosting account, kept in the database):
the records are semi-public, for the community's members (the replay pages of its games and
`排行` give the link), not for whoever tries addresses. A judge replaces it with `排行 换链接`.
An unknown SLUG, a hidden player and a player without records all get the same 404.
The page is the public view: never a contact id, never a hidden player's 马甲."""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse

from bot.records import report
from bot.records.balance import Side, Simulations
from bot.records.book import ALL, RecordBook, Scope
from bot.records.tables import BoardRates, Leaderboard, Record, Standing, rate
from bot.service import Service
from bot.store.records import Line, RecordStore, SeasonRow
from bot.texts import camp_name, role_name, t
from bot.web.chart import Bar, Chart, chart

TOP = 20  # each leaderboard on the page
ROBOTS = {"X-Robots-Tag": "noindex, nofollow"}


@dataclass
class SimColumn:
    title: str
    cells: dict[str, str]


@dataclass
class BoardView:
    label: str
    games: int
    other: int
    rows: list[tuple[str, str]]  # (camp, the real games' cell)
    sims: list[SimColumn]
    note: str  # why there is no simulation (pending, custom roles, …)
    chart: Chart


@dataclass
class ScopeLink:
    text: str
    href: str
    current: bool


@dataclass
class CommunityPage:
    title: str
    base: str
    scopes: list[ScopeLink]
    counted: int
    board: Leaderboard
    players: list[Standing]
    boards: list[BoardView]
    refused: int
    hrefs: dict[str, str] = field(default_factory=dict)  # player key -> their page


@dataclass
class PlayerPage:
    title: str
    base: str
    totals: str
    camps: list[tuple[str, int, int, str]]
    roles: list[tuple[str, int, int, str]]
    other: int
    lines: list[dict[str, Any]]


def _cell(rate: float, low: float, high: float, wins: int, games: int) -> str:
    return t("records.page.cell", rate=report.pct(rate, 1), low=report.pct(low, 1),
             high=report.pct(high, 1), wins=wins, games=games)


def board_view(rates: BoardRates, side: Side) -> BoardView:
    label = report.board_label(rates.board)
    rows = [(camp_name(rates.ruleset, c.camp), _cell(c.rate, c.low, c.high, c.wins, c.games))
            for c in rates.camps]
    sims = []
    for run in side.runs:
        agent = t(f"records.page.agents.{run.agent}")
        cells = {}
        for c in rates.camps:
            found = run.camp(c.camp)
            cells[camp_name(rates.ruleset, c.camp)] = (
                _cell(found.rate, found.low, found.high, found.wins, found.games) if found
                else _cell(0.0, 0.0, 0.0, 0, run.games))
        sims.append(SimColumn(t("records.page.col_sim", agent=agent, games=run.games), cells))
    note = ("" if side.runs else t("records.page.sim_pending") if side.pending
            else t("records.page.sim_custom") if side.custom
            else t("records.page.sim_failed") if side.failed else t("records.page.sim_none"))
    bars = []
    first = side.runs[0] if side.runs else None
    for c in rates.camps:
        group = [Bar(t("records.page.legend_real"), c.rate, c.low, c.high)]
        found = first.camp(c.camp) if first else None
        if found is not None:
            group.append(Bar(t("records.page.legend_sim"), found.rate, found.low, found.high,
                             sim=True))
        bars.append((camp_name(rates.ruleset, c.camp), group))
    drawn = chart(t("records.page.chart_label", board=label), bars,
                  (t("records.page.legend_real"), t("records.page.legend_sim")))
    return BoardView(label, rates.games, rates.other, rows, sims, note, drawn)


def _split_rows(table: dict[tuple[str, str], Any], namer: Callable[[str, str], str]
                ) -> list[tuple[str, int, int, str]]:
    merged: dict[str, list[int]] = {}
    for (ruleset, key), split in table.items():
        name = namer(ruleset, key)
        g, w = merged.get(name, [0, 0])
        merged[name] = [g + split.games, w + split.wins]
    return [(name, g, w, report.pct(rate(w, g)))
            for name, (g, w) in sorted(merged.items(), key=lambda kv: (-kv[1][0], kv[0]))]


def _line(line: Line) -> dict[str, Any]:
    return {"date": line.ended_on.isoformat(), "code": line.game_id,
            "replay": f"/replay/{quote(line.game_id, safe='')}",
            "board": report.board_label(line.board), "seat": line.seat, "name": line.name or "",
            "role": role_name(line.ruleset, line.role) if line.role else "",
            "camp": camp_name(line.ruleset, line.camp) if line.camp else "",
            "result": report.result_text(line).strip(),
            "out": report.out_text(line).lstrip("，"),
            "cards": report.cards_text(line).lstrip("，")}


def player_page(base: str, rec: Record) -> PlayerPage:
    return PlayerPage(t("records.page.player_title", name=rec.name), base,
                      t("records.page.totals", games=rec.games, wins=rec.wins,
                        rate=report.pct(rec.rate)),
                      _split_rows(rec.by_camp, camp_name), _split_rows(rec.by_role, role_name),
                      rec.other, [_line(x) for x in rec.lines])


class Community:
    """The pages of the database's communities (found by their address)."""

    def __init__(self, service: Service, request: Callable[[str], None] | None) -> None:
        self.service = service
        self.store = RecordStore(service.db)
        self.request = request

    def host_of(self, slug: str) -> tuple[bool, str | None]:
        """(found, the community's host) for an address (compared in constant time)."""
        found, host = False, None
        for h, value in self.store.slugs():
            if hmac.compare_digest(value.encode(), slug.encode()):
                found, host = True, h
        return found, host

    def book(self, host: str | None) -> RecordBook:
        book = RecordBook(self.service, host)
        book.sync()
        return book

    def scope(self, book: RecordBook, name: str | None) -> Scope | None:
        """`?s=` names the scope: a season, 全部, or nothing (the open season, else all)."""
        if name is None or name == "":
            return Scope(book.current())
        if name == t("records.page.all"):
            return ALL
        season = book.season(name)
        return None if season is None else Scope(season)

    def page(self, slug: str, host: str | None, name: str | None) -> CommunityPage | None:
        book = self.book(host)
        scope = self.scope(book, name)
        if scope is None:
            return None
        base = f"/c/{quote(slug, safe='')}"
        seasons: list[SeasonRow] = book.seasons()
        scopes = [ScopeLink(t("records.page.all"), f"{base}?s={quote(t('records.page.all'))}",
                            scope.season is None)]
        scopes += [ScopeLink(report.scope_text(s), f"{base}?s={quote(s.name, safe='')}",
                             scope.season is not None and scope.season.name == s.name)
                   for s in seasons]
        players = book.standings(scope, judge=False)
        board = book.leaderboard(scope, judge=False, top=TOP, players=players)
        sims = Simulations(self.store, self.request)
        rates = book.boards(scope)
        boards = [board_view(b, sims.side(b.board)) for b in rates]
        counted = sum(b.games for b in rates)
        hrefs = {p.key: f"{base}/p/{p.key}" for p in players if not p.hidden}
        return CommunityPage(t("records.page.title"), base, scopes, counted, board, players,
                             boards, len(book.refused()), hrefs)

    def player(self, slug: str, host: str | None, *, key: str | None = None,
               name: str | None = None) -> PlayerPage | None:
        book = self.book(host)
        contact = None
        if name is not None:
            contact = book.find(name, judge=False)
        elif key is not None:
            hidden = book.hidden()
            contact = next((x.contact for x in book.store.tallies(host)
                            if x.contact not in hidden
                            and hmac.compare_digest(book.key(x.contact), key)), None)
        rec = None if contact is None else book.record_of(contact)
        if rec is None:
            return None
        return player_page(f"/c/{quote(slug, safe='')}", rec)


def mount(app: FastAPI, service: Service, page: Callable[..., HTMLResponse],
          request: Callable[[str], None] | None) -> Community:
    """The community pages' routes on the app; `page(template, status, **values)` renders.
    `request`: how a board without the simulator's numbers gets them computed (None: never
    from the pages)."""
    community = Community(service, request)

    def not_found() -> HTMLResponse:
        return page("denied.html", status=404, reason=t("records.page.not_found"))

    def done(response: HTMLResponse) -> HTMLResponse:
        response.headers.update(ROBOTS)
        return response

    @app.get("/c/{slug}", response_class=HTMLResponse)
    def community_page(slug: str, s: str | None = None) -> HTMLResponse:
        found, host = community.host_of(slug)
        built = community.page(slug, host, s) if found else None
        return done(not_found() if built is None else page("community.html", p=built))

    @app.get("/c/{slug}/p/{key}", response_class=HTMLResponse)
    def player_by_key(slug: str, key: str) -> HTMLResponse:
        found, host = community.host_of(slug)
        built = community.player(slug, host, key=key[:64]) if found else None
        return done(not_found() if built is None else page("community_player.html", p=built))

    @app.get("/c/{slug}/m/{name:path}", response_class=HTMLResponse)
    def player_by_name(slug: str, name: str, request: Request) -> HTMLResponse:
        # The 马甲 as written in the address, decoded once (the path parameter is decoded
        # twice: a 马甲 with `%2F` in it would be another 马甲).
        raw = request.scope.get("raw_path", b"").decode("latin-1").split("?", 1)[0]
        name = unquote(raw.split("/m/", 1)[1]) if "/m/" in raw else name
        found, host = community.host_of(slug)
        built = community.player(slug, host, name=name[:128]) if found else None
        return done(not_found() if built is None else page("community_player.html", p=built))

    return community


def community_link(service: Service, game_id: str, make: Callable[[], str]) -> str | None:
    """The community page of a game's community (for its replay page): `/c/SLUG`."""
    store = RecordStore(service.db)
    info = store.game(game_id)
    if info is None:
        return None
    return f"/c/{quote(store.slug(info[1], make), safe='')}"
