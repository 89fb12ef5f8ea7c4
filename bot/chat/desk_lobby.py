"""The lobby: 新游戏, 报名, 退出, 踢出, 开始, and what a lobby answers before the start."""

from __future__ import annotations

import logging
from datetime import UTC
from typing import Any

from bot import access, options_text
from bot.chat.lobby import (
    DEFAULT_PLAYERS,
    RULESETS,
    LobbyError,
    channel_defaults,
    check_game,
    check_name,
    first_day,
    parse_roles,
    seat_order,
    split_options,
)
from bot.chat.verbs import FREE, GAME, JUDGE, LOBBY, PLAYER, DeskContext, Request, handles
from bot.feed import DEFAULT_FEED
from bot.gametime import utcnow, wall_clock, zone
from bot.ids import GAME_ID
from bot.service import GameExists
from bot.store.models import Lobby, LobbyPlayer
from bot.texts import contact_text, role_name, ruleset_name, t
from engine import rng
from engine.ruleset import get_ruleset

log = logging.getLogger(__name__)

# What a lobby's chat options hold beside the options (the rooms the judge was asked to make):
# a restarted game starts without them.
LOBBY_BOOKKEEPING = frozenset({"rooms_asked"})


class LobbyDesk:
    def __init__(self, ctx: DeskContext) -> None:
        self.ctx = ctx
        self.chats = ctx.chats

    # 新游戏 ------------------------------------------------------------------------------------
    def _by_hand(self, chat_opts: dict[str, Any]) -> bool:
        """Options that ask the judge to make rooms by hand where nobody can (the pages)."""
        return chat_opts.get("groups.mode") == "judge" and not (
            self.ctx.rooms.transport.rooms_by_hand)

    def join_url(self, lobby: Lobby) -> str | None:
        """The lobby's join link, where people join by link (the pages: bot/web/join.py)."""
        web = self.ctx.web
        if web is None or not self.ctx.rooms.transport.contacts_by_link:
            return None
        return web.url("join", lobby.code, "", None, lobby.join_epoch or 0)

    @handles("new_game", stage=FREE)
    def new_game(self, r: Request) -> None:
        if not access.may_create(r.who, self.ctx.judges):
            log.warning("新游戏 from %s refused (not a judge)", r.sender)
            r.say(t("judge_only"))
            return
        p = r.p
        ruleset = RULESETS.get(p.words[0] if p.words else "")
        if ruleset is None:
            r.say(t("bad_ruleset", name=(p.words or ("-",))[0][:20]))
            return
        players = p.count or DEFAULT_PLAYERS[ruleset]
        try:
            engine_opts, chat_opts = split_options(list(p.words[1:]), channel_defaults(
                self.ctx.rooms.transport.capabilities))
            check_game(ruleset, players, engine_opts)
        except LobbyError as exc:
            r.say(t(exc.key, **exc.fields))
            return
        if self._by_hand(chat_opts):
            r.say(t("no_rooms_by_hand"))
            return
        now = r.msg.at.astimezone(UTC).replace(tzinfo=None)
        code = self.chats.open_lobby(
            self.ctx.codes, ruleset=ruleset, players=players, options=engine_opts,
            chat_options=chat_opts, judge=r.sender, time_zone=self.ctx.time_zone,
            status="open", created_at=now)
        if code is None:
            r.say(t("busy"))
            return
        lobby = self.chats.lobby(code)
        url = self.join_url(lobby) if lobby is not None else None
        options = self._options(ruleset, engine_opts, chat_opts)
        if url is not None:
            r.say(t("created_by_link", ruleset=ruleset_name(ruleset), players=players,
                    code=code, url=url, options=options))
            return
        r.say(t("created", ruleset=ruleset_name(ruleset), players=players, code=code,
                options=options))

    # 报名链接: the lobby's join link, where people join by link -----------------------------------
    @handles("join_link", stage=LOBBY, role=JUDGE)
    def join_link(self, r: Request) -> None:
        """`报名链接` (the lobby's join link, for the forum or a group), `报名链接 重置` (a new
        one: the old one is refused from now on)."""
        lobby = r.lobby
        assert lobby is not None
        if self.join_url(lobby) is None:
            r.say(t("join_link.none", code=lobby.code))
            return
        if r.p.words and r.p.words[0] == "reset":
            self.chats.reset_join(lobby.code)
            fresh = self.chats.lobby(lobby.code)
            assert fresh is not None
            r.say(t("join_link.reset", code=lobby.code, url=self.join_url(fresh)))
            return
        r.say(t("join_link.show", code=lobby.code, url=self.join_url(lobby)))

    @handles("join_link", stage=GAME, role=JUDGE)
    def join_link_started(self, r: Request) -> None:
        r.say(t("join_link.started", code=r.code))

    # 报名, 退出 -------------------------------------------------------------------------------
    @handles("join", stage=FREE)
    def join(self, r: Request) -> None:
        p = r.p
        code = (p.words[0] if p.words else "").upper()
        lobby = self.chats.lobby(code) if GAME_ID.fullmatch(code or "-") else None
        if lobby is None:
            r.say(t("unknown_code", code=code[:16] or "-"))
            return
        name = p.text.strip()
        try:
            check_name(name)
        except LobbyError as exc:
            r.say(t(exc.key, **exc.fields))
            return
        members = self.chats.members(code)
        mine = next((m for m in members if m.contact_id == r.sender), None)
        if mine is not None:
            if mine.forum_name == name and lobby.status == "open":
                # The same 报名 again (resent, or handed over again after a crash that came
                # before its answer was committed): it stands, answered as it was.
                r.say(t(self._joined, code=code, name=name, joined=len(members),
                        players=lobby.players))
                return
            r.say(t("already_joined", code=code, name=mine.forum_name))
            return
        if lobby.status != "open":
            r.say(t("lobby_closed", code=code))
            return
        if any(m.forum_name == name for m in members):
            r.say(t("name_taken", name=name))
            return
        if len(members) >= lobby.players:
            r.say(t("game_full", code=code, players=lobby.players))
            return
        if not self.chats.join(code, r.sender, name):
            r.say(t("name_taken", name=name))
            return
        r.say(t(self._joined, code=code, name=name, joined=len(members) + 1,
                players=lobby.players))
        self._tell_joins(lobby)

    @property
    def _joined(self) -> str:
        """The words of a join: where the player will read their seat (a DM, or their page
        where people join by link)."""
        return "joined_page" if self.ctx.rooms.transport.contacts_by_link else "joined"

    def _tell_joins(self, lobby: Lobby) -> None:
        """The judge hears who has joined (or left) as a summary, `报名 7/12：…`, at most once
        a minute: a summary waits a minute (from the join, or from the last summary) and later
        joins update it; a full lobby is told at once (the judge can start)."""
        names = [m.forum_name for m in self.chats.members(lobby.code)]
        full = len(names) >= lobby.players
        text = t("joins_judge", code=lobby.code, joined=len(names), players=lobby.players,
                 names="、".join(names) or t("words.none"))
        if full:
            text += "\n" + t("joins_full")
        self.chats.summary(f"lobby/{lobby.code}/joins/", lobby.judge, text, now=utcnow(),
                           at_once=full)

    def _member(self, r: Request) -> LobbyPlayer | None:
        assert r.code is not None
        return next((m for m in self.chats.members(r.code) if m.contact_id == r.sender), None)

    @handles("leave", stage=LOBBY, role=PLAYER)
    def leave(self, r: Request) -> None:
        assert r.lobby is not None and r.code is not None
        if self._member(r) is None:
            self.not_started(r)
            return
        self.chats.leave(r.code, r.sender)
        r.say(t("left", code=r.code))
        self._tell_joins(r.lobby)

    @handles("status", "help", stage=LOBBY, role=PLAYER)
    def player_status(self, r: Request) -> None:
        assert r.lobby is not None
        mine = self._member(r)
        if mine is None:
            self.not_started(r)
            return
        joined = len(self.chats.members(r.lobby.code))
        r.say(t("status_lobby", code=r.lobby.code, name=mine.forum_name, joined=joined,
                players=r.lobby.players)
              + ("\n" + t("help_lobby_player") if r.p.verb == "help" else ""))

    def not_started(self, r: Request) -> None:
        """What a lobby says to a command that needs a game under way."""
        assert r.lobby is not None
        r.say(t("game_not_started", code=r.lobby.code,
                joined=len(self.chats.members(r.lobby.code)), players=r.lobby.players))

    # the judge's lobby --------------------------------------------------------------------------
    @handles("status", "help", stage=LOBBY, role=JUDGE)
    def judge_status(self, r: Request) -> None:
        assert r.lobby is not None
        members = self.chats.members(r.lobby.code)
        names = "、".join(m.forum_name for m in members) or t("words.none")
        text = t("judge_status_lobby", code=r.lobby.code, joined=len(members),
                 players=r.lobby.players, names=names)
        r.say(text + ("\n" + t("help_judge") if r.p.verb == "help" else ""))

    @handles("kick", stage=LOBBY, role=JUDGE)
    def kick(self, r: Request) -> None:
        assert r.lobby is not None and r.code is not None
        members = self.chats.members(r.code)
        target = next((m for m in members if m.forum_name == r.p.text.strip()), None)
        if target is None:
            r.say(t("no_such_name", code=r.code, name=r.p.text.strip()[:32]))
            return
        self.chats.leave(r.code, target.contact_id)
        self.chats.set_undo(r.code, {"kind": "kick", "contact": target.contact_id,
                                     "name": target.forum_name})
        r.tell(target.contact_id, t("kicked", code=r.code))
        r.say(t("kicked_judge", name=target.forum_name, code=r.code, joined=len(members) - 1,
                players=r.lobby.players))

    @handles("undo", stage=LOBBY, role=JUDGE)
    def undo_kick(self, r: Request) -> None:
        """`撤销` (or `撤销 踢出`) before the start (P-UNDO-6): the last kicked player joins
        again under the same 马甲, if the lobby has room and the name is free; they are told."""
        assert r.lobby is not None and r.code is not None
        code, lobby = r.code, r.lobby
        action = lobby.undo or {}
        if (r.p.words and r.p.words[0] != "kick") or action.get("kind") != "kick":
            r.say(t("undo.no_kick"))
            return
        contact, name = action["contact"], action["name"]
        members = self.chats.members(code)
        if any(m.contact_id == contact for m in members):
            self.chats.set_undo(code, None)
            r.say(t("undo.kick_back", name=name))
            return
        if len(members) >= lobby.players:
            r.say(t("undo.kick_full", name=name, players=lobby.players))
            return
        if not self.chats.join(code, contact, name):
            r.say(t("undo.kick_name_taken", name=name))
            return
        self.chats.set_undo(code, None)
        r.tell(contact, t("undo.kick_told", code=code, name=name))
        r.say(t("undo.kick_done", name=name, code=code, joined=len(members) + 1,
                players=lobby.players))

    @handles("end", stage=LOBBY, role=JUDGE)
    def cancel(self, r: Request) -> None:
        assert r.code is not None
        members = self.chats.members(r.code)
        self.chats.set_status(r.code, "cancelled")
        for m in members:
            r.tell(m.contact_id, t("kicked", code=r.code))
        r.say(t("received", what=t("cancelled", code=r.code)))

    # 重开: a finished game's lobby again, with its players ------------------------------------
    @handles("restart", stage=FREE)
    def restart(self, r: Request) -> None:
        """`重开 [CODE]` (docs/rules-judge.md P-LOBBY-4): a new lobby with the rules of a game
        that is over (its options, its role set, its judge) and its players joined under the
        same 马甲; each is told and may `退出`. Without a code: the sender's latest game over."""
        if not access.may_create(r.who, self.ctx.judges):
            r.say(t("judge_only"))
            return
        old = self._judged_lobby(r)
        if old is None or not self._over(old.code):
            r.say(t("restart_none"))
            return
        if self._restarted(r, old):
            return
        now = r.msg.at.astimezone(UTC).replace(tzinfo=None)
        kept = {k: v for k, v in old.chat_options.items() if k not in LOBBY_BOOKKEEPING}
        new = self.chats.open_lobby(
            self.ctx.codes, ruleset=old.ruleset, players=old.players, options=old.options,
            chat_options=kept, judge=old.judge, time_zone=old.time_zone,
            status="open", created_at=now)
        if new is None:
            r.say(t("busy"))
            return
        if not self.chats.mark_restarted(old.code, new, replacing=old.restarted_as):
            self.chats.set_status(new, "cancelled")  # another 重开 made it meanwhile
            fresh = self.chats.lobby(old.code)
            r.say(t("restart_done", old=old.code, code=fresh.restarted_as if fresh else "-"))
            return
        if old.roles:
            self.chats.set_lobby_rules(new, roles=list(old.roles), players=old.players)
        missing = []
        seated = sorted(self.chats.players(old.code).items())
        for _seat, (contact, name) in seated:
            if contact is None or name is None or not self.chats.join(new, contact, name):
                missing.append(name or "?")
                continue
            r.tell(contact, t("restarted_player", old=old.code, code=new, name=name))
        joined = len(seated) - len(missing)
        r.say(t("restarted", old=old.code, code=new, joined=joined, players=old.players,
                missing=t("restarted_missing", names="、".join(missing)) if missing else ""))

    def _restarted(self, r: Request, old: Lobby) -> bool:
        """A game is restarted once (P-LOBBY-4): a later `重开` points to the lobby it made
        (unless that lobby was cancelled before its start)."""
        made = self.chats.lobby(old.restarted_as) if old.restarted_as else None
        if made is None or made.status == "cancelled":
            return False
        r.say(t("restart_done", old=old.code, code=made.code))
        return True

    # 复盘: the whole game as forum posts, once it is over ---------------------------------------
    @handles("replay", stage=FREE)
    def replay(self, r: Request) -> None:
        """`复盘 [CODE]` (docs/rules-judge.md P-REPLAY-1): a game over, as forum posts for
        its judge to paste; refused while it runs (it reveals every role)."""
        from bot.chat.recap import POST_LIMIT, replay_posts

        if not access.may_create(r.who, self.ctx.judges):
            r.say(t("judge_only"))
            return
        lobby = self._judged_lobby(r)
        if lobby is None or lobby.status != "started":
            r.say(t("replay.none"))
            return
        code = lobby.code
        if not self._over(code):
            r.say(t("replay.not_over", code=code))
            return
        service = self.ctx.service
        names = {n: name for n, (_, name) in self.chats.players(code).items()}
        posts = replay_posts(code, service.state(code), service.game_log(code), names)
        r.say(t("replay.sent", n=len(posts), limit=POST_LIMIT))
        for post in posts:
            r.say(post)

    def _judged_lobby(self, r: Request) -> Lobby | None:
        """The lobby `重开` or `复盘` names (`CODE`, else the sender's latest game over), if
        the sender judges it."""
        code = (r.p.words[0] if r.p.words else "").upper()
        if not code:
            latest = self.chats.finished_judged(r.sender)
            code = latest[0] if latest else ""
        lobby = self.chats.lobby(code) if GAME_ID.fullmatch(code or "-") else None
        if lobby is None or not access.is_judge(r.sender, self.ctx.judges, lobby.judge):
            return None
        return lobby

    def _over(self, code: str) -> bool:
        try:
            return self.ctx.service.state(code).over
        except Exception:  # no game (a lobby cancelled before its start)
            return False

    # 设置, 角色: the judge changes the game before the start (docs/rules-judge.md P-LOBBY) ------
    @handles("set_options", stage=LOBBY, role=JUDGE)
    def set_options(self, r: Request) -> None:
        """`设置 key=value …`: the options change, checked as `新游戏` checks them (with the
        lobby's roles); `设置` alone shows them. Whoever joined is told what changed."""
        lobby = r.lobby
        assert lobby is not None
        items = list(r.p.words)
        if not items:
            r.say(self._rules(lobby))
            return
        try:
            engine_new, chat_all = split_options(items)
            given = {i.partition("=")[0].strip() for i in items}
            chat_new = {k: v for k, v in chat_all.items() if k in given}
            options = {**lobby.options, **engine_new}
            check_game(lobby.ruleset, lobby.players, options, lobby.roles)
        except LobbyError as exc:
            r.say(t("bad_setting" if exc.key == "bad_option" else exc.key, **exc.fields))
            return
        if self._by_hand(chat_new):
            r.say(t("no_rooms_by_hand"))
            return
        self.chats.set_lobby_rules(lobby.code, options=options,
                                   chat_options={**lobby.chat_options, **chat_new})
        self._changed(r, lobby.code, t("options_changed_separator").join(
            options_text.describe({**engine_new, **chat_new}, lobby.ruleset)))

    @handles("set_roles", stage=LOBBY, role=JUDGE)
    def set_roles(self, r: Request) -> None:
        """`角色 狼人×3 预言家 …`: the lobby's own role set (the seat count follows), checked
        as `新游戏` checks a game; `角色` alone shows the rules."""
        lobby = r.lobby
        assert lobby is not None
        if not r.p.text.strip():
            r.say(self._rules(lobby))
            return
        try:
            roles = parse_roles(lobby.ruleset, r.p.text)
            check_game(lobby.ruleset, len(roles), lobby.options, roles)
        except LobbyError as exc:
            r.say(t(exc.key, **exc.fields))
            return
        joined = len(self.chats.members(lobby.code))
        if joined > len(roles):
            r.say(t("too_many_joined", code=lobby.code, joined=joined, players=len(roles)))
            return
        self.chats.set_lobby_rules(lobby.code, roles=roles)
        self._changed(r, lobby.code, self._roles_text(lobby.ruleset, roles))

    def _changed(self, r: Request, code: str, what: str) -> None:
        """The judge gets the rules as they now are; whoever joined is told what changed."""
        for m in self.chats.members(code):
            r.tell(m.contact_id, t("lobby_rules_changed", code=code, what=what))
        lobby = self.chats.lobby(code)
        assert lobby is not None
        r.say(self._rules(lobby))

    def _rules(self, lobby: Lobby) -> str:
        roles = (self._roles_text(lobby.ruleset, lobby.roles) if lobby.roles
                 else t("roles_preset", roles=self._preset_text(lobby)))
        return t("lobby_rules", code=lobby.code, ruleset=ruleset_name(lobby.ruleset),
                 players=lobby.players, roles=roles,
                 options=self._options(lobby.ruleset, lobby.options, lobby.chat_options))

    @staticmethod
    def _options(ruleset: str, options: dict[str, Any], chat_options: dict[str, Any]) -> str:
        """The game's options in words: the rules' options set away from their default, and
        the bot's own (how votes, rooms and the public posts go), then how to change them."""
        lines = options_text.describe(
            {**options_text.changed(options, ruleset), **chat_options}, ruleset)
        return t("options_list", items="\n".join(lines)) if lines else t("no_options")

    def _preset_text(self, lobby: Lobby) -> str:
        """The roles the preset deals for the lobby's count and options (what `开始` deals
        when the judge set none), as `角色` writes them: a ready example for the judge."""
        try:
            roles = get_ruleset(lobby.ruleset).preset(lobby.players, dict(lobby.options))
        except (KeyError, ValueError) as exc:  # a count the lobby's checks let through only
            log.info("no preset for %s: %s", lobby.code, exc)
            return "?"
        return self._roles_text(lobby.ruleset, roles)

    @staticmethod
    def _roles_text(ruleset: str, roles: list[str]) -> str:
        counts: dict[str, int] = {}
        for role in roles:
            counts[role] = counts.get(role, 0) + 1
        return " ".join(role_name(ruleset, k) + (f"×{n}" if n > 1 else "")
                        for k, n in counts.items())

    @handles("start", stage=LOBBY, role=JUDGE)
    def start(self, r: Request) -> None:
        lobby = r.lobby
        assert lobby is not None
        code = lobby.code
        members = self.chats.members(code)
        if len(members) < lobby.players:
            r.say(t("not_enough", code=code, players=lobby.players, joined=len(members)))
            return
        now = wall_clock(r.msg.at, zone(lobby.time_zone)).replace(second=0, microsecond=0)
        seed = self.ctx.seeds()
        order = seat_order(seed, [m.contact_id for m in members],
                           lobby.chat_options.get("deal.seats", "seed"))
        names = {m.contact_id: m.forum_name for m in members}
        bindings = {i + 1: (c, names[c]) for i, c in enumerate(order)}
        try:
            # the judge's own role set is dealt as a preset is: shuffled with the seed
            dealt = rng.shuffled(seed, 0, list(lobby.roles)) if lobby.roles else None
            self.ctx.service.create_game(
                game_id=code, ruleset=lobby.ruleset, start=first_day(now), seed=seed,
                players=None if dealt else lobby.players, roles=dealt,
                options=lobby.options, now=now,
                bindings=bindings, judge_contact=lobby.judge, time_zone=lobby.time_zone,
                judge_feed=self._feed(lobby),
                dm_out=lobby.chat_options.get("public.dm_out") == "true")
        except GameExists:
            return
        self.chats.set_status(code, "started")
        state = self.ctx.service.state(code)
        seats = "\n".join(t("seat_line", seat=n, name=names[c], contact=contact_text(c),
                             role=role_name(state.ruleset, state.seat(n).role))
                          for n, (c, _) in bindings.items())
        open_at = state.schedule.open_at(1).strftime("%m-%d %H:%M")
        r.say(t("started_judge", code=code, open=open_at, seats=seats))

    def _feed(self, lobby: Lobby) -> str:
        """The feed a game starts with: set in its lobby, else the judge's default."""
        return str(lobby.chat_options.get("judge.feed") or self.chats.own_feed(lobby.judge)
                   or DEFAULT_FEED)
