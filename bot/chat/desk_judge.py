"""Judges: their commands in a game under way, the forum thread, ending, export, substitution,
and the judge's feed (法官通知)."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from datetime import UTC, datetime, time, timedelta

from bot.chat import reports
from bot.chat.desk_player import seat_command
from bot.chat.lobby import END_CONFIRM, new_token
from bot.chat.review import preview
from bot.chat.submit import Submitter
from bot.chat.verbs import FREE, GAME, JUDGE, SKILL_VERBS, DeskContext, Request, handles
from bot.commands.convert import ConvertError, judge_command
from bot.commands.parse import ParseError, parse
from bot.feed import DEFAULT_FEED, describe_command, feed_name, feed_of, submission
from bot.forum.reader import thread_id
from bot.forum.thread import CHANNEL as FORUM_AUTO
from bot.options_text import time_text
from bot.render import render_rejection
from bot.texts import contact_text, room_name, t, text_data
from bot.undo import Refusal
from bot.undo import what as undo_what
from engine import commands as engine_commands
from engine import handle
from engine.context import held_due
from engine.events import Rejection
from engine.model import GameState

log = logging.getLogger(__name__)
# The judge's commands the engine takes (bot/commands/convert.py judge_command).
UNDO_CONFIRM = timedelta(minutes=10)  # how long a 撤销 N waits for 撤销 确认
ENGINE_VERBS = ("record_vote", "change", "correct", "void", "proxy", "confirm_correction",
                "reject_correction", "yellow", "red", "notice", "contact", "close_at",
                "open_at", "schedule", "extend")


class JudgeDesk:
    def __init__(self, ctx: DeskContext, submitter: Submitter) -> None:
        self.ctx = ctx
        self.chats = ctx.chats
        self.submitter = submitter
        # 撤销 N of a command the table was told of, waiting for 撤销 确认: code -> (seq, asked)
        self._undo_asked: dict[str, tuple[int, datetime]] = {}

    # the judge's view ----------------------------------------------------------------------------
    @handles("status", stage=GAME, role=JUDGE)
    def status(self, r: Request) -> None:
        assert r.code is not None
        r.say(reports.judge_status(self.ctx.service.state(r.code), r.code,
                                 self.chats.players(r.code)))

    @handles("help", stage=GAME, role=JUDGE)
    def help(self, r: Request) -> None:
        r.say(t("help_judge"))

    @handles("tally", stage=GAME, role=JUDGE)
    def tally(self, r: Request) -> None:
        assert r.code is not None
        state = self.ctx.service.state(r.code)
        text = reports.vote_tally(state, r.code, self.submitter.wall(r.code, r.msg.at))
        if self.submitter.option(r.code, "votes.channel") == FORUM_AUTO and (
                state.phase.startswith("D")):
            text += "\n" + self.ctx.forum.ledger_text(r.code, state.day)
        r.say(text)

    @handles("publish", stage=GAME, role=JUDGE)
    def publish(self, r: Request) -> None:
        assert r.code is not None
        r.say(reports.publish(self.ctx.service.state(r.code), r.code,
                            self.ctx.service.game_log(r.code)))

    @handles("export", stage=GAME, role=JUDGE)
    def export(self, r: Request) -> None:
        from bot.audit import export_game

        assert r.code is not None
        data = export_game(self.ctx.service, r.code)
        text = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True)
        self.ctx.export_dir.mkdir(parents=True, exist_ok=True)
        stamp = r.msg.at.astimezone(UTC).strftime("%Y%m%dT%H%M%S")
        path = self.ctx.export_dir / f"{r.code}-{stamp}.json"
        path.write_text(text, encoding="utf-8")
        r.say(t("export_done", code=r.code, path=str(path), entries=len(data["log"]),
                digest=hashlib.sha256(text.encode()).hexdigest()[:16]))

    @handles("start", "kick", "set_options", "set_roles", stage=GAME, role=JUDGE)
    def started(self, r: Request) -> None:
        r.say(t("started_judge_only", code=r.code, what=t(f"started_what.{r.p.verb}")))

    # 代行: a seat's action, entered by the judge ----------------------------------------------
    @handles("act_for", stage=GAME, role=JUDGE)
    def act_for(self, r: Request) -> None:
        """`代行 S 命令 [HH:MM]` (docs/rules-judge.md, P-ACTFOR): the night or set-up action
        seat S sent and the bot never got, entered with the time the player sent it (now if
        none), which must lie within that action's time limit; checked as the seat's own,
        logged as the judge's; the judge and seat S are told."""
        assert r.code is not None and r.p.seats
        seat = r.p.seats[0]
        text, sent = _trailing_time(r.p.text)
        try:
            inner = parse(text)
        except ParseError as exc:
            r.say(exc.message)
            return
        if inner is None or inner.verb not in SKILL_VERBS:
            r.say(t("act_for.not_an_action"))
            return
        service = self.ctx.service
        state = service.state(r.code)
        now = self.submitter.wall(r.code, r.msg.at).replace(tzinfo=None)
        told = now if sent is None else now.replace(hour=sent.hour, minute=sent.minute,
                                                    second=0, microsecond=0)
        at = told - timedelta(days=1) if told > now else told  # after midnight: yesterday's
        if not 1 <= seat <= len(state.seats) or not state.seat(seat).alive:
            r.say(t("act_for.out", seat=seat))
            return
        start, due = _window(state, seat, service.created(r.code))
        if due is None:
            r.say(t("act_for.nothing_owed", seat=seat))
            return
        if at > due or (start is not None and at < start):
            if told > now:  # a time still to come today (yesterday's is outside too)
                r.say(t("act_for.future", time=told.strftime("%H:%M"),
                        now=now.strftime("%H:%M")))
                return
            window = t("act_for.window", start=start.strftime("%H:%M"),
                       due=due.strftime("%H:%M")) if start else t(
                "act_for.until", due=due.strftime("%H:%M"))
            r.say(t("act_for.outside", time=at.strftime("%H:%M"), window=window))
            return

        def refused(rejection: Rejection) -> str:
            return _judge_refusal(rejection, seat, state.ruleset)

        cmd = seat_command(self.chats, r, inner, seat, state, refused)
        if cmd is None:
            return
        checked = handle(state, cmd, at)  # the engine's refusal, said of the seat (P-ACTFOR-2)
        if isinstance(checked, Rejection):
            r.say(refused(checked))
            return
        out = self.submitter.submit(r, cmd, at=at, quiet=True)
        if out.status == "noop":  # (a duplicate too: applied before a crash, not answered)
            r.say(t("unchanged"))
        if out.status != "accepted":
            return
        what = submission(cmd.skill, list(cmd.targets)) if isinstance(
            cmd, engine_commands.Act) else describe_command(cmd)
        shown = at.strftime("%H:%M")
        contact = self.chats.contacts(r.code).get(seat)
        if contact is not None:
            r.tell(contact, t("act_for.told", what=what, time=shown), asks=True)
        r.say(t("act_for.done", seat=seat, what=what, time=shown))

    # 预览 and 天亮: the judge's review of the dawn ---------------------------------------------
    @handles("preview", stage=GAME, role=JUDGE)
    def preview(self, r: Request) -> None:
        assert r.code is not None
        r.say(preview(self.ctx.service.state(r.code), r.code,
                      self.submitter.wall(r.code, r.msg.at)))

    @handles("dawn", stage=GAME, role=JUDGE)
    def dawn(self, r: Request) -> None:
        self.submitter.submit(r, engine_commands.JudgeDawn())

    # 撤销: undo a judge's command of this phase ---------------------------------------------------
    @handles("undo", stage=GAME, role=JUDGE)
    def undo(self, r: Request) -> None:
        """`撤销 [列表|编号|确认]` (docs/rules-judge.md P-UNDO): the latest, or numbered, judge's
        command of the phase still open; one the table was told of waits for `撤销 确认`."""
        assert r.code is not None
        code, service = r.code, self.ctx.service
        word = r.p.words[0] if r.p.words else None
        now = r.msg.at.astimezone(UTC).replace(tzinfo=None)
        if word == "bind":
            self._unbind(r)
            return
        if word == "kick":  # only before the start
            r.say(t("undo.no_kick"))
            return
        found = service.undoable(code)
        if word == "list":
            items = [t("undo.item", seq=c.seq, time=c.at.strftime("%H:%M"),
                       what=undo_what(c),
                       public=t("undo.public_mark") if c.public else "") for c in found]
            bound = self._bound(code)
            if bound is not None:
                items.append(t("undo.bind_item", room=room_name(bound["group"])))
            r.say(t("undo.list_title", items="\n".join(items)) if items else t("undo.none"))
            return
        if word == "confirm":
            asked = self._undo_asked.pop(code, None)
            if asked is None or now - asked[1] > UNDO_CONFIRM:
                r.say(t("undo.no_request"))
                return
            self._undo(r, asked[0])
            return
        seq = r.p.count if r.p.count is not None else found[0].seq if found else None
        target = next((c for c in found if c.seq == seq), None)
        if target is None:
            r.say(t("undo.none") if seq is None else t("undo.not_undoable", seq=seq))
            return
        if target.public:
            refused = service.undo(code, target.seq, now=self.submitter.wall(code, r.msg.at),
                                   dry_run=True)
            if isinstance(refused, Refusal):
                r.say(t(refused.key, seq=target.seq, **refused.fields))
                return
            self._undo_asked[code] = (target.seq, now)
            r.say(t("undo.confirm", what=undo_what(target), seq=target.seq,
                    time=target.at.strftime("%H:%M")))
            return
        self._undo(r, target.seq)

    def _bound(self, code: str) -> dict[str, str] | None:
        """The room the judge bound in the phase still open (`撤销 绑定` can take it back)."""
        lobby = self.chats.lobby(code)
        action = lobby.undo if lobby is not None else None
        if not action or action.get("kind") != "bind" or (
                action.get("phase") != self.ctx.service.state(code).phase):
            return None
        return dict(action)

    def _unbind(self, r: Request) -> None:
        """`撤销 绑定` (P-UNDO-6): the game stops using the room bound last (the one bound
        before it, if any, is used again); the room is told."""
        assert r.code is not None
        code = r.code
        bound = self._bound(code)
        if bound is None or self.chats.room_id(code, bound["group"]) != bound["room"]:
            r.say(t("undo.no_bind"))
            return
        group, previous = bound["group"], bound.get("previous")
        self.ctx.service.unset_room(code, group)
        if previous:
            self.ctx.service.set_room(code, group, previous)
        self.chats.set_undo(code, None)
        self.ctx.rooms.notice(code, group, bound["room"], t("undo.unbound_room", code=code,
                                                             room=room_name(group)))
        self.ctx.after_commit(code)  # the rooms follow (members of a restored room)
        r.say(t("undo.unbound", room=room_name(group),
                restored=t("undo.restored") if previous else ""))

    def _undo(self, r: Request, seq: int) -> None:
        assert r.code is not None
        got = self.ctx.service.undo(r.code, seq, now=self.submitter.wall(r.code, r.msg.at),
                                    msg_id=r.msg.msg_id)
        if isinstance(got, Refusal):
            r.say(t(got.key, seq=seq, **got.fields))
            return
        told = ("undo.told_public" if got.public else "undo.told_seats"
                if got.told else "undo.told_nobody")
        r.say(t("undo.done", what=undo_what(got), seq=seq, told=t(told)))

    # commands into the engine --------------------------------------------------------------------
    @handles(*ENGINE_VERBS, stage=GAME, role=JUDGE)
    def command(self, r: Request) -> None:
        assert r.code is not None
        p = r.p
        now = self.submitter.wall(r.code, r.msg.at)
        at = None
        if p.time is not None and p.verb in ("record_vote", "change", "correct", "void"):
            at = now.replace(hour=p.time.hour, minute=p.time.minute, second=0, microsecond=0)
            if at > now:
                r.say(t("time_in_future", time=p.time.strftime("%H:%M")))
                return
        try:
            cmd = judge_command(p, at=now)
        except ConvertError as exc:
            r.say(exc.message)
            return
        if cmd is None:
            r.say(t("not_understood"))
            return
        if isinstance(cmd, engine_commands.JudgeSetTime) and cmd.which == "close":
            refusal = _close_refusal(self.ctx.service.state(r.code), cmd.at)
            if refusal is not None:
                r.say(refusal)
                return
        self.submitter.submit(r, cmd, at=at)

    @handles("pause", "resume", stage=GAME, role=JUDGE)
    def pause(self, r: Request) -> None:
        self.submitter.submit(r, engine_commands.JudgePause() if r.p.verb == "pause" else
                             engine_commands.JudgeResume())

    @handles("end", stage=GAME, role=JUDGE)
    def end(self, r: Request) -> None:
        assert r.code is not None
        now = r.msg.at.astimezone(UTC).replace(tzinfo=None)
        if not r.p.words:  # `结束`; `结束 确认` is the only other form
            if self.chats.request_end(r.code, now):
                r.say(t("end_confirm", code=r.code))
            else:
                r.say(t("unknown_code", code=r.code))
            return
        asked = self.chats.take_end_request(r.code)
        if asked is None or now - asked > END_CONFIRM:
            r.say(t("end_no_request"))
            return
        self.submitter.submit(r, engine_commands.JudgeEnd())

    # the forum thread (votes.channel=forum-auto) -------------------------------------------------
    @handles("thread", "check_votes", "rule", stage=GAME, role=JUDGE)
    def forum(self, r: Request) -> None:
        """`投票贴`, `核票`, `判`: the vote thread of a votes.channel=forum-auto game."""
        assert r.code is not None
        code, p = r.code, r.p
        if self.submitter.option(code, "votes.channel") != FORUM_AUTO:
            r.say(t("forum.not_auto", code=code))
            return
        state = self.ctx.service.state(code)
        if p.verb == "thread":
            tid = thread_id(p.text)
            if tid is None:
                r.say(t("forum.bad_tid", text=p.text[:60]))
                return
            r.say(self.ctx.forum.bind(code, tid, r.msg.at))
            if state.phase.startswith("D"):
                self.ctx.forum.read(code)
            return
        if not state.phase.startswith("D"):
            r.say(t("forum.not_day"))
            return
        if p.verb == "check_votes":
            r.say(self.ctx.forum.ledger_text(code, state.day, only_open=True))
            return
        ref, decision = p.words[0], p.words[1]
        r.say(self.ctx.forum.decide(code, ref, decision, r.msg.at))

    # substitution --------------------------------------------------------------------------------
    @handles("substitute", stage=GAME, role=JUDGE)
    def substitute(self, r: Request) -> None:
        assert r.code is not None
        state = self.ctx.service.state(r.code)
        if not 1 <= r.p.seats[0] <= len(state.seats):
            r.say(render_rejection(Rejection(code="no_such_seat",
                                             data={"seat": r.p.seats[0]}), state.ruleset))
            return
        seat = r.p.seats[0]
        token = new_token()
        self.chats.add_token(hashlib.sha256(token.encode()).hexdigest(), r.code, seat,
                             r.msg.at.astimezone(UTC).replace(tzinfo=None))
        web = self.ctx.web
        if web is not None and self.ctx.rooms.transport.contacts_by_link:  # no chat to DM in
            r.say(t("sub_token_link", code=r.code, seat=seat, token=token,
                    url=f"{web.base.rstrip('/')}/take/{token}"))
            return
        r.say(t("sub_token", code=r.code, seat=seat, token=token))

    @handles("take_seat", stage=FREE)
    def take_seat(self, r: Request) -> None:
        digest = hashlib.sha256(r.p.text.strip().encode()).hexdigest()
        taken = self.chats.take_seat(digest, r.sender,
                                     r.msg.at.astimezone(UTC).replace(tzinfo=None),
                                     self.ctx.judges)
        if isinstance(taken, str):  # refused; the token stays valid unless it was bad
            r.say(t({"bad": "sub_bad_token", "seated": "sub_already_seated",
                     "judge": "sub_judge"}[taken]))
            return
        code, seat = taken.game_id, taken.seat
        log.info("%s: seat %s handed from %s to %s", code, seat, taken.old, r.sender)
        self.ctx.after_commit(code)  # rooms follow (this rebinding is no service commit)
        body = "\n".join(f"· {h}" for h in taken.history) or t("sub_history_empty")
        r.say(t("sub_done", code=code, seat=seat, name=taken.name or "-") + "\n" + body,
              game=code)
        if taken.old and taken.old != r.sender:
            r.tell(taken.old, t("sub_old", code=code, seat=seat), game=code)
        lobby = self.chats.lobby(code)
        if lobby is not None:
            r.tell(lobby.judge, t("sub_done_judge", code=code, seat=seat,
                                  contact=contact_text(r.sender)),
                   game=code)

    # the judge's feed (法官通知) -----------------------------------------------------------------
    @handles("feed", stage=FREE)
    def feed(self, r: Request) -> None:
        """`法官通知 [全部|摘要|关闭]`: how much of a game its judge hears by DM. For the game
        addressed (the `#CODE` prefix, or the judge's only game) and as the judge's default for
        the games they create next; without a word, what it is now."""
        if r.msg.room is not None:
            r.say(t("not_here"))
            return
        if r.sender not in self.ctx.judges and not r.who.judged:
            log.warning("法官通知 from %s refused (not a judge)", r.sender)
            r.say(t("judge_only"))
            return
        mine = r.who.active_judged()
        if r.p.game is not None:
            code = r.p.game.upper()
            if code not in mine:
                r.say(t("unknown_code", code=code[:16]))
                return
            mine = [code]
        chosen = feed_of(r.p.words[0]) if r.p.words else None
        if chosen is None:  # what it is now
            if len(mine) == 1:
                now = self.chats.game_feed(mine[0]) or self.chats.own_feed(r.sender) \
                    or DEFAULT_FEED
                r.say(t("feed_now", code=mine[0], name=feed_name(now),
                        what=t(f"feed_what.{now}")))
            else:
                now = self.chats.own_feed(r.sender) or DEFAULT_FEED
                r.say(t("feed_now_default", name=feed_name(now), what=t(f"feed_what.{now}")))
            return
        fields = {"name": feed_name(chosen), "what": t(f"feed_what.{chosen}")}
        if len(mine) != 1:
            self.chats.set_feed(r.sender, chosen, None)
            r.say(t("feed_set_default", **fields) if not mine else t(
                "feed_set_several", codes="、".join(mine), first=mine[0], **fields))
            return
        self.chats.set_feed(r.sender, chosen, mine[0])
        r.say(t("feed_set", code=mine[0], **fields))



