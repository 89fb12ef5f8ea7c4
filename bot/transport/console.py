"""The console transport of CHAT.md: output lines on a text stream.

    → NAME: TEXT        a DM to NAME          → @ROOM: TEXT      a post in room ROOM
    + @ROOM: A B ...    room made             + @ROOM NAME / - @ROOM NAME   member added / removed

A text of several lines prints its further lines each as two spaces and the line. A room's id
is its name.
"""

from __future__ import annotations

import threading
from typing import Protocol

from bot.transport import LocalTransport, Refused


def _lines(head: str, text: str) -> str:
    first, *rest = text.split("\n") or [""]
    return "\n".join([f"{head}{first}", *(f"  {line}" for line in rest)])


class Output(Protocol):
    """Where the console writes its lines: a text stream (standard output, a file, the demo's
    copy of what it wrote)."""

    def write(self, text: str, /) -> int: ...
    def flush(self) -> None: ...


class ConsoleTransport(LocalTransport):
    instant = True

    def __init__(self, out: Output) -> None:
        self.out = out
        self.rooms: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def _print(self, text: str) -> None:
        with self._lock:
            print(text, file=self.out, flush=True)

    def note(self, text: str) -> None:
        """A `# …` line: the console's own remark (a sync marker, a malformed line)."""
        self._print(_lines("# ", text))

    def send_dm(self, contact: str, text: str, *, key: str | None = None) -> None:
        self._print(_lines(f"→ {contact}: ", text))

    def post(self, room: str, text: str, *, key: str | None = None) -> None:
        self._print(_lines(f"→ @{room}: ", text))

    def create_room(self, name: str, members: list[str]) -> str:
        if any(c.isspace() or c in ":@" for c in name):
            raise Refused(f"room name {name!r} has a space, ':' or '@'")
        self.rooms[name] = list(members)
        self._print(f"+ @{name}: {' '.join(members)}")
        return name

    def add_member(self, room: str, contact: str) -> None:
        members = self.rooms.setdefault(room, [])
        if contact not in members:
            members.append(contact)
            self._print(f"+ @{room} {contact}")

    def remove_member(self, room: str, contact: str) -> None:
        members = self.rooms.setdefault(room, [])
        if contact in members:
            members.remove(contact)
            self._print(f"- @{room} {contact}")

    def members(self, room: str) -> list[str]:
        return list(self.rooms.get(room, []))
