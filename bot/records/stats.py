"""`wolfjudge stats`: a community's tables for its judges and operator, as Chinese text, JSON
and CSV (one row a player's game: what a spreadsheet pivots). The judges' view: players who
hide their records are listed, marked; a player is named by their 马甲 and an opaque key,
never by a contact id."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.chat.reports import cause_name
from bot.records import report
from bot.records.balance import Side, Simulations
from bot.records.book import RecordBook, Scope
from bot.records.summary import read_board
from bot.records.tables import BoardRates, Record, Standing
from bot.store.records import Line, SeasonRow
from bot.texts import camp_name, phase_text, role_name, ruleset_name, t, text_data


def _iso(value: Any) -> str | None:
    return None if value is None else value.isoformat()


def _camps(rates: Iterable[Any], ruleset: str) -> list[dict[str, Any]]:
    return [{"camp": c.camp, "name": camp_name(ruleset, c.camp), "wins": c.wins,
             "games": c.games, "rate": round(c.rate, 6),
             "ci95": [round(c.low, 6), round(c.high, 6)]} for c in rates]


def _side_note(side: Side) -> str | None:
    if side.runs:
        return None
    return ("pending" if side.pending else "custom" if side.custom
            else "failed" if side.failed else "none")


def _board(rates: BoardRates, side: Side) -> dict[str, Any]:
    return {"board": report.board_label(rates.board), "key": read_board(rates.board),
            "games": rates.games, "other": rates.other,
            "camps": _camps(rates.camps, rates.ruleset),
            "simulated": [{"agent": run.agent, "games": run.games, "seed": run.seed,
                           "shipped": run.shipped, "camps": _camps(run.camps, rates.ruleset)}
                          for run in side.runs],
            "simulation": _side_note(side)}


def _line(line: Line) -> dict[str, Any]:
    return {"game": line.game_id, "date": line.ended_on.isoformat(),
            "ended_at": line.ended_at.isoformat(), "ruleset": line.ruleset,
            "board": report.board_label(line.board), "outcome": line.outcome,
            "winner": line.winner, "seat": line.seat, "name": line.name, "role": line.role,
            "camp": line.camp, "result": line.result, "out_cause": line.out_cause,
            "out_phase": line.out_phase, "yellow": line.yellow, "red": line.red}


def _splits(table: dict[tuple[str, str], Any], namer: Any) -> list[dict[str, Any]]:
    return [{"ruleset": r, "key": k, "name": namer(r, k), "games": s.games, "wins": s.wins}
            for (r, k), s in sorted(table.items())]


def _player(standing: Standing, rec: Record) -> dict[str, Any]:
    return {"player": standing.key, "name": standing.name, "hidden": standing.hidden,
            "games": rec.games, "wins": rec.wins, "rate": round(rec.rate, 6),
            "other": rec.other, "by_camp": _splits(rec.by_camp, camp_name),
            "by_role": _splits(rec.by_role, role_name),
            "lines": [_line(x) for x in rec.lines]}


def _rank(rows: list[Standing]) -> list[dict[str, Any]]:
    return [{"player": p.key, "name": p.name, "games": p.games, "wins": p.wins,
             "rate": round(p.rate, 6)} for p in rows]


def _season(s: SeasonRow | None) -> dict[str, Any] | None:
    return None if s is None else {"name": s.name, "started_at": _iso(s.started_at),
                                   "ended_at": _iso(s.ended_at)}


def tables(book: RecordBook, scope: Scope, *, min_games: int | None = None) -> dict[str, Any]:
    """Everything `wolfjudge stats` shows, as the JSON document (the judges' view)."""
    players = book.standings(scope, judge=True)
    board = book.leaderboard(scope, judge=True, top=None, minimum=min_games, players=players)
    sims = Simulations(book.store)
    boards = book.boards(scope)
    return {
        "community": book.host,
        "season": _season(scope.season),
        "seasons": [_season(s) for s in book.seasons()],
        "counted": sum(b.games for b in boards), "other": sum(b.other for b in boards),
        "min_games": board.min_games,
        "leaderboard": {"by_rate": _rank(board.by_rate), "by_games": _rank(board.by_games)},
        "players": [_player(p, r) for p, r in book.records(scope, judge=True,
                                                           players=players)],
        "boards": [_board(b, sims.side(b.board)) for b in boards],
        "refused": [{"game": g, "reason": why} for g, why in book.refused()],
    }


def text(doc: dict[str, Any], scope: Scope) -> str:
    """The tables in Chinese, for the terminal."""
    lines = [t("records.stats.head", scope=report.scope_text(scope.season),
               games=doc["counted"], other=doc["other"])]
    if doc["refused"]:
        lines.append(t("records.stats.refused", n=len(doc["refused"]),
                       games="、".join(r["game"] for r in doc["refused"])))
    rank = doc["leaderboard"]
    lines.append(t("records.rank_rate", min=doc["min_games"]))
    lines += [t("records.rank_rate_line", n=i, name=p["name"], games=p["games"],
                wins=p["wins"], rate=report.pct(p["rate"]))
              for i, p in enumerate(rank["by_rate"], 1)] or [
        t("records.rank_nobody", min=doc["min_games"])]
    lines.append(t("records.stats.players"))
    lines += [t("records.stats.player_line", name=p["name"],
                hidden=t("records.stats.hidden_mark") if p["hidden"] else "",
                games=p["games"], wins=p["wins"], rate=report.pct(p["rate"]),
                other=p["other"]) for p in doc["players"]]
    lines.append(t("records.stats.boards"))
    for b in doc["boards"]:
        other = t("records.page.board_other", n=b["other"]) if b["other"] else ""
        lines.append(t("records.stats.board_line", board=b["board"], games=b["games"],
                       other=other))
        for c in b["camps"]:
            sims = ""
            for run in b["simulated"]:
                found = next((x for x in run["camps"] if x["camp"] == c["camp"]), None)
                if found is not None:
                    sims += t("records.stats.sim_part",
                              agent=t(f"records.page.agents.{run['agent']}"),
                              games=run["games"], cell=_cell(found))
            lines.append(t("records.stats.camp_line", camp=c["name"], real=_cell(c),
                           sims=sims))
        if b["simulation"]:
            lines.append(t("records.stats.sim_note",
                           note=t(f"records.page.sim_{b['simulation']}")))
    return "\n".join(lines)


def _cell(c: dict[str, Any]) -> str:
    return t("records.page.cell", rate=report.pct(c["rate"], 1),
             low=report.pct(c["ci95"][0], 1), high=report.pct(c["ci95"][1], 1),
             wins=c["wins"], games=c["games"])


def write_csv(doc: dict[str, Any], book: RecordBook, path: Path) -> None:
    """One row a player's game (the judges' view), Chinese headers and words."""
    seasons = book.seasons()
    with path.open("w", newline="", encoding="utf-8-sig") as f:  # (the BOM: for Excel)
        out = csv.writer(f)
        out.writerow(text_data("records.csv"))
        for p in doc["players"]:
            for x in p["lines"]:
                out.writerow([_inert(cell) for cell in _csv_row(p, x, seasons)])


FORMULA_FIRST = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet runs as a formula


def _inert(cell: Any) -> Any:
    """A text cell a spreadsheet would run as a formula (a 马甲 `=1+2`, a season `@x`), with
    the apostrophe spreadsheets read as "text" before it (R-REC-10); anything else as it is."""
    return f"'{cell}" if isinstance(cell, str) and cell.startswith(FORMULA_FIRST) else cell


def _csv_row(p: dict[str, Any], x: dict[str, Any], seasons: list[SeasonRow]) -> list[Any]:
    ruleset = x["ruleset"]
    ended = datetime.fromisoformat(x["ended_at"])
    season = next((s.name for s in seasons if s.started_at <= ended
                   and (s.ended_at is None or ended < s.ended_at)), "")
    return [x["date"], x["game"], ruleset_name(ruleset), x["board"],
            t(f"records.outcome.{x['outcome']}"),
            camp_name(ruleset, x["winner"]) if x["winner"] else "", x["seat"], p["player"],
            x["name"] or "", role_name(ruleset, x["role"]) if x["role"] else "",
            camp_name(ruleset, x["camp"]) if x["camp"] else "",
            t(f"records.result.{x['result']}").strip() if x["result"] else "",
            cause_name(x["out_cause"]) if x["out_cause"] else "",
            phase_text(x["out_phase"]) if x["out_phase"] else "", x["yellow"],
            1 if x["red"] else 0, season]
