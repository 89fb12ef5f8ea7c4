"""Who the bot can reach, and what it does when it cannot (issue 32): for a platform whose DMs
go to friends only (QQ), whose friends ask first, and whose risk control watches each
conversation. The transport says what happened (`on_friend_request`, `on_unreachable`,
`on_guarded`); this module decides, from the games, and tells the judge in the platform's own
words (`Capabilities.nouns`). Nothing here names a platform.

- A friend request is approved when its comment (验证消息) carries the code of one of this
  account's games that is not over (an open lobby, or a game under way: a player who was not a
  friend yet, a substitute), or comes from a judge named in the settings; others are left to
  the account's owner.
- A DM that cannot reach a contact: the judge of each game the contact plays in is told which
  seat cannot be reached and how to fix it (become the bot's friend with the game's code), once
  a day per game and contact; the message stays queued and goes once they can be reached.
- A conversation the guard holds: the judge of each game it concerns is told, once per hold.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import date

from bot.chat.bot import ChatBot
from bot.store.models import Lobby
from bot.texts import nouns, room_name, t

log = logging.getLogger(__name__)
CODE_WORD = re.compile(r"[A-Za-z0-9]{4,8}")


class Reach:
    def __init__(self, bot: ChatBot, today: Callable[[], date],
                 me: Callable[[], str | None] = lambda: None) -> None:
        """`today`: the date in the bot's zone (a judge is told once a day); `me`: the bot's
        own account, named in the judge's instructions when known."""
        self.bot = bot
        self.chats = bot.chats
        self.today = today
        self.me = me

    def _words(self) -> dict[str, str]:
        return nouns(self.bot.transport.capabilities.nouns)

    def _live(self, code: str) -> Lobby | None:
        """This account's game `code` when it is not over (an open lobby or a game on)."""
        lobby = self.chats.lobby(code.upper())
        if lobby is None or lobby.status not in ("open", "started"):
            return None
        if lobby.status == "started" and lobby.code not in self.chats.sender(
                lobby.judge).active_judged():
            return None  # the game is over
        return lobby

    # friend requests -----------------------------------------------------------------------
    def friend_request(self, contact: str, comment: str) -> bool:
        """Approve? A game's code in the comment, or a judge."""
        if contact in self.bot.judges:
            return True
        for word in CODE_WORD.findall(comment or "")[:8]:
            if self._live(word) is not None:
                log.info("friend request from %s approved (game %s)", contact, word.upper())
                return True
        log.info("friend request from %s left alone (no game code)", contact)
        return False

    # a contact the bot cannot DM -----------------------------------------------------------
    def unreachable(self, contact: str) -> None:
        who = self.chats.sender(contact)  # the one look-up of a contact (bot/store/chat.py)
        games = who.seats_playing()
        lobbies = [c for c in who.games() if c not in who.playing]
        if not games and not lobbies:
            log.warning("a DM to %s cannot be delivered (not reachable; in no game)", contact)
            return
        day = self.today().isoformat()
        words = self._words()
        me = self.me() or ""
        for code, seat in games:
            judge = self.chats.game_judge(code)
            name = self.chats.players(code).get(seat, (None, None))[1] or ""
            if judge and judge != contact:
                self.bot.tell_once(f"chat/unreachable/{code}/{contact}/{day}", judge, t(
                    "unreachable", code=code, who=t("words.seat", n=seat), name=name,
                    me=me, **words))
        for code in lobbies:
            lobby = self.chats.lobby(code)
            if lobby is not None and lobby.judge != contact:
                name = next((p.forum_name for p in self.chats.members(code)
                             if p.contact_id == contact), contact)
                self.bot.tell_once(f"chat/unreachable/{code}/{contact}/{day}", lobby.judge, t(
                    "unreachable", code=code, who=name, name="", me=me, **words))

    # a conversation the guard holds --------------------------------------------------------
    def guarded(self, conversation: str, room: bool) -> None:
        words = self._words()
        if room:
            where = self.chats.sender(None, conversation.removeprefix("group:"))
            code, group = where.room_game, where.room_group
            if code is None or group is None:
                return
            judge = self.chats.game_judge(code)
            if judge:
                self.bot.tell(judge, t("guarded", code=code, who=room_name(group), **words),
                              code)
            return
        who = self.chats.sender(conversation)
        for code, seat in who.seats_playing():
            judge = self.chats.game_judge(code)
            if judge and judge != conversation:
                self.bot.tell(judge, t("guarded", code=code, who=t("words.seat", n=seat),
                                       **words), code)
        for code in who.games():  # a lobby's: by the 马甲
            lobby = self.chats.lobby(code)
            if lobby is None or lobby.status != "open" or lobby.judge == conversation:
                continue
            name = next((p.forum_name for p in self.chats.members(code)
                         if p.contact_id == conversation), conversation)
            self.bot.tell(lobby.judge, t("guarded", code=code, who=name, **words))
        for code in who.active_judged():
            log.warning("%s: the guard holds the judge's own conversation %s", code,
                        conversation)
