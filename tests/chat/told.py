"""What a transport delivered to one contact: its DMs, and the posts of every room it was in
at the moment of the post (the transport's own record: rooms made, members added and removed,
in order). The pages' audit (tests/chat/test_web_*.py) checks every line of a seat's page
against it: a page shows a person exactly what was delivered to them."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

from bot.transport.memory import Sent


def received(sent: Iterable[Sent], contact: str) -> list[str]:
    """The texts `contact` got, in order."""
    inside: set[str] = set()  # the rooms the contact is in, as the record goes
    out: list[str] = []
    for s in sent:
        if (s.kind == "dm" and s.target == contact) or (s.kind == "post"
                                                        and s.target in inside):
            out.append(s.text)
        elif s.kind in ("create", "add") and contact in s.members:
            inside.add(s.target)
        elif s.kind == "remove" and contact in s.members:
            inside.discard(s.target)
    return out


def received_lines(sent: Iterable[Sent], contact: str) -> set[str]:
    """Every line of every text `contact` got."""
    return {line.strip() for text in received(sent, contact) for line in text.split("\n")}


def history_lines(page: str) -> list[str]:
    """Every line of a seat page's history (what it was sent), as a person reads it."""
    m = re.search(r'<section id="history">(.*?)</section>', page, re.S)
    assert m is not None, page[:500]
    entries = re.findall(r"<li><time>[^<]*</time>(.*?)</li>", m.group(1), re.S)
    return [line.strip() for entry in entries
            for line in html.unescape(re.sub(r"<[^>]+>", "", entry)).split("\n")
            if line.strip()]
