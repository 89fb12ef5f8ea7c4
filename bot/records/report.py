"""The records in Chinese words (bot/texts.yaml `records`): a board's name, a record's line,
and the chat's answers to `战绩` and `排行` (one short message each)."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from bot.chat.reports import cause_name
from bot.gametime import wall_clock, zone
from bot.records.summary import read_board
from bot.records.tables import Leaderboard, Record, Standing, rate
from bot.store.records import Line, SeasonRow
from bot.texts import camp_name, phase_text, role_name, ruleset_name, t

RECENT = 5  # the games a chat record lists


def pct(x: float, digits: int | None = None) -> str:
    """A share as people write it: 58%, 100%, 7.5% (one decimal below 10 %, or `digits`)."""
    value = x * 100
    if digits is None:
        digits = 1 if 0 < value < 10 else 0
    return t("records.rate", pct=f"{value:.{digits}f}")


def board_label(board: str) -> str:
    """`经典12人`, `标准12人（standard.board=预女猎守）`, `经典10人（角色：狼人×3 …）`."""
    parts = read_board(board)
    ruleset = parts["ruleset"]
    extra = ""
    if parts.get("roles"):
        counts: dict[str, int] = {}
        for role in parts["roles"]:
            counts[role] = counts.get(role, 0) + 1
        extra = t("records.board_roles", roles=" ".join(
            role_name(ruleset, r) + (f"×{n}" if n > 1 else "") for r, n in counts.items()))
    elif parts.get("options"):
        extra = t("records.board_options", items=" ".join(
            f"{k}={_value(v)}" for k, v in parts["options"].items()))
    try:
        name = ruleset_name(ruleset)
    except Exception:  # a ruleset this engine lacks
        name = ruleset
    return t("records.board", ruleset=name, players=parts["players"], extra=extra)


def _value(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def scope_text(season: SeasonRow | None) -> str:
    if season is None:
        return t("records.scope_all")
    key = "records.scope_season_open" if season.ended_at is None else "records.scope_season"
    return t(key, name=season.name)


def result_text(line: Line) -> str:
    key = line.result if line.outcome == "won" and line.result else line.outcome
    return t(f"records.result.{key}")


def out_text(line: Line) -> str:
    if line.outcome == "halted" or line.role is None:
        return ""
    if line.out_cause is None:  # (alive when the judge ended it: nothing to say)
        return t("records.alive") if line.outcome == "won" else ""
    return t("records.out", phase=phase_text(line.out_phase or ""),
             cause=cause_name(line.out_cause))


def cards_text(line: Line) -> str:
    return (t("records.yellow", n=line.yellow) if line.yellow else "") + (
        t("records.red") if line.red else "")


def line_text(line: Line) -> str:
    role = role_name(line.ruleset, line.role) if line.role else ""
    camp = t("records.line_camp", camp=camp_name(line.ruleset, line.camp)) if line.camp else ""
    return t("records.line", date=line.ended_on.strftime("%m-%d"), code=line.game_id,
             board=board_label(line.board), seat=line.seat, name=line.name or "",
             role=role, camp=camp, result=result_text(line), out=out_text(line),
             cards=cards_text(line))


def _splits(table: dict[tuple[str, str], Any], namer: Any) -> str:
    merged: dict[str, list[int]] = {}
    for (ruleset, key), split in sorted(table.items(), key=lambda kv: (-kv[1].games, kv[0])):
        name = namer(ruleset, key)
        games, wins = merged.get(name, [0, 0])
        merged[name] = [games + split.games, wins + split.wins]
    return t("records.separator").join(
        t("records.split", name=name, games=g, wins=w) for name, (g, w) in merged.items())


def record_text(rec: Record, *, mine: bool, scope: SeasonRow | None,
                season: Record | None = None, current: SeasonRow | None = None,
                hidden_note: str = "") -> str:
    """The answer to `战绩` (`mine`) or `战绩 马甲`: the totals, by camp and role (by name:
    the same role of two rulesets is one line), the latest games."""
    head = "records.head_mine" if mine else "records.head_other"
    lines = [t(head, name=rec.name, scope=scope_text(scope), games=rec.games,
               wins=rec.wins, rate=pct(rec.rate))]
    if hidden_note:
        lines.append(hidden_note)
    if current is not None:  # the open season's line, 0 games too
        games, wins = (season.games, season.wins) if season is not None else (0, 0)
        lines.append(t("records.season_line", name=current.name, games=games, wins=wins,
                       rate=pct(rate(wins, games))))
    if rec.by_camp:
        lines.append(t("records.by_camp", items=_splits(rec.by_camp, camp_name)))
    if rec.by_role:
        lines.append(t("records.by_role", items=_splits(rec.by_role, role_name)))
    if rec.other:
        lines.append(t("records.other", n=rec.other))
    recent = rec.lines[:RECENT]
    lines.append(t("records.recent", n=len(recent)))
    lines += [line_text(x) for x in recent]
    return "\n".join(lines)


def _name(p: Standing) -> str:
    """A player in a list: hidden ones appear only in the judges' view, marked so."""
    return p.name + (t("records.stats.hidden_mark") if p.hidden else "")


def ranking_text(board: Leaderboard, scope: SeasonRow | None, counted: int,
                 link: str | None) -> str:
    """The answer to `排行`: the top by win rate (with the minimum) and by games."""
    if not counted:
        return t("records.rank_none") + ("\n" + t("records.rank_link", url=link)
                                         if link else "")
    lines = [t("records.rank_head", scope=scope_text(scope), games=counted),
             t("records.rank_rate", min=board.min_games)]
    lines += [t("records.rank_rate_line", n=i, name=_name(p), games=p.games, wins=p.wins,
                rate=pct(p.rate)) for i, p in enumerate(board.by_rate, 1)] or [
        t("records.rank_nobody", min=board.min_games)]
    lines.append(t("records.rank_games"))
    lines += [t("records.rank_games_line", n=i, name=_name(p), games=p.games)
              for i, p in enumerate(board.by_games, 1)]
    if link:
        lines.append(t("records.rank_link", url=link))
    return "\n".join(lines)


def season_dates(season: SeasonRow, time_zone: str) -> tuple[str, str]:
    """A season's start and end as dates on the community's clock."""
    tz = zone(time_zone)
    start = wall_clock(season.started_at.replace(tzinfo=UTC), tz).strftime("%Y-%m-%d")
    end = "" if season.ended_at is None else wall_clock(
        season.ended_at.replace(tzinfo=UTC), tz).strftime("%Y-%m-%d")
    return start, end


def seasons_text(seasons: list[SeasonRow], time_zone: str) -> str:
    items = []
    for s in seasons:
        start, end = season_dates(s, time_zone)
        items.append(t("records.season_item_open", name=s.name, start=start) if not end
                     else t("records.season_item", name=s.name, start=start, end=end))
    return t("records.season_list", items=t("records.separator").join(items)
             or t("records.no_seasons"))
