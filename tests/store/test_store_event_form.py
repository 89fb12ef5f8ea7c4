"""Event log rows in plain JSON (issue 22, part 3): an event's body is its own JSON, no tags of
the exact codec; its payload model gives back the types (a seat-keyed map's int keys), so the
row reads as the very event the engine emitted, and rows written in the older tagged form read
the same. On SQLite and PostgreSQL."""

from __future__ import annotations

import json

from sqlalchemy import select
from storehelp import at, classic_game

from bot.service import Service
from bot.store.codec import encode
from bot.store.games import event_of
from bot.store.models import LogEntry


def test_event_rows_are_plain_json_and_read_back_exactly(service: Service) -> None:
    classic_game(service)
    service.advance("g1", at(2, 9))  # night 1 resolved, day 2 open: int-keyed maps included
    with service.db.read() as s:
        rows = list(s.scalars(select(LogEntry).where(LogEntry.game_id == "g1",
                                                      LogEntry.kind == "event")))
    assert rows
    seat_keyed = 0
    for row in rows:
        text = json.dumps(row.body)
        assert '"$map"' not in text and '"$dt"' not in text and '"$tuple"' not in text, text
        event = event_of(row.body)
        assert event.payload() is not None
        # the older, tagged form of the same event reads as the same event
        assert event_of(encode(event.model_dump())) == event
        seat_keyed += any(isinstance(v, dict) and v and all(isinstance(k, int) for k in v)
                          for v in event.data.values())
    assert seat_keyed  # (the dealt roles, a vote's counts …: int keys back from JSON)
    report = service.rebuild("g1")  # the log replays to the very same events and state
    assert report.ok, report.problems


def test_the_export_is_the_same_whichever_form_the_rows_are_in(service: Service) -> None:
    from sqlalchemy import update

    from bot.audit import export_game

    classic_game(service)
    service.advance("g1", at(2, 9))
    plain = export_game(service, "g1")
    tagged = 0
    with service.db.write() as s:  # every event row back in the older, tagged form
        for row in s.scalars(select(LogEntry).where(LogEntry.game_id == "g1",
                                                    LogEntry.kind == "event")).all():
            old = encode(event_of(row.body).model_dump())
            tagged += '"$map"' in json.dumps(old)
            s.execute(update(LogEntry).where(LogEntry.game_id == "g1", LogEntry.seq == row.seq)
                      .values(body=old))
    assert tagged  # the two forms differ in the rows ...
    assert export_game(service, "g1") == plain  # ... and not in the export
