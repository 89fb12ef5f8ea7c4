"""A community's records in chat (issue 31, docs/records.md): `战绩`, `战绩 马甲`, `战绩 隐藏`
/ `战绩 公开`, `排行 [赛季|全部]`, and the judges' `赛季 开始 NAME` / `赛季 结束`.

Every answer is one short message, by DM (said in a room, the chat bot's routing answers where
to send them, as for every DM command: bot/chat/bot.py `_in_room`). A record is found by a
马甲 used in a finished game, never by a contact id, and shows no contact id; a player who
hides their records is 匿名 to everyone but the judges (the bot's judges: a community's
judges)."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

from bot.chat.verbs import FREE, DeskContext, Request, handles
from bot.commands.vocabulary import VERBS
from bot.records import report
from bot.records.book import ALL, RecordBook, Scope
from bot.texts import t

SEASON_NAME = 16  # characters at most
CHAT_TOP = 5  # each of `排行`'s lists in chat (the community page has more)
# the words `排行` reads itself, and the community page's word for all games (`?s=`)
RESERVED = (*VERBS["ranking"].choices, t("records.page.all"))


def new_slug() -> str:
    return secrets.token_urlsafe(12)


class RecordsDesk:
    def __init__(self, ctx: DeskContext) -> None:
        self.ctx = ctx
        self.book = RecordBook(ctx.service)
        # A game that ends is recorded then (its export verified once): every commit the
        # chat bot's service makes, the scheduler's ticks included.
        ctx.service.on_commit_state.append(self.book.on_commit)

    def _judge(self, r: Request) -> bool:
        return r.sender in self.ctx.judges

    @staticmethod
    def _at(r: Request) -> datetime:
        return r.msg.at.astimezone(UTC).replace(tzinfo=None)

    def link(self) -> str | None:
        """The community page's address, when the pages are on."""
        web = self.ctx.web
        if web is None:
            return None
        return web.community(self.book.store.slug(self.book.host, new_slug))

    # 战绩 --------------------------------------------------------------------------------------
    @handles("records", stage=FREE)
    def records(self, r: Request) -> None:
        choice = r.p.words[0] if r.p.words else None
        if choice in ("hide", "show"):
            self.book.set_hidden(r.sender, choice == "hide")
            r.say(t("records.hide_done" if choice == "hide" else "records.show_done"))
            return
        self.book.sync()
        if r.p.text:
            self._someone(r, r.p.text)
            return
        rec = self.book.record_of(r.sender)
        if rec is None:
            r.say(t("records.none_mine"))
            return
        current = self.book.current()
        season = self.book.record_of(r.sender, Scope(current)) if current else None
        note = t("records.mine_hidden") if r.sender in self.book.hidden() else ""
        r.say(report.record_text(rec, mine=True, scope=None, current=current,
                                 season=season,
                                 hidden_note=note))

    def _someone(self, r: Request, name: str) -> None:
        judge = self._judge(r)
        contact = self.book.find(name, judge=judge)
        rec = None if contact is None else self.book.record_of(contact)
        if contact is None or rec is None:
            r.say(t("records.none_name", name=name[:32]))
            return
        note = t("records.judge_sees_hidden") if contact in self.book.hidden() else ""
        r.say(report.record_text(rec, mine=False, scope=None, hidden_note=note))

    # 排行 --------------------------------------------------------------------------------------
    @handles("ranking", stage=FREE)
    def ranking(self, r: Request) -> None:
        choice = r.p.words[0] if r.p.words else None
        if choice == "relink":
            if not self._judge(r):
                r.say(t("judge_only"))
                return
            slug = self.book.store.new_slug(self.book.host, new_slug)
            web = self.ctx.web
            r.say(t("records.relinked", url=web.community(slug)) if web
                  else t("records.relink_off"))
            return
        self.book.sync()
        if choice == "all":
            scope = ALL
        elif r.p.text:
            season = self.book.season(r.p.text)
            if season is None:
                names = "、".join(s.name for s in self.book.seasons()) or t("records.no_seasons")
                r.say(t("records.unknown_season", name=r.p.text[:32], names=names))
                return
            scope = Scope(season)
        else:
            scope = Scope(self.book.current())
        judge = self._judge(r)
        board = self.book.leaderboard(scope, judge=judge, top=CHAT_TOP)
        counted, _ = self.book.counts(scope)
        r.say(report.ranking_text(board, scope.season, counted, self.link()))

    # 赛季 --------------------------------------------------------------------------------------
    @handles("season", stage=FREE)
    def season(self, r: Request) -> None:
        choice = r.p.words[0] if r.p.words else None
        if choice is None:
            r.say(report.seasons_text(self.book.seasons(), self.ctx.time_zone))
            return
        if not self._judge(r):
            r.say(t("judge_only"))
            return
        if choice == "end":
            self.book.sync()
            ended = self.book.end_season(self._at(r), r.sender)
            if ended is None:
                r.say(t("records.season_none_open"))
                return
            start, end = report.season_dates(ended, self.ctx.time_zone)
            counted, _ = self.book.counts(Scope(ended))
            r.say(t("records.season_ended", name=ended.name, start=start, end=end,
                    games=counted))
            return
        name = r.p.text.strip()
        if not name:
            r.say(t("records.season_need_name"))
            return
        if len(name) > SEASON_NAME or any(c.isspace() for c in name) or name in RESERVED:
            r.say(t("records.season_name_bad"))
            return
        self.book.sync()  # the games over so far belong before the season
        got = self.book.start_season(name, self._at(r), r.sender)
        if got == "open":
            current = self.book.current()
            r.say(t("records.season_open", name=current.name if current else name))
        elif got == "taken":
            r.say(t("records.season_taken", name=name))
        else:
            r.say(t("records.season_started", name=name))

