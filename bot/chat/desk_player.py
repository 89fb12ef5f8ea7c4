"""Players: their commands in a game under way, judge-made rooms (绑定) and relay."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from bot.chat import reports
from bot.chat.submit import Submitter
from bot.chat.verbs import FREE, GAME, PLAYER, SKILL_VERBS, DeskContext, Request, handles
from bot.commands.convert import ConvertError, player_command
from bot.commands.parse import Parsed
from bot.ids import GAME_ID, is_page_contact
from bot.render import render_rejection
from bot.store.chat import ChatStore
from bot.texts import room_name, t
from bot.transport import Incoming
from engine.commands import Command
from engine.events import Rejection
from engine.model import GameState

log = logging.getLogger(__name__)
VOTE_VERBS = ("vote", "abstain", "change", "correct")


class PlayerDesk:
    def __init__(self, ctx: DeskContext, submitter: Submitter) -> None:
        self.ctx = ctx
        self.chats = ctx.chats
        self.submitter = submitter

    # judge-made rooms ----------------------------------------------------------------------------
    @handles("bind", stage=FREE)
    def bind(self, r: Request) -> None:
        code = (r.p.words[0] if r.p.words else "").upper()
        group = r.p.words[1] if len(r.p.words) > 1 else ""
        lobby = self.chats.lobby(code) if GAME_ID.fullmatch(code or "-") else None
        if lobby is None or lobby.status != "started":
            r.say(t("unknown_code", code=code[:16] or "-"))
            return
        if r.sender not in self.ctx.judges and r.sender != lobby.judge:
            log.warning("%s: 绑定 from %s refused", code, r.sender)
            r.say(t("bind_only_judge"))
            return
        if r.msg.room is None:
            r.say(t("room_not_in_room"))
            return
        state = self.ctx.service.state(code)
        before = self.chats.room_id(code, group)
        r.say(self.ctx.rooms.bind(code, state, group, lobby, r.msg.room))
        if before != r.msg.room and self.chats.room_id(code, group) == r.msg.room:
            # bound: `撤销 绑定` can take it back while the phase is open (P-UNDO-6)
            self.chats.set_undo(code, {"kind": "bind", "group": group, "room": r.msg.room,
                                       "previous": before, "phase": state.phase})

    @handles("web", stage=FREE)
    def web(self, r: Request) -> None:
        """`网页`: the sender's private page links (a judge's for each game they judge, a
        player's for their seat); `网页 重置`: every link given before stops working."""
        if r.msg.room is not None:
            r.say(t("not_here"))
            return
        web = self.ctx.web
        if r.p.words and r.p.words[0] == "reset":
            reminded = bool(self.chats.push_subscriptions(r.sender))
            epoch = self.chats.revoke_links(r.sender)  # (the push reminders end with them)
            if web is not None and is_page_contact(r.sender):  # their key is their only way in
                said = t("web.reset_key", url=web.url("k", "", r.sender, None, epoch))
            elif web is not None and r.who.granted:  # so is a judge's home
                said = t("web.reset_home", url=web.url("h", "", r.sender, None, epoch))
            else:
                said = t("web.reset")
            r.say(f"{said}\n{t('web.reset_push')}" if reminded else said)
            return
        if web is None:  # the operator's setting is named to a judge only
            judge = r.sender in self.ctx.judges or bool(r.who.judged)
            r.say(t("web.disabled_judge" if judge else "web.disabled"))
            return
        epoch = self.chats.link_epoch(r.sender)
        lines = ([t("web.link_key", url=web.url("k", "", r.sender, None, epoch))]
                 if is_page_contact(r.sender) else [])
        if r.who.granted:  # granted by `wolfjudge judge-link`
            lines.append(t("web.link_home", url=web.url("h", "", r.sender, None, epoch)))
        for code in r.who.active_judged():
            lobby = self.chats.lobby(code)
            if lobby is not None and lobby.status == "started":
                lines.append(t("web.link_judge", code=code,
                               url=web.url("j", code, r.sender, None, epoch)))
                lines.append(t("web.public_link", code=code, url=web.public(code)))
        for code, seat in r.who.seats_playing():
            lines.append(t("web.link_player", code=code, seat=seat,
                           url=web.url("p", code, r.sender, seat, epoch,
                                       self.chats.hand_overs(code, seat))))
        if not lines:
            r.say(t("web.no_games"))
            return
        r.say("\n".join([t("web.links_title", days=web.links.max_age.days), *lines]))

    def relay(self, code: str, msg: Incoming, r: Request) -> bool:
        """groups.mode=relay: a member's DM goes to the other members of the group."""
        lobby = self.chats.lobby(code)
        if lobby is None or lobby.status != "started" or lobby.chat_options.get(
                "groups.mode") != "relay":
            return False
        seat = r.who.seat(code)
        state = self.ctx.service.state(code)
        if seat is None or state.winner or not state.seat(seat).alive:
            return False
        groups = [g for g, seats in state.groups.items() if seat in seats]
        text = msg.text.strip()
        if len(groups) > 1:
            named = [g for g in groups if text.startswith(room_name(g))]
            if not named:
                r.say(t("relay_choose", rooms="、".join(map(room_name, groups))), game=code)
                return True
            groups = named[:1]
            text = text[len(room_name(groups[0])):].strip()
        if not groups:
            return False
        group = groups[0]
        plan = self.ctx.rooms.plan(code, state, group, lobby)
        for contact in plan.contacts:
            if contact != msg.sender:
                r.tell(contact, t("relay_prefix", room=room_name(group), seat=seat) + text,
                       game=code)
        return True

    # a game under way ----------------------------------------------------------------------------
    @handles("help", stage=GAME, role=PLAYER)
    def help(self, r: Request) -> None:
        assert r.code is not None and r.seat is not None
        dm = self.submitter.option(r.code, "votes.channel") == "dm"
        r.say(reports.player_help(self.ctx.service.state(r.code), r.seat, dm))

    @handles("status", stage=GAME, role=PLAYER)
    def status(self, r: Request) -> None:
        assert r.code is not None and r.seat is not None
        _, name = self.chats.players(r.code).get(r.seat, (None, None))
        r.say(reports.player_status(self.ctx.service.state(r.code), r.seat, r.code, name or "",
                                  self.ctx.service.game_log(r.code)))

    @handles("leave", stage=GAME, role=PLAYER)
    def leave(self, r: Request) -> None:
        r.say(t("lobby_closed", code=r.code))

    @handles(*VOTE_VERBS, *SKILL_VERBS, "handover", "lastwords", "surrender", stage=GAME,
             role=PLAYER)
    def act(self, r: Request) -> None:
        """A player's command for their own seat, into the engine."""
        assert r.code is not None and r.seat is not None
        p = r.p
        state = self.ctx.service.state(r.code)
        if p.verb in VOTE_VERBS and self.submitter.option(r.code, "votes.channel") != "dm":
            r.say(t("forum_votes"))
            return
        cmd = seat_command(self.chats, r, p, r.seat, state)
        if cmd is not None:
            self.submitter.submit(r, cmd)


