"""Who may do what (CHAT.md, "People"): one place for the service and the chat layer.

A judge is a contact named in the bot's settings (WOLFJUDGE_JUDGES) or a game's own judge (who
created it: a judge of the bot, or a contact granted the right by `wolfjudge judge-link`). A
player acts only for their own seat; only judges send judge commands, and a judge may enter a
seat's vote (the forum thread) or action (`代行`); nobody sends a tick (deadlines fire from the
scheduler). A judge is never a player of their own game.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from bot.router import Asker
from engine.commands import Command

if TYPE_CHECKING:
    from bot.store.chat import Sender

# Vote modes a player may send for their own seat; the others ("correct": the judge's own
# correction entry, "void": a malformed forum post) are entered by a judge.
PLAYER_VOTE_MODES = frozenset({"vote", "change", "request_correct"})


def env_judges() -> frozenset[str]:
    """The judges' contacts from WOLFJUDGE_JUDGES (comma-separated), as CHAT.md says."""
    return frozenset(j.strip() for j in os.environ.get("WOLFJUDGE_JUDGES", "").split(",")
                     if j.strip())


def is_judge(contact: str, judges: Iterable[str], game_judge: str | None) -> bool:
    """Whether `contact` judges a game: a judge of the bot, or the game's own."""
    return contact in judges or (game_judge is not None and contact == game_judge)


def judges_game(who: Sender, judges: Iterable[str], game_id: str | None) -> bool:
    """Whether the sender of a message judges the game `game_id` (None: no game of ours): a
    judge of the bot, or the game's own (`who`: bot/store/chat.py, looked up once)."""
    return who.contact in judges or (game_id is not None and game_id in who.judged)


def may_create(who: Sender, judges: Iterable[str]) -> bool:
    """Whether the sender may create games (`新游戏`, `重开`, `复盘`): a judge of the bot, or a
    contact granted that right on the server (`wolfjudge judge-link`: the pages' judges,
    who judge what they create and nothing else)."""
    return who.contact in judges or who.granted


def permitted(cmd: Command, sender: str, judges: frozenset[str], game_judge: str | None,
              seat: int | None) -> bool:
    """May contact `sender` send `cmd` to a game whose own judge is `game_judge`, being its
    seat `seat` (None: no seat)?"""
    if cmd.kind == "tick":
        return False  # deadlines fire from the scheduler, never from a chat
    judge = is_judge(sender, judges, game_judge)
    if cmd.kind.startswith("judge_"):
        return judge
    if cmd.kind == "vote" and judge:
        return True  # a forum vote, entered by the judge as read from the thread
    if cmd.kind == "act" and judge:
        return True  # `代行`: a seat's action the bot never got, entered by the judge
    if seat is None or seat != getattr(cmd, "seat", None):
        return False
    return cmd.kind != "vote" or getattr(cmd, "mode", "vote") in PLAYER_VOTE_MODES


def asker(cmd: Command, sender: str | None, seat: int | None, judges: frozenset[str],
          game_judge: str | None) -> Asker:
    """Who sent `cmd`, for the router (None: the operator, the scheduler): the seat acting
    for itself, or a judge of the game."""
    if sender is None:
        return Asker()
    if is_judge(sender, judges, game_judge):
        return Asker(judge=True, own_judge=sender == game_judge)
    return Asker(seat=seat if seat is not None and seat == getattr(cmd, "seat", None) else None)
