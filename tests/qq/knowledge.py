"""The knowledge audit of a game played over QQ: nobody was told what they may not know.

Two levels, reusing the rules the hygiene tests check:
- the engine's: the game's logged commands are replayed from its creation parameters, and each
  step is checked by the hygiene checks of its ruleset (tests/test_hygiene.py `Hygiene` for
  classic, tests/test_properties_standard.py `Checks` for the standard board): every event's
  audience against the state before and after it;
- the wire's: every message the fake NapCat received from the bot is read line by line; a line
  that is the rendering of a logged event must belong to an event its reader may read: a DM to
  a seat's QQ number an event public or addressed to that seat, a post in a game's QQ group an
  event public or addressed to that group (the public group: public only). A DM to the judge
  may carry anything; a DM to nobody of the game nothing of it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from onebotfake import FakeOneBot

from bot.render import render_event
from bot.service import Service, event_of
from bot.store.codec import decode
from engine import handle, new_game
from engine.commands import parse_command
from engine.events import Audience, Rejection

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from randomplay import Step  # noqa: E402
from test_hygiene import Hygiene  # noqa: E402
from test_properties_standard import Checks  # noqa: E402


def engine_audit(service: Service, code: str) -> int:
    """Replay the game through its ruleset's hygiene checks; how many events were checked."""
    params, _, _, rows = service.store.stored(code)
    state, events = new_game(**params)
    checker: Any
    if state.ruleset == "standard":
        checker = Checks()
    else:
        checker = Hygiene(dict(state.options))
        checker.check_start(state, list(events))
    for row in rows:
        if row.kind != "command":
            continue
        cmd = parse_command(decode(row.body))
        got = handle(state, cmd, row.at)
        checker.on_step(Step(row.at, cmd, state, got))
        assert not isinstance(got, Rejection), (row.seq, cmd, got)
        state = got[0]
    assert state.over
    return int(checker.checked)


def wire_audit(fake: FakeOneBot, service: Service, code: str) -> int:
    """Every line the bot sent that renders a logged event reached only whom it may; how many
    lines were matched."""
    ruleset = service.state(code).ruleset
    told: dict[str, list[Audience]] = {}
    for row in service.log(code):
        if row.kind != "event":
            continue
        ev = event_of(row.body)
        for line in render_event(ev, ruleset).split("\n"):
            if line.strip():
                told.setdefault(line, []).append(ev.audience)
    from bot.store.chat import ChatStore

    chats = ChatStore(service.db)
    seat_of = {c: n for n, c in chats.contacts(code).items()}
    judge = chats.game_judge(code)
    matched = 0
    for sent in list(fake.sent):
        where: str
        if sent.kind == "dm":
            if sent.to == judge:
                continue
            seat = seat_of.get(sent.to)
            where = f"DM to {sent.to} (seat {seat})"
        else:
            where_sent = chats.sender(None, sent.to)
            assert where_sent.room_game in (None, code), (sent.to, where_sent)
            group = where_sent.room_group
            where = f"post in {sent.to} ({group})"
        for line in sent.text.split("\n"):
            audiences = told.get(line)
            if not audiences:
                continue
            matched += 1
            if sent.kind == "dm":
                ok = seat is not None and any(a.public or seat in a.seats for a in audiences)
            elif group == "public":
                ok = any(a.public for a in audiences)
            else:
                ok = group is not None and any(a.public or a.group == group for a in audiences)
            assert ok, f"{where} was told {line!r}, meant for {audiences}"
    return matched
