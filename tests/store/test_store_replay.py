"""Many test games played through the service: the log rebuilds the snapshot exactly.

The scenario files (tests/scenarios/, bot/examples/) are played once straight through the
engine and once through the service (every step a transaction; all games in one database), and
must give the same verdict and the same final state. Random whole games (randomgames.py)
are played through the service too and compared with a clean replay of their commands.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest.mock import patch

from storehelp import feed, random_games

import bot.scenario
from bot.scenario import Game, Scenario
from bot.service import PLAYER_VOTE_MODES, Service
from engine import new_game
from engine.events import Rejection

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "tests" / "scenarios").rglob("*.yaml")) + sorted(
    (ROOT / "bot" / "examples").glob("*.yaml"))


@dataclass
class ServiceGame(Game):
    """A scenario game whose every command goes through `Service.submit`."""

    service: Service | None = None
    game_id: str = ""
    sent: int = 0

    def send(self, command: Any, seat: int | None = None) -> Rejection | None:
        assert self.service is not None
        self.sent += 1
        # Each step comes from its seat's contact, as a chat message would; corrections and
        # void posts are forum entries, made by the judge (PLAYER_VOTE_MODES).
        sender = f"wx-{seat}" if seat is not None else None
        if getattr(command, "mode", "vote") not in PLAYER_VOTE_MODES:
            sender = "wx-judge"
        out = self.service.submit(self.game_id, command, now=self.now, msg_id=f"s{self.sent}",
                                  sender=sender)
        if out.rejection is not None:
            if seat is not None:
                from bot.render import render_rejection

                self.inbox.append((seat, render_rejection(out.rejection, self.ruleset)))
            return out.rejection
        assert out.state is not None
        if out.accepted:
            self.commands.append((self.now, command))
        self.state = out.state
        self.record(list(out.events))
        return None


class ServiceScenario(Scenario):
    def __init__(self, path: Path, service: Service, game_id: str) -> None:
        super().__init__(path)
        self.service = service
        self.game_id = game_id

    def start(self, doc: dict[str, Any]) -> Game:
        captured: dict[str, Any] = {}

        def recording_new_game(**kw: Any) -> Any:
            captured.update(kw)
            return new_game(**kw)

        with patch.object(bot.scenario, "new_game", recording_new_game):
            game = super().start(doc)
        captured["game_id"] = self.game_id
        seats = len(game.state.seats)
        out = self.service.create_game(**captured, judge_contact="wx-judge",
                                       bindings={n: (f"wx-{n}", None) for n in range(1, seats + 1)})
        assert out.state is not None
        assert out.state.model_dump(exclude={"game_id"}) == game.state.model_dump(
            exclude={"game_id"})
        return ServiceGame(state=out.state, now=game.now, ruleset=game.ruleset,
                           inbox=game.inbox, log=game.log, service=self.service,
                           game_id=self.game_id)


def test_scenarios_through_the_service(service: Service) -> None:
    assert FILES
    problems = []
    for i, path in enumerate(FILES):
        direct = Scenario(path)
        expected = direct.run()
        gid = f"sc{i}"
        through = ServiceScenario(path, service, gid)
        got = through.run()
        where = path.relative_to(ROOT)
        if (got.ok, got.line, got.message) != (expected.ok, expected.line, expected.message):
            problems.append(f"{where}: direct {expected}, through the service {got}")
        if gid not in service.game_ids():
            continue  # the file failed before its game was made (a file error)
        report = service.rebuild(gid)
        if not report.ok:
            problems.append(f"{where}: {report.problems}")
    assert not problems, "\n".join(problems)


def test_random_games_through_the_service(service: Service) -> None:
    for game in random_games(6, "rg"):
        feed(service, game)
        gid = game.args["game_id"]
        assert game.final is not None
        assert service.state(gid).model_dump() == game.final.model_dump()
        report = service.rebuild(gid)
        assert report.ok, report.problems
