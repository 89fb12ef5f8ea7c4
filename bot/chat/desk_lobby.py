"""The lobby: 新游戏, 报名, 退出, 踢出, 开始 (a ChatBot mixin)."""

from __future__ import annotations

import logging
from datetime import UTC

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from bot.chat.common import JUDGE_VERBS, Turn
from bot.chat.desk import Desk
from bot.chat.lobby import (
    DEFAULT_PLAYERS,
    RULESETS,
    LobbyError,
    check_game,
    first_day,
    seat_order,
    split_options,
)
from bot.chat.texts import ruleset_name, t
from bot.commands.parse import Parsed
from bot.gametime import wall_clock, zone
from bot.service import GAME_ID, GameExists
from bot.store.models import Game, Lobby, LobbyPlayer
from bot.transport import Incoming

log = logging.getLogger(__name__)


class LobbyDesk(Desk):
    """The lobby (a part of ChatBot: its methods use ChatBot's state)."""

    # the lobby ---------------------------------------------------------------------------------
    def _new_game(self, msg: Incoming, p: Parsed, turn: Turn) -> None:
        if msg.sender not in self.judges:
            log.warning("新游戏 from %s refused (not a judge)", msg.sender)
            turn.say(msg.sender, t("judge_only"))
            return
        ruleset = RULESETS.get(p.words[0] if p.words else "")
        if ruleset is None:
            turn.say(msg.sender, t("bad_ruleset", name=(p.words or ("-",))[0][:20]))
            return
        players = p.count or DEFAULT_PLAYERS[ruleset]
        try:
            engine_opts, chat_opts = split_options(list(p.words[1:]))
            check_game(ruleset, players, engine_opts)
        except LobbyError as exc:
            turn.say(msg.sender, t(exc.key, **exc.fields))
            return
        now = msg.at.astimezone(UTC).replace(tzinfo=None)
        for _ in range(20):
            code = self.codes()
            try:
                with self.service.db.write() as s:
                    if s.get(Game, code) is not None:
                        continue
                    s.add(Lobby(code=code, ruleset=ruleset, players=players,
                                options=engine_opts, chat_options=chat_opts, judge=msg.sender,
                                time_zone=self.time_zone, status="open", created_at=now))
                break
            except IntegrityError:
                continue
        else:
            turn.say(msg.sender, t("busy"))
            return
        items = [f"{k}={v}" for k, v in {**engine_opts, **chat_opts}.items()]
        turn.say(msg.sender, t("created", ruleset=ruleset_name(ruleset), players=players,
                               code=code, options_text=t("created_options",
                                                         items=" ".join(items))))

    def _members(self, code: str) -> list[LobbyPlayer]:
        with self.service.db.read() as s:
            rows = list(s.scalars(select(LobbyPlayer).where(LobbyPlayer.code == code)
                                  .order_by(LobbyPlayer.joined)))
            for r in rows:
                s.expunge(r)
            return rows

    def _join(self, msg: Incoming, p: Parsed, turn: Turn) -> None:
        code = (p.words[0] if p.words else "").upper()
        lobby = self._lobby(code) if GAME_ID.fullmatch(code or "-") else None
        if lobby is None:
            turn.say(msg.sender, t("unknown_code", code=code[:16] or "-"))
            return
        name = p.text.strip()
        if not 0 < len(name) <= 32 or any(c.isspace() for c in name):
            turn.say(msg.sender, t("name_bad"))
            return
        members = self._members(code)
        mine = next((m for m in members if m.contact_id == msg.sender), None)
        if mine is not None:
            turn.say(msg.sender, t("already_joined", code=code, name=mine.forum_name))
            return
        if lobby.status != "open":
            turn.say(msg.sender, t("lobby_closed", code=code))
            return
        if any(m.forum_name == name for m in members):
            turn.say(msg.sender, t("name_taken", name=name))
            return
        if len(members) >= lobby.players:
            turn.say(msg.sender, t("game_full", code=code, players=lobby.players))
            return
        try:
            with self.service.db.write() as s:
                order = (s.scalar(select(func.max(LobbyPlayer.joined)).where(
                    LobbyPlayer.code == code)) or 0) + 1
                s.add(LobbyPlayer(code=code, contact_id=msg.sender, forum_name=name,
                                  joined=order))
        except IntegrityError:
            turn.say(msg.sender, t("name_taken", name=name))
            return
        n = len(members) + 1
        turn.say(msg.sender, t("joined", code=code, name=name, joined=n, players=lobby.players))
        turn.say(lobby.judge, t("joined_judge", code=code, name=name, joined=n,
                                players=lobby.players))

    def _lobby_verb(self, msg: Incoming, p: Parsed, code: str, judge: bool, turn: Turn) -> None:
        lobby = self._lobby(code)
        assert lobby is not None
        members = self._members(code)
        mine = next((m for m in members if m.contact_id == msg.sender), None)
        if p.verb == "leave" and mine is not None:
            with self.service.db.write() as s:
                row = s.get(LobbyPlayer, (code, msg.sender))
                if row is not None:
                    s.delete(row)
            turn.say(msg.sender, t("left", code=code))
            turn.say(lobby.judge, t("left_judge", code=code, name=mine.forum_name,
                                    joined=len(members) - 1, players=lobby.players))
            return
        if p.verb in ("status", "help") and mine is not None and not judge:
            turn.say(msg.sender, t("status_lobby", code=code, name=mine.forum_name,
                                   joined=len(members), players=lobby.players)
                     + ("\n" + t("help_lobby_player") if p.verb == "help" else ""))
            return
        if not judge:
            if p.verb in JUDGE_VERBS:
                log.warning("%s: judge command %s from %s refused", code, p.verb, msg.sender)
                turn.say(msg.sender, t("judge_only"))
            else:
                turn.say(msg.sender, t("game_not_started", code=code, joined=len(members),
                                       players=lobby.players))
            return
        if p.verb == "kick":
            target = next((m for m in members if m.forum_name == p.text.strip()), None)
            if target is None:
                turn.say(msg.sender, t("no_such_name", code=code, name=p.text.strip()[:32]))
                return
            with self.service.db.write() as s:
                row = s.get(LobbyPlayer, (code, target.contact_id))
                if row is not None:
                    s.delete(row)
            turn.say(target.contact_id, t("kicked", code=code))
            turn.say(msg.sender, t("kicked_judge", name=target.forum_name, code=code,
                                   joined=len(members) - 1, players=lobby.players))
            return
        if p.verb == "start":
            self._start(msg, lobby, members, turn)
            return
        if p.verb in ("status", "help"):
            names = "、".join(m.forum_name for m in members) or t("words.none")
            text = t("judge_status_lobby", code=code, joined=len(members),
                     players=lobby.players, names=names)
            turn.say(msg.sender, text + ("\n" + t("help_judge") if p.verb == "help" else ""))
            return
        if p.verb == "end":
            with self.service.db.write() as s:
                cancelled = s.get(Lobby, code)
                if cancelled is not None:
                    cancelled.status = "cancelled"
            for m in members:
                turn.say(m.contact_id, t("kicked", code=code))
            turn.say(msg.sender, t("received", what=t("cancelled", code=code)))
            return
        turn.say(msg.sender, t("game_not_started", code=code, joined=len(members),
                               players=lobby.players))

    def _start(self, msg: Incoming, lobby: Lobby, members: list[LobbyPlayer], turn: Turn) -> None:
        code = lobby.code
        if len(members) < lobby.players:
            turn.say(msg.sender, t("not_enough", code=code, players=lobby.players,
                                   joined=len(members)))
            return
        now = wall_clock(msg.at, zone(lobby.time_zone)).replace(second=0, microsecond=0)
        seed = self.seeds()
        order = seat_order(seed, [m.contact_id for m in members],
                           lobby.chat_options.get("deal.seats", "seed"))
        names = {m.contact_id: m.forum_name for m in members}
        bindings = {i + 1: (c, names[c]) for i, c in enumerate(order)}
        try:
            self.service.create_game(
                game_id=code, ruleset=lobby.ruleset, start=first_day(now), seed=seed,
                players=lobby.players, options=lobby.options, now=now,
                bindings=bindings, judge_contact=lobby.judge, time_zone=lobby.time_zone)
        except GameExists:
            return
        with self.service.db.write() as s:
            row = s.get(Lobby, code)
            assert row is not None
            row.status = "started"
        state = self.service.state(code)
        seats = "\n".join(t("seat_line", seat=n, name=names[c], contact=c)
                          for n, (c, _) in bindings.items())
        open_at = state.schedule.open_at(1).strftime("%m-%d %H:%M")
        turn.say(msg.sender, t("started_judge", code=code, open=open_at, seats=seats))
