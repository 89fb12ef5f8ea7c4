"""Rebuilding a game from its log: `new_game` with the stored parameters, then every logged
command through the engine, compared with the snapshot and each command's logged events
(`wolfjudge rebuild`, `verify`, and the tests' proof that the log is the truth)."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.feed import describe_command
from bot.store.codec import decode
from bot.store.games import GameStore, event_of
from bot.store.models import UNDO
from bot.undo import NOTICE, NOTICE_PUBLIC, groups, replay, undone
from engine import handle, new_game
from engine.commands import parse_command
from engine.events import Rejection
from engine.model import GameState

NOTICES = (NOTICE, NOTICE_PUBLIC)


@dataclass
class RebuildReport:
    game_id: str
    state: GameState | None  # rebuilt from new_game + the logged commands
    snapshot: GameState
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def rebuild(store: GameStore, game_id: str, *, write: bool = False) -> RebuildReport:
    """new_game(params) + every logged command through the engine; compare with the snapshot
    (and each command's events with the logged ones). `write`: store the rebuilt state as the
    snapshot."""
    params, snapshot, last_seq, rows = store.stored(game_id)
    report = RebuildReport(game_id, None, snapshot)
    state, events = new_game(**params)
    expect_seq = 1
    for row in rows:
        if row.seq != expect_seq:
            report.problems.append(f"seq {expect_seq} is missing (next is {row.seq})")
            expect_seq = row.seq
        expect_seq += 1
    for head, logged in groups(rows):
        if head is not None and head.kind == UNDO:
            # An undo (bot/undo.py): the replay without every command undone so far.
            skip = undone(r for r in rows if r.seq <= head.seq)
            replayed = replay(params, rows, skip, until=head.seq)
            if isinstance(replayed, str):
                report.problems.append(f"seq {head.seq}: the undo does not replay: {replayed}")
                return report
            state = replayed[0].model_copy(update={"version": head.version})
            if any(event_of(r.body).type not in NOTICES for r in logged):
                report.problems.append(f"seq {head.seq}: an undo's rows are not its notices")
            continue
        if head is not None:
            cmd = parse_command(decode(head.body))
            out = handle(state, cmd, head.at)
            if isinstance(out, Rejection) or out[0].version == state.version:
                report.problems.append(f"seq {head.seq}: the engine no longer accepts "
                                       f"{describe_command(cmd)}: {out}")
                return report
            state, events = out
            if state.version != head.version:
                report.problems.append(f"seq {head.seq}: version {state.version}, "
                                       f"logged {head.version}")
        if [e.model_dump() for e in events] != [event_of(r.body).model_dump()
                                                for r in logged]:
            where = f"seq {head.seq}" if head else "the game's creation"
            report.problems.append(f"{where}: the events differ from the log")
    report.state = state
    if state.model_dump() != snapshot.model_dump():
        report.problems.append("the rebuilt state differs from the stored snapshot")
    if last_seq != len(rows):
        report.problems.append(f"snapshot last_seq {last_seq}, log has {len(rows)}")
    if write:
        store.overwrite(game_id, snapshot, state, len(rows))
    return report
