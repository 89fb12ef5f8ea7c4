"""Players: their commands, receipts, judge-made rooms and relay (a ChatBot mixin)."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime

from sqlalchemy import select

from bot.chat import views
from bot.chat.common import VOTE_VERBS, Turn
from bot.chat.desk import Desk
from bot.commands.convert import ConvertError, player_command
from bot.commands.parse import Parsed
from bot.feed import describe_command, submission
from bot.gametime import wall_clock, zone
from bot.render import messages_for
from bot.service import GAME_ID, Outcome, event_of
from bot.store.models import Game, LogEntry, Player, Room
from bot.texts import room_name, t
from bot.transport import Incoming
from engine.commands import Act, Command
from engine.events import Event
from engine.model import GameState

log = logging.getLogger(__name__)


class PlayerDesk(Desk):
    """Players (a part of ChatBot: its methods use ChatBot's state)."""

    # judge-made rooms --------------------------------------------------------------------------
    def _bind(self, msg: Incoming, p: Parsed, turn: Turn) -> None:
        code = (p.words[0] if p.words else "").upper()
        group = p.words[1] if len(p.words) > 1 else ""
        lobby = self._lobby(code) if GAME_ID.fullmatch(code or "-") else None
        if lobby is None or lobby.status != "started":
            turn.say(msg.sender, t("unknown_code", code=code[:16] or "-"))
            return
        if not self._is_judge(code, msg.sender):
            log.warning("%s: 绑定 from %s refused", code, msg.sender)
            turn.say(msg.sender, t("bind_only_judge"))
            return
        if msg.room is None:
            turn.say(msg.sender, t("room_not_in_room"))
            return
        state = self.service.state(code)
        turn.say(msg.sender, self.rooms.bind(code, state, group, lobby, msg.room))

    def _relay(self, gid: str, msg: Incoming, turn: Turn) -> bool:
        """groups.mode=relay: a member's DM goes to the other members of the group."""
        lobby = self._lobby(gid)
        if lobby is None or lobby.status != "started" or lobby.chat_options.get(
                "groups.mode") != "relay":
            return False
        seat = self.service.seat_of(gid, msg.sender)
        state = self.service.state(gid)
        if seat is None or state.winner or not state.seat(seat).alive:
            return False
        groups = [g for g, seats in state.groups.items() if seat in seats]
        text = msg.text.strip()
        if len(groups) > 1:
            named = [g for g in groups if text.startswith(room_name(g))]
            if not named:
                turn.say(msg.sender, t("relay_choose", rooms="、".join(map(room_name, groups))))
                return True
            groups = named[:1]
            text = text[len(room_name(groups[0])):].strip()
        if not groups:
            return False
        group = groups[0]
        plan = self.rooms.plan(gid, state, group, lobby)
        for contact in plan.contacts:
            if contact != msg.sender:
                turn.say(contact, t("relay_prefix", room=room_name(group), seat=seat) + text)
        return True

    # player commands ---------------------------------------------------------------------------
    def _player_verb(self, msg: Incoming, p: Parsed, gid: str, turn: Turn) -> None:
        seat = self.service.seat_of(gid, msg.sender)
        judge = self._is_judge(gid, msg.sender)
        if seat is None:
            if p.verb in ("help", "status") and judge:
                self._judge_verb(msg, p, gid, turn)
                return
            turn.say(msg.sender, t("players_only"))
            return
        loaded = self.service.state(gid)
        if p.verb == "help":
            dm = self._chat_option(gid, "votes.channel") == "dm"
            turn.say(msg.sender, views.player_help(loaded, seat, dm))
            return
        if p.verb == "status":
            with self.service.db.read() as s:
                row = s.get(Player, (gid, seat))
                name = row.forum_name if row else ""
            turn.say(msg.sender, views.player_status(loaded, seat, gid, name or "",
                                                     self.service.log(gid)))
            return
        if p.verb == "leave":
            turn.say(msg.sender, t("lobby_closed", code=gid))
            return
        if p.verb in VOTE_VERBS and self._chat_option(gid, "votes.channel") != "dm":
            turn.say(msg.sender, t("forum_votes"))
            return
        if p.verb == "save" and not p.seats:  # `救`: the target the witch was told tonight
            target = self._reported_target(gid, seat, loaded)
            if target is None:
                turn.say(msg.sender, t("save_whom"))
                return
            p = replace(p, seats=(target,))
        try:
            cmd = player_command(p, seat=seat, ruleset=loaded.ruleset)
        except ConvertError as exc:
            turn.say(msg.sender, str(exc.message if hasattr(exc, "message") else exc))
            return
        self._submit(msg, gid, cmd, turn, seat=seat)

    def _reported_target(self, gid: str, seat: int, state: GameState) -> int | None:
        """The kill target the witch at `seat` was told tonight (通灵), if any."""
        night = f"N{state.night.day}" if state.night else None
        with self.service.db.read() as s:
            rows = list(s.scalars(select(LogEntry).where(
                LogEntry.game_id == gid, LogEntry.kind == "event", LogEntry.type == "Tongling",
                LogEntry.phase == night).order_by(LogEntry.seq.desc())))
        for row in rows:
            if seat in (row.audience or {}).get("seats", []):
                target = event_of(row.body).data.get("target")
                return target if isinstance(target, int) else None
        return None

    def _chat_option(self, gid: str, key: str) -> str | None:
        lobby = self._lobby(gid)
        return None if lobby is None else lobby.chat_options.get(key)

    def _wall(self, gid: str, at: datetime) -> datetime:
        return wall_clock(at, zone(self.service.time_zone(gid)))

    def _submit(self, msg: Incoming, gid: str, cmd: Command, turn: Turn,
                *, seat: int | None = None, at: datetime | None = None) -> Outcome:
        if at is None:
            out = self.service.receive(gid, cmd, now=self._wall(gid, msg.at),
                                       msg_id=msg.msg_id, sender=msg.sender, monotonic=True)
        else:  # a forum post entered with its own time: it counts at that time
            out = self.service.submit(gid, cmd, now=at, msg_id=msg.msg_id, sender=msg.sender)
        if out.duplicate or out.status == "rejected":
            return out  # replied already (the service queued the refusal)
        if out.status == "noop":
            turn.say(msg.sender, t("unchanged"))
            return out
        if not self._answered(gid, out, msg.sender, seat, in_room=msg.room is not None):
            # A killer's DM answered in the killers' room still gets its answer by DM.
            echo = [messages_for(e, seat, out.state.ruleset if out.state else "classic") or ""
                    for e in self._room_events(gid, out)] if seat is not None else []
            turn.say(msg.sender, "\n".join(x for x in echo if x) or self._receipt(gid, cmd, seat))
        return out

    def _room_events(self, gid: str, out: Outcome) -> list[Event]:
        """The outcome's events for a group that has a room (posted there, not DMed)."""
        with self.service.db.read() as s:
            rooms = set(s.scalars(select(Room.name).where(Room.game_id == gid)))
        return [e for e in out.events if not e.audience.public and e.audience.group in rooms]

    def _receipt(self, gid: str, cmd: Command, seat: int | None) -> str:
        """The reply to an accepted command whose events say nothing to the sender."""
        if seat is None:
            return t("receipts.judge", what=describe_command(cmd))
        target = getattr(cmd, "target", None)
        target_text = t("words.abstain") if target is None else t("words.seat", n=target)
        if cmd.kind == "vote" and cmd.mode in ("vote", "change"):
            state = self.service.state(gid)
            day = state.day or 1
            close = state.schedule.close_at(day).strftime("%H:%M")
            return t(f"receipts.{cmd.mode}", target=target_text, close=close)
        if cmd.kind in ("handover", "lastwords"):
            return t(f"receipts.{cmd.kind}", target=target_text)
        if isinstance(cmd, Act):
            return t("receipts.default", what=submission(cmd.skill, list(cmd.targets)))
        return t("receipts.default", what=describe_command(cmd))

    def _answered(self, gid: str, out: Outcome, sender: str, seat: int | None, *,
                  in_room: bool = False) -> bool:
        """Whether the outcome's own messages already answer the sender (a room post answers
        a command sent in that room, not one sent by DM)."""
        if seat is not None:
            by_room = [] if in_room else self._room_events(gid, out)
            return any(seat in e.audience.seats and not e.audience.public and e not in by_room
                       for e in out.events)
        with self.service.db.read() as s:
            judge = s.scalar(select(Game.judge_contact).where(Game.id == gid))
        return judge == sender
