"""The cache of hot snapshots (bot/service.py): a cached state is used only while the snapshot
row is the one it was cached from; another writer's commit, a rebuild under the same version,
or a rolled-back transaction never leave a stale state in use."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import update
from storehelp import at, classic_game

from bot.service import Service
from bot.store.codec import encode
from bot.store.models import Snapshot
from engine.commands import Vote


@pytest.fixture
def two(db_url: str) -> Iterator[tuple[Service, Service]]:
    a, b = Service(db_url), Service(db_url)
    yield a, b
    a.close()
    b.close()


def test_another_writers_commit_is_seen(two: tuple[Service, Service]) -> None:
    a, b = two
    classic_game(a)
    a.advance("g1", at(1, 9))
    cached = a.state("g1")  # A has the game cached now
    assert a.store._cache["g1"].state is cached
    assert b.submit("g1", Vote(seat=2, target=5), now=at(1, 10), msg_id="b1").accepted
    seen = a.state("g1")
    assert seen is not cached and seen.version == cached.version + 1 and 2 in seen.votes
    # and A's own command is decided on B's state, not on its cached one
    out = a.submit("g1", Vote(seat=1, target=5), now=at(1, 10, 1), msg_id="a1")
    assert out.accepted and out.version == cached.version + 2
    assert set(b.state("g1").votes) == {1, 2}
    assert a.rebuild("g1").ok


def test_a_cache_hit_is_the_state_just_committed(two: tuple[Service, Service]) -> None:
    a, _ = two
    classic_game(a)
    a.advance("g1", at(1, 9))
    out = a.submit("g1", Vote(seat=1, target=5), now=at(1, 10), msg_id="m1")
    assert a.state("g1") is out.state  # no decode: the cached state is the engine's own
    assert a.clock("g1") == at(1, 10)


def test_same_version_rewritten_is_not_served_from_the_cache(two: tuple[Service, Service]
                                                             ) -> None:
    """A rebuild (or an operator's repair) may store another state under the same version:
    the row's updated_at tells the cache it changed."""
    a, b = two
    classic_game(a)
    a.advance("g1", at(1, 9))
    before = a.state("g1")
    changed = before.model_copy(deep=True)
    changed.seats[2].yellow = 1
    with b.db.write() as s:  # another process writes the row, same version
        s.execute(update(Snapshot).where(Snapshot.game_id == "g1").values(
            state=encode(changed.model_dump()), updated_at=at(1, 9, 30)))
    assert before.seat(3).yellow == 0 and a.state("g1").seat(3).yellow == 1


def test_a_rolled_back_commit_leaves_no_cached_state(two: tuple[Service, Service]) -> None:
    a, _ = two
    classic_game(a)
    a.advance("g1", at(1, 9))
    v0 = a.state("g1").version

    def boom(*_args: object, **_kw: object) -> None:
        raise RuntimeError("the transaction fails after the snapshot was written")

    real = a.store._sync_cards
    a.store._sync_cards = boom  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        a.submit("g1", Vote(seat=1, target=5), now=at(1, 10), msg_id="m1")
    a.store._sync_cards = real  # type: ignore[method-assign]
    assert a.state("g1").version == v0 and 1 not in a.state("g1").votes
    assert a.submit("g1", Vote(seat=1, target=5), now=at(1, 10), msg_id="m1").accepted


def test_the_cache_is_bounded(db_url: str) -> None:
    svc = Service(db_url, cache_size=2)
    try:
        for gid in ("g1", "g2", "g3"):
            classic_game(svc, gid)
            svc.state(gid)
        assert list(svc.store._cache) == ["g2", "g3"]
        assert svc.state("g1").version == svc.state("g2").version  # g1 decoded again
        assert list(svc.store._cache) == ["g1", "g2"]  # least recently used out first
    finally:
        svc.close()


def test_no_cache(db_url: str) -> None:
    svc = Service(db_url, cache_size=0)
    try:
        classic_game(svc)
        assert svc.state("g1") is not svc.state("g1") and not svc.store._cache
    finally:
        svc.close()
