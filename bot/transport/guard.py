"""The risk guard: stop sending to one conversation before the platform's risk control would
flag it (issue 32, item 4).

A personal QQ account run as a bot is watched per conversation: AstrBot's OneBot adapter, from
bans its users met, latches a private conversation for review after 20 sends in a minute, 60 in
ten minutes, or three near-identical texts in two minutes. The outbox already sends one message
per recipient per step, so a conversation only runs hot when someone keeps writing to the bot
(each command is answered) or the same text keeps going to one person. The guard counts what
went to each conversation (a contact, or `group:ID`) and, before a send that would reach any of
its limits (set below those: `GuardSettings`), holds that conversation for `rest` seconds: the
send is refused (the outbox keeps the message and retries: nothing is lost), and the first
refusal of a hold is `tripped`, so the transport tells the judge once. Texts count as the same
when equal once whitespace is ignored.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

MINUTE = timedelta(minutes=1)
TEN_MINUTES = timedelta(minutes=10)
SAME_WINDOW = timedelta(minutes=2)


@dataclass
class GuardSettings:
    per_minute: int = 15  # sends to one conversation in a minute (risk control: 20)
    per_ten_minutes: int = 45  # in ten minutes (60)
    same_text: int = 2  # the same text to one conversation in two minutes (3)
    rest: float = 300.0  # seconds a held conversation gets nothing


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    tripped: bool = False  # this refusal starts a hold (tell the judge)
    until: datetime | None = None


@dataclass
class _Conversation:
    sends: deque[tuple[datetime, str]] = field(default_factory=deque)
    resting_until: datetime | None = None


def _fingerprint(text: str) -> str:
    return re.sub(r"\s+", "", text)


@dataclass
class Guard:
    settings: GuardSettings = field(default_factory=GuardSettings)
    now: Callable[[], datetime] = lambda: datetime.now(UTC)
    _seen: dict[str, _Conversation] = field(default_factory=dict)

    def check(self, conversation: str, text: str) -> Verdict:
        """May `text` go to `conversation` now?"""
        now = self.now()
        conv = self._seen.setdefault(conversation, _Conversation())
        while conv.sends and conv.sends[0][0] <= now - TEN_MINUTES:
            conv.sends.popleft()
        if conv.resting_until is not None:
            if now < conv.resting_until:
                return Verdict(False, until=conv.resting_until)
            conv.resting_until = None
            conv.sends.clear()  # a fresh start after the rest
        s = self.settings
        minute = sum(1 for at, _ in conv.sends if at > now - MINUTE)
        same = _fingerprint(text)
        repeats = sum(1 for at, fp in conv.sends if at > now - SAME_WINDOW and fp == same)
        if (minute + 1 > s.per_minute or len(conv.sends) + 1 > s.per_ten_minutes
                or repeats + 1 > s.same_text):
            conv.resting_until = now + timedelta(seconds=s.rest)
            return Verdict(False, tripped=True, until=conv.resting_until)
        return Verdict(True)

    def sent(self, conversation: str, text: str) -> None:
        """`text` went to `conversation`."""
        conv = self._seen.setdefault(conversation, _Conversation())
        conv.sends.append((self.now(), _fingerprint(text)))
