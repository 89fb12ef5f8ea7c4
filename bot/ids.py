"""The ids the bot makes and checks: game ids, message ids, tick ids, the games' secret seeds."""

from __future__ import annotations

import hashlib
import re
import secrets

from engine.model import Deadline

GAME_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # fits games.id, never a path
MAX_ID = 128  # inbox.msg_id, inbox.sender, players.contact_id
# A contact a join link made for a browser (bot/web/join.py): no chat platform has a colon in
# its ids, so it never collides with one; it is never shown on a page or in a message.
PAGE_CONTACT = "page:"


def new_page_contact() -> str:
    return PAGE_CONTACT + secrets.token_urlsafe(18)


def is_page_contact(contact: str) -> bool:
    return contact.startswith(PAGE_CONTACT)


def new_seed() -> str:
    """A game's secret seed: 256 bits from the OS CSPRNG, never derived from a name or a time."""
    return secrets.token_hex(32)


def tick_message_id(version: int, deadline: Deadline) -> str:
    """The message id of the tick for `deadline` seen at state `version`.

    Two schedulers (or a scheduler and a catching-up message) that saw the same state send
    the same id, so the tick is applied once; a deadline id reused later (another handover on
    the same day) comes at another version, so it is not mistaken for the old one.
    """
    return f"tick:{deadline.id}@{deadline.due.isoformat()}#v{version}"


def inbox_id(msg_id: str) -> str:
    """The transport's id as stored: one too long for the column is replaced by its digest."""
    if len(msg_id) <= MAX_ID:
        return msg_id
    return "sha256:" + hashlib.sha256(msg_id.encode()).hexdigest()
