"""Helpers shared by the store tests."""

from __future__ import annotations

import random
from datetime import date, datetime, time
from typing import Any

from randomgames import RandomGame, finished_games

from bot.service import Outcome, Service

START = date(2026, 3, 1)
ROLES = ["wolf", "wolf", "wolf", "seer", "witch", "guard", "cupid", "villager", "villager",
         "villager", "villager", "villager"]


def at(day: int, hh: int, mm: int = 0) -> datetime:
    return datetime.combine(date.fromordinal(START.toordinal() + day - 1), time(hh, mm))


def classic_game(service: Service, game_id: str = "g1", **kw: Any) -> Any:
    """A dealt 12-seat classic game with every seat bound and a public room."""
    args: dict[str, Any] = {
        "game_id": game_id, "ruleset": "classic", "seed": f"seed-{game_id}", "start": START,
        "roles": ROLES, "bindings": {n: (f"wx-{game_id}-{n}", f"马甲{n}") for n in range(1, 13)},
        "rooms": {"public": f"room-{game_id}"}, "judge_contact": "wx-judge"}
    args.update(kw)
    return service.create_game(**args)


OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"classic.exile_tie": "random", "classic.sheriff_tiebreak": "random"},
    {"night.resolve_early": False, "night.allow_resubmit": False},
    {"classic.sheriff_night_handover_deadline": "close_plus_30",
     "public.reveal_roles_on_out": True, "lastwords.eligible": "all"},
    {"cards.yellow_to_red": 3, "votes.abstain_as_candidate": True},
]


def feed(service: Service, game: RandomGame) -> list[Outcome]:
    """Create the random game in the service (every seat bound) and send its whole stream;
    each command must come out as it did in memory."""
    gid = game.args["game_id"]
    service.create_game(**game.args, bindings={n: (f"wx-{gid}-{n}", None) for n in range(1, 13)},
                        rooms={"public": f"room-{gid}"}, judge_contact="wx-judge")
    outs = []
    for n, step in enumerate(game.steps):
        out = service.submit(gid, step.command, now=step.now, msg_id=f"{gid}#{n}")
        assert out.status == step.status, (n, step, out)
        outs.append(out)
    return outs


def random_games(count: int, prefix: str, seed: int = 1) -> list[RandomGame]:
    return finished_games(random.Random(seed), count, prefix, OPTION_SETS)


def first_post_commitment(service: Service, game_id: str) -> str:
    """The seed commitment as the players read it: in the game's first public post."""
    import re

    from sqlalchemy import select

    from bot.store.models import OutboxRow

    with service.db.read() as s:
        text = s.scalars(select(OutboxRow.text).where(
            OutboxRow.game_id == game_id, OutboxRow.target == "public")
            .order_by(OutboxRow.id).limit(1)).one()
    found = re.search(r"[0-9a-f]{64}", text)
    assert found, text
    return found.group()


def count(service: Service, model: type, **where: object) -> int:
    """Rows of `model` whose columns equal `where`."""
    from sqlalchemy import func, select

    with service.db.read() as s:
        q = select(func.count()).select_from(model)
        for k, v in where.items():
            q = q.where(getattr(model, k) == v)
        return int(s.scalar(q) or 0)


def hot_plan(stmt: Any, dialect: Any) -> tuple[Any, Any]:
    """A hot statement's plan (bot.store.hot.plan) and SQLAlchemy's own compilation of it for
    the same columns (an INSERT: every column but the id)."""
    from bot.store.hot import plan

    keys = (tuple(c.key for c in stmt.table.columns if c.key != "id") if stmt.is_insert
            else None)
    return (plan(stmt, dialect, keys),
            stmt.compile(dialect=dialect, column_keys=list(keys) if keys else None))
