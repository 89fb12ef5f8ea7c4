"""Deterministic, auditable randomness: SHA-256 over (seed, counter).

The seed and the counter live in the game state, so every random choice replays
and can be recomputed from the seed revealed at the end of the game.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def draw(seed: str, counter: int, n: int) -> int:
    """A uniform integer in [0, n) for draw number `counter` of `seed` (rejection sampling)."""
    if n <= 0:
        raise ValueError("n must be positive")
    attempt = 0
    limit = (1 << 64) - ((1 << 64) % n)
    while True:
        digest = hashlib.sha256(f"{seed}:{counter}:{attempt}".encode()).digest()
        value = int.from_bytes(digest[:8], "big")
        if value < limit:
            return value % n
        attempt += 1


def choice(seed: str, counter: int, items: Sequence[T]) -> T:
    return items[draw(seed, counter, len(items))]


def shuffled(seed: str, counter: int, items: Sequence[T]) -> list[T]:
    """Fisher-Yates driven by draws counter, counter+1, ... (len(items)-1 draws)."""
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = draw(seed, counter + (len(out) - 1 - i), i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def commitment(seed: str, deal: Sequence[str], pubkey: str | None = None) -> str:
    """SHA-256 commitment published at game start and checked after the reveal. With the
    game's signing public key in it, the first post also vouches for the key that signs the
    export, so a log re-made under another key cannot pass for this game's."""
    text = seed + "|" + ",".join(deal)
    if pubkey is not None:
        text += "|" + pubkey
    return hashlib.sha256(text.encode()).hexdigest()