def _close_refusal(state: GameState, at: datetime) -> str | None:
    """`关门 HH:MM` names the next such time (P-CLOCK-2); one that does not come before the
    next day opens is refused here with the moment it named and the open it passed (the
    engine's own check, P-TIME-2, would only say that the day's times do not hold)."""
    if not state.phase.startswith("D"):
        return None  # (the engine says there is no day to close)
    opens = state.schedule.open_at(state.day + 1)
    if at < opens:
        return None
    return t("close_after_next_open", time=time_text(at.time()), at=time_text(at),
             day=state.day + 1, open=time_text(opens))


def _trailing_time(text: str) -> tuple[str, time | None]:
    """`验 5 22:10` -> ("验 5", 22:10): the player's sending time, if written at the end."""
    m = re.fullmatch(r"(.*?)\s+(\d{1,2})[:：](\d{2})", text.strip())
    if m is None or int(m[2]) > 23 or int(m[3]) > 59:
        return text, None
    return m[1], time(int(m[2]), int(m[3]))


def _judge_refusal(rejection: Rejection, seat: int, ruleset: str) -> str:
    """A refused `代行`, said to the judge about seat `seat` (never in the player's voice)."""
    reasons = text_data("act_for.reasons")
    own = reasons.get(rejection.code)
    reason = own.format(**{**rejection.data, "seat": seat}) if own else render_rejection(
        rejection, ruleset)
    return t("act_for.refused", seat=seat, reason=reason)


def _window(state: GameState, seat: int, created: datetime
            ) -> tuple[datetime | None, datetime | None]:
    """When seat `seat`'s pending night or set-up action could be sent: from the night's start
    (the day's close), or for a set-up action from the deal (`created`), to its deadline.
    (None, None): it owes none now (or its time is up)."""
    dues: list[datetime] = []
    start = None
    night = state.night
    if night is not None and not night.resolved and state.phase.startswith("N"):
        start = state.schedule.close_at(night.day) if night.day >= 1 else None
        for slot in night.slots.values():
            dl = state.deadline(slot.deadline_id)  # (or held for the review: P-REVIEW-3)
            due = dl.due if dl is not None else held_due(night, slot.deadline_id)
            if seat in slot.seats and due is not None and not slot.expired:
                dues.append(due)
    else:
        dues = [d.due for d in state.deadlines if d.kind == "setup" and seat in d.seats]
        start = created
    return (start, max(dues)) if dues else (None, None)
