"""What a forum post says as a vote: `投5`, `5号`, `投 五号 理由…`, `弃权`, `改票 3` …

The words are data (bot/commands/vocabulary.yaml `forum`, which reuses the chat verbs'
aliases), and seats are read exactly as in chat (bot/commands/parse.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.commands.numbers import SIGNS, signed
from bot.commands.parse import ABSTAIN, prepare, seat_at, skip_separators
from bot.commands.vocabulary import FORUM

Kind = Literal["vote", "abstain", "change", "correct", "malformed", "talk"]


@dataclass(frozen=True)
class PostVote:
    """`kind`: what the post's own words say. vote/change/correct name `target` (None:
    abstain); malformed: a vote word without a readable target (a void vote); talk: no vote
    at all. `word`: the vote word as written ('' for a bare seat)."""

    kind: Kind
    target: int | None = None
    reason: str = ""
    word: str = ""

    @property
    def is_vote(self) -> bool:
        return self.kind not in ("malformed", "talk")


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line
    return ""


def read_vote(text: str, seats: int = 99) -> PostVote:
    """The vote in a post's text (its first non-empty line carries it; the rest is reason).
    `seats`: the game's seat count (a larger number is no seat: malformed)."""
    body = prepare(text)
    head = prepare(_first_line(body))
    rest_lines = body[body.find(head) + len(head):].strip() if head else ""
    word, meaning = "", ""
    for alias, what in FORUM.words:
        if head.startswith(alias):
            word, meaning = alias, what
            break
    i = len(word)
    if meaning == "abstain":
        return PostVote("abstain", None, _reason(head, i, rest_lines), word)
    if not meaning:
        if head and head[0] in SIGNS and signed(head, 1) and seat_at(head[1:], 0) is not None:
            return PostVote("malformed", None, head, "")  # `-5号`: a seat with a sign
        got = seat_at(head, 0)
        if not FORUM.bare_seat or got is None:
            return PostVote("talk")
        value, end, marked = got
        if not marked and skip_separators(head, end) < len(head):
            return PostVote("talk")  # `3楼说得对`: a number without 号 followed by words
        return _voted("vote", value, _reason(head, end, rest_lines), "", seats)
    j = skip_separators(head, i)
    if head.startswith(ABSTAIN, j):
        return PostVote("abstain" if meaning == "vote" else meaning,  # type: ignore[arg-type]
                        None, _reason(head, j + len(ABSTAIN), rest_lines), word)
    got = seat_at(head, j)
    if got is None:
        return PostVote("malformed", None, head[i:].strip(), word)
    value, end, _ = got
    return _voted(meaning, value, _reason(head, end, rest_lines), word, seats)  # type: ignore[arg-type]


def _reason(head: str, end: int, rest: str) -> str:
    first = head[skip_separators(head, end):].strip()
    return "\n".join(x for x in (first, rest) if x)


def _voted(kind: Kind, seat: int, reason: str, word: str, seats: int) -> PostVote:
    if not 1 <= seat <= seats:
        return PostVote("malformed", None, reason, word)
    if FORUM.reason_required and not reason:
        return PostVote("malformed", seat, reason, word)
    return PostVote(kind, seat, reason, word)
