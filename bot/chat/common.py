"""The chat layer's shared pieces: the verb tables, one turn's replies, outbox rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from bot.clock import utcnow
from bot.commands.parse import Parsed
from bot.commands.vocabulary import VERBS
from bot.outbox import NORMAL, hold
from bot.store.models import OutboxRow

MAX_TEXT = 4096
END_CONFIRM = timedelta(minutes=10)
# Who may send what, and where, is the vocabulary's (bot/commands/vocabulary.yaml).
JUDGE_VERBS = frozenset(k for k, v in VERBS.items() if v.who == "judge")
KILLERS_ROOM_VERBS = frozenset(k for k, v in VERBS.items() if "killers_room" in v.where)
ROOM_VERBS = frozenset(k for k, v in VERBS.items() if "room" in v.where) | KILLERS_ROOM_VERBS
KILLERS_ROOM = "wolves"  # the engine group whose room takes the killers' commands
VOTE_VERBS = {"vote", "abstain", "change", "correct"}


@dataclass
class Reply:
    to: str
    text: str


@dataclass
class Turn:
    """What one message causes besides the outbox: direct replies, in order."""

    replies: list[Reply] = field(default_factory=list)

    def say(self, to: str, text: str) -> None:
        self.replies.append(Reply(to, text))


def chat_row(key: str, to: str, text: str, game_id: str | None, *,
             group: str | None = None, priority: int = NORMAL) -> OutboxRow:
    """An outbox row of the chat layer: a DM to contact `to`, or (with `group`) a post in
    room `to`; held until the current turn ends (bot/outbox.py), if there is one."""
    now = utcnow()
    turn, due = hold(now)
    return OutboxRow(dedupe_key=key[:255], game_id=game_id, seq=None,
                     channel="group" if group else "dm",
                     target=f"group:{group}" if group else f"contact:{to}"[:160], address=to,
                     text=text, created_at=now, attempts=0, next_attempt_at=due,
                     priority=priority, turn=turn)


def judge_form(p: Parsed) -> bool:
    """A judge's command (`改票 S T` and `更正 S T` name the voter: the judge's forms)."""
    return p.verb in JUDGE_VERBS or (len(p.seats) == 2 and p.verb in ("change", "correct"))
