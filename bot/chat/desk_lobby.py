"""The lobby: 新游戏, 报名, 退出, 踢出, 开始 (a ChatBot mixin)."""

from __future__ import annotations

import logging
from datetime import UTC, timedelta

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
from bot.clock import utcnow
from bot.commands.parse import Parsed
from bot.feed import DEFAULT_FEED
from bot.gametime import wall_clock, zone
from bot.outbox import DIGEST
from bot.service import GAME_ID, GameExists
from bot.store.models import Game, JudgeSetting, Lobby, LobbyPlayer, OutboxRow
from bot.texts import role_name, ruleset_name, t
from bot.transport import Incoming

log = logging.getLogger(__name__)
JOINS_EVERY = timedelta(minutes=1)  # the judge's summary of joins, at most this often
JOINS_MARGIN = timedelta(seconds=5)  # a summary due sooner may be on its way: not changed


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
        self._tell_joins(lobby)

    def _tell_joins(self, lobby: Lobby) -> None:
        """The judge hears who has joined (or left) as a summary, `报名 7/12：…`, at most once
        a minute: a summary waits a minute (from the join, or from the last summary) and later
        joins update it; a full lobby is told at once (the judge can start). Its outbox row is
        a DIGEST: while it waits, the judge's other messages go on."""
        names = [m.forum_name for m in self._members(lobby.code)]
        full = len(names) >= lobby.players
        text = t("joins_judge", code=lobby.code, joined=len(names), players=lobby.players,
                 names="、".join(names) or t("words.none")) + ("\n" + t("joins_full")
                                                              if full else "")
        prefix = f"lobby/{lobby.code}/joins/"
        now = utcnow()
        with self.service.db.write() as s:
            last = s.scalars(select(OutboxRow).where(OutboxRow.dedupe_key.like(prefix + "%"))
                             .order_by(OutboxRow.id.desc()).limit(1)).first()
            if last is not None and last.sent_at is None and (
                    last.next_attempt_at > now + JOINS_MARGIN):
                last.text = text  # still waiting for its minute: it says the latest
                if full:
                    last.next_attempt_at = now
                return
            due = now if full else now + JOINS_EVERY
            if last is not None and not full:
                # a minute after the last one went (or will go, if it is on its way)
                due = max(due, (last.sent_at or last.next_attempt_at) + JOINS_EVERY)
            count = s.scalar(select(func.count()).select_from(OutboxRow).where(
                OutboxRow.dedupe_key.like(prefix + "%"))) or 0
            s.add(OutboxRow(dedupe_key=f"{prefix}{count + 1}", game_id=None, seq=None,
                            channel="dm", target=f"contact:{lobby.judge}"[:160],
                            address=lobby.judge, text=text, created_at=now, attempts=0,
                            next_attempt_at=due, priority=DIGEST, turn=None))

    def _judge_feed(self, lobby: Lobby) -> str:
        """The feed a game starts with: set in its lobby, else the judge's default."""
        chosen = lobby.chat_options.get("judge.feed")
        if chosen:
            return str(chosen)
        with self.service.db.read() as s:
            own = s.get(JudgeSetting, lobby.judge)
            return own.judge_feed if own is not None else DEFAULT_FEED

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
            self._tell_joins(lobby)
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
                bindings=bindings, judge_contact=lobby.judge, time_zone=lobby.time_zone,
                judge_feed=self._judge_feed(lobby),
                dm_out=lobby.chat_options.get("public.dm_out") == "true")
        except GameExists:
            return
        with self.service.db.write() as s:
            row = s.get(Lobby, code)
            assert row is not None
            row.status = "started"
        state = self.service.state(code)
        seats = "\n".join(t("seat_line", seat=n, name=names[c], contact=c,
                             role=role_name(state.ruleset, state.seat(n).role))
                           for n, (c, _) in bindings.items())
        open_at = state.schedule.open_at(1).strftime("%m-%d %H:%M")
        turn.say(msg.sender, t("started_judge", code=code, open=open_at, seats=seats))