def seat_command(chats: ChatStore, r: Request, p: Parsed, seat: int,
                 state: GameState, refused: Callable[[Rejection], str] | None = None
                 ) -> Command | None:
    """The engine command of seat `seat`'s `p` (the player's own, or the judge's `代行`); None
    when it cannot be made, the reason told to the sender (`refused` words a refusal for
    them: the judge's `代行` hears of the seat, not in the player's voice)."""
    assert r.code is not None
    if p.verb == "save" and not p.seats:  # `救`: the target the witch was told tonight
        if not _owes(state, seat, "witch"):  # not the witch (tonight): no hint of hers
            rejection = Rejection(code="not_your_skill")
            r.say(refused(rejection) if refused else render_rejection(rejection,
                                                                      state.ruleset))
            return None
        target = _reported_target(chats, r.code, seat, state)
        if target is None:
            r.say(refused(Rejection(code="save_whom")) if refused else t("save_whom"))
            return None
        p = replace(p, seats=(target,))
    try:
        return player_command(p, seat=seat, ruleset=state.ruleset)
    except ConvertError as exc:
        r.say(exc.message)
        return None


def _reported_target(chats: ChatStore, code: str, seat: int, state: GameState) -> int | None:
    """The kill target the witch at `seat` was told tonight (通灵), if any."""
    night = f"N{state.night.day}" if state.night else None
    for ev in chats.told(code, "Tongling", night, seat):
        target = ev.data.get("target")
        return target if isinstance(target, int) else None
    return None


def _owes(state: GameState, seat: int, slot: str) -> bool:
    """Whether `seat` holds tonight's night slot `slot` (the witch's, for a bare `救`)."""
    night = state.night
    return night is not None and slot in night.slots and seat in night.slots[slot].seats
