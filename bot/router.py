"""Who is told what of one commit: its events, rendered, as one message per recipient (pure).

    events + state + rooms + the judge's feed ─> route() ─> [Message] ─> outbox rows

Each event goes where its audience allows (docs/spec/ARCHITECTURE.md, "Secrets"):

- public: as the event's payload model declares its reach (engine/payloads.py `Reach`): an
  announcement (TABLE) goes once to the game's public room when it has one; without one (a
  forum game) by DM to every seat still in the game and to those who went out in this very
  commit (with `dm_out`, to those out before too; the others read the forum thread). The end
  (EVERY_SEAT) goes to the room and to every seat by DM always (CHAT.md: every player is
  told); a vote post (FORUM) stays the forum's (the room learns the result at the close). A
  public event whose type declares no reach is refused (`UndeclaredReach`): never told to
  nobody in silence;
- a group (wolves, lovers): its room, but only when everyone in the room may read it (a member
  out at night stays in the room until the day post); otherwise one DM per member;
- private: a DM to each seat, as that seat reads it.

Then everything the commit sends to the same recipient is merged into one message, its texts
in event order, one per line (a seat's own news first: the commitment after the seat and the
role; a public line about a seat's own card not repeated under its own words: templates
`dm`); the judge gets one message (bot/feed.py) when their feed setting wants it. Each
message's dedupe key is fixed by the commit (the seq of its first event and the recipient), so
a retry or a restart never sends a merged text twice, or half of it.

No database, no clock: the service hands in what it read (rooms, their members, the feed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from bot.feed import judge_message
from bot.render import asks, dm_order, messages_for, render_event
from engine.commands import Command
from engine.events import Event
from engine.model import Deadline, GameState
from engine.payloads import Reach, public_reach

PUBLIC_ROOM = "public"
# What the table is told in public, kept for the game's public page (bot/web, `/g/CODE`) where
# the game has no public room: a row on the channel PAGE (target `public`) that no transport
# sends; the store writes it delivered (to the page) with the commit.
PAGE = "page"


class UndeclaredReach(LookupError):
    """A public event whose payload model declares no `reach` (engine/payloads.py)."""


def reach_of(type_: str) -> Reach:
    """Whom the chat tells a public event of type `type_`, as its payload model declares."""
    reach = public_reach(type_)
    if reach is None:
        raise UndeclaredReach(f"{type_} is public but its payload model declares no reach "
                              f"(`reach = Reach.TABLE` …, engine/payloads.py)")
    return reach


def announced(type_: str) -> bool:
    """Whether a public event of type `type_` is told to the table (not the forum's only)."""
    return public_reach(type_) in (Reach.TABLE, Reach.EVERY_SEAT)


@dataclass(frozen=True)
class Message:
    """One outgoing message of a commit. `target`: `seat:N`, `group:NAME`, `public` or
    `judge`; `reply`: the answer to the person who sent the command (it leaves first)."""

    key: str
    seq: int
    channel: str  # dm | group | public | judge | page
    target: str
    text: str
    reply: bool = False
    asks: bool = False  # it asks its reader to act (the templates' `asks:`: a push goes too)


@dataclass(frozen=True)
class RoomsView:
    """What the router knows of the game's rooms: the names that have a room ("public" and
    group names), and the seats whose contacts are in each (-1: someone who is neither a
    seat's contact nor a judge, so the room gets no group post until it is put right)."""

    names: frozenset[str] = frozenset()
    seats: Mapping[str, frozenset[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class Asker:
    """Who sent the command: `seat` (a player, for their own seat), `judge` (a judge of the
    game), `own_judge` (the game's own judge, whose feed message is then their answer)."""

    seat: int | None = None
    judge: bool = False
    own_judge: bool = False


NOBODY = Asker()
NO_ROOMS = RoomsView()


def route(code: str, state: GameState, events: Sequence[Event], *, head: int,
          cmd: Command | None, rooms: RoomsView = NO_ROOMS, feed: str = "summary",
          asker: Asker = NOBODY, deadline: Deadline | None = None,
          parent: Deadline | None = None, dm_out: bool = False) -> list[Message]:
    """The messages of one commit. `head`: the seq of the command's log row (0 at the game's
    creation, when `cmd` is None); its events follow it. `deadline`/`parent`: what a tick
    fired (and the deadline a reminder was for), as the state before the tick held them."""
    ruleset = state.ruleset
    merged: dict[tuple[str, str], tuple[int, list[str], list[str]]] = {}
    asking: set[tuple[str, str]] = set()
    last, own_words = dm_order()
    # the event types each seat is told about itself, in its own words (its card)
    own: dict[int, set[str]] = {}
    for ev in events:
        if not ev.audience.public and ev.data.get("seat") in ev.audience.seats:
            own.setdefault(ev.data["seat"], set()).add(ev.type)

    def add(seq: int, channel: str, target: str, text: str | None, *, tail: bool = False,
            ev: Event | None = None) -> None:
        if not text:
            return
        _, texts, last_texts = merged.setdefault((channel, target), (seq, [], []))
        (last_texts if tail else texts).append(text)
        if ev is not None and channel == "dm" and asks(ev, ruleset):
            asking.add((channel, target))

    def tells_again(ev: Event, n: int) -> bool:
        return ev.data.get("seat") == n and own_words.get(ev.type) in own.get(n, ())

    every_seat = [st.seat for st in state.seats]
    went_out = {e.data.get("seat") for e in events if e.type == "SeatOut"}
    told = every_seat if dm_out else [st.seat for st in state.seats
                                       if st.alive or st.seat in went_out]
    public_room = PUBLIC_ROOM in rooms.names
    for i, ev in enumerate(events):
        seq = head + i + 1
        aud = ev.audience
        if aud.public:
            reach = reach_of(ev.type)
            if reach is Reach.FORUM:
                continue
            text = render_event(ev, ruleset)
            add(seq, "public" if public_room else PAGE, PUBLIC_ROOM, text)
            if reach is Reach.EVERY_SEAT:
                for n in every_seat:
                    add(seq, "dm", f"seat:{n}", text)
            elif not public_room:
                for n in told:
                    if not tells_again(ev, n):
                        add(seq, "dm", f"seat:{n}", text, tail=ev.type in last)
        elif aud.group is not None and aud.group in rooms.names and rooms.seats.get(
                aud.group, frozenset()) <= set(aud.seats):
            # A room only gets what every seat in it may read.
            add(seq, "group", f"group:{aud.group}", render_event(ev, ruleset))
        else:  # private, or a group without a room (yet): one DM per member
            for n in aud.seats:
                add(seq, "dm", f"seat:{n}", messages_for(ev, n, ruleset), ev=ev)
    out = [Message(f"{code}/{seq}/{target}", seq, channel, target, "\n".join(texts + tail),
                   reply=channel == "dm" and asker.seat is not None
                   and target == f"seat:{asker.seat}", asks=(channel, target) in asking)
           for (channel, target), (seq, texts, tail) in merged.items()]
    told_judge = judge_message(code, cmd, events, ruleset, feed=feed, asked=asker.judge,
                               deadline=deadline, parent=parent, public_room=public_room)
    if told_judge is not None:
        out.append(Message(f"{code}/{head}/judge", head, "judge", "judge", told_judge,
                           reply=asker.own_judge))
    return out
