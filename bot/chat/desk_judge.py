"""Judges: their commands, the forum thread, ending, export, substitution (a ChatBot mixin)."""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.chat import views
from bot.chat.common import END_CONFIRM, Turn
from bot.chat.desk import Desk
from bot.chat.lobby import new_token
from bot.commands.convert import ConvertError, judge_command
from bot.commands.parse import Parsed
from bot.feed import DEFAULT_FEED, feed_name, feed_of
from bot.forum.reader import thread_id
from bot.forum.votes import CHANNEL as FORUM_AUTO
from bot.store.models import Game, JudgeSetting, Lobby, OutboxRow, Player, SeatToken
from bot.texts import t
from bot.transport import Incoming
from engine import commands as engine_commands
from engine.model import GameState

log = logging.getLogger(__name__)


class JudgeDesk(Desk):
    """Judges (a part of ChatBot: its methods use ChatBot's state)."""

    # judge commands ----------------------------------------------------------------------------
    def _judge_verb(self, msg: Incoming, p: Parsed, gid: str, turn: Turn) -> None:
        state = self.service.state(gid)
        now = self._wall(gid, msg.at)
        if p.verb == "status":
            with self.service.db.read() as s:
                players = {r.seat: (r.contact_id, r.forum_name) for r in s.scalars(
                    select(Player).where(Player.game_id == gid))}
            turn.say(msg.sender, views.judge_status(state, gid, players))
            return
        if p.verb == "help":
            turn.say(msg.sender, t("help_judge"))
            return
        if p.verb == "tally":
            text = views.vote_tally(state, gid, now)
            if self._chat_option(gid, "votes.channel") == FORUM_AUTO and state.phase.startswith(
                    "D"):
                text += "\n" + self.forum.ledger_text(gid, state.day)
            turn.say(msg.sender, text)
            return
        if p.verb in ("thread", "check_votes", "rule"):
            self._forum_verb(msg, p, gid, state, turn)
            return
        if p.verb == "publish":
            turn.say(msg.sender, views.publish(state, gid, self.service.log(gid)))
            return
        if p.verb == "export":
            turn.say(msg.sender, self._export(gid, msg.at))
            return
        if p.verb == "substitute":
            self._substitute(msg, p, gid, state, turn)
            return
        if p.verb in ("start", "kick", "new_game"):
            turn.say(msg.sender, t("lobby_closed", code=gid))
            return
        if p.verb == "end":
            self._end(msg, p, gid, turn)
            return
        if p.verb in ("pause", "resume"):
            self._submit(msg, gid, engine_commands.JudgePause() if p.verb == "pause" else
                         engine_commands.JudgeResume(), turn)
            return
        at = None
        if p.time is not None and p.verb in ("record_vote", "change", "correct", "void"):
            at = now.replace(hour=p.time.hour, minute=p.time.minute, second=0, microsecond=0)
            if at > now:
                turn.say(msg.sender, t("time_in_future", time=p.time.strftime("%H:%M")))
                return
        try:
            cmd = judge_command(p, at=now)
        except ConvertError as exc:
            turn.say(msg.sender, str(getattr(exc, "message", exc)))
            return
        if cmd is None:
            turn.say(msg.sender, t("not_understood"))
            return
        self._submit(msg, gid, cmd, turn, at=at)

    def _forum_verb(self, msg: Incoming, p: Parsed, gid: str, state: GameState, turn: Turn) -> None:
        """`投票贴`, `核票`, `判`: the vote thread of a votes.channel=forum-auto game."""
        if self._chat_option(gid, "votes.channel") != FORUM_AUTO:
            turn.say(msg.sender, t("forum.not_auto", code=gid))
            return
        if p.verb == "thread":
            tid = thread_id(p.text)
            if tid is None:
                turn.say(msg.sender, t("forum.bad_tid", text=p.text[:60]))
                return
            turn.say(msg.sender, self.forum.bind(gid, tid, msg.at))
            if state.phase.startswith("D"):
                self.forum.read(gid)
            return
        if not state.phase.startswith("D"):
            turn.say(msg.sender, t("forum.not_day"))
            return
        if p.verb == "check_votes":
            turn.say(msg.sender, self.forum.ledger_text(gid, state.day, only_open=True))
            return
        ref, decision = p.words[0], p.words[1]
        turn.say(msg.sender, self.forum.decide(gid, ref, decision, msg.at))

    def _end(self, msg: Incoming, p: Parsed, gid: str, turn: Turn) -> None:
        now = msg.at.astimezone(UTC).replace(tzinfo=None)
        confirm = bool(p.words)  # `结束 确认` (the parser takes no other word)
        with self.service.db.write() as s:
            row = s.get(Lobby, gid)
            if row is None:
                turn.say(msg.sender, t("unknown_code", code=gid))
                return
            if not confirm:
                row.end_requested_at = now
                turn.say(msg.sender, t("end_confirm", code=gid))
                return
            asked = row.end_requested_at
            row.end_requested_at = None
        if asked is None or now - asked > END_CONFIRM:
            turn.say(msg.sender, t("end_no_request"))
            return
        self._submit(msg, gid, engine_commands.JudgeEnd(), turn)

    def _export(self, gid: str, at: datetime) -> str:
        from bot.audit import export_game

        data = export_game(self.service, gid)
        text = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True)
        self.export_dir.mkdir(parents=True, exist_ok=True)
        stamp = at.astimezone(UTC).strftime("%Y%m%dT%H%M%S")
        path = self.export_dir / f"{gid}-{stamp}.json"
        path.write_text(text, encoding="utf-8")
        return t("export_done", code=gid, path=str(path), entries=len(data["log"]),
                 digest=hashlib.sha256(text.encode()).hexdigest()[:16])

    # the judge's feed (法官通知) -------------------------------------------------------------
    def _feed(self, msg: Incoming, p: Parsed, turn: Turn) -> None:
        """`法官通知 [全部|摘要|关闭]`: how much of a game its judge hears by DM. For the game
        addressed (the `#CODE` prefix, or the judge's only game) and as the judge's default for
        the games they create next; without a word, what it is now."""
        if msg.sender not in self.judges and not self._judged(msg.sender):
            log.warning("法官通知 from %s refused (not a judge)", msg.sender)
            turn.say(msg.sender, t("judge_only"))
            return
        mine = self._active_judged(msg.sender)
        if p.game is not None:
            code = p.game.upper()
            if code not in mine:
                turn.say(msg.sender, t("unknown_code", code=code[:16]))
                return
            mine = [code]
        chosen = feed_of(p.words[0]) if p.words else None
        with self.service.db.write() as s:
            own = s.get(JudgeSetting, msg.sender)
            if chosen is None:  # what it is now
                if len(mine) == 1:
                    current = self._game_feed(s, mine[0], own)
                    turn.say(msg.sender, t("feed_now", code=mine[0], name=feed_name(current),
                                           what=t(f"feed_what.{current}")))
                else:
                    current = own.judge_feed if own else DEFAULT_FEED
                    turn.say(msg.sender, t("feed_now_default", name=feed_name(current),
                                           what=t(f"feed_what.{current}")))
                return
            if own is None:
                s.add(JudgeSetting(contact_id=msg.sender, judge_feed=chosen))
            else:
                own.judge_feed = chosen
            fields = {"name": feed_name(chosen), "what": t(f"feed_what.{chosen}")}
            if len(mine) != 1:
                turn.say(msg.sender, t("feed_set_default", **fields) if not mine else t(
                    "feed_set_several", codes="、".join(mine), first=mine[0], **fields))
                return
            code = mine[0]
            game = s.get(Game, code)
            if game is not None:
                game.judge_feed = chosen
            lobby = s.get(Lobby, code)
            if lobby is not None:
                lobby.chat_options = {**lobby.chat_options, "judge.feed": chosen}
        turn.say(msg.sender, t("feed_set", code=code, **fields))

    @staticmethod
    def _game_feed(s: Session, code: str, own: JudgeSetting | None) -> str:
        game = s.get(Game, code)
        if game is not None:
            return game.judge_feed
        lobby = s.get(Lobby, code)
        chosen = lobby.chat_options.get("judge.feed") if lobby is not None else None
        return str(chosen or (own.judge_feed if own else DEFAULT_FEED))

    # substitution ------------------------------------------------------------------------------
    def _substitute(self, msg: Incoming, p: Parsed, gid: str, state: GameState,
                    turn: Turn) -> None:
        if len(p.seats) != 1 or not 1 <= p.seats[0] <= len(state.seats):
            turn.say(msg.sender, t("not_understood"))
            return
        seat = p.seats[0]
        token = new_token()
        with self.service.db.write() as s:
            s.add(SeatToken(token_hash=hashlib.sha256(token.encode()).hexdigest(), game_id=gid,
                            seat=seat, created_at=msg.at.astimezone(UTC).replace(tzinfo=None)))
        turn.say(msg.sender, t("sub_token", code=gid, seat=seat, token=token))

    def _take_seat(self, msg: Incoming, p: Parsed, turn: Turn) -> None:
        token = p.text.strip()
        digest = hashlib.sha256(token.encode()).hexdigest()
        now = msg.at.astimezone(UTC).replace(tzinfo=None)
        with self.service.db.write() as s:
            row = s.get(SeatToken, digest)
            if row is None or row.used_by is not None:
                turn.say(msg.sender, t("sub_bad_token"))
                return
            game = s.get(Game, row.game_id)
            if game is None or game.status != "active":
                turn.say(msg.sender, t("sub_bad_token"))
                return
            player = s.get(Player, (row.game_id, row.seat))
            assert player is not None
            old = player.contact_id
            row.used_by, row.used_at = msg.sender, now
            player.contact_id = msg.sender
            gid, seat, name = row.game_id, row.seat, player.forum_name
            history = list(s.scalars(select(OutboxRow.text).where(
                OutboxRow.game_id == gid, OutboxRow.target == f"seat:{seat}")
                .order_by(OutboxRow.id)))
        log.info("%s: seat %s handed from %s to %s", gid, seat, old, msg.sender)
        self.after_commit(gid)  # rooms follow (this rebinding is no pipeline commit)
        body = "\n".join(f"· {h}" for h in history) or t("sub_history_empty")
        turn.say(msg.sender, t("sub_done", code=gid, seat=seat, name=name or "-") + "\n" + body)
        if old and old != msg.sender:
            turn.say(old, t("sub_old", code=gid, seat=seat))
        lobby = self._lobby(gid)
        if lobby is not None:
            turn.say(lobby.judge, t("sub_done_judge", code=gid, seat=seat, contact=msg.sender))
