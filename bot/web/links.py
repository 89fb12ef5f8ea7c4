"""The page links (issue 24): bearer secrets, signed, that expire, bound to a contact and a game
(and a seat), and revoked all at once by the contact's `网页 重置`.

A link is `/j/TOKEN` (a judge's page of a game) or `/p/TOKEN` (a seat's page); the token is
itsdangerous' URL-safe, timestamped signature over (kind, game, contact, seat, generation,
the seat's hand-overs). Three kinds last until revoked instead of expiring (issue 30, a game
with no chat account): `/h/TOKEN` a judge's home (`wolfjudge judge-link`; `--reset` revokes
it), `/k/TOKEN` a player's key (their only way in when they joined by link; `网页 重置`
gives a new one) and `/join/TOKEN` a lobby's join link (until the game starts, or the judge's
`报名链接 重置`).
Its checks against the database (is the contact still that game's judge, or that seat's
player; is the generation current) are the app's (bot/web/app.py): a token alone proves only
that we made it, and when."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from itsdangerous import BadSignature, TimestampSigner, URLSafeTimedSerializer

LINK_DAYS = 7  # how long a link works
SECRET_NAME = "web-links"
Kind = Literal["j", "p", "h", "k", "join"]
KINDS = ("j", "p", "h", "k", "join")
LASTING = ("h", "k", "join")  # kinds that never expire (revoked by a new generation)


@dataclass(frozen=True)
class Claim:
    """What a valid token says: a judge's (`j`) or a seat's (`p`) page of `game`, given to
    the contact whose digest is `contact` (a link shows no contact id) in its link
    generation `epoch`; a seat's link also names how often the seat had changed hands
    (`gen`): every hand-over (`接替`) ends the links given before it, also for a contact who
    takes the seat back."""

    kind: Kind
    game: str
    contact: str
    seat: int | None
    epoch: int
    gen: int = 0

    def given_to(self, contact: str) -> bool:
        return hmac.compare_digest(self.contact, digest(contact))


def digest(contact: str) -> str:
    return hashlib.sha256(contact.encode()).hexdigest()[:24]


def new_secret() -> str:
    return secrets.token_urlsafe(32)


class Links:
    """Makes and reads tokens with `secret`, on the clock `now` (UTC)."""

    def __init__(self, secret: str, now: Callable[[], datetime],
                 days: int = LINK_DAYS) -> None:
        self._now = now
        self.max_age = timedelta(days=days)
        seconds = self._seconds

        class Signer(TimestampSigner):  # itsdangerous reads time.time(): our clock instead
            def get_timestamp(self) -> int:
                return seconds()

        self._s = URLSafeTimedSerializer(secret, salt="wolfjudge-page-link", signer=Signer)

    def _seconds(self) -> int:
        return int(self._now().replace(tzinfo=UTC).timestamp())

    def make(self, kind: Kind, game: str, contact: str, seat: int | None, epoch: int,
             gen: int = 0) -> str:
        return str(self._s.dumps([kind, game, digest(contact), seat, epoch, gen]))

    def read(self, token: str) -> Claim | None:
        """The claim of a token we made that has not expired (a lasting kind never does);
        None for anything else."""
        try:
            data, made = self._s.loads(token, return_timestamp=True)
        except (BadSignature, ValueError, TypeError):
            return None
        if not (isinstance(data, list) and len(data) in (5, 6) and data[0] in KINDS):
            return None
        age = self._now().replace(tzinfo=UTC) - made
        if data[0] not in LASTING and not timedelta(0) <= age <= self.max_age:
            return None
        kind, game, contact, seat, epoch, *rest = data  # (a link made before `gen`: 0)
        gen = rest[0] if rest else 0
        if not (isinstance(game, str) and isinstance(contact, str) and isinstance(epoch, int)
                and isinstance(gen, int) and (seat is None or isinstance(seat, int))):
            return None
        return Claim(kind, game, contact, seat, epoch, gen)


@dataclass(frozen=True)
class PageLinks:
    """The links the bot hands out (`网页`): the pages' public base URL (WOLFJUDGE_WEB_URL)
    and the signer."""

    base: str
    links: Links

    def url(self, kind: Kind, game: str, contact: str, seat: int | None, epoch: int,
            gen: int = 0) -> str:
        token = self.links.make(kind, game, contact, seat, epoch, gen)
        return f"{self.base.rstrip('/')}/{kind}/{token}"

    def public(self, game: str) -> str:
        """The game's public page (spectators): no secret in it, a judge may post it."""
        return f"{self.base.rstrip('/')}/g/{game}"

    def community(self, slug: str) -> str:
        """A community's page (bot/web/community.py), at its secret address."""
        return f"{self.base.rstrip('/')}/c/{slug}"
