"""A chat command into the service, and the one answer it gets (shared by the desks).

An accepted command is answered by its own messages where they reach the sender (the engine's
feedback to the seat, the judge's feed line); otherwise by a short receipt in Chinese. A
refusal's reply is the service's (an outbox row written with the refusal); a message id seen
before gets no second answer.
"""

from __future__ import annotations

from datetime import datetime

from bot.chat.verbs import DeskContext, Request
from bot.feed import describe_command, submission
from bot.gametime import wall_clock, zone
from bot.render import messages_for
from bot.service import Outcome
from bot.texts import t
from engine.commands import Act, Command
from engine.events import Event


class Submitter:
    def __init__(self, ctx: DeskContext) -> None:
        self.ctx = ctx

    def option(self, code: str, key: str) -> str | None:
        """A chat option of the game (votes.channel, groups.mode …)."""
        lobby = self.ctx.chats.lobby(code)
        return None if lobby is None else lobby.chat_options.get(key)

    def wall(self, code: str, at: datetime) -> datetime:
        return wall_clock(at, zone(self.ctx.service.time_zone(code)))

    def submit(self, r: Request, cmd: Command, *, at: datetime | None = None,
               quiet: bool = False) -> Outcome:
        """Apply `cmd` for the request's sender, and answer it. `at`: a forum post's own
        time (it counts then); otherwise now, never before the game's clock. `quiet`: the
        caller answers an accepted command itself (a refusal is still the service's)."""
        code, seat = r.code, r.seat
        assert code is not None
        service = self.ctx.service
        if at is None:
            out = service.receive(code, cmd, now=self.wall(code, r.msg.at), msg_id=r.msg.msg_id,
                                  sender=r.sender, monotonic=True)
        else:
            out = service.submit(code, cmd, now=at, msg_id=r.msg.msg_id, sender=r.sender)
        # A duplicate is a message the game's inbox applied whose handled mark the chat layer
        # never wrote (not a kill: a message's effects and mark are one transaction, and a
        # message marked handled never gets here): answered as it was.
        if out.status == "rejected" or quiet:
            return out  # replied already (the service wrote the refusal), or the caller will
        if out.status == "noop":
            r.say(t("unchanged"))
            return out
        if not self._answered(code, out, r.sender, seat, in_room=r.msg.room is not None):
            # A killer's DM answered in the killers' room still gets its answer by DM.
            ruleset = (out.state or service.state(code)).ruleset
            echo = [messages_for(e, seat, ruleset) or ""
                    for e in self._room_events(code, out)] if seat is not None else []
            r.say("\n".join(x for x in echo if x) or self._receipt(code, cmd, seat))
        return out

    def _room_events(self, code: str, out: Outcome) -> list[Event]:
        """The outcome's events for a group that has a room (posted there, not DMed)."""
        rooms = self.ctx.chats.room_names(code)
        return [e for e in out.events if not e.audience.public and e.audience.group in rooms]

    def _receipt(self, code: str, cmd: Command, seat: int | None) -> str:
        """The reply to an accepted command whose events say nothing to the sender."""
        if seat is None:
            return t("receipts.judge", what=describe_command(cmd))
        target = getattr(cmd, "target", None)
        target_text = t("words.abstain") if target is None else t("words.seat", n=target)
        if cmd.kind == "vote" and cmd.mode in ("vote", "change"):
            state = self.ctx.service.state(code)
            close = state.schedule.close_at(state.day or 1).strftime("%H:%M")
            return t(f"receipts.{cmd.mode}", target=target_text, close=close)
        if cmd.kind in ("handover", "lastwords"):
            return t(f"receipts.{cmd.kind}", target=target_text)
        if isinstance(cmd, Act):
            return t("receipts.default", what=submission(cmd.skill, list(cmd.targets)))
        return t("receipts.default", what=describe_command(cmd))

    def _answered(self, code: str, out: Outcome, sender: str, seat: int | None, *,
                  in_room: bool = False) -> bool:
        """Whether the outcome's own messages already answer the sender (a room post answers
        a command sent in that room, not one sent by DM)."""
        if seat is not None:
            by_room = [] if in_room else self._room_events(code, out)
            return any(seat in e.audience.seats and not e.audience.public and e not in by_room
                       for e in out.events)
        return self.ctx.chats.game_judge(code) == sender
