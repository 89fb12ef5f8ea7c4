"""Ed25519 signatures over exports: one key pair per game, made when the game is created.

The private key stays in the database (games.signing_key); the public key is part of the
seed commitment published in the game's first post, so a signature under any other key is
not this game's.
"""

from __future__ import annotations

import json
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

ALG = "ed25519"


def new_key_pair() -> tuple[str, str]:
    """(private key, public key), both raw bytes as hex."""
    key = Ed25519PrivateKey.generate()
    return key.private_bytes_raw().hex(), key.public_key().public_bytes_raw().hex()


def public_key(private_hex: str) -> str:
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(private_hex))
    return key.public_key().public_bytes_raw().hex()


def canonical(value: Any) -> bytes:
    """The one byte encoding that is signed: key order and spacing do not matter."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8")


def sign(private_hex: str, value: Any) -> str:
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(private_hex))
    return key.sign(canonical(value)).hex()


def verify(public_hex: str, signature_hex: str, value: Any) -> bool:
    """False for a wrong signature and for a malformed key or signature."""
    try:
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_hex))
        key.verify(bytes.fromhex(signature_hex), canonical(value))
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True
